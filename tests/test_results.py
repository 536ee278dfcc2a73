"""helpers.results: bench records saved, read back (other files left alone) and shown."""

import json

from helpers import benchmark, results

import pytest


def test_save_load_and_table(tmp_path, fixed_peak):
    record = benchmark.run(
        "mnist_cnn", batch_size=8, steps=3, warmup=0, command="python -m x"
    )
    path = results.save(record, tmp_path)
    # not a benchmark record
    (tmp_path / "another_tool.json").write_text('{"accuracy": 0.8}')
    assert path.name.endswith("_mnist_cnn_cpu0_synthetic_b8_float32.json")
    loaded = results.load(tmp_path)
    assert (
        loaded == [json.loads(path.read_text())]
        and loaded[0]["command"] == "python -m x"
    )
    shown = results.table(loaded)
    assert list(shown.columns[:3]) == ["model", "machine", "source"]
    assert (
        shown.loc[0, "model"] == "mnist_cnn" and shown.loc[0, "source"] == "synthetic"
    )


def test_a_failed_write_keeps_the_record_that_was_there(tmp_path):
    path = results.write_json(tmp_path / "run.json", {"accuracy": 0.8})
    with pytest.raises(TypeError):
        results.write_json(path, {"accuracy": object()})  # cannot be written as JSON
    assert json.loads(path.read_text()) == {"accuracy": 0.8}
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_two_cpus_of_one_model_but_different_simd_get_different_names():
    """The recorded EPYCs differ: one has AVX-512 with bfloat16, one only AVX2."""

    def record(simd):
        cpu = {"model": "AMD EPYC", "usable_cores": 2, "simd": simd}
        return {"device": "cpu:0", "hardware": {"cpu": cpu, "gpus": []}}

    avx2 = results.machine_name(record(["sse4_2", "avx", "avx2", "fma"]))
    bf16 = results.machine_name(record(["avx2", "fma", "avx512f", "avx512_bf16"]))
    amx = results.machine_name(record(["avx2", "avx512f", "avx512_bf16", "amx_bf16"]))
    assert len({avx2, bf16, amx}) == 3
    assert "AVX2" in avx2 and "AVX-512 bf16" in bf16 and "AMX" in amx
