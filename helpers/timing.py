"""Timing for training: images/s per epoch, epoch wall time, and time spent waiting for input.

`Throughput` is a Keras callback. Keras runs the input fetch inside its training step, so
a callback alone cannot split a step into "waiting" and "computing"; `input_wait_share`
measures that split with two short runs (real pipeline vs one batch held in memory).
"""

import statistics
import time

import keras


class Throughput(keras.callbacks.Callback):
    """Records per epoch: images/s (first step excluded), wall time and step times.

    After training: `epochs` is a list of dicts; `images_per_second` the last epoch's rate.
    With to_logs=True it also adds `images_per_s` and `epoch_s` to each epoch's logs.
    """

    def __init__(self, batch_size, verbose=False, to_logs=False):
        super().__init__()
        if batch_size < 1:
            raise ValueError(f"batch_size must be 1 or more, got {batch_size}.")
        self.batch_size, self.verbose, self.epochs = batch_size, verbose, []
        self.to_logs = to_logs

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start = self._last = time.perf_counter()
        self._steps = []

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self._steps.append(now - self._last)
        self._last = now

    def on_epoch_end(self, epoch, logs=None):
        wall = time.perf_counter() - self._epoch_start
        timed = self._steps[1:] or self._steps  # the first step includes tracing/warm-up
        rate = self.batch_size / statistics.median(timed) if timed else float("nan")
        record = {"epoch": epoch + 1, "wall_s": wall, "steps": len(self._steps),
                  "images_per_s": rate, "first_step_s": self._steps[0] if self._steps else None,
                  "step_spread": _spread(timed)}
        self.epochs.append(record)
        if self.to_logs and logs is not None:  # later callbacks (CSVLogger) see them too
            logs.update(images_per_s=rate, epoch_s=wall)
        if self.verbose:
            print(f"epoch {epoch + 1}: {rate:,.0f} images/s, {wall:.1f} s")

    @property
    def images_per_second(self):
        return self.epochs[-1]["images_per_s"] if self.epochs else None


def _spread(values):
    """Relative spread of step times: (p90 - p10) / median."""
    if len(values) < 3:
        return 0.0
    q = statistics.quantiles(values, n=10)
    return (q[-1] - q[0]) / statistics.median(values)


def time_steps(model, dataset, steps, batch_size):
    """Train `steps` steps on `dataset` and return the median images/s (first step excluded)."""
    timer = Throughput(batch_size)
    model.fit(dataset.repeat(), steps_per_epoch=steps, epochs=1, verbose=0, shuffle=False,
              callbacks=[timer])
    return timer.images_per_second


def input_wait_share(model, dataset, steps=20):
    """Share of step time spent waiting for input, from two short runs on the same model.

    1. the real pipeline; 2. one batch of it repeated from memory (no input work).
    Waiting share = 1 - rate(real) / rate(memory), clipped at 0.
    Returns (share, real images/s, in-memory images/s).
    """
    batch = next(iter(dataset))
    batch_size = int(keras.ops.shape(batch[0])[0])
    import tensorflow as tf

    in_memory = tf.data.Dataset.from_tensors(batch).repeat()
    time_steps(model, in_memory, 3, batch_size)  # compile the train step once
    real = time_steps(model, dataset, steps, batch_size)
    memory = time_steps(model, in_memory, steps, batch_size)
    return max(0.0, 1.0 - real / memory), real, memory
