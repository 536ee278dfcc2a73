"""helpers.roofline: FLOPs per picture (two methods), the measured peak, published peaks."""

import json

from helpers import hardware, models, roofline
from helpers.published import GPU_DATASHEETS

import keras
import pytest


def profiler_flops(model):
    """FLOPs per op type for one image, counted by TensorFlow's graph profiler."""
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2,
    )

    spec = tf.TensorSpec((1, *model.input_shape[1:]), tf.float32)
    forward = tf.function(lambda x: model(x, training=False), autograph=False)
    graph = convert_variables_to_constants_v2(forward.get_concrete_function(spec)).graph
    options = tf.compat.v1.profiler.ProfileOptionBuilder.float_operation()
    options["output"] = "none"
    report = tf.compat.v1.profiler.profile(graph=graph, cmd="op", options=options)
    counts, todo = {}, list(report.children)
    while todo:  # the "op" view nests op types in a chain; float_ops is each type's own count
        node = todo.pop()
        counts[node.name] = node.float_ops
        todo += node.children
    return counts


@pytest.mark.parametrize("name", list(roofline.MODELS))
def test_flops_from_layer_shapes_match_the_tensorflow_profiler(name):
    model = roofline.build(name)
    counted = profiler_flops(model)
    assert roofline.flops_per_image(model) == counted["Conv2D"] + counted.get("MatMul", 0)


def test_flops_of_a_tiny_net_by_hand():
    model = keras.Sequential([keras.Input((5, 5, 1)), keras.layers.Conv2D(2, 3),
                              keras.layers.Flatten(), keras.layers.Dense(3)])
    # conv: 3x3 outputs x 2 filters, 9 multiply-adds each; dense: 18 inputs x 3 outputs
    assert roofline.flops_per_image(model) == 2 * (3 * 3 * 2 * 9) + 2 * (18 * 3)


def test_depthwise_convolutions_count_so_mobilenet_matches_its_paper():
    # MobileNet (Howard et al., 2017), 0.25 width at 224 px: 41 million multiply-adds, nearly
    # all in its depthwise and pointwise convolutions (the 1000-way top adds 0.26 million)
    base = models.imagenet_base("mobilenet_0.25", 224)
    assert abs(roofline.flops_per_image(base) / 2 - 41e6) / 41e6 < 0.03
    depthwise = keras.Sequential([keras.Input((4, 4, 2)), keras.layers.DepthwiseConv2D(3)])
    assert roofline.flops_per_image(depthwise) == 2 * (2 * 2 * 2) * 9  # 2x2x2 outputs, 9 each


def test_cifar10_net_matches_the_tensorflow_tutorial():
    model = models.cifar10_net()
    assert model.count_params() == 1_068_298  # the tutorial's own figure
    multiply_adds = roofline.flops_per_image(model) / 2
    assert abs(multiply_adds - 19.5e6) / 19.5e6 < 0.1  # "about 19.5M multiply-add operations"
    assert model.input_shape == (None, 24, 24, 3) and model.output_shape == (None, 10)


def test_deeper_nets_need_more_arithmetic_per_picture_and_per_byte():
    nets = [roofline.build(n) for n in ("cats_dogs_original", "cats_dogs_128px", "cats_dogs_deep")]
    flops = [roofline.flops_per_image(n) for n in nets]
    intensity = [roofline.arithmetic_intensity(n) for n in nets]
    assert flops[1] > 10 * flops[0] and flops[2] > 4 * flops[1]
    assert intensity == sorted(intensity) and intensity[2] > 5 * intensity[0]


def test_the_measured_peak_is_the_best_multiply_seen(monkeypatch):
    rates = iter([5.0, 7.0, 6.0, 9.0])
    monkeypatch.setattr(roofline, "matmul_flops", lambda *args, **kwargs: next(rates))
    monkeypatch.setattr(roofline, "_PEAKS", {})
    assert roofline.measured_peak("cpu:0", sizes=(64,), tries=2)["flops_per_s"] == 7.0
    assert roofline.measured_peak("cpu:0", sizes=(64,))["flops_per_s"] == 7.0  # a slow one: kept
    assert roofline.measured_peak("cpu:0", sizes=(64,))["flops_per_s"] == 9.0


def test_the_measured_bandwidth_is_the_best_copy_seen(monkeypatch):
    rates = iter([5.0, 8.0, 6.0, 7.0, 9.0])
    monkeypatch.setattr(roofline, "copy_bandwidth", lambda *args, **kwargs: next(rates))
    monkeypatch.setattr(roofline, "_BANDWIDTHS", {})
    assert roofline.measured_bandwidth("cpu:0", 16) == 8.0  # the best of the first three
    assert roofline.measured_bandwidth("cpu:0", 16) == 8.0  # a slower one: kept
    assert roofline.measured_bandwidth("cpu:0", 16) == 9.0


def test_matmul_and_bandwidth_are_measured():
    assert hardware.devices()[0] == "cpu:0"
    flops = roofline.matmul_flops(256, repeats=2)
    assert 1e8 < flops < 1e14  # a CPU does between 0.1 GFLOP/s and 100 TFLOP/s
    assert 1e8 < roofline.copy_bandwidth(16, repeats=2) < 1e13


@pytest.mark.parametrize("reported, sheet", [
    ("Tesla V100-SXM2-16GB", "V100"), ("NVIDIA A100-SXM4-40GB", "A100"), ("NVIDIA H200", "H200"),
    ("NVIDIA H100 80GB HBM3", "H100"), ("Tesla T4", "T4"), ("NVIDIA L4", "L4"),
    ("NVIDIA L40S", None), ("NVIDIA RTX A1000", None), ("NVIDIA GeForce RTX 4090", None),
    (None, None)])
def test_a_gpu_gets_the_peak_of_its_own_datasheet_and_of_no_other(reported, sheet):
    # names as nvidia-smi and TensorFlow report them; an L40S is not an L4, an A1000 no A100
    expected = GPU_DATASHEETS[sheet]["tflops"]["float32"] * 1e12 if sheet else None
    assert roofline.published_peak(reported) == expected


def test_tf32_is_listed_only_for_ampere_and_newer():
    assert roofline.published_peak("NVIDIA A100-SXM4-40GB", "tf32") == 156e12
    assert roofline.published_peak("Tesla V100-SXM2-16GB", "tf32") is None
    assert roofline.published_peak("Tesla V100-SXM2-16GB", "bfloat16") is None  # Volta: no bf16


def test_balance_verdicts():
    assert roofline.balance_verdict(1.0) == roofline.balance_verdict(2.9) == "within 3x"
    assert roofline.balance_verdict(1 / 2.9) == "within 3x"
    assert roofline.balance_verdict(3.1) == "more than 3x higher"
    assert roofline.balance_verdict(0.3) == "more than 3x lower"
    assert roofline.balance_verdict(3.04) == "within 3x"  # printed as 3.0x beside it


def test_datasheet_balance_points_of_the_v100():
    table = roofline.datasheet_balance_points(gpus=("V100",))
    row = table.iloc[0]
    # 15.7 and 125 TFLOP/s over 900 GB/s
    assert (row["float32"], row["TF32"], row["16-bit"]) == (17, "none", 139)
    judged = roofline.datasheet_balance_points(reference=17.4, gpus=("V100",)).iloc[0]
    assert judged["float32 / this CPU's float32"] == "1.0x: within 3x"
    assert judged["16-bit / this CPU's float32"] == "8.0x: more than 3x higher"
    assert len(roofline.datasheet_balance_points()) == len(GPU_DATASHEETS)


def _limits(gflops, gbs, cpu):
    return {"matmul_gflops": {"cpu:0 float32": ([512, 1024], gflops)},
            "bandwidth_gbs": {"cpu:0": gbs}, "hardware": {"cpu": {"model": cpu}}}


def test_a_busy_rerun_of_notebook_00_never_lowers_the_stored_roofs(tmp_path):
    path = tmp_path / "limits.json"
    assert roofline.save_limits(_limits([100.0, 200.0], 20.0, "X"), path) == []
    kept = roofline.save_limits(_limits([60.0, 90.0], 25.0, "X"), path)  # busier multiply
    stored = json.loads(path.read_text())
    assert kept == ["cpu:0 float32"] and max(stored["matmul_gflops"]["cpu:0 float32"][1]) == 200
    assert stored["bandwidth_gbs"]["cpu:0"] == 25.0  # the faster copy of this run
    roofline.save_limits(_limits([60.0, 90.0], 10.0, "another CPU"), path)  # another machine
    assert max(json.loads(path.read_text())["matmul_gflops"]["cpu:0 float32"][1]) == 90


def test_the_machine_load_line_says_how_fast_the_machine_runs_now(monkeypatch):
    for cache in ("_PEAKS", "_BANDWIDTHS"):  # this test's own, restored after it
        monkeypatch.setattr(roofline, cache, {})
    stored = _limits([100.0, 200.0], 20.0, "X")
    for now, says in ((0.5, "at 50 % of the speed notebook 00 measured: consistent with other"),
                      (1.0, "at 100 % of the speed notebook 00 measured: about as fast as then"),
                      (1.3, "at 130 %"), (0.9, "at 90 %")):
        monkeypatch.setattr(roofline, "matmul_flops", lambda *a, now=now, **k: now * 200e9)
        share, line = roofline.speed_now(stored)
        assert share == pytest.approx(now) and says in line
    # 00 has not run: limits() measured them seconds ago, so "as fast" says nothing of load
    monkeypatch.setattr(roofline, "matmul_flops", lambda *a, **k: 200e9)
    line = roofline.speed_now({**stored, "measured_now": True})[1]
    assert "of the speed measured a moment ago (notebook 00 has not run here)" in line
    assert "says nothing about other work" in line and "notebook 00 measured" not in line


def test_the_roofs_keep_the_stored_best_only_where_asked_and_speed_now_changes_none(monkeypatch):
    for cache in ("_PEAKS", "_BANDWIDTHS"):  # this test's own, restored after it
        monkeypatch.setattr(roofline, cache, {})
    stored = _limits([100.0, 200.0], 20.0, "X")  # notebook 00's best: 200 GFLOP/s, 20 GB/s
    monkeypatch.setattr(roofline, "matmul_flops", lambda *a, **k: 50e9)  # busy now
    monkeypatch.setattr(roofline, "copy_bandwidth", lambda *a, **k: 5e9)
    before = roofline.measured_peak("cpu:0", "float32", (512,))["flops_per_s"]
    roofline.speed_now(stored)  # a question: it must not change the next answers
    assert roofline.measured_peak("cpu:0", "float32", (512,))["flops_per_s"] == before == 50e9
    assert roofline.measured_bandwidth("cpu:0", 64) == 5e9
    peak = roofline.measured_peak("cpu:0", "float32", (512,), stored=stored)
    assert peak["flops_per_s"] == 200e9 and peak["stored"]  # 00's best, asked for
    assert roofline.measured_bandwidth("cpu:0", 64, stored=stored) == 20e9
    roofs = roofline.measured("cpu:0", (512,), 64, stored=stored)
    assert roofs["flops_per_s"]["float32"] == 200e9 and roofs["bytes_per_s"] == 20e9


def test_training_bytes_match_a_hand_count_of_a_two_layer_network():
    model = keras.Sequential([keras.Input((8, 8, 3)), keras.layers.Conv2D(4, 3),
                              keras.layers.Flatten(), keras.layers.Dense(2)])
    # input read once: 8*8*3 float32 = 768 B; the convolution's 6*6*4 = 144 outputs touched 5
    # times (2,880 B) and its 112 parameters 40 B a step over 4 pictures (1,120 B); Flatten moves
    # nothing; the Dense layer's 2 outputs (40 B) and 290 parameters (2,900 B)
    assert roofline.training_bytes(model, batch=4) == 768 + 2880 + 1120 + 0 + 40 + 2900
    bytes_bf16 = roofline.training_bytes(model, batch=4, dtype="bfloat16")
    assert bytes_bf16 == 384 + 1440 + 1120 + 20 + 2900
    flops = 3 * (2 * 108 * 36 + 2 * 288)  # training = 3 x forward
    assert roofline.training_intensity(model, batch=4) == pytest.approx(flops / 7708)
    # each layer at its own roof: the convolution compute-bound, the Dense layer memory-bound
    seconds = roofline.layer_roofline_seconds(model, 4, flops_per_s=1e6, bytes_per_s=1e6)
    assert seconds == pytest.approx(768 / 1e6 + 3 * 7776 / 1e6 + 2940 / 1e6)


def test_limits_measured_now_say_so_and_the_saved_ones_do_not(tmp_path, monkeypatch, capsys):
    for cache in ("_PEAKS", "_BANDWIDTHS"):  # this test's own, restored after it
        monkeypatch.setattr(roofline, cache, {})
    monkeypatch.setattr(roofline, "matmul_flops", lambda *a, **k: 100e9)
    monkeypatch.setattr(roofline, "copy_bandwidth", lambda *a, **k: 10e9)
    found = roofline.limits(tmp_path / "limits.json")  # no notebook 00 here
    assert found["measured_now"] and "Notebook 00 has not run here" in capsys.readouterr().out
    assert "measured_now" not in roofline.limits(tmp_path / "limits.json")  # read as 00's
