import contextlib
import copy
import os

os.environ.setdefault("COURSE_PROFILE", "smoke")
os.environ.setdefault("MPLBACKEND", "Agg")

import helpers  # noqa: F401  (quiet TensorFlow import before anything else loads it)

import nbformat
import numpy as np
import pytest
from PIL import Image


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", help="run tests that train for real")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="trains for real; run with `make test-slow`")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def profile(monkeypatch):
    """Switch the course profile for one test: profile('sample')."""
    return lambda name: monkeypatch.setenv("COURSE_PROFILE", name)


@pytest.fixture
def fixed_peak(monkeypatch):
    """The measured matrix-multiply peak fixed at 100 GFLOP/s: no multiply is timed."""
    from helpers import peak

    monkeypatch.setattr(peak, "measured_peak",
                        lambda device="cpu:0", dtype="float32", sizes=None:
                        {"flops_per_s": 1e11, "n": 2048, "dtype": dtype})


def tiny_model():
    """A compiled two-layer regression net on 8 numbers: trains in milliseconds."""
    import keras

    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    return model


def arrays(n=256):
    """`n` random (8 inputs, 1 target) float32 pairs for `tiny_model`."""
    rng = np.random.default_rng(0)
    return rng.random((n, 8), dtype=np.float32), rng.random((n, 1), dtype=np.float32)


def write_jpeg(path, size=(48, 40), seed=0, mode="RGB"):
    """A small real JPEG of random noise."""
    rng = np.random.default_rng(seed)
    array = (rng.random((size[1], size[0], 3)) * 255).astype("uint8")
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array).convert(mode).save(path, "JPEG", quality=90)
    return path


# --- nothing may be written into the course folder outside build/ and results/ --------------

ALLOWED_WRITES = ("build/", "results/")


def _git_status():
    import subprocess

    from helpers import config

    try:
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                             cwd=config.ROOT, capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    if out.returncode:
        return None
    return {line[3:] for line in out.stdout.splitlines()}


def pytest_sessionstart(session):
    session.config._status_before = _git_status()


def pytest_sessionfinish(session, exitstatus):
    before = getattr(session.config, "_status_before", None)
    after = _git_status()
    if before is None or after is None:
        return
    stray = sorted(p for p in after - before if not p.startswith(ALLOWED_WRITES))
    if stray:
        print("\nFiles written outside build/ and results/ during the tests:")
        for path in stray:
            print("  ", path)
        session.exitstatus = 1


# --- every notebook executed once per test run ------------------------------------------------
# `make test` runs notebooks/ first: nbval executes each notebook in a kernel of its own, with an
# empty build folder of its own (as on a fresh clone, so each notebook runs alone), and compares
# its checked cells. The cells' outputs are collected here into an executed copy that the slide
# and site tests read, so no notebook is executed twice in one run.

EXECUTED = {}  # notebook file name -> {"nb": executed copy, "cells": cells run, "error": str}


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
    if not (_is_notebook_cell(item) and item.cell_num == 0):  # nbval starts the kernel here
        yield
        return
    build = item.config._tmp_path_factory.mktemp(f"build-{item.path.stem[:2]}")
    with fresh_kernel_env(build):
        yield


def pytest_runtest_makereport(item, call):
    if not _is_notebook_cell(item) or call.when != "call":
        return
    run = EXECUTED.setdefault(item.path.name, {"nb": copy.deepcopy(item.parent.nb),
                                               "cells": 0, "error": None})
    cell = [c for c in run["nb"].cells if c.cell_type == "code"][item.cell_num]
    cell.outputs, cell.execution_count = list(item.test_outputs or []), item.cell_num + 1
    run["cells"] += 1
    message = str(call.excinfo.value) if call.excinfo else ""
    if message and "outputs differ" not in message and not run["error"]:
        run["error"] = f"cell {item.cell_num}: {message[-1500:]}"


@pytest.fixture(scope="session")
def executed(tmp_path_factory):
    """`executed(path)`: the notebook as it ran in this test run: nbval's run when it ran every
    cell, else executed now in `smoke` on an empty build folder. A notebook that failed fails
    each test that asks for it, with its error, without running again."""
    from tools import run_course

    def run(path):
        done = EXECUTED.get(path.name)
        code_cells = sum(c.cell_type == "code" for c in nbformat.read(path, as_version=4).cells)
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


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for the slide and site tests (tests/browser.py), per test module."""
    from browser import start

    driver = start()
    yield driver
    driver.quit()
