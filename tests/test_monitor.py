"""helpers.monitor: CPU/GPU utilisation sampled in the background, with marks."""

import time

from helpers import monitor

import pytest
from conftest import arrays, tiny_model


def test_monitor_samples_and_marks():
    with monitor.Utilization(interval=0.05, gpus=False) as usage:
        end = time.perf_counter() + 0.4
        while time.perf_counter() < end:
            sum(i * i for i in range(1000))
        usage.mark("half")
    times, cpu = usage.series("cpu_pct")
    assert len(times) >= 4 and times == sorted(times)
    assert all(0 <= v <= 100 for v in cpu) and max(cpu) > 0
    assert usage.marks[0][1] == "half" and usage.duration >= 0.4


def test_monitor_marks_epochs_from_keras():
    x, y = arrays()
    with monitor.Utilization(interval=0.05, gpus=False) as usage:
        tiny_model().fit(x, y, epochs=3, verbose=0, callbacks=[usage.epoch_marker()])
    assert [label for _, label in usage.marks] == ["epoch 1", "epoch 2", "epoch 3"]


def test_monitor_refuses_a_zero_interval():
    with pytest.raises(ValueError, match="interval"):
        monitor.Utilization(interval=0)
