"""The Colab setup cell does nothing outside Colab and the right things on it; the badge
and setup-cell tool is safe to re-run and follows a changed repository slug (tools/colab.py)."""

import os
import shutil
import subprocess
import sys
import types

from helpers import config
from tools import colab

import nbformat

NOTEBOOK = config.ROOT / "notebooks" / "00_setup_and_hardware.ipynb"


def refuse(*args, **kwargs):
    raise AssertionError(f"the setup cell ran a command: {args}")


def test_setup_cell_does_nothing_outside_colab(monkeypatch):
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    monkeypatch.setattr(subprocess, "run", refuse)
    cwd, path = os.getcwd(), list(sys.path)
    exec(colab.setup_code(), {})
    assert os.getcwd() == cwd and sys.path == path


def test_setup_cell_on_colab_clones_installs_and_moves_in(monkeypatch, tmp_path):
    folder = tmp_path / colab.REPO.split("/")[1]
    calls = []

    def run(command, check):
        calls.append(command)
        # what a clone brings, as far as the cell cares
        if command[:2] == ["git", "clone"]:
            (folder / "notebooks").mkdir(parents=True)
            (folder / "helpers").mkdir()

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    monkeypatch.setattr(subprocess, "run", run)
    exec(colab.setup_code(), {})
    assert calls[0] == [
        "git",
        "clone",
        "--depth=1",
        f"https://github.com/{colab.REPO}.git",
    ]
    assert calls[1][1:5] == ["-m", "pip", "install", "-q"] and calls[1][5:] == [
        "gputil==1.4.0"
    ]
    assert not any("tensorflow" in arg or "keras" in arg for arg in calls[1])
    assert os.getcwd() == str(folder / "notebooks") and sys.path[0] == str(folder)
    exec(colab.setup_code(), {})  # running the cell again changes nothing
    assert len(calls) == 2 and os.getcwd() == str(folder / "notebooks")


def test_colab_tool_follows_a_new_slug_and_is_idempotent(monkeypatch, tmp_path):
    notebook, readme = tmp_path / NOTEBOOK.name, tmp_path / "README.md"
    shutil.copy(NOTEBOOK, notebook)
    shutil.copy(config.ROOT / "README.md", readme)
    assert not colab.apply(notebook) and not colab.apply_readme(readme)
    monkeypatch.setattr(colab, "REPO", "someone/other-course")
    assert colab.apply(notebook) and colab.apply_readme(readme)
    assert not colab.apply(notebook) and not colab.apply_readme(readme)
    nb = nbformat.read(notebook, as_version=4)
    assert len(nb.cells) == len(nbformat.read(NOTEBOOK, as_version=4).cells)
    assert "github/someone/other-course/blob/main/notebooks/00_" in nb.cells[0].source
    assert "https://github.com/someone/other-course.git" in nb.cells[3].source
    assert 'os.chdir("other-course/notebooks")' in nb.cells[3].source
    lines = [
        line for line in readme.read_text().splitlines() if "](notebooks/00_" in line
    ]
    assert lines and all(line.count("Open In Colab") == 1 for line in lines)
    assert "other-course/blob/main/notebooks/00_setup_and_hardware.ipynb" in lines[0]
