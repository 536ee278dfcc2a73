"""helpers.results: bench records saved, read back (other files left alone) and shown."""

import json

from helpers import bench, results

import pytest


def test_save_load_and_table(tmp_path, fixed_peak):
    record = bench.run("mnist_cnn", batch_size=8, steps=3, warmup=0, command="python -m x")
    path = results.save(record, tmp_path)
    (tmp_path / "another_tool.json").write_text('{"accuracy": 0.8}')  # not a benchmark record
    assert path.name.endswith("_mnist_cnn_cpu0_synthetic_b8_float32.json")
    loaded = results.load(tmp_path)
    assert loaded == [json.loads(path.read_text())] and loaded[0]["command"] == "python -m x"
    shown = results.table(loaded)
    assert list(shown.columns[:3]) == ["model", "machine", "source"]
    assert shown.loc[0, "model"] == "mnist_cnn" and shown.loc[0, "source"] == "synthetic"


def test_a_failed_write_keeps_the_record_that_was_there(tmp_path):
    path = results.write_json(tmp_path / "run.json", {"accuracy": 0.8})
    with pytest.raises(TypeError):
        results.write_json(path, {"accuracy": object()})  # cannot be written as JSON
    assert json.loads(path.read_text()) == {"accuracy": 0.8}
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]
