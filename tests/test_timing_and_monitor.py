import time

from helpers import monitor, timing

import keras
import numpy as np
import pytest
import tensorflow as tf


def tiny_model():
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    return model


def arrays(n=256):
    rng = np.random.default_rng(0)
    return rng.random((n, 8), dtype=np.float32), rng.random((n, 1), dtype=np.float32)


def test_throughput_callback_records_each_epoch():
    x, y = arrays()
    timer = timing.Throughput(batch_size=32)
    tiny_model().fit(x, y, batch_size=32, epochs=2, verbose=0, callbacks=[timer])
    assert [e["epoch"] for e in timer.epochs] == [1, 2]
    assert all(e["steps"] == 8 and e["wall_s"] > 0 for e in timer.epochs)
    assert timer.images_per_second > 0


def test_throughput_excludes_the_slow_first_step():
    timer = timing.Throughput(batch_size=10)
    timer.on_epoch_begin(0)
    timer._last -= 5.0  # pretend the first step (tracing) took five seconds
    for step in range(5):
        timer.on_train_batch_end(step)
    timer.on_epoch_end(0)
    assert timer.epochs[0]["first_step_s"] >= 5.0
    assert timer.images_per_second > 1000  # the slow first step does not drag the rate down


def test_throughput_refuses_batch_size_zero():
    with pytest.raises(ValueError, match="batch_size"):
        timing.Throughput(0)


def test_input_wait_share_detects_a_slow_pipeline():
    x, y = arrays(64)

    def slow(a, b):
        time.sleep(0.03)
        return a, b

    def slow_map(a, b):
        return tf.numpy_function(slow, [a, b], [tf.float32, tf.float32], stateful=True)

    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8).map(slow_map)
    ds = ds.map(lambda a, b: (tf.ensure_shape(a, (None, 8)), tf.ensure_shape(b, (None, 1))))
    share, real, memory = timing.input_wait_share(tiny_model(), ds.repeat(), steps=8)
    assert share > 0.5 and memory > real


def test_input_wait_share_is_small_for_data_in_memory():
    x, y = arrays(64)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8).cache().repeat()
    share, _, _ = timing.input_wait_share(tiny_model(), ds, steps=30)
    assert share < 0.5


def test_monitor_samples_and_marks():
    with monitor.Utilization(interval=0.05, gpus=False) as usage:
        end = time.perf_counter() + 0.4
        while time.perf_counter() < end:
            sum(i * i for i in range(1000))
        usage.mark("half")
    times, cpu = usage.series("cpu_pct")
    assert len(times) >= 4 and times == sorted(times)
    assert all(0 <= v <= 100 for v in cpu) and max(cpu) > 0
    assert usage.marks[0][1] == "half" and usage.duration >= 0.4


def test_monitor_marks_epochs_from_keras():
    x, y = arrays()
    with monitor.Utilization(interval=0.05, gpus=False) as usage:
        tiny_model().fit(x, y, epochs=3, verbose=0, callbacks=[usage.epoch_marker()])
    assert [label for _, label in usage.marks] == ["epoch 1", "epoch 2", "epoch 3"]


def test_monitor_refuses_a_zero_interval():
    with pytest.raises(ValueError, match="interval"):
        monitor.Utilization(interval=0)
