"""helpers.timing: CPU/GPU utilisation sampled in the background, with marks."""

import time

from helpers import hardware, timing

import pytest
from gpu_rehearsal import fake_nvidia_smi  # noqa: F401  (the fixture, used by name below)


def test_monitor_samples_and_marks():
    with timing.Utilization(interval=0.05, gpus=False) as usage:
        end = time.perf_counter() + 0.4
        while time.perf_counter() < end:
            sum(i * i for i in range(1000))
        usage.mark("half")
    times, cpu = usage.series("cpu_pct")
    assert len(times) >= 4 and times == sorted(times)
    assert all(0 <= v <= 100 for v in cpu) and max(cpu) > 0
    assert usage.marks[0][1] == "half" and times[-1] >= 0.4  # the last sample: at the end
    mine = usage.series("process_pct")[1]  # this process's share of the whole machine
    assert len(mine) == len(cpu) and all(0 <= v <= 100 for v in mine) and max(mine) > 0


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
        assert all(0 < v <= 70 for v in usage.series(f"gpu{i}_power_w")[1])  # a T4's limit
        assert len(usage.series(f"gpu{i}_temperature_c")[1]) == len(times)
        assert 0 <= usage.mean(f"gpu{i}_pct") <= 100
    assert len(set(usage.series("gpu0_pct")[1])) > 1  # a timeline, not one reading repeated
    assert "gpu2_pct" not in usage.samples[0]


def test_monitor_without_nvidia_smi_samples_the_cpu_only(monkeypatch):
    monkeypatch.setattr(hardware.shutil, "which", lambda name: None)
    with timing.Utilization(interval=0.05) as usage:
        time.sleep(0.15)
    assert usage.samples and not any(k.startswith("gpu") for s in usage.samples for k in s)
