"""helpers.roofline: FLOPs and bytes per picture, predictions from roofs, points, the blog."""

import math

from helpers import models, results, roofline, roofs

import keras
import pytest
from conftest import numbers


def tiny_dense():
    # 2 x 100 x 10 = 2,000 FLOPs forward, 6,000 to train. At batch 1,010 one training step moves
    # per picture the input (100 float32: 400 B), the 10 outputs five times (200 B) and the 1,010
    # parameters' 40 B a step shared by the batch (40 B): 640 B, so 9.375 FLOP/byte. The forward
    # pass alone, by the same count: 400 B, the outputs written and read (80 B), the weights read
    # once (4 B a picture): 484 B
    return keras.Sequential([keras.Input((100,)), keras.layers.Dense(10)])


def test_forward_and_training_bytes_are_one_count():
    # one touch would say 444
    assert roofline.forward_bytes(tiny_dense(), batch=1010) == 484
    assert roofline.training_bytes(tiny_dense(), batch=1010) == 640
    assert roofline.arithmetic_intensity(tiny_dense(), 1010) == pytest.approx(
        2000 / 484
    )
    assert counted_alike()


def counted_alike():
    # weights shared by a huge batch weigh nothing: each activation value is then touched twice
    # forward and five times in training, for 3x the FLOPs, and the input read once in both, so
    # training's intensity is at least 3 x 2 / 5 = 1.2x the forward one; a count of one touch
    # forward (or of the training step's five) gives at most 0.6x
    nets = [models.mnist_cnn(), models.cifar10_net(), models.cats_dogs_net("3")]
    return all(
        roofline.training_intensity(n, 10**9)
        >= 1.2 * roofline.arithmetic_intensity(n, 10**9)
        for n in nets
    )


def test_a_count_that_touches_forward_once_fails(monkeypatch):
    # training still 5
    monkeypatch.setattr(roofline, "TOUCHES", {"forward": 1, "backward": 4})
    assert roofline.training_bytes(tiny_dense(), batch=1010) == 640
    assert roofline.forward_bytes(tiny_dense(), batch=1010) == 444
    assert not counted_alike()


def test_the_sentence_comparing_intensities_follows_the_numbers():
    assert roofline.compare_intensities([10.0, 20.0], [12.0, 24.0]) == (
        "Training does 3x the forward FLOPs and moves 2.5x to 2.5x the forward bytes: its "
        "intensity is 1.20x the forward figure, higher."
    )
    mixed = roofline.compare_intensities([10.0, 20.0], [5.0, 24.0])
    assert "0.50x to 1.20x the forward figure, higher for some networks, lower" in mixed
    assert mixed.startswith("Training does 3x the forward FLOPs and moves 2.5x to 6.0x")
    assert roofline.compare_intensities([10.0], [6.0]).endswith(
        "0.60x the forward figure, lower."
    )


def test_compulsory_bytes_are_adams_state_both_ways_and_the_pictures_beyond_the_cache():
    # 1,010 weights, each with Adam's two moments: 12,120 B read and written; 10 pictures of 100
    # numbers, 1 B each at the least (uint8): 1,000 B read; per picture at batch 10
    assert roofline.compulsory_bytes(tiny_dense(), 10) == (12_120 + 1_000 + 12_120) / 10
    assert roofline.compulsory_bytes(tiny_dense(), 10, 5_000) == (8_120 + 7_120) / 10
    assert roofline.compulsory_bytes(tiny_dense(), 10, 20_000) == 0  # it all fits
    for name in models.MODELS:  # a part of the cache-blind count, for every network
        net, batch = models.build(name), models.MODELS[name][2]
        assert roofline.compulsory_bytes(net, batch) < roofline.training_bytes(
            net, batch
        )
        for sheet in roofs.published_roofs(("V100", "A100")):
            p = roofline.predict(net, sheet, batch=batch, cache=0)
            # the estimate never beats the bound
            assert p["upper_bound"] >= p["pictures_per_s"]


def test_the_roofline_is_the_lower_of_the_memory_and_the_compute_roof():
    # 100 GFLOP/s and 10 GB/s meet at the ridge point 100 / 10 = 10 FLOP per byte
    assert roofline.attainable(5, 100e9, 10e9) == 50e9  # below the ridge: memory-bound
    assert roofline.attainable(10, 100e9, 10e9) == 100e9
    assert roofline.attainable(50, 100e9, 10e9) == 100e9  # above it: compute-bound


def test_a_prediction_is_the_binding_roof_over_the_training_flops():
    device = roofs.roofs("toy", 1e4, {"float32": 1e6, "bfloat16": 1.5e5}, "made up")
    # ridge at 100: memory-bound
    slow = roofline.predict(tiny_dense(), device, batch=1010)
    assert (slow["intensity"], slow["bound"], slow["training_flops"]) == (
        9.375,
        "memory",
        6000,
    )
    assert slow["pictures_per_s"] == pytest.approx(9.375 * 1e4 / 6000)
    # bfloat16: 200 + 100 + 40 B (weights and Adam stay float32): 17.6 FLOP/byte, over the
    # bfloat16 ridge at 15: compute-bound
    half = roofline.predict(tiny_dense(), device, "bfloat16", batch=1010)
    assert half["intensity"] == pytest.approx(6000 / 340) and half["bound"] == "compute"
    assert half["pictures_per_s"] == pytest.approx(1.5e5 / 6000)
    # each layer at its own roof: the input read, then the Dense layer memory-bound
    assert slow["per_layer_pictures_per_s"] == pytest.approx(
        1 / (400 / 1e4 + 240 / 1e4)
    )
    # the upper bound: the compulsory bytes, (12,120 + 101,000 + 12,120) / 1,010 = 124 B a
    # picture without a cache, put 48.4 FLOP/byte under the memory roof; with unknown caches
    # (the toy's, a datasheet's) or ones that hold it all, only the compute roof bounds
    tight = roofline.predict(tiny_dense(), device, batch=1010, cache=0)
    assert tight["compulsory_bytes"] == 124 and tight["upper_bound_roof"] == "memory"
    assert tight["upper_bound"] == pytest.approx(6000 / 124 * 1e4 / 6000)
    for cache in (None, 10**6):
        free = roofline.predict(tiny_dense(), device, batch=1010, cache=cache)
        assert free["upper_bound"] == pytest.approx(1e6 / 6000)
        assert free["upper_bound_roof"] == "compute" and free["compulsory_bytes"] == 0


def test_bad_roofs_and_a_missing_format_get_clear_errors():
    with pytest.raises(ValueError, match="positive bandwidth"):
        roofs.roofs("cpu:0", 0, {"float32": 1e9}, "measured here")
    device = roofs.roofs("cpu:0", 1e9, {"float32": 1e9}, "measured here")
    with pytest.raises(ValueError, match="no bfloat16 roof; it has float32"):
        roofline.predict(tiny_dense(), device, "bfloat16")


def test_a_record_becomes_a_point_with_its_prediction_and_share():
    net = models.cifar10_net()
    flops = 3 * roofline.flops_per_image(net)
    record = {
        "model": "cifar10_net",
        "device": "cpu:0",
        "batch_size": 128,
        "dtype": "float32",
        "augment_in_model": False,
        "images_per_s": 500.0,
        "achieved_flops_per_s": 500.0 * flops,
        "training_flops_per_image": flops,
    }
    device = roofs.roofs("cpu:0", 20e9, {"float32": 200e9}, "measured here")
    (point,) = roofline.points([record], [device])
    assert point["intensity"] == pytest.approx(roofline.training_intensity(net, 128))
    # about 72 FLOP/byte to train, far above the ridge at 10: compute-bound at 200 GFLOP/s
    assert point["predicted"] == pytest.approx(200e9 / flops)
    assert (
        point["ratio"] == pytest.approx(500.0 * flops / 200e9)
        and point["bound"] == "compute"
    )
    (elsewhere,) = roofline.points([{**record, "device": "gpu:0"}], [device])
    assert elsewhere["predicted"] is None and elsewhere["ratio"] is None
    # no probe in the record
    assert "of the multiply then" not in roofline.table([point])
    # the multiply timed right before and after the run: 160 and 80 GFLOP/s (busier after)
    (probed,) = roofline.points([{**record, "multiply_now": [160e9, 80e9]}], [device])
    achieved = 500.0 * flops
    assert probed["of_multiply_now"] == pytest.approx(
        [achieved / 80e9, achieved / 160e9]
    )
    shown = roofline.table([probed, point])["of the multiply then"].tolist()
    # lowest share first; a point without a probe shows none
    assert shown == [
        f"{roofline.share(achieved / 160e9)}-{roofline.share(achieved / 80e9)}",
        "-",
    ]
    (steady,) = roofline.points([{**record, "multiply_now": [160e9, 160e9]}], [device])
    assert roofline.table([steady])["of the multiply then"][0] == roofline.share(
        achieved / 160e9
    )


def test_readings_follow_the_share_of_the_prediction():
    assert [
        roofline.reading(r, short=True)
        for r in (1.3, 1.01, 1.004, 0.9, 0.5, 0.1)
        # just above is above, judged as printed: 100 % is not above
    ] == [
        "above the roof",
        "above the roof",
        "near the roof",
        "near the roof",
        "below the roof",
        "far below the roof",
    ]
    assert "would take 45% of each step" in roofline.reading(0.45)
    assert roofline.reading(0.8, bound="memory") == (
        "near the roof: consistent with memory bandwidth setting the pace"
    )
    assert (roofline.share(0.0023), roofline.share(0.11)) == ("0.2%", "11%")


def test_a_run_above_its_roof_blames_the_prediction_or_low_roofs():
    # the roofs are notebook 00's best or better: above them, the FLOP count or the roof's
    # multiply is wrong, or every multiply so far ran busy; faster now than 00: run 00 again
    for now in (None, 0.5, 1.0):
        words = roofline.reading(1.3, speed_now=now)
        assert "either the prediction is wrong (its FLOP count" in words
        # both 00 and now busy
        assert "ran beside other work and the roofs are low" in words
    # caches beat the cache-blind count
    assert roofline.reading(1.3, bound="memory").endswith(
        "its memory roof is an estimate, not a bound"
    )
    assert "run notebook 00 again" in roofline.reading(1.3, speed_now=1.4)
    over = {
        "label": "net",
        "where": "cpu:0",
        "ratio": 1.2,
        "bound": "compute",
        "pictures_per_s": 1.0,
        "flops_per_s": 1.0,
    }
    assert roofline.summary([over]).startswith(
        "Above the roof: net on cpu:0 (120%); the roofs are the fastest multiply"
    )
    assert "run notebook 00 again" in roofline.summary([over], speed_now=1.3)


def test_every_recorded_run_stays_under_its_upper_bound():
    # a record keeps its own best multiply (matmul_peak) but no bandwidth and no cache size: the
    # caches could hold every compulsory byte, so the compute roof alone bounds it
    runs = results.load()
    assert runs, "no bench record in results/"
    for r in runs:
        device = roofs.roofs(
            r["device"],
            math.inf,
            {r["dtype"]: r["matmul_peak"]["flops_per_s"]},
            "recorded",
            kind="recorded",
        )
        model = models.build(r["model"], r["augment_in_model"])
        p = roofline.predict(model, device, r["dtype"], r["batch_size"])
        assert p["upper_bound_roof"] == "compute", (r["model"], r["date"])
        assert r["images_per_s"] <= p["upper_bound"], (
            r["model"],
            r["date"],
            p["upper_bound"],
        )


def test_the_summary_names_the_closest_and_the_furthest_and_what_they_compute():
    def point(label, ratio, flops_per_picture):
        return {
            "label": label,
            "where": "cpu:0",
            "ratio": ratio,
            "pictures_per_s": 10.0,
            "flops_per_s": 10.0 * flops_per_picture,
        }

    line = roofline.summary([point("deep", 0.9, 5e9), point("small", 0.3, 1e8)])
    # cpu:0 at 90 % of its prediction, cpu:0 at 30 %; the closer one's arithmetic against the
    # other's per step and per picture: 50x both
    assert (
        numbers(line) == [0, 90, 0, 30, 50.0, 50.0]
        and "not timed in alternation" in line
    )
    assert (
        line.startswith("Closest to its roof: deep") and "furthest below: small" in line
    )
    assert (
        "ranks nothing by itself" in line
        and "the fixed-cost floor and the profile" in line
    )
    bigger = dict(point("small", 0.3, 1e8), batch=4)
    assert numbers(roofline.summary([dict(point("deep", 0.9, 5e9), batch=1), bigger]))[
        4:6
    ] == [12.5, 50.0]  # per step 50x / 4: the other takes 4 pictures a step
    assert "no run stands out" in roofline.summary(
        [point("a", 0.5, 1), point("b", 0.45, 2)]
    )
    busy = roofline.summary(
        [point("fast", 1.5, 1e9), point("deep", 0.9, 5e9), point("small", 0.3, 1e8)]
    )
    assert busy.startswith("Above the roof: fast") and numbers(busy)[:2] == [0, 150]
    assert "Closest to its roof: deep on cpu:0 (90%" in busy


def test_the_blogs_v100_ran_far_below_its_roof_and_supports_both_of_its_explanations():
    points = {p["step"]: p for p in roofline.blog_points()}
    # the V100's float32 roof is 15.7 TFLOP/s from 17.4 FLOP/byte on (900 GB/s); counted with
    # the backward pass and Adam, step 2 trains at 15.5 FLOP/byte, left of the ridge
    assert all(p["flops_per_s"] < 15.7e12 for p in points.values())
    assert {s: p["bound"] for s, p in points.items()} == {
        "2": "memory",
        "2b": "compute",
        "3": "compute",
        "cifar10": "compute",
    }
    # cat/dog: under 3 %
    assert max(points[s]["ratio"] for s in ("2", "2b", "3")) < 0.03
    assert 0.05 < points["cifar10"]["ratio"] < 0.2  # CIFAR-10 at batch 512: about 11 %
    words = roofline.blog_reading(list(points.values()))
    assert (
        "consistent with the blog's explanation, an input pipeline on the CPU" in words
    )
    assert "consistent with the blog's reading that more arithmetic" in words


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
    # the "op" view nests op types in a chain; float_ops is each type's own count
    while todo:
        node = todo.pop()
        counts[node.name] = node.float_ops
        todo += node.children
    return counts


@pytest.mark.parametrize("name", list(models.MODELS))
def test_flops_from_layer_shapes_match_the_tensorflow_profiler(name):
    model = models.build(name)
    counted = profiler_flops(model)
    assert roofline.flops_per_image(model) == counted["Conv2D"] + counted.get(
        "MatMul", 0
    )


def test_flops_of_a_tiny_net_by_hand():
    model = keras.Sequential(
        [
            keras.Input((5, 5, 1)),
            keras.layers.Conv2D(2, 3),
            keras.layers.Flatten(),
            keras.layers.Dense(3),
        ]
    )
    # conv: 3x3 outputs x 2 filters, 9 multiply-adds each; dense: 18 inputs x 3 outputs
    assert roofline.flops_per_image(model) == 2 * (3 * 3 * 2 * 9) + 2 * (18 * 3)


def test_depthwise_convolutions_count_so_mobilenet_matches_its_paper():
    # MobileNet (Howard et al., 2017), 0.25 width at 224 px: 41 million multiply-adds, nearly
    # all in its depthwise and pointwise convolutions (the 1000-way top adds 0.26 million)
    base = models.imagenet_base("mobilenet_0.25", 224)
    assert abs(roofline.flops_per_image(base) / 2 - 41e6) / 41e6 < 0.03
    depthwise = keras.Sequential(
        [keras.Input((4, 4, 2)), keras.layers.DepthwiseConv2D(3)]
    )
    # 2x2x2 outputs, 9 each
    assert roofline.flops_per_image(depthwise) == 2 * (2 * 2 * 2) * 9


def test_cifar10_net_matches_the_tensorflow_tutorial():
    model = models.cifar10_net()
    assert model.count_params() == 1_068_298  # the tutorial's own figure
    multiply_adds = roofline.flops_per_image(model) / 2
    # "about 19.5M multiply-add operations"
    assert abs(multiply_adds - 19.5e6) / 19.5e6 < 0.1
    assert model.input_shape == (None, 24, 24, 3) and model.output_shape == (None, 10)


def test_deeper_nets_need_more_arithmetic_per_picture_and_per_byte():
    nets = [
        models.build(n)
        for n in ("cats_dogs_original", "cats_dogs_128px", "cats_dogs_deep")
    ]
    flops = [roofline.flops_per_image(n) for n in nets]
    intensity = [roofline.arithmetic_intensity(n) for n in nets]
    assert flops[1] > 10 * flops[0] and flops[2] > 4 * flops[1]
    assert intensity == sorted(intensity) and intensity[2] > 5 * intensity[0]


def test_training_bytes_match_a_hand_count_of_a_two_layer_network():
    model = keras.Sequential(
        [
            keras.Input((8, 8, 3)),
            keras.layers.Conv2D(4, 3),
            keras.layers.Flatten(),
            keras.layers.Dense(2),
        ]
    )
    # input read once: 8*8*3 float32 = 768 B; the convolution's 6*6*4 = 144 outputs touched 5
    # times (2,880 B) and its 112 parameters 40 B a step over 4 pictures (1,120 B); Flatten moves
    # nothing; the Dense layer's 2 outputs (40 B) and 290 parameters (2,900 B)
    assert roofline.training_bytes(model, batch=4) == 768 + 2880 + 1120 + 0 + 40 + 2900
    bytes_bf16 = roofline.training_bytes(model, batch=4, dtype="bfloat16")
    assert bytes_bf16 == 384 + 1440 + 1120 + 20 + 2900
    flops = 3 * (2 * 108 * 36 + 2 * 288)  # training = 3 x forward
    assert roofline.training_intensity(model, batch=4) == pytest.approx(flops / 7708)
    # each layer at its own roof: the convolution compute-bound, the Dense layer memory-bound
    seconds = roofline.layer_roofline_seconds(
        model, 4, flops_per_s=1e6, bytes_per_s=1e6
    )
    assert seconds == pytest.approx(768 / 1e6 + 3 * 7776 / 1e6 + 2940 / 1e6)
