"""tools.memory and helpers: training memory predicted from the layer shapes (roofline), and
measured in fresh processes (benchmark)."""

from helpers import benchmark, roofline

import keras
import pytest


def tiny_net():
    # conv: 6 x 6 x 2 = 72 outputs, flatten: 72, dense: 3; parameters 2*9+2 + 72*3+3 = 239
    return keras.Sequential(
        [
            keras.Input((8, 8, 1)),
            keras.layers.Conv2D(2, 3),
            keras.layers.Flatten(),
            keras.layers.Dense(3),
        ]
    )


def test_training_memory_by_hand():
    net = tiny_net()
    # weights, gradients, Adam's two moments
    assert roofline.fixed_bytes(net) == 16 * 239
    assert roofline.activation_bytes(net) == (72 + 72 + 3) * 4
    # mixed: half
    assert roofline.activation_bytes(net, "bfloat16") == (72 + 72 + 3) * 2


def test_the_largest_batch_that_fits():
    net = tiny_net()
    fits_ten = roofline.fixed_bytes(net) + 10 * roofline.activation_bytes(net) + 100
    assert roofline.largest_batch(net, fits_ten) == 10
    # half the bytes a picture
    assert roofline.largest_batch(net, fits_ten, "bfloat16") == 20
    # not even the weights and moments fit
    assert roofline.largest_batch(net, 1000) == 0
    with pytest.raises(ValueError, match="must be positive"):
        roofline.largest_batch(net, 0)
    with pytest.raises(ValueError, match="Unknown dtype 'int8'"):
        roofline.activation_bytes(net, "int8")


def test_growth_is_the_slope_of_peak_memory_against_batch():
    assert benchmark.growth([10, 20, 40], [1100, 1200, 1400]) == pytest.approx(10)
    with pytest.raises(ValueError, match="two or more different batch sizes"):
        benchmark.growth([8, 8], [1, 2])


def rehearsing_a_gpu():
    """Under `make test-gpu-rehearsal`, whose sitecustomize.py installs tests/fake_gpu.py in
    every process for good: the fake leaves TensorFlow's own device list as `.real` on its
    own. (The `fake_gpu` fixture of other tests installs it only while they run.)"""
    import tensorflow as tf

    return hasattr(tf.config.list_physical_devices, "real")


@pytest.mark.processes
def test_the_measured_growth_per_picture_is_within_3x_of_the_prediction():
    import numpy as np

    if rehearsing_a_gpu():
        pytest.skip(
            "the GPU rehearsal's fake T4 has no memory of its own to measure, and in "
            "the measuring processes it makes Keras compile the step with XLA on the "
            "CPU (jit_compile='auto' sees a GPU): their resident memory is not what "
            "the prediction predicts"
        )
    # one training step at three growing batch sizes, each network in a fresh process; the
    # 1.5 GB held here must not count there (a notebook's kernel holds that much and more)
    held = np.ones(int(1.5e9) // 8)
    found = benchmark.measure_memory(
        [("cifar10_net", "float32"), ("cats_dogs_128px", "float32")], span_mb=200
    )
    assert held.sum() > 0
    for m in found:
        assert m["peak_bytes"] == sorted(m["peak_bytes"]), m
        assert 1 / 3 <= m["ratio"] <= 3, (m["network"], m["growth"], m["predicted"])
    assert list(benchmark.check_memory(found)["verdict"]) == ["within 3x", "within 3x"]
