"""make checks the Python it found before it makes a venv (tools/check_python.py): outside
3.11-3.13 it stops with the supported versions and how to point PYTHON= at another one."""

import ast
import re
import shlex
import subprocess
import sys

from helpers import config
from tools import check_python

import pytest

SCRIPT = config.ROOT / "tools" / "check_python.py"


def stand_in(folder, version):
    """An executable `pythonX.Y` in `folder`: this interpreter, claiming to be `version`."""
    code = (
        f"import runpy, sys; sys.version_info = {(*version, 'final', 0)!r}; "
        "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    fake = folder / f"python{version[0]}.{version[1]}"
    fake.write_text(
        f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -c {shlex.quote(code)} "$@"\n'
    )
    fake.chmod(0o755)
    return fake


def make(*arguments, tmp_path):
    """`make` in the course folder with its venv in tmp_path (never the course's .venv)."""
    return subprocess.run(
        ["make", "--no-print-directory", *arguments, f"VENV={tmp_path / 'venv'}"],
        cwd=config.ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_supported_versions_are_3_11_to_3_13():
    assert check_python.supported() == ["3.11", "3.12", "3.13"]


@pytest.mark.parametrize("version", [(3, 11, 2), (3, 12, 0), (3, 13, 7)])
def test_a_supported_python_is_named_and_passes(version):
    ok, message = check_python.verdict(version, "python3 = /usr/bin/python3")
    assert ok and message == (
        f"Python {'.'.join(map(str, version))} (python3 = /usr/bin/python3)"
        ": supported (3.11, 3.12 or 3.13)"
    )


@pytest.mark.parametrize(
    ("version", "age"),
    [
        ((3, 9, 18), "too old"),
        ((3, 10, 12), "too old"),
        ((3, 14, 0), "newer than the course is tested on"),
    ],
)
def test_another_python_stops_with_the_versions_and_how_to_choose_one(version, age):
    ok, message = check_python.verdict(version, "python3", "course")
    assert not ok
    assert message.startswith(
        f"Python {'.'.join(map(str, version))} (python3) is {age}: the "
        "course needs Python 3.11, 3.12 or 3.13."
    )
    assert "PYTHON=python3.12 make course" in message


def test_the_script_runs_on_an_old_python():
    """No f-strings, annotations or other syntax a Python 3.4 would refuse."""
    tree = ast.parse(SCRIPT.read_text(), feature_version=(3, 4))
    new = (ast.JoinedStr, ast.AnnAssign, ast.NamedExpr, ast.AsyncFunctionDef)
    assert not [node for node in ast.walk(tree) if isinstance(node, new)]
    assert not [
        node for node in ast.walk(tree) if isinstance(node, ast.arg) and node.annotation
    ]
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert imported == {"sys"} and not [
        n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
    ]


def test_the_script_says_which_python_it_found():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "python3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        f"Python {sys.version.split()[0]} (python3 = {sys.executable})"
    )


def test_make_stops_before_the_venv_with_a_python_3_9(tmp_path):
    python39 = stand_in(tmp_path, (3, 9, 18))
    done = make("check", f"PYTHON={python39}", tmp_path=tmp_path)
    assert done.returncode != 0
    assert (
        f"Python 3.9.18 ({python39} = {sys.executable}) is too old: the course needs Python "
        "3.11, 3.12 or 3.13." in done.stderr
    ), done.stderr
    assert "PYTHON=python3.12 make check" in done.stderr
    assert not (tmp_path / "venv").exists()


def test_make_stops_with_a_python_3_14_and_with_none_at_all(tmp_path):
    python314 = stand_in(tmp_path, (3, 14, 0))
    done = make("course", f"PYTHON={python314}", tmp_path=tmp_path)
    assert (
        done.returncode != 0 and "is newer than the course is tested on" in done.stderr
    )
    done = make("course", "PYTHON=python3.0-nowhere", tmp_path=tmp_path)
    assert done.returncode != 0 and done.stderr.startswith(
        "make: there is no 'python3.0-nowhere' here. The course needs Python 3.11, 3.12 or 3.13;"
        " point make at one, for example:  PYTHON=python3.12 make course"
    ), done.stderr
    assert not (tmp_path / "venv").exists()


def test_the_makefile_names_the_same_versions():
    versions = check_python.supported()
    text = (config.ROOT / "Makefile").read_text()
    assert f"Python {', '.join(versions[:-1])} or {versions[-1]}" in re.sub(
        r"\\\n", "", text
    )
    assert f"Python {versions[0]}-{versions[-1]}" in text
