"""Timing: step times of training (Keras callback or hand-written loop), and repeated calls.

`Throughput` is the Keras callback the notebooks pass to `fit`; `StepTimer` is the clock it
uses, which a hand-written training loop (helpers.worker) drives itself. `step_stats` gives
the median and spread every record of the course reports; `first_and_median` times any call.
Keras runs the input fetch inside its training step, so no callback can split a step into
"waiting" and "computing": helpers.bench measures that split with a second, in-memory run.
"""

import math
import statistics
import time
import timeit

import keras

__all__ = ["StepTimer", "Throughput", "first_and_median", "step_stats", "time_fit",
           "time_steps"]


def step_stats(seconds):
    """Median, 10th and 90th percentile of step times (s), and their relative spread
    (p90 - p10) / median; with fewer than three steps the spread is 0."""
    median = statistics.median(seconds)
    p10, p90 = statistics.quantiles(seconds, n=10)[::8] if len(seconds) >= 3 else (median,) * 2
    return {"median": median, "p10": p10, "p90": p90, "spread": (p90 - p10) / median}


class StepTimer:
    """The clock of one epoch: `start()` when it begins, `step()` after every step."""

    def start(self):
        self.steps, self.started = [], time.perf_counter()
        self._last = self.started

    def step(self):
        now = time.perf_counter()
        self.steps.append(now - self._last)
        self._last = now

    @property
    def timed(self):
        """The step times without the first (tracing, iterator start-up, first decode)."""
        return self.steps[1:] or self.steps

    def images_per_s(self, batch_size):
        """`batch_size` over the median timed step: the epoch's steady training speed."""
        return batch_size / statistics.median(self.timed) if self.steps else math.nan

    def wall_s(self):
        return time.perf_counter() - self.started


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
        self.to_logs, self.clock = to_logs, StepTimer()

    def on_epoch_begin(self, epoch, logs=None):
        self.clock.start()

    def on_train_batch_end(self, batch, logs=None):
        self.clock.step()

    def on_epoch_end(self, epoch, logs=None):
        wall, steps = self.clock.wall_s(), self.clock.steps
        rate = self.clock.images_per_s(self.batch_size)
        self.epochs.append({"epoch": epoch + 1, "wall_s": wall, "steps": len(steps),
                            "images_per_s": rate, "first_step_s": steps[0] if steps else None,
                            "step_s": list(steps),
                            "step_spread": step_stats(self.clock.timed)["spread"]
                            if steps else 0.0})
        if self.to_logs and logs is not None:  # later callbacks (CSVLogger) see them too
            logs.update(images_per_s=rate, epoch_s=wall)
        if self.verbose:
            print(f"epoch {epoch + 1}: {rate:,.0f} images/s, {wall:.1f} s")

    @property
    def images_per_second(self):
        return self.epochs[-1]["images_per_s"] if self.epochs else None


def time_fit(model, data, batch_size, steps, warmup, everything=False):
    """Step times (s) of `steps` timed training steps after `warmup` steps (`everything`:
    of the warm-up steps too). `data` is (x, y) arrays (repeated over several epochs) or a
    repeating dataset/PyDataset.
    """
    clock = Throughput(batch_size)
    needed = warmup + steps
    if isinstance(data, tuple):
        per_epoch = len(data[0]) // batch_size
        epochs = math.ceil(needed / (per_epoch - 1))
        model.fit(*data, batch_size=batch_size, epochs=epochs, shuffle=False, verbose=0,
                  callbacks=[clock])
    else:
        model.fit(data, steps_per_epoch=needed + 1, epochs=1, verbose=0, shuffle=False,
                  callbacks=[clock])
    intervals = [t for epoch in clock.epochs for t in epoch["step_s"][1:]]  # no start-up step
    return intervals[:needed] if everything else intervals[warmup:needed]


def time_steps(model, dataset, steps, batch_size, warmup=1):
    """Median training images/s of `steps` steps on `dataset` after `warmup` steps (time_fit)."""
    return batch_size / statistics.median(time_fit(model, dataset.repeat(), batch_size, steps,
                                                   warmup))


def first_and_median(call, repeats):
    """Seconds of the first `call()` (allocation, compilation, kernel choice) and the median
    of `repeats` calls after it."""
    if repeats < 1:
        raise ValueError(f"repeats must be 1 or more, got {repeats}.")
    first = timeit.timeit(call, number=1)
    return first, statistics.median(timeit.repeat(call, number=1, repeat=repeats))
