import os
import re

os.environ.setdefault("COURSE_PROFILE", "smoke")
os.environ.setdefault("MPLBACKEND", "Agg")

import helpers  # noqa: F401  (quiet TensorFlow import before anything else loads it)

import numpy as np
import pytest
from PIL import Image


def pytest_addoption(parser):
    parser.addoption(
        "--run-slow", action="store_true", help="run tests that train for real"
    )


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
    """The matrix multiply fixed at 100 GFLOP/s, in the measured peak and in the probes a
    benchmark run takes before and after its steps: no multiply is timed (on a fake GPU a
    probe is an 8192-square float16 multiply on the CPU, minutes beside the notebooks)."""
    from helpers import roofs

    monkeypatch.setattr(roofs, "matmul_flops", lambda n, *args, **kwargs: 1e11)
    monkeypatch.setattr(
        roofs,
        "measured_peak",
        lambda device="cpu:0", dtype="float32", sizes=None, **_: {
            "flops_per_s": 1e11,
            "n": 2048,
            "dtype": dtype,
        },
    )


def tiny_model():
    """A compiled two-layer regression net on 8 numbers: trains in milliseconds."""
    import keras

    model = keras.Sequential(
        [keras.Input((8,)), keras.layers.Dense(4), keras.layers.Dense(1)]
    )
    model.compile("sgd", "mse")
    return model


def arrays(n=256):
    """`n` random (8 inputs, 1 target) float32 pairs for `tiny_model`."""
    rng = np.random.default_rng(0)
    return rng.random((n, 8), dtype=np.float32), rng.random((n, 1), dtype=np.float32)


def numbers(text):
    """The numbers a printed line holds, in order, signs kept ("+1,244.5 %" -> 1244.5): tests
    assert these and the verdict words, not a whole sentence."""
    return [
        float(n.replace(",", "")) for n in re.findall(r"[-+]?\d[\d,]*(?:\.\d+)?", text)
    ]


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
        out = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"],
            cwd=config.ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        )
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


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for the slide and site tests (tests/browser.py), per test module."""
    from browser import start

    driver = start()
    yield driver
    driver.quit()
