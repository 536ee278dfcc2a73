"""helpers.bench: a timed run and its record, the input-wait share, targets and the CLI."""

import json
import time

from helpers import bench

import keras
import numpy as np
import pytest


def test_a_synthetic_run_gives_a_complete_record(fixed_peak):
    record = bench.run("mnist_cnn", batch_size=16, steps=4, warmup=1)
    assert record["images_per_s"] > 0 and record["step_s"]["p10"] <= record["step_s"]["p90"]
    assert record["timed_steps"] == 4 and record["warmup_steps"] == 1
    assert record["hardware"]["cpu"]["logical_cores"] >= 1 and record["backend"] == "tensorflow"
    assert record["kind"] == "recorded" and "bench.run('mnist_cnn'" in record["command"]
    json.dumps(record)  # a record must be storable as JSON


class SlowBatches(keras.utils.PyDataset):
    """MNIST-shaped random batches that take `delay` seconds each to make."""

    def __init__(self, delay, batch=16, batches=40):
        super().__init__()
        self.delay, self.batch, self.batches = delay, batch, batches
        rng = np.random.default_rng(0)
        self.x = rng.integers(0, 256, (batch, 28, 28, 1)).astype("float32")
        self.y = rng.integers(0, 10, batch).astype("float32")

    def __len__(self):
        return self.batches

    def __getitem__(self, index):
        time.sleep(self.delay)
        return self.x, self.y


def test_a_slow_source_makes_the_network_wait_and_a_fast_one_does_not(fixed_peak):
    slow = bench.run("mnist_cnn", batch_size=16, steps=6, warmup=2,
                     source=SlowBatches(0.1), label="slow")
    fast = bench.run("mnist_cnn", batch_size=16, steps=6, warmup=2,
                     source=SlowBatches(0.0), label="fast")
    assert slow["source"] == "slow" and slow["input_wait_share"] > 0.5
    assert slow["images_per_s"] < 16 / 0.1  # never faster than the source makes batches
    assert fast["input_wait_share"] < slow["input_wait_share"] / 2


def test_the_keras_2_style_loader_runs_with_its_workers(fixed_peak):
    record = bench.run("cats_dogs_original", batch_size=8, steps=3, warmup=1, source="python",
                       workers=2)
    assert record["workers"] == 2 and record["augment_in_model"] is False
    assert 0 < record["images_per_s"] and 0 < record["synthetic_images_per_s"]


def test_targets_report_met_and_not_met():
    def rec(model, source, rate, ratio=1.0, share=0.0, workers=None):
        return {"model": model, "source": source, "device": "cpu:0", "images_per_s": rate,
                "ratio_to_synthetic": ratio, "peak_share": share, "workers": workers,
                "use_multiprocessing": False}

    lines = bench.targets([rec("cats_dogs_original", "jpeg", 300, ratio=0.97),
                           rec("cats_dogs_original", "python", 100, workers=1),
                           rec("cats_dogs_128px", "synthetic", 30, share=0.2)])
    assert "97% (target >= 95%: met)" in lines[0]
    assert "3.00x (target >= 1.5x: met)" in lines[1]
    assert "20% (target >= 30%: NOT met)" in lines[2]


def test_bad_names_get_clear_errors():
    with pytest.raises(ValueError, match="cats_dogs_128px"):
        bench.run("resnet50")
    with pytest.raises(ValueError, match="synthetic"):
        bench.run("mnist_cnn", source="csv")
    with pytest.raises(ValueError, match="no JPEG source"):
        bench.run("mnist_cnn", source="jpeg", steps=3)


def test_cli_help_and_missing_model(capsys):
    with pytest.raises(SystemExit) as done:
        bench.main(["--help"])
    assert done.value.code == 0 and "--record" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="cifar10_net"):
        bench.main([])
    with pytest.raises(SystemExit, match="no JPEG source"):
        bench.main(["--model", "mnist_cnn", "--source", "jpeg", "--steps", "3"])


BLOCK_TENSORFLOW = ("import sys; sys.modules['tensorflow'] = None  # any import of it fails\n")


def run_python(code, backend):
    import os
    import subprocess
    import sys

    env = {**os.environ, "KERAS_BACKEND": backend, "COURSE_PROFILE": "smoke"}
    return subprocess.run([sys.executable, "-c", BLOCK_TENSORFLOW + code], env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_synthetic_path_needs_no_tensorflow():
    # Keras' numpy backend cannot train, but it shows that building the models, counting
    # their FLOPs and making synthetic data never import TensorFlow.
    pytest.importorskip("scipy", reason="Keras' numpy backend needs SciPy")
    done = run_python("from helpers import bench, peak\n"
                      "net = bench.build('cifar10_net')\n"
                      "x, y = bench.synthetic_data(net, 4, 2)\n"
                      "print(peak.flops_per_image(net), x.shape, x.dtype)", "numpy")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[0] == "36941568"


def test_a_synthetic_run_on_jax():
    pytest.importorskip("jax", reason="JAX is not installed (the course pins only TensorFlow)")
    done = run_python("from helpers import bench\n"
                      "r = bench.run('cifar10_net', batch_size=8, steps=3, warmup=1)\n"
                      "print(r['backend'], r['images_per_s'] > 0)", "jax")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-2:] == ["jax", "True"]


def test_compare_says_within_the_tolerance_or_how_many_times_as_fast():
    names = ("tf.data", "Python")
    assert bench.compare(1050, 1000, names) == (
        "tf.data 1,050 vs Python 1,000 images/s: within 10 % of each other")
    assert bench.compare(1000, 1100, names).endswith("within 10 % of each other")
    assert bench.compare(1500, 1000, names).endswith("tf.data is 1.50x as fast")
    assert bench.compare(500, 1000, names).endswith("Python is 2.00x as fast")
    assert bench.compare(1150, 1000, names, tolerance=0.2).endswith("within 20 % of each other")
    with pytest.raises(ValueError, match="positive"):
        bench.compare(0, 1000, names)
