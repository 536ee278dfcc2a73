"""helpers.timing: the verdict of a timed comparison, on made-up speeds and on real ones
measured while another process keeps one core busy."""

import subprocess
import sys
import threading

from helpers import timing

import numpy as np
import pytest

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
    assert timing.ratio([100, 75, 100, 61], [200, 150, 205, 120], NAMES)["text"].count(
        "B is 2.00x as fast") == 1


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
    assert found["verdict"] == "faster" and found["ratio"] == pytest.approx(1.195, abs=0.01)


def test_an_interval_that_prints_as_reaching_one_decides_nothing(monkeypatch):
    for low, high, verdict in ((1.003, 1.1, "inconclusive"), (1.006, 1.1, "faster"),
                               (0.9, 0.996, "inconclusive"), (0.9, 0.994, "slower")):
        monkeypatch.setattr(timing, "interval", lambda *a, lo=low, hi=high: (lo, 1, hi, 0.02))
        assert timing.ratio([1, 1, 1], [1, 1, 1], NAMES, same=0.001)["verdict"] == verdict


def test_a_speed_of_zero_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="speeds must be positive; the lowest are 0 and 90"):
        timing.ratio([100, 0, 100], [90, 95, 92], NAMES)


def test_alternate_reverses_the_order_every_other_round_and_counts_units(monkeypatch):
    order = []
    work = {"A": lambda: order.append("A"), "B": lambda: order.append("B")}

    def one_call_in_10_ms(call, seconds):  # the clock's part, fixed: a busy machine moves it
        call()
        return 1, 0.01

    monkeypatch.setattr(timing, "timed_block", one_call_in_10_ms)
    speeds = timing.alternate(work, {"A": 32, "B": 1}, rounds=4, seconds=0.005, warmup=0)
    assert "".join(order) == "ABBAABBA"
    assert speeds == {"A": [3200.0] * 4, "B": [100.0] * 4}  # 32 pictures a call against 1
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
    found = timing.ratio(speeds["once"], speeds["twice"], ("once", "twice"), unit="calls/s")
    assert found["verdict"] == "faster" and 1.6 < found["ratio"] < 2.5, found["text"]
    one = _matmul()
    speeds = timing.alternate({"A": one, "B": one}, rounds=6, seconds=0.25)
    assert timing.ratio(speeds["A"], speeds["B"], NAMES)["verdict"] in ("same", "inconclusive")


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
