"""helpers.timing: the step clock, the Keras callback built on it, and the repeat timer."""

from helpers import timing

import pytest
from conftest import arrays, tiny_model


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
    timer.clock._last -= 5.0  # pretend the first step (tracing) took five seconds
    for step in range(5):
        timer.on_train_batch_end(step)
    timer.on_epoch_end(0)
    assert timer.epochs[0]["first_step_s"] >= 5.0
    assert timer.images_per_second > 1000  # the slow first step does not drag the rate down


def test_throughput_refuses_batch_size_zero():
    with pytest.raises(ValueError, match="batch_size"):
        timing.Throughput(0)


def test_step_stats_give_the_median_and_the_spread_of_the_middle_80_percent():
    stats = timing.step_stats([1.0] * 8 + [0.1, 10.0])  # one fast and one slow outlier
    assert stats["median"] == 1.0 and stats["p10"] < 1.0 < stats["p90"]
    assert timing.step_stats([1.0, 1.0, 1.0])["spread"] == 0.0
    assert timing.step_stats([2.0, 4.0])["spread"] == 0.0  # too few steps for a spread


def test_the_first_call_is_timed_apart_from_the_repeats():
    calls = []

    def call():  # the first call is slow, as compiling one is
        calls.append(1)
        if len(calls) == 1:
            sum(range(2_000_000))

    first, median = timing.first_and_median(call, repeats=3)
    assert len(calls) == 4 and first > 5 * median
    with pytest.raises(ValueError, match="repeats"):
        timing.first_and_median(call, repeats=0)


def test_each_dense_layer_adds_the_same_operations_to_a_step_whatever_its_width():
    import keras
    import numpy as np

    def ops(widths, bias=True):
        net = keras.Sequential([keras.Input((3,))] + [keras.layers.Dense(w, use_bias=bias)
                                                      for w in widths])
        net.compile(optimizer="adam", loss="mse")
        x, y = np.ones((4, 3), "float32"), np.ones((4, widths[-1]), "float32")
        return timing.step_ops(net, x, y)

    one, two, three = ops([2]), ops([2, 2]), ops([2, 2, 2])
    assert two - one == three - two > 0  # forward, backward and Adam's update of each layer
    assert ops([64, 64, 2]) == three  # operations, not their sizes
    assert ops([2, 2, 2], bias=False) < three  # a weight fewer to update in each layer
