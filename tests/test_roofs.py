"""helpers.roofs: the measured multiply and copy, limits stored and read back, published peaks."""

import json

from helpers import hardware, roofs
from helpers.published import GPU_DATASHEETS

import pytest


def test_the_measured_peak_is_the_best_multiply_seen(monkeypatch):
    rates = iter([5.0, 7.0, 6.0, 9.0])
    monkeypatch.setattr(roofs, "matmul_flops", lambda *args, **kwargs: next(rates))
    monkeypatch.setattr(roofs, "_PEAKS", {})
    assert roofs.measured_peak("cpu:0", sizes=(64,), tries=2)["flops_per_s"] == 7.0
    # a slow one: kept
    assert roofs.measured_peak("cpu:0", sizes=(64,))["flops_per_s"] == 7.0
    assert roofs.measured_peak("cpu:0", sizes=(64,))["flops_per_s"] == 9.0


def test_the_measured_bandwidth_is_the_best_copy_seen(monkeypatch):
    rates = iter([5.0, 8.0, 6.0, 7.0, 9.0])
    monkeypatch.setattr(roofs, "copy_bandwidth", lambda *args, **kwargs: next(rates))
    monkeypatch.setattr(roofs, "_BANDWIDTHS", {})
    assert roofs.measured_bandwidth("cpu:0", 16) == 8.0  # the best of the first three
    assert roofs.measured_bandwidth("cpu:0", 16) == 8.0  # a slower one: kept
    assert roofs.measured_bandwidth("cpu:0", 16) == 9.0


def test_matmul_and_bandwidth_are_measured():
    assert hardware.devices()[0] == "cpu:0"
    flops = roofs.matmul_flops(256, repeats=2)
    assert 1e8 < flops < 1e14  # a CPU does between 0.1 GFLOP/s and 100 TFLOP/s
    assert 1e8 < roofs.copy_bandwidth(16, repeats=2) < 1e13


@pytest.mark.parametrize(
    "reported, sheet",
    [
        ("Tesla V100-SXM2-16GB", "V100"),
        ("NVIDIA A100-SXM4-40GB", "A100"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA H100 80GB HBM3", "H100"),
        ("Tesla T4", "T4"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA L40S", None),
        ("NVIDIA RTX A1000", None),
        ("NVIDIA GeForce RTX 4090", None),
        (None, None),
    ],
)
def test_a_gpu_gets_the_peak_of_its_own_datasheet_and_of_no_other(reported, sheet):
    # names as nvidia-smi and TensorFlow report them; an L40S is not an L4, an A1000 no A100
    expected = GPU_DATASHEETS[sheet]["tflops"]["float32"] * 1e12 if sheet else None
    assert roofs.published_peak(reported) == expected


def test_tf32_is_listed_only_for_ampere_and_newer():
    assert roofs.published_peak("NVIDIA A100-SXM4-40GB", "tf32") == 156e12
    assert roofs.published_peak("Tesla V100-SXM2-16GB", "tf32") is None
    # Volta: no bf16
    assert roofs.published_peak("Tesla V100-SXM2-16GB", "bfloat16") is None


def test_balance_verdicts():
    assert roofs.balance_verdict(1.0) == roofs.balance_verdict(2.9) == "within 3x"
    assert roofs.balance_verdict(1 / 2.9) == "within 3x"
    assert roofs.balance_verdict(3.1) == "more than 3x higher"
    assert roofs.balance_verdict(0.3) == "more than 3x lower"
    assert roofs.balance_verdict(3.04) == "within 3x"  # printed as 3.0x beside it


def test_datasheet_balance_points_of_the_v100():
    table = roofs.datasheet_balance_points(gpus=("V100",))
    row = table.iloc[0]
    # 15.7 and 125 TFLOP/s over 900 GB/s
    assert (row["float32"], row["TF32"], row["16-bit"]) == (17, "none", 139)
    judged = roofs.datasheet_balance_points(reference=17.4, gpus=("V100",)).iloc[0]
    assert judged["float32 / this CPU's float32"] == "1.0x: within 3x"
    assert judged["16-bit / this CPU's float32"] == "8.0x: more than 3x higher"
    assert len(roofs.datasheet_balance_points()) == len(GPU_DATASHEETS)


def _limits(gflops, gbs, cpu):
    return {
        "matmul_gflops": {"cpu:0 float32": ([512, 1024], gflops)},
        "bandwidth_gbs": {"cpu:0": gbs},
        "hardware": {"cpu": {"model": cpu}},
    }


def test_a_busy_rerun_of_notebook_00_never_lowers_the_stored_roofs(tmp_path):
    path = tmp_path / "limits.json"
    assert roofs.save_limits(_limits([100.0, 200.0], 20.0, "X"), path) == []
    kept = roofs.save_limits(_limits([60.0, 90.0], 25.0, "X"), path)  # busier multiply
    stored = json.loads(path.read_text())
    assert (
        kept == ["cpu:0 float32"]
        and max(stored["matmul_gflops"]["cpu:0 float32"][1]) == 200
    )
    assert stored["bandwidth_gbs"]["cpu:0"] == 25.0  # the faster copy of this run
    # another machine
    roofs.save_limits(_limits([60.0, 90.0], 10.0, "another CPU"), path)
    assert max(json.loads(path.read_text())["matmul_gflops"]["cpu:0 float32"][1]) == 90


def test_the_machine_load_line_says_how_fast_the_machine_runs_now(monkeypatch):
    for cache in ("_PEAKS", "_BANDWIDTHS"):  # this test's own, restored after it
        monkeypatch.setattr(roofs, cache, {})
    stored = _limits([100.0, 200.0], 20.0, "X")
    for now, says in (
        (0.5, "at 50 % of the speed notebook 00 measured: consistent with other"),
        (1.0, "at 100 % of the speed notebook 00 measured: about as fast as then"),
        (1.3, "at 130 %"),
        (0.89, "at 89 % of the speed notebook 00 measured: consistent with other work"),
        (1.05, "at 105 % of the speed notebook 00 measured: about as fast"),
        (0.91, "at 91 % of the speed notebook 00 measured: about as fast"),
    ):
        monkeypatch.setattr(roofs, "matmul_flops", lambda *a, now=now, **k: now * 200e9)
        share, line = roofs.speed_now(stored)
        assert share == pytest.approx(now) and says in line
    # 00 has not run: limits() measured them seconds ago, so "as fast" says nothing of load
    monkeypatch.setattr(roofs, "matmul_flops", lambda *a, **k: 200e9)
    line = roofs.speed_now({**stored, "measured_now": True})[1]
    assert "of the speed measured a moment ago (notebook 00 has not run here)" in line
    assert (
        "says nothing about other work" in line and "notebook 00 measured" not in line
    )


def test_the_roofs_keep_the_stored_best_only_where_asked_and_speed_now_changes_none(
    monkeypatch,
):
    for cache in ("_PEAKS", "_BANDWIDTHS"):  # this test's own, restored after it
        monkeypatch.setattr(roofs, cache, {})
    # notebook 00's best: 200 GFLOP/s, 20 GB/s
    stored = _limits([100.0, 200.0], 20.0, "X")
    monkeypatch.setattr(roofs, "matmul_flops", lambda *a, **k: 50e9)  # busy now
    monkeypatch.setattr(roofs, "copy_bandwidth", lambda *a, **k: 5e9)
    before = roofs.measured_peak("cpu:0", "float32", (512,))["flops_per_s"]
    roofs.speed_now(stored)  # a question: it must not change the next answers
    assert (
        roofs.measured_peak("cpu:0", "float32", (512,))["flops_per_s"] == before == 50e9
    )
    assert roofs.measured_bandwidth("cpu:0", 64) == 5e9
    peak = roofs.measured_peak("cpu:0", "float32", (512,), stored=stored)
    assert peak["flops_per_s"] == 200e9 and peak["stored"]  # 00's best, asked for
    assert roofs.measured_bandwidth("cpu:0", 64, stored=stored) == 20e9
    found = roofs.measured("cpu:0", (512,), 64, stored=stored)
    assert found["flops_per_s"]["float32"] == 200e9 and found["bytes_per_s"] == 20e9


def test_limits_measured_now_say_so_and_the_saved_ones_do_not(
    tmp_path, monkeypatch, capsys
):
    for cache in ("_PEAKS", "_BANDWIDTHS"):  # this test's own, restored after it
        monkeypatch.setattr(roofs, cache, {})
    monkeypatch.setattr(roofs, "matmul_flops", lambda *a, **k: 100e9)
    monkeypatch.setattr(roofs, "copy_bandwidth", lambda *a, **k: 10e9)
    found = roofs.limits(tmp_path / "limits.json")  # no notebook 00 here
    assert (
        found["measured_now"]
        and "Notebook 00 has not run here" in capsys.readouterr().out
    )
    assert "measured_now" not in roofs.limits(tmp_path / "limits.json")  # read as 00's


def test_notebook_00s_survey_gives_one_roof_per_device_at_its_best_multiply():
    survey = {
        "cpu:0 float32": ([256, 512], [80.0, 120.0]),
        "cpu:0 bfloat16": ([256, 512], [300.0, 250.0]),
    }
    (cpu,) = roofs.from_survey(survey, {"cpu:0": 12.5})
    assert cpu["flops_per_s"] == {"float32": 120e9, "bfloat16": 300e9}
    assert cpu["bytes_per_s"] == 12.5e9


def test_a_probe_multiplies_at_the_size_00_found_fastest_and_counts_its_gflop():
    stored = {"matmul_gflops": {"cpu:0 float32": ([64, 128, 256], [10.0, 30.0, 20.0])}}
    multiply, gflop = roofs.probe(stored)
    assert gflop == 2 * 128**3 / 1e9  # the fastest size, not the largest
    assert multiply().shape == (1, 1)  # it waits for the product: reads one number back
    # nothing stored
    assert roofs.probe(None, "cpu:0", "bfloat16")[1] == 2 * 1024**3 / 1e9


def test_the_roof_in_rounds_line_gives_median_range_and_share_of_the_stored_best():
    stored = {"matmul_gflops": {"cpu:0 float32": ([64, 128], [100.0, 200.0])}}
    line = roofs.roof_in_rounds([150.0, 90.0, 170.0, 110.0], stored)
    assert "130 GFLOP/s (median; rounds 90-170)" in line
    assert line.endswith("65 % of the best notebook 00 stored")
    # none stored
    assert "notebook 00" not in roofs.roof_in_rounds([150.0, 90.0, 170.0])
    fresh = roofs.roof_in_rounds([150.0, 90.0, 170.0], {**stored, "measured_now": True})
    assert fresh.endswith("75 % of the best measured at this notebook's start")
