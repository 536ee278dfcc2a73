"""Every notebook executed once per test run, for the whole test session.

It lives at the course's root because its hooks must see nbval's items in notebooks/ as well as
the slide and site tests in tests/ (a conftest.py applies to the folder it is in)."""

import contextlib
import copy
import json
import os
from pathlib import Path

import nbformat
import pytest

# `make test` runs notebooks/ first: nbval executes each notebook in a kernel of its own, with an
# empty build folder of its own (as on a fresh clone, so each notebook runs alone), and compares
# its checked cells. The cells' outputs are collected here into an executed copy that the slide
# and site tests read (in the same pytest run, or, under `make test`, in the next one through
# HANDOFF), so no notebook is executed twice in one `make test`.

EXECUTED = {}  # notebook file name -> {"nb": executed copy, "cells": cells run, "error": str}

# The slide and site tests run in a later pytest run of `make test` (after its pytest-xdist
# workers have run the notebooks): each worker writes each notebook it finished into this
# folder, and the later run reads them.
HANDOFF = os.environ.get("COURSE_EXECUTED")


def _is_notebook_cell(item):
    return type(item).__name__ == "IPyNbCell"  # nbval's test item: one code cell


@contextlib.contextmanager
def fresh_kernel_env(build):
    """The environment a kernel starts with: its own build folder and Jupyter's inline figures
    (the tests' Agg backend would keep figures out of the executed copies)."""
    saved = {key: os.environ.get(key) for key in ("COURSE_BUILD", "MPLBACKEND")}
    os.environ["COURSE_BUILD"] = str(build)
    os.environ.pop("MPLBACKEND", None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    # nbval starts the kernel here
    if not (_is_notebook_cell(item) and item.cell_num == 0):
        yield
        return
    build = item.config._tmp_path_factory.mktemp(f"build-{item.path.stem[:2]}")
    with fresh_kernel_env(build):
        yield


def pytest_runtest_makereport(item, call):
    if not _is_notebook_cell(item) or call.when != "call":
        return
    run = EXECUTED.setdefault(
        item.path.name, {"nb": copy.deepcopy(item.parent.nb), "cells": 0, "error": None}
    )
    code = [c for c in run["nb"].cells if c.cell_type == "code"]
    code[item.cell_num].outputs = list(item.test_outputs or [])
    code[item.cell_num].execution_count = item.cell_num + 1
    run["cells"] += 1
    message = str(call.excinfo.value) if call.excinfo else ""
    if message and "outputs differ" not in message and not run["error"]:
        run["error"] = f"cell {item.cell_num}: {message[-1500:]}"
    if HANDOFF and item.cell_num == len(code) - 1:
        folder = Path(HANDOFF)
        folder.mkdir(parents=True, exist_ok=True)
        # renamed when whole: a reader never sees half
        part = folder / f"{item.path.stem}.part"
        part.write_text(json.dumps(run))
        part.replace(folder / f"{item.path.stem}.json")


def _handed_over(path):
    """The copy of `path` an earlier run wrote into HANDOFF, None if it wrote none."""
    file = Path(HANDOFF) / f"{path.stem}.json"
    if not file.exists():
        return None
    run = json.loads(file.read_text())
    return {**run, "nb": nbformat.from_dict(run["nb"])}


@pytest.fixture(scope="session")
def executed(tmp_path_factory):
    """`executed(path)`: the notebook as nbval ran it in this pytest run or, under `make test`,
    in the run before (HANDOFF), when it ran every cell; else executed now in `smoke` on an
    empty build folder. A notebook that failed fails
    each test that asks for it, with its error, without running again."""
    from tools import run_course

    def run(path):
        done = EXECUTED.get(path.name)
        if done is None and HANDOFF:
            done = EXECUTED[path.name] = _handed_over(path)
        code_cells = sum(
            c.cell_type == "code" for c in nbformat.read(path, as_version=4).cells
        )
        if done is None or (done["cells"] < code_cells and not done["error"]):
            build = tmp_path_factory.mktemp(f"build-{path.stem[:2]}")
            try:
                with fresh_kernel_env(build):
                    done = {"nb": run_course.execute(path, "smoke"), "error": None}
            except Exception as e:
                done = {"error": f"{type(e).__name__}: {str(e)[-1500:]}"}
            done["cells"] = code_cells
            EXECUTED[path.name] = done
        if done["error"]:
            pytest.fail(f"{path.name} could not be executed: {done['error']}")
        return done["nb"]

    return run
