import sys

from helpers import hardware

import pytest
from conftest import numbers
from gpu_rehearsal import fake_nvidia_smi  # noqa: F401  (the fixture, used by name below)


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
        "gpu_float16_tensor_cores": True,
        "gpu_bfloat16": False,
        "cpu_bfloat16": False,
    }
    assert hardware.mixed_precision_support(cpu, ampere)["gpu_bfloat16"] is True
    assert hardware.mixed_precision_support({"simd": ["avx512_bf16"]}, [])[
        "cpu_bfloat16"
    ]


def test_amx_runs_bfloat16_only_where_the_cpu_has_it_and_onednn_is_not_capped_below_it():
    amx = {"simd": ["avx512f", "avx512_bf16", "amx_bf16", "amx_tile"]}
    assert hardware.amx_bfloat16(amx, environ={})
    assert hardware.amx_bfloat16(amx, environ={"ONEDNN_MAX_CPU_ISA": "avx512_core_amx"})
    assert not hardware.amx_bfloat16(
        amx, environ={"ONEDNN_MAX_CPU_ISA": "AVX512_CORE_BF16"}
    )
    assert not hardware.amx_bfloat16({"simd": ["avx512f", "avx512_bf16"]}, environ={})


def test_no_gpu_gives_empty_lists(monkeypatch):
    monkeypatch.setattr(hardware.shutil, "which", lambda name: None)
    assert hardware.nvidia_smi_gpus() == []


def test_nvidia_smi_output_is_parsed(monkeypatch):
    class Done:  # a MIG slice reports no utilisation, a T4 no power draw at times
        stdout = (
            "NVIDIA H200, 143771, 512, 570.86.15, 37, 121.35, 41\n"
            "NVIDIA A100-SXM4-40GB MIG 1g.5gb, 4864, 13, 570.86.15, [N/A], "
            "[Not Supported], [N/A]\n"
        )

    monkeypatch.setattr(hardware.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(hardware.subprocess, "run", lambda *a, **k: Done())
    h200, mig = hardware.nvidia_smi_gpus()
    assert h200["name"] == "NVIDIA H200" and h200["memory_total_mb"] == 143771
    assert h200["driver"] == "570.86.15" and h200["utilization_pct"] == 37
    assert h200["power_w"] == 121.35 and h200["temperature_c"] == 41
    assert mig["utilization_pct"] is None and mig["power_w"] is None


# --- the GPU branches, rehearsed with tests/fake_bin/nvidia-smi (TensorFlow still sees no GPU) ---


@pytest.mark.usefixtures("fake_nvidia_smi")
def test_table_names_every_gpu_nvidia_smi_reports():
    shown = hardware.table()["this machine"]
    assert shown["GPU 0"] == shown["GPU 1"] == "Tesla T4, 15 GiB, driver 550.54.15"
    assert "GPU" not in shown.index and "GPU 2" not in shown.index
    assert "Tesla T4, Tesla T4" in hardware.summary()


@pytest.mark.usefixtures("fake_nvidia_smi")
def test_without_gputil_the_table_comes_from_nvidia_smi_with_one_notice(
    monkeypatch, capsys
):
    # as on Python 3.12 without distutils
    monkeypatch.setitem(sys.modules, "GPUtil", None)
    hardware._notice_once.cache_clear()
    first, second = hardware.gpus(), hardware.gpus()
    notices = capsys.readouterr().out.splitlines()
    assert len(notices) == 1 and "GPUtil" in notices[0] and "nvidia-smi" in notices[0]
    assert [g["name"] for g in first] == [g["name"] for g in second] == ["Tesla T4"] * 2
    assert hardware.table()["this machine"]["GPU 1"].startswith("Tesla T4, 15 GiB")


@pytest.mark.usefixtures("fake_nvidia_smi")
def test_nvidia_smi_readings_are_plausible_and_change():
    readings = [hardware.nvidia_smi_gpus()[0] for _ in range(3)]
    for gpu in readings:
        assert 0 <= gpu["utilization_pct"] <= 100 and 0 < gpu["memory_used_mb"] < 15360
        assert 0 < gpu["power_w"] <= 70 and 20 < gpu["temperature_c"] < 95
    assert len({gpu["utilization_pct"] for gpu in readings}) > 1


def test_theoretical_peak_counts_cores_lanes_fma_and_clock():
    def info(model, *simd, ghz=2.6, cores=2):
        return {
            "model": model,
            "simd": ["avx", "avx2", "fma", *simd],
            "usable_cores": cores,
            "physical_cores": cores,
            "ghz": ghz,
        }

    # AMD's AVX-512 (Zen 4) on two 256-bit FMA pipes: 2 x 8 lanes x 2 FLOP = 32 a cycle
    amd = hardware.theoretical_peaks(info("AMD EPYC", "avx512f", "avx512_bf16"))
    assert (
        amd["float32"] == pytest.approx(2 * 32 * 2.6e9)
        and amd["bfloat16"] == 2 * amd["float32"]
    )
    zen5 = hardware.theoretical_peaks(info("AMD EPYC", "avx512f") | {"family": 26})
    # 512-bit pipes from Zen 5 on
    assert zen5["float32"] == pytest.approx(2 * 64 * 2.6e9)
    # Intel's AVX-512 server core: two 16-lane ports; AMX's bfloat16 tiles 1,024 FLOP a cycle
    xeon = hardware.theoretical_peaks(
        info("Intel(R) Xeon(R)", "avx512f", "avx512_bf16", "amx_bf16", ghz=2.0, cores=4)
    )
    assert xeon["float32"] == pytest.approx(4 * 64 * 2.0e9)
    assert xeon["bfloat16"] == pytest.approx(4 * 1024 * 2.0e9)
    # float32 is the vector unit's work even where AMX does bfloat16
    assert xeon["units"] == {"float32": "AVX-512 FMA", "bfloat16": "AMX tiles"}
    assert amd["units"] == {
        "float32": "AVX-512 FMA",
        "bfloat16": "AVX-512 BF16 dot product",
    }
    # the boost clock where the system reports one, and which clock it was
    boost = hardware.theoretical_peaks(info("AMD EPYC", "avx512f") | {"max_ghz": 3.7})
    assert (
        boost["float32"] == pytest.approx(2 * 32 * 3.7e9) and "boost" in boost["clock"]
    )
    assert "a boost may be faster" in amd["clock"]
    assert (
        hardware.theoretical_peaks(info("Intel Core i7", ghz=3.0, cores=1))["bfloat16"]
        is None
    )
    # no clock: no peak
    assert hardware.theoretical_peaks(info("AMD EPYC", ghz=None)) is None
    no_fma = info("old", ghz=2.0)
    no_fma["simd"] = ["sse4_2"]
    assert hardware.theoretical_peaks(no_fma) is None


def test_a_gpu_finds_its_own_datasheet_and_no_other():
    assert hardware.gpu_datasheet("Tesla T4")[0] == "T4"
    assert hardware.gpu_datasheet("NVIDIA H200")[0] == "H200"
    assert hardware.gpu_datasheet("NVIDIA L40S") is None  # no L4


def test_a_gpus_roofs_are_shares_of_its_datasheet_and_an_unknown_gpu_says_so():
    info = {
        "tensorflow_devices": [
            {"type": "GPU", "gpu_name": "NVIDIA A100-SXM4-40GB"},
            {"type": "GPU", "gpu_name": "Some New GPU"},
        ],
        "gpus": [],
    }
    limits = {
        "matmul_gflops": {
            "gpu:0 float32": ([4096], [15_600.0]),
            "gpu:0 float16": ([4096], [156_000.0]),
        },
        "bandwidth_gbs": {"gpu:0": 1_244.0},
    }
    lines = hardware.gpu_roof_shares(info, limits)
    assert "A100 Tensor Core GPU datasheet" in lines[0]
    # measured TFLOP/s, its share of the datasheet, the datasheet's figure (float32: and TF32's)
    assert numbers(lines[1]) == [32, 15.6, 80, 19.5, 10, 32, 156]
    assert numbers(lines[2]) == [16, 156.0, 50, 312.0]
    assert lines[3].startswith("  memory:") and numbers(lines[3]) == [1244, 80, 1555]
    assert lines[4] == "gpu:1 (Some New GPU): unknown GPU: no datasheet figure"
    assert (
        hardware.gpu_roof_shares({"tensorflow_devices": [], "gpus": []}, limits) == []
    )
