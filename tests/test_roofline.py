"""helpers.roofline: roofs, predictions from them, and the blog's V100 figures under its roof."""

import json

from helpers import config, models, roofline

import keras
import pytest
from conftest import numbers


def tiny_dense():
    # 2 x 100 x 10 = 2,000 FLOPs forward, 6,000 to train. At batch 1,010 one training step moves
    # per picture the input (100 float32: 400 B), the 10 outputs five times (200 B) and the 1,010
    # parameters' 40 B a step shared by the batch (40 B): 640 B, so 9.375 FLOP/byte
    return keras.Sequential([keras.Input((100,)), keras.layers.Dense(10)])


def test_the_roofline_is_the_lower_of_the_memory_and_the_compute_roof():
    # 100 GFLOP/s and 10 GB/s meet at the ridge point 100 / 10 = 10 FLOP per byte
    assert roofline.attainable(5, 100e9, 10e9) == 50e9  # below the ridge: memory-bound
    assert roofline.attainable(10, 100e9, 10e9) == 100e9
    assert roofline.attainable(50, 100e9, 10e9) == 100e9  # above it: compute-bound


def test_a_prediction_is_the_binding_roof_over_the_training_flops():
    device = roofline.roofs("toy", 1e4, {"float32": 1e6, "bfloat16": 1.5e5}, "made up")
    slow = roofline.predict(tiny_dense(), device, batch=1010)  # ridge at 100: memory-bound
    assert (slow["intensity"], slow["bound"], slow["training_flops"]) == (9.375, "memory", 6000)
    assert slow["pictures_per_s"] == pytest.approx(9.375 * 1e4 / 6000)
    # bfloat16: 200 + 100 + 40 B (weights and Adam stay float32): 17.6 FLOP/byte, over the
    # bfloat16 ridge at 15: compute-bound
    half = roofline.predict(tiny_dense(), device, "bfloat16", batch=1010)
    assert half["intensity"] == pytest.approx(6000 / 340) and half["bound"] == "compute"
    assert half["pictures_per_s"] == pytest.approx(1.5e5 / 6000)
    # each layer at its own roof: the input read, then the Dense layer memory-bound
    assert slow["per_layer_pictures_per_s"] == pytest.approx(1 / (400 / 1e4 + 240 / 1e4))


def test_bad_roofs_and_a_missing_format_get_clear_errors():
    with pytest.raises(ValueError, match="positive bandwidth"):
        roofline.roofs("cpu:0", 0, {"float32": 1e9}, "measured here")
    device = roofline.roofs("cpu:0", 1e9, {"float32": 1e9}, "measured here")
    with pytest.raises(ValueError, match="no bfloat16 roof; it has float32"):
        roofline.predict(tiny_dense(), device, "bfloat16")


def test_notebook_00s_survey_gives_one_roof_per_device_at_its_best_multiply():
    survey = {"cpu:0 float32": ([256, 512], [80.0, 120.0]),
              "cpu:0 bfloat16": ([256, 512], [300.0, 250.0])}
    (cpu,) = roofline.from_survey(survey, {"cpu:0": 12.5})
    assert cpu["flops_per_s"] == {"float32": 120e9, "bfloat16": 300e9}
    assert cpu["bytes_per_s"] == 12.5e9


def test_a_record_becomes_a_point_with_its_prediction_and_share():
    net = models.cifar10_net()
    flops = 3 * roofline.flops_per_image(net)
    record = {"model": "cifar10_net", "device": "cpu:0", "batch_size": 128, "dtype": "float32",
              "augment_in_model": False, "images_per_s": 500.0,
              "achieved_flops_per_s": 500.0 * flops, "training_flops_per_image": flops}
    device = roofline.roofs("cpu:0", 20e9, {"float32": 200e9}, "measured here")
    (point,) = roofline.points([record], [device])
    assert point["intensity"] == pytest.approx(roofline.training_intensity(net, 128))
    # about 72 FLOP/byte to train, far above the ridge at 10: compute-bound at 200 GFLOP/s
    assert point["predicted"] == pytest.approx(200e9 / flops)
    assert point["ratio"] == pytest.approx(500.0 * flops / 200e9) and point["bound"] == "compute"
    (elsewhere,) = roofline.points([{**record, "device": "gpu:0"}], [device])
    assert elsewhere["predicted"] is None and elsewhere["ratio"] is None


def test_readings_follow_the_share_of_the_prediction():
    assert [roofline.reading(r, short=True) for r in (1.3, 1.01, 0.9, 0.5, 0.1)] == [
        "above the roof", "above the roof", "near the roof", "below the roof",
        "far below the roof"]  # a prediction is an upper bound: just above it is above it
    assert "would take 45% of each step" in roofline.reading(0.45)
    assert roofline.reading(0.8, bound="memory") == "near the roof: memory bandwidth set the pace"
    assert (roofline.share(0.0023), roofline.share(0.11)) == ("0.2%", "11%")


def test_a_run_above_its_roof_blames_the_prediction_unless_the_machine_is_faster_now():
    # the roofs are notebook 00's best or better: above them, the FLOP count or the roof's
    # multiply is wrong, unless roofline.speed_now found the machine faster than 00 did
    for now in (None, 0.5, 1.0):
        assert "the prediction is wrong: its FLOP count" in roofline.reading(1.3, speed_now=now)
    assert "a kernel beat the measured copy" in roofline.reading(1.3, bound="memory")
    assert "run notebook 00 again" in roofline.reading(1.3, speed_now=1.4)
    over = {"label": "net", "where": "cpu:0", "ratio": 1.2, "bound": "compute",
            "pictures_per_s": 1.0, "flops_per_s": 1.0}
    assert roofline.summary([over]).startswith("Above the roof: net on cpu:0 (120%); the "
                                               "roofs are the fastest multiply")
    assert "run notebook 00 again" in roofline.summary([over], speed_now=1.3)


def test_every_recorded_bench_run_stays_under_its_compute_roof():
    records = [json.loads(path.read_text()) for path in sorted(config.ROOT.glob("results/*.json"))]
    runs = [r for r in records if "peak_share" in r]
    assert runs, "no bench record in results/"
    for r in runs:  # training FLOP/s over the record's own best multiply: at most 100 %
        assert r["peak_share"] <= 1.0, (r["model"], r["date"], r["peak_share"])


def test_the_summary_names_the_closest_and_the_furthest_and_what_they_compute():
    def point(label, ratio, flops_per_picture):
        return {"label": label, "where": "cpu:0", "ratio": ratio, "pictures_per_s": 10.0,
                "flops_per_s": 10.0 * flops_per_picture}

    line = roofline.summary([point("deep", 0.9, 5e9), point("small", 0.3, 1e8)])
    # cpu:0 at 90 % of its prediction, cpu:0 at 30 %; the closer one's arithmetic against the
    # other's per step and per picture: 50x both
    assert numbers(line) == [0, 90, 0, 30, 50.0, 50.0] and "not timed in alternation" in line
    assert line.startswith("Closest to its roof: deep") and "furthest below: small" in line
    bigger = dict(point("small", 0.3, 1e8), batch=4)
    assert numbers(roofline.summary([dict(point("deep", 0.9, 5e9), batch=1), bigger]))[4:6] == [
        12.5, 50.0]  # per step 50x / 4: the other takes 4 pictures a step
    assert "no run stands out" in roofline.summary([point("a", 0.5, 1), point("b", 0.45, 2)])
    busy = roofline.summary([point("fast", 1.5, 1e9), point("deep", 0.9, 5e9),
                             point("small", 0.3, 1e8)])
    assert busy.startswith("Above the roof: fast") and numbers(busy)[:2] == [0, 150]
    assert "Closest to its roof: deep on cpu:0 (90%" in busy


def test_the_blogs_v100_ran_far_below_its_roof_and_supports_both_of_its_explanations():
    points = {p["step"]: p for p in roofline.blog_points()}
    # the V100's float32 roof is 15.7 TFLOP/s from 17.4 FLOP/byte on (900 GB/s); counted with
    # the backward pass and Adam, step 2 trains at 15.5 FLOP/byte, left of the ridge
    assert all(p["flops_per_s"] < 15.7e12 for p in points.values())
    assert {s: p["bound"] for s, p in points.items()} == {
        "2": "memory", "2b": "compute", "3": "compute", "cifar10": "compute"}
    assert max(points[s]["ratio"] for s in ("2", "2b", "3")) < 0.03  # cat/dog: under 3 %
    assert 0.05 < points["cifar10"]["ratio"] < 0.2  # CIFAR-10 at batch 512: about 11 %
    words = roofline.blog_reading(list(points.values()))
    assert "as the blog's input-pipeline explanation says" in words
    assert "as the blog saw its deeper networks do" in words
