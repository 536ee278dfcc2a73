"""tools/isa_timing.py: settings that each need a process of their own, timed in alternation."""

from helpers import results
from tools import isa_timing

import pytest

TWICE = {"float32": ("float32", None), "float32 again": ("float32", None)}


@pytest.mark.processes
def test_two_worker_processes_are_timed_round_after_round_and_recorded():
    speeds, verdicts = isa_timing.measure(
        TWICE, step="2", batch=4, rounds=3, seconds=0.05
    )
    assert {name: len(v) for name, v in speeds.items()} == {
        "float32": 3,
        "float32 again": 3,
    }
    assert min(min(v) for v in speeds.values()) > 0
    [(name, verdict)] = verdicts.items()
    assert name == "float32 again" and verdict["verdict"] in (
        "same",
        "faster",
        "slower",
        "inconclusive",
    )
    found = isa_timing.record(speeds, verdicts, TWICE, step="2", batch=4, command="cmd")
    assert found["settings"]["float32"] == {
        "dtype": "float32",
        "onednn_max_cpu_isa": None,
    }
    assert (
        found["hardware"] and found["versions"]["keras"] and found["command"] == "cmd"
    )


@pytest.mark.processes
def test_a_worker_that_fails_says_so():
    with pytest.raises(RuntimeError, match="answered '', not 'ready'"):
        isa_timing.Worker("no such step", "float32", None, 4)


def test_a_cpu_without_amx_is_told_it_needs_no_processes(monkeypatch, capsys):
    machine = {"hardware": "AMD EPYC", "details": {"cpu": {"simd": ["avx512_bf16"]}}}
    monkeypatch.setattr(results, "machine", lambda: machine)
    with pytest.raises(SystemExit):
        isa_timing.main([])
    assert "this CPU has no AMX" in capsys.readouterr().err
