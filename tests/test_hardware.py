from helpers import hardware


def test_describe_reports_this_machine():
    info = hardware.describe()
    assert info["cpu"]["logical_cores"] >= 1 and info["cpu"]["memory_gb"] > 0
    assert any(d["type"] == "CPU" for d in info["tensorflow_devices"])
    assert info["keras_backend"] == "tensorflow"
    assert info["versions"]["keras"].startswith("3.")
    assert info["colab"] is False


def test_table_is_readable():
    shown = hardware.table()["this machine"]
    for row in ("CPU", "Cores", "SIMD", "Memory", "Versions"):
        assert row in shown.index, row
    # no GPU: one row saying so; with GPUs: a row each, "GPU 0", "GPU 1", ...
    assert shown.get("GPU") == "none found" or "GiB" in shown.get("GPU 0", "")


def test_mixed_precision_support_from_compute_capability():
    cpu = {"simd": ["avx2"]}
    volta = [{"type": "GPU", "compute_capability": (7, 0)}]
    ampere = [{"type": "GPU", "compute_capability": (8, 0)}]
    assert hardware.mixed_precision_support(cpu, volta) == {
        "gpu_float16_tensor_cores": True, "gpu_bfloat16": False, "cpu_bfloat16": False}
    assert hardware.mixed_precision_support(cpu, ampere)["gpu_bfloat16"] is True
    assert hardware.mixed_precision_support({"simd": ["avx512_bf16"]}, [])["cpu_bfloat16"]


def test_no_gpu_gives_empty_lists(monkeypatch):
    monkeypatch.setattr(hardware.shutil, "which", lambda name: None)
    assert hardware.nvidia_smi_gpus() == []


def test_nvidia_smi_output_is_parsed(monkeypatch):
    class Done:
        stdout = "NVIDIA H200, 143771, 512, 570.86.15, 37\n"

    monkeypatch.setattr(hardware.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(hardware.subprocess, "run", lambda *a, **k: Done())
    gpu = hardware.nvidia_smi_gpus()[0]
    assert gpu["name"] == "NVIDIA H200" and gpu["memory_total_mb"] == 143771
    assert gpu["driver"] == "570.86.15" and gpu["utilization_pct"] == 37


