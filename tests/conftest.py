import os

os.environ.setdefault("COURSE_PROFILE", "smoke")
os.environ.setdefault("MPLBACKEND", "Agg")

import helpers  # noqa: F401  (quiet TensorFlow import before anything else loads it)

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


def write_jpeg(path, size=(48, 40), seed=0, mode="RGB"):
    """A small real JPEG of random noise."""
    rng = np.random.default_rng(seed)
    array = (rng.random((size[1], size[0], 3)) * 255).astype("uint8")
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array).convert(mode).save(path, "JPEG", quality=90)
    return path
