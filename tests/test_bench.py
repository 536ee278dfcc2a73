"""helpers.bench: FLOP counts (two methods), records, the reader, targets and the CLI."""

import json

from helpers import bench, models, pipelines

import keras
import numpy as np
import pytest


@pytest.mark.parametrize("name", list(bench.MODELS))
def test_flops_from_layer_shapes_match_the_tensorflow_profiler(name):
    model = bench.build(name)
    counted = bench.profiler_flops(model)
    assert bench.flops_per_image(model) == counted["Conv2D"] + counted.get("MatMul", 0)


def test_flops_of_a_tiny_net_by_hand():
    model = keras.Sequential([keras.Input((5, 5, 1)), keras.layers.Conv2D(2, 3),
                              keras.layers.Flatten(), keras.layers.Dense(3)])
    # conv: 3x3 outputs x 2 filters, 9 multiply-adds each; dense: 18 inputs x 3 outputs
    assert bench.flops_per_image(model) == 2 * (3 * 3 * 2 * 9) + 2 * (18 * 3)


def test_cifar10_net_matches_the_tensorflow_tutorial():
    model = models.cifar10_net()
    assert model.count_params() == 1_068_298  # the tutorial's own figure
    multiply_adds = bench.flops_per_image(model) / 2
    assert abs(multiply_adds - 19.5e6) / 19.5e6 < 0.1  # "about 19.5M multiply-add operations"
    assert model.input_shape == (None, 24, 24, 3) and model.output_shape == (None, 10)


def test_deep_net_has_more_than_thirty_conv_layers():
    model = models.cats_dogs_deep()
    convs = [layer for layer in model.layers if isinstance(layer, keras.layers.Conv2D)]
    assert len(convs) >= 30 and model.output_shape == (None, 1)


def test_deeper_nets_need_more_arithmetic_per_picture_and_per_byte():
    nets = [bench.build(n) for n in ("cats_dogs_original", "cats_dogs_128px", "cats_dogs_deep")]
    flops = [bench.flops_per_image(n) for n in nets]
    intensity = [bench.arithmetic_intensity(n) for n in nets]
    assert flops[1] > 10 * flops[0] and flops[2] > 4 * flops[1]
    assert intensity == sorted(intensity) and intensity[2] > 5 * intensity[0]


@pytest.fixture
def fixed_peak(monkeypatch):
    monkeypatch.setattr(bench, "measured_peak",
                        lambda device="cpu:0", dtype="float32", sizes=None:
                        {"flops_per_s": 1e11, "n": 2048, "dtype": dtype})


def test_a_synthetic_run_gives_a_complete_record(fixed_peak):
    record = bench.run("mnist_cnn", batch_size=16, steps=4, warmup=1)
    assert record["images_per_s"] > 0 and record["step_s"]["p10"] <= record["step_s"]["p90"]
    assert record["input_wait_share"] == 0.0 and record["ratio_to_synthetic"] == 1.0
    assert record["training_flops_per_image"] == 3 * record["forward_flops_per_image"]
    expected = record["training_flops_per_image"] * record["images_per_s"] / 1e11
    assert record["peak_share"] == pytest.approx(expected)
    assert record["hardware"]["cpu"]["logical_cores"] >= 1 and record["backend"] == "tensorflow"
    assert record["kind"] == "recorded" and "bench.run('mnist_cnn'" in record["command"]
    json.dumps(record)  # a record must be storable as JSON


def test_a_python_loader_run_measures_its_input_wait(fixed_peak):
    record = bench.run("cats_dogs_original", batch_size=8, steps=3, warmup=1, source="python")
    assert record["workers"] == 1 and record["synthetic_images_per_s"] > 0
    assert record["ratio_to_synthetic"] == pytest.approx(
        record["images_per_s"] / record["synthetic_images_per_s"])


def test_save_load_and_table(tmp_path, fixed_peak):
    record = bench.run("mnist_cnn", batch_size=8, steps=3, warmup=0, command="python -m x")
    path = bench.save(record, tmp_path)
    (tmp_path / "another_tool.json").write_text('{"accuracy": 0.8}')  # not a benchmark record
    assert path.name.endswith("_mnist_cnn_cpu0_synthetic_b8_float32.json")
    loaded = bench.load(tmp_path)
    assert loaded == [json.loads(path.read_text())] and loaded[0]["command"] == "python -m x"
    shown = bench.table(loaded)
    assert list(shown.columns[:3]) == ["model", "machine", "source"]
    assert shown.loc[0, "model"] == "mnist_cnn" and shown.loc[0, "source"] == "synthetic"


def test_targets_report_met_and_not_met():
    def rec(model, source, rate, ratio=1.0, share=0.0, workers=None):
        return {"model": model, "source": source, "device": "cpu:0", "images_per_s": rate,
                "ratio_to_synthetic": ratio, "peak_share": share, "workers": workers,
                "use_multiprocessing": False}

    lines = bench.targets([rec("cats_dogs_original", "jpeg", 300, ratio=0.97),
                           rec("cats_dogs_original", "python", 100, workers=1),
                           rec("cats_dogs_128px", "synthetic", 30, share=0.2)])
    assert "97% (target >= 95%: met)" in lines[0]
    assert "3.00x (target >= 1.5x: met)" in lines[1]
    assert "20% (target >= 30%: NOT met)" in lines[2]


def test_bad_names_get_clear_errors():
    with pytest.raises(ValueError, match="cats_dogs_128px"):
        bench.run("resnet50")
    with pytest.raises(ValueError, match="synthetic"):
        bench.run("mnist_cnn", source="csv")
    with pytest.raises(ValueError, match="no JPEG source"):
        bench.run("mnist_cnn", source="jpeg", steps=3)


def test_cli_help_and_missing_model(capsys):
    with pytest.raises(SystemExit) as done:
        bench.main(["--help"])
    assert done.value.code == 0 and "--record" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="cifar10_net"):
        bench.main([])
    with pytest.raises(SystemExit, match="no JPEG source"):
        bench.main(["--model", "mnist_cnn", "--source", "jpeg", "--steps", "3"])


def test_published_figures_are_labelled_as_the_sources():
    shown = bench.published_table()
    assert "machine (source 000, not measured here)" in shown.columns
    assert "15,000-17,000 examples/s" in shown["published speed"].tolist()


def test_pillow_batches_are_real_augmented_pictures():
    paths, labels = pipelines.train_files(limit=8)
    plain = pipelines.PillowBatches(paths, labels, 64, 4, augment=False)
    augmented = pipelines.PillowBatches(paths, labels, 64, 4, augment=True, repeat=3)
    x, y = plain[0]
    assert x.shape == (4, 64, 64, 3) and x.dtype == np.float32 and 0 <= x.min() < x.max() <= 255
    assert len(plain) == 2 and len(augmented) == 6
    assert not np.array_equal(augmented[0][0], x) and np.array_equal(augmented[0][1], y)
    with pytest.raises(ValueError, match="batch_size"):
        pipelines.PillowBatches(paths, labels, 64, 100)


def test_tf_data_variants_give_the_same_batches_shape():
    paths, labels = pipelines.train_files(limit=8)
    for options in (dict(), dict(parallel=False, cache=False, prefetch=False),
                    dict(augment=models.augmentation(seed=1))):
        x, y = next(iter(pipelines.tf_data(paths, labels, 64, 4, **options)))
        assert tuple(x.shape) == (4, 64, 64, 3) and tuple(y.shape) == (4,)


def test_read_profile_finds_the_steps_and_the_input_wait(tmp_path):
    paths, labels = pipelines.train_files(limit=16)
    model = bench.build("cats_dogs_original")
    board = keras.callbacks.TensorBoard(str(tmp_path), profile_batch=(2, 3))
    model.fit(pipelines.tf_data(paths, labels, 64, 4), steps_per_epoch=4, epochs=1, verbose=0,
              shuffle=False, callbacks=[board])
    summary = pipelines.read_profile(tmp_path)
    assert summary["steps"] == 2 and summary["step_ms"] > 0
    assert 0 <= summary["waiting_share"] <= 1 and "Conv2D" in " ".join(summary["top_ops_ms"])
    assert 0 < summary["input_busy_ms"] and 0 < summary["compute_busy_ms"]
    with pytest.raises(FileNotFoundError, match="profile_batch"):
        pipelines.read_profile(tmp_path / "empty")


BLOCK_TENSORFLOW = ("import sys; sys.modules['tensorflow'] = None  # any import of it fails\n")


def run_python(code, backend):
    import os
    import subprocess
    import sys

    env = {**os.environ, "KERAS_BACKEND": backend, "COURSE_PROFILE": "smoke"}
    return subprocess.run([sys.executable, "-c", BLOCK_TENSORFLOW + code], env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_synthetic_path_needs_no_tensorflow():
    # Keras' numpy backend cannot train, but it shows that building the models, counting
    # their FLOPs and making synthetic data never import TensorFlow.
    pytest.importorskip("scipy", reason="Keras' numpy backend needs SciPy")
    done = run_python("from helpers import bench\n"
                      "net = bench.build('cifar10_net')\n"
                      "x, y = bench.synthetic_data(net, 4, 2)\n"
                      "print(bench.flops_per_image(net), x.shape, x.dtype)", "numpy")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[0] == "36941568"


def test_a_synthetic_run_on_jax():
    pytest.importorskip("jax", reason="JAX is not installed (the course pins only TensorFlow)")
    done = run_python("from helpers import bench\n"
                      "r = bench.run('cifar10_net', batch_size=8, steps=3, warmup=1)\n"
                      "print(r['backend'], r['images_per_s'] > 0)", "jax")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-2:] == ["jax", "True"]


def test_the_measured_peak_is_the_best_multiply_seen(monkeypatch):
    rates = iter([5.0, 7.0, 6.0, 9.0])
    monkeypatch.setattr(bench.peak, "matmul_flops", lambda *args, **kwargs: next(rates))
    monkeypatch.setattr(bench, "_PEAKS", {})
    assert bench.measured_peak("cpu:0", sizes=(64,), tries=2)["flops_per_s"] == 7.0
    assert bench.measured_peak("cpu:0", sizes=(64,))["flops_per_s"] == 7.0  # a slow one: kept
    assert bench.measured_peak("cpu:0", sizes=(64,))["flops_per_s"] == 9.0


def test_stacked_bars_and_utilization_grid_draw_every_part():
    from helpers import monitor, plots

    fig = plots.stacked_bars({"a": {"computing": 2.0, "waiting": 1.0}, "b": {"computing": 3.0}},
                             "ms per picture")
    heights = sorted(round(p.get_height(), 1) for p in fig.axes[0].patches)
    assert heights == [0.0, 1.0, 2.0, 3.0]  # b has no waiting part: a bar of height 0
    with monitor.Utilization(interval=0.02, gpus=False) as usage:
        sum(range(100000))
    fig = plots.utilization_grid({"one": usage, "two": usage, "three": usage}, columns=2)
    assert sum(bool(ax.lines) for ax in fig.axes) == 3 and len(fig.axes) == 4
