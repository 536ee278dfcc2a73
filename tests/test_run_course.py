"""tools/run_course.py: `make course` cut short goes on where it stopped.

That each notebook runs alone on a fresh clone is held by nbval in `make test`: it executes
every notebook with an empty build folder of its own (tests/conftest.py)."""

import json
import sys

from tools import run_course

import pytest


def test_an_interrupted_course_run_goes_on_with_the_notebooks_not_yet_built(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(run_course, "BUILD", tmp_path)
    ran = []

    def execute(path, profile, nb=None):  # as nbclient would, without a kernel
        ran.append(path.name[:2])
        if path.name.startswith("01") and ran.count("01") == 1:
            raise KeyboardInterrupt  # Ctrl-C while 01 runs
        return nb

    monkeypatch.setattr(run_course, "execute", execute)
    monkeypatch.setattr(sys, "argv", ["run_course", "--profile", "smoke", "00_", "01_"])
    with pytest.raises(KeyboardInterrupt):
        run_course.main()
    assert (tmp_path / "00_setup_and_hardware.ipynb").exists()
    assert not (tmp_path / "01_cnn_basics_mnist.html").exists()
    assert run_course.main() == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(
        line.startswith("00_setup_and_hardware") and "reused" in line for line in lines
    )
    assert any(
        line.startswith("01_cnn_basics_mnist") and " ok" in line for line in lines
    )
    assert ran == ["00", "01", "01"]
    runs = json.loads((tmp_path / "run.json").read_text())
    assert [(r["name"][:2], r["status"]) for r in runs] == [("00", "ok"), ("01", "ok")]


def test_a_notebook_that_fails_is_recorded_and_the_others_still_run(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(run_course, "BUILD", tmp_path)

    def execute(path, profile, nb=None):
        if path.name.startswith("00"):
            raise RuntimeError("a cell failed")
        return nb

    monkeypatch.setattr(run_course, "execute", execute)
    monkeypatch.setattr(sys, "argv", ["run_course", "--profile", "smoke", "00_", "01_"])
    assert run_course.main() == 1
    runs = json.loads((tmp_path / "run.json").read_text())
    assert [(r["name"][:2], r["status"]) for r in runs] == [
        ("00", "failed"),
        ("01", "ok"),
    ]
    assert "a cell failed" in capsys.readouterr().err


def test_the_run_says_how_much_of_the_machine_other_programs_took(monkeypatch):
    monkeypatch.setattr(run_course.os, "cpu_count", lambda: 2)
    before = (100.0, 10.0)  # machine busy seconds, this process tree's seconds
    # 10 s on 2 cores: the machine was busy 14 s, the notebook 4 s of them; others 10 of 20
    assert run_course.others_share(before, (114.0, 14.0), 10) == pytest.approx(0.5)
    # only the notebook
    assert run_course.others_share(before, (104.0, 14.0), 10) == 0.0
    assert run_course.others_share((None, 0.0), (None, 0.0), 10) is None  # not Linux
    busy, mine = run_course.cpu_seconds()
    # this process's own work counts as its own
    spin = sum(i * i for i in range(3_000_000))
    assert spin and run_course.cpu_seconds()[1] > mine and busy is not None


def test_the_run_says_how_long_the_path_took_apart_from_the_deep_dives():
    runs = [
        {"name": "00_setup", "seconds": 30.0},
        {"name": "08_cpu", "seconds": 90.0},
        {"name": "08b_memory", "seconds": 60.0},
    ]
    line = run_course.path_and_dives(runs)
    assert "the path: 2 notebooks, 120 s" in line
    assert "deep dives: 1 notebook, 60 s" in line
