"""tools/run_course.py: `make course` cut short goes on where it stopped."""

import json
import os
import signal
import subprocess
import sys
import time

from helpers import config
from tools import notebooks

import pytest

pytestmark = pytest.mark.notebooks


def test_an_interrupted_course_run_goes_on_with_the_notebooks_not_yet_built(tmp_path):
    env = {**os.environ, "COURSE_BUILD": str(tmp_path / "build")}
    command = [sys.executable, "-m", "tools.run_course", "--profile", "smoke", "00", "01"]
    first = subprocess.Popen(command, cwd=config.ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    built = tmp_path / "build" / "00_setup_and_hardware.ipynb"
    record = tmp_path / "build" / "run.json"
    deadline = time.time() + 300
    while time.time() < deadline and first.poll() is None:  # until 00 is done and recorded
        if record.exists() and "00_setup" in record.read_text():
            break
        time.sleep(0.2)
    first.send_signal(signal.SIGINT)  # Ctrl-C while 01 runs
    first.communicate(timeout=120)
    assert built.exists() and not (tmp_path / "build" / "01_cnn_basics_mnist.html").exists()
    again = subprocess.run(command, cwd=config.ROOT, env=env, capture_output=True, text=True,
                           timeout=600)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    lines = again.stdout.splitlines()
    assert any(line.startswith("00_setup_and_hardware") and "reused" in line for line in lines)
    assert any(line.startswith("01_cnn_basics_mnist") and " ok" in line for line in lines)
    runs = json.loads((tmp_path / "build" / "run.json").read_text())
    assert [(r["name"][:2], r["status"]) for r in runs] == [("00", "ok"), ("01", "ok")]


NOTEBOOKS = [p.name[:2] for p in notebooks()]


@pytest.mark.parametrize("prefix", NOTEBOOKS)
def test_every_notebook_runs_alone_on_a_fresh_clone(tmp_path, prefix):
    # a fresh clone: nothing in build/, the notebook opened first, in smoke
    env = {**os.environ, "COURSE_BUILD": str(tmp_path / "build")}
    done = subprocess.run([sys.executable, "-m", "tools.run_course", "--profile", "smoke", prefix],
                          cwd=config.ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    runs = json.loads((tmp_path / "build" / "run.json").read_text())
    assert [(r["name"][:2], r["status"]) for r in runs] == [(prefix, "ok")]
