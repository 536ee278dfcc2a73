"""tools.bench on Keras' JAX backend, with no TensorFlow: the recording command a GPU machine
that has JAX but no TensorFlow runs, here on the CPU (`make test-jax` builds its environment
from requirements-jax.txt in .cache/venv-jax)."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip(
    "jax",
    reason="JAX is not installed here; `make test-jax` runs this test "
    "in .cache/venv-jax (requirements-jax.txt)",
)

from helpers import config, models, results, roofline  # noqa: E402

# What notebooks 08 and 09 read from a record (results.table, roofline.points, their filters)
READ = {
    "batch_size",
    "dtype",
    "input_wait_share",
    "achieved_flops_per_s",
    "peak_share",
    "augment_in_model",
    "training_flops_per_image",
    "workers",
    "use_multiprocessing",
    "step_s",
} | results.BENCH_KEYS


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Every network recorded with KERAS_BACKEND=jax in float32 and mixed bfloat16, at batch 2
    (and the sweep's 4, 8, 16), as on a GPU machine, into a folder of its own."""
    out = tmp_path_factory.mktemp("results")
    code = (
        "import sys\nfrom tools import bench\nrc = bench.main(sys.argv[1:])\n"
        "print('tensorflow imported:', 'tensorflow' in sys.modules)\nsys.exit(rc)"
    )
    argv = [
        "--all",
        "--batch",
        "2",
        "--dtype",
        "float32",
        "--dtype",
        "bfloat16",
        "--warmup",
        "0",
        "--record",
        "--out",
        str(out),
    ]
    env = {**os.environ, "KERAS_BACKEND": "jax", "COURSE_PROFILE": "smoke"}
    done = subprocess.run(
        [sys.executable, "-c", code, *argv],
        env=env,
        cwd=config.ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out, done.stdout


def test_every_network_is_recorded_on_jax_in_both_formats_without_tensorflow(recorded):
    out, stdout = recorded
    assert "tensorflow imported: False" in stdout
    found = results.load(out)
    assert {(r["model"], r["dtype"]) for r in found} == {
        (m, t) for m in models.MODELS for t in ("float32", "bfloat16")
    }
    for r in found:
        assert READ <= r.keys(), READ - r.keys()
        assert r["backend"] == "jax" and r["device"] == "cpu:0"
        assert r["device_name"] == r["hardware"]["cpu"]["model"]
        assert r["images_per_s"] > 0 and r["timeline"]["samples"][0]["cpu_pct"] >= 0
    # the batch sweep, in both formats
    assert sorted(r["batch_size"] for r in found if r["model"] == "cifar10_net") == [
        2,
        2,
        4,
        4,
        8,
        8,
        16,
        16,
    ]
    # notebook 08's and 09's table of records
    assert len(results.table(found)) == len(found)
    # notebook 08's roofline
    assert len(roofline.points(found, kind="recorded")) == len(found)


def test_the_training_memory_of_every_network_is_recorded(recorded):
    out, _ = recorded
    (path,) = out.glob("*_memory_cpu0.json")
    memory = json.loads(path.read_text())
    assert memory["backend"] == "jax" and memory["device"] == "cpu:0"
    assert {(m["network"], m["dtype"]) for m in memory["runs"]} == {
        (m, t) for m in models.MODELS for t in ("float32", "bfloat16")
    }
    for m in memory["runs"]:
        assert len(m["peak_bytes"]) == 3 and min(m["peak_bytes"]) > 0, m
