"""helpers.timing: the step clock, the Keras callback built on it and the repeat timer; the verdict
of a timed comparison; the utilisation sampler; a TensorFlow profile read back."""

import subprocess
import sys
import threading
import time
from types import SimpleNamespace

from helpers import data, folders, hardware, models, timing

import keras
import numpy as np
import pytest
from conftest import arrays, tiny_model
from gpu_rehearsal import fake_nvidia_smi  # noqa: F401  (the fixture, used by name below)


def test_throughput_callback_records_each_epoch():
    x, y = arrays()
    timer = timing.Throughput(batch_size=32)
    tiny_model().fit(x, y, batch_size=32, epochs=2, verbose=0, callbacks=[timer])
    assert [e["epoch"] for e in timer.epochs] == [1, 2]
    assert all(e["steps"] == 8 and e["wall_s"] > 0 for e in timer.epochs)
    assert timer.images_per_second > 0


def test_throughput_excludes_the_slow_first_step():
    timer = timing.Throughput(batch_size=10)
    timer.on_epoch_begin(0)
    timer.clock._last -= 5.0  # pretend the first step (tracing) took five seconds
    for step in range(5):
        timer.on_train_batch_end(step)
    timer.on_epoch_end(0)
    assert timer.epochs[0]["first_step_s"] >= 5.0
    # the slow first step does not drag the rate down
    assert timer.images_per_second > 1000


def test_throughput_refuses_batch_size_zero():
    with pytest.raises(ValueError, match="batch_size"):
        timing.Throughput(0)


def test_step_stats_give_the_median_and_the_spread_of_the_middle_80_percent():
    stats = timing.step_stats([1.0] * 8 + [0.1, 10.0])  # one fast and one slow outlier
    assert stats["median"] == 1.0 and stats["p10"] < 1.0 < stats["p90"]
    assert timing.step_stats([1.0, 1.0, 1.0])["spread"] == 0.0
    assert timing.step_stats([2.0, 4.0])["spread"] == 0.0  # too few steps for a spread


def test_the_first_call_is_timed_apart_from_the_repeats():
    calls = []

    def call():  # the first call is slow, as compiling one is
        calls.append(1)
        if len(calls) == 1:
            sum(range(2_000_000))

    first, median = timing.first_and_median(call, repeats=3)
    assert len(calls) == 4 and first > 5 * median
    with pytest.raises(ValueError, match="repeats"):
        timing.first_and_median(call, repeats=0)


def test_each_dense_layer_adds_the_same_operations_to_a_step_whatever_its_width():
    import keras
    import numpy as np

    def ops(widths, bias=True):
        net = keras.Sequential(
            [keras.Input((3,))] + [keras.layers.Dense(w, use_bias=bias) for w in widths]
        )
        net.compile(optimizer="adam", loss="mse")
        x, y = np.ones((4, 3), "float32"), np.ones((4, widths[-1]), "float32")
        return timing.step_ops(net, x, y)

    one, two, three = ops([2]), ops([2, 2]), ops([2, 2, 2])
    # forward, backward and Adam's update of each layer
    assert two - one == three - two > 0
    assert ops([64, 64, 2]) == three  # operations, not their sizes
    assert ops([2, 2, 2], bias=False) < three  # a weight fewer to update in each layer


# --- the verdict of a timed comparison, on made-up speeds and on real ones measured while
# another process keeps one core busy

NAMES = ("A", "B")


def test_t_quantiles_match_the_printed_tables():
    # the two-sided 95 % values of any t table: df 1, 2, 4 (two steps of 3 seeds), and large
    for df, value in ((1, 12.706), (2, 4.303), (4, 2.776), (1000, 1.962)):
        assert timing.t_quantile(0.975, df) == pytest.approx(value, abs=1e-3)


def test_a_steady_ratio_is_a_verdict_with_its_interval():
    found = timing.ratio([200, 150, 205, 120], [100, 75, 100, 61], NAMES)
    assert found["verdict"] == "faster"
    assert found["low"] < 2 < found["high"] and found["high"] / found["low"] < 1.1
    assert "A is 2.00x as fast (1.9" in found["text"]
    assert "vs B 88 images/s (medians); from 4 rounds' own ratios" in found["text"]
    assert (
        timing.ratio([100, 75, 100, 61], [200, 150, 205, 120], NAMES)["text"].count(
            "B is 2.00x as fast"
        )
        == 1
    )


def test_the_machine_slowing_down_between_rounds_does_not_move_the_verdict():
    # round 3 ran at half speed for both: the per-round ratio stays 1
    found = timing.ratio([100, 101, 50, 99], [100, 100, 51, 100], NAMES)
    assert found["verdict"] == "same" and "the same within 10 %" in found["text"]


def test_ratios_that_swing_more_than_the_difference_are_inconclusive():
    found = timing.ratio([130, 80, 125, 85], [100, 100, 100, 100], NAMES)
    assert found["verdict"] == "inconclusive"
    assert "quieter (A at 0.69-1.53x the speed of B, 95 % interval" in found["text"]


def test_a_small_but_steady_difference_is_not_called_the_same():
    found = timing.ratio([104, 105, 104, 105, 104], [100, 100, 100, 100, 100], NAMES)
    assert found["verdict"] == "same"  # the whole interval lies within 10 %
    found = timing.ratio([118, 121, 119, 120], [100, 100, 100, 100], NAMES)
    assert found["verdict"] == "faster" and found["ratio"] == pytest.approx(
        1.195, abs=0.01
    )


def test_an_interval_that_prints_as_reaching_one_decides_nothing(monkeypatch):
    for low, high, verdict in (
        (1.003, 1.1, "inconclusive"),
        (1.006, 1.1, "faster"),
        (0.9, 0.996, "inconclusive"),
        (0.9, 0.994, "slower"),
    ):
        monkeypatch.setattr(
            timing, "interval", lambda *a, lo=low, hi=high: (lo, 1, hi, 0.02)
        )
        assert (
            timing.ratio([1, 1, 1], [1, 1, 1], NAMES, same=0.001)["verdict"] == verdict
        )


def test_a_speed_of_zero_is_refused_with_a_reason():
    with pytest.raises(
        ValueError, match="speeds must be positive; the lowest: 0 and 90"
    ):
        timing.ratio([100, 0, 100], [90, 95, 92], NAMES)


def test_alternate_reverses_the_order_every_other_round_and_counts_units(monkeypatch):
    order = []
    work = {"A": lambda: order.append("A"), "B": lambda: order.append("B")}

    # the clock's part, fixed: a busy machine moves it
    def one_call_in_10_ms(call, seconds):
        call()
        return 1, 0.01

    monkeypatch.setattr(timing, "timed_block", one_call_in_10_ms)
    speeds = timing.alternate(
        work, {"A": 32, "B": 1}, rounds=4, seconds=0.005, warmup=0
    )
    assert "".join(order) == "ABBAABBA"
    # 32 pictures a call against 1
    assert speeds == {"A": [3200.0] * 4, "B": [100.0] * 4}
    with pytest.raises(ValueError, match="rounds must be 3 or more"):
        timing.alternate(work, rounds=2)


def _matmul():
    a = np.random.default_rng(0).random((384, 384), dtype=np.float32)

    def once():
        np.matmul(a, a)

    return once


def _known_pair():
    once = _matmul()
    return {"once": once, "twice": lambda: (once(), once())}


def _busy(seconds, after):
    """One core kept busy by another process for `seconds`, starting `after` seconds from now."""

    def run():
        spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        threading.Event().wait(seconds)
        spin.kill()
        spin.wait()

    timer = threading.Timer(after, run)
    timer.start()
    return timer


@pytest.mark.busy
def test_on_a_quiet_machine_the_known_pair_gets_the_right_verdicts():
    speeds = timing.alternate(_known_pair(), rounds=6, seconds=0.25)
    found = timing.ratio(
        speeds["once"], speeds["twice"], ("once", "twice"), unit="calls/s"
    )
    assert found["verdict"] == "faster" and 1.6 < found["ratio"] < 2.5, found["text"]
    one = _matmul()
    speeds = timing.alternate({"A": one, "B": one}, rounds=6, seconds=0.25)
    assert timing.ratio(speeds["A"], speeds["B"], NAMES)["verdict"] in (
        "same",
        "inconclusive",
    )


@pytest.mark.busy
def test_with_one_core_busy_for_part_of_the_time_the_verdict_is_right_or_inconclusive():
    for after in (0.5, 1.5):  # the other process starts early or midway, for 1.5 s
        timer = _busy(1.5, after)
        speeds = timing.alternate(_known_pair(), rounds=6, seconds=0.25)
        timer.join()
        found = timing.ratio(speeds["once"], speeds["twice"], ("once", "twice"))
        assert found["verdict"] in ("faster", "inconclusive"), found["text"]
        if found["verdict"] == "faster":
            assert found["low"] < 2.5 and found["high"] > 1.6, found["text"]


# --- CPU/GPU utilisation sampled in the background, with marks


def test_monitor_samples_and_marks():
    with timing.Utilization(interval=0.05, gpus=False) as usage:
        end = time.perf_counter() + 0.4
        while time.perf_counter() < end:
            sum(i * i for i in range(1000))
        usage.mark("half")
    times, cpu = usage.series("cpu_pct")
    assert len(times) >= 4 and times == sorted(times)
    assert all(0 <= v <= 100 for v in cpu) and max(cpu) > 0
    # the last sample: at the end
    assert usage.marks[0][1] == "half" and times[-1] >= 0.4
    mine = usage.series("process_pct")[1]  # this process's share of the whole machine
    assert len(mine) == len(cpu) and all(0 <= v <= 100 for v in mine) and max(mine) > 0


def test_monitor_caps_a_share_read_over_a_few_milliseconds_at_the_whole_machine(
    monkeypatch,
):
    usage = timing.Utilization(interval=1, gpus=False)
    usage.start, usage._process = (
        time.perf_counter(),
        SimpleNamespace(cpu_percent=lambda: 219.8),
    )
    monkeypatch.setattr(timing.psutil, "cpu_count", lambda: 2)
    usage._sample()  # 219.8 % of one core on 2 cores: 110 %, which no process can use
    assert usage.samples[0]["process_pct"] == 100.0


def test_monitor_refuses_a_zero_interval():
    with pytest.raises(ValueError, match="interval"):
        timing.Utilization(interval=0)


@pytest.mark.usefixtures("fake_nvidia_smi")
def test_monitor_samples_every_gpu_nvidia_smi_reports():
    with timing.Utilization(interval=0.05) as usage:  # finds the GPUs by itself
        time.sleep(0.5)
    for i in (0, 1):
        times, load = usage.series(f"gpu{i}_pct")
        assert len(times) >= 2 and all(0 <= v <= 100 for v in load), i
        # a T4's limit
        assert all(0 < v <= 70 for v in usage.series(f"gpu{i}_power_w")[1])
        assert len(usage.series(f"gpu{i}_temperature_c")[1]) == len(times)
        assert 0 <= usage.mean(f"gpu{i}_pct") <= 100
    # a timeline, not one reading repeated
    assert len(set(usage.series("gpu0_pct")[1])) > 1
    assert "gpu2_pct" not in usage.samples[0]


def test_monitor_without_nvidia_smi_samples_the_cpu_only(monkeypatch):
    monkeypatch.setattr(hardware.shutil, "which", lambda name: None)
    with timing.Utilization(interval=0.05) as usage:
        time.sleep(0.15)
    assert usage.samples and not any(
        k.startswith("gpu") for s in usage.samples for k in s
    )


# --- a real TensorFlow profile of a few training steps, read back


def test_read_profile_finds_the_steps_and_the_input_wait(tmp_path):
    paths, labels, _ = folders.cats_dogs_files("train", limit=16)
    model = models.build("cats_dogs_original")
    board = keras.callbacks.TensorBoard(str(tmp_path), profile_batch=(2, 3))
    model.fit(
        data.image_pipeline(paths, labels, 64, 4, repeat=True),
        steps_per_epoch=4,
        epochs=1,
        verbose=0,
        shuffle=False,
        callbacks=[board],
    )
    summary = timing.read_profile(tmp_path)
    assert summary["steps"] == 2 and summary["step_ms"] > 0
    assert 0 <= summary["waiting_share"] <= 1 and "Conv2D" in " ".join(
        summary["top_ops_ms"]
    )
    assert 0 < summary["input_busy_ms"]
    convs = sum(ms for op, ms in summary["ops_ms"].items() if "Conv2D" in op)
    # a large share, never all of it
    assert convs / sum(summary["ops_ms"].values()) > 0.1
    assert set(summary["top_ops_ms"]) <= set(summary["ops_ms"])
    with pytest.raises(FileNotFoundError, match="profile_batch"):
        timing.read_profile(tmp_path / "empty")
