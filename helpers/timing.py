"""Timing: a fair clock for one call (notebook 00) and the step times of training (notebook 01)."""

import math
import statistics
import time
import timeit

import keras
import numpy as np

__all__ = ["StepTimer", "Throughput", "first_and_median", "step_ops", "step_stats", "time_fit",
           "time_steps", "wait_for"]

NOT_RUN = ("Const", "Placeholder")  # graph nodes that hold a constant or an input: no work a step


# Written from notebooks/00_setup_and_hardware.ipynb by `make pages`: change it there.
def first_and_median(call, repeats):  #@save
    if repeats < 1:
        raise ValueError(f"repeats must be 1 or more, got {repeats}.")
    first = timeit.timeit(call, number=1)  # rule 1: the warm-up, timed apart
    return first, statistics.median(timeit.repeat(call, number=1, repeat=repeats))  # rule 2


# Written from notebooks/00_setup_and_hardware.ipynb by `make pages`: change it there.
def wait_for(x):  #@save; rule 3: reading one number of x back waits until x is computed
    return keras.ops.convert_to_numpy(keras.ops.cast(x[:1, :1], "float32"))


def step_stats(seconds):
    """Median, p10 and p90 of step times (s) and their spread (p90 - p10) / median (notebook 08)."""
    median = statistics.median(seconds)
    p10, p90 = statistics.quantiles(seconds, n=10)[::8] if len(seconds) >= 3 else (median,) * 2
    return {"median": median, "p10": p10, "p90": p90, "spread": (p90 - p10) / median}


def step_ops(model, x, y):
    """How many operations one training step of the compiled `model` on the batch (x, y) has:
    the nodes of TensorFlow's graph of `model.train_step` (forward, loss, gradients, the
    optimizer's update, the loss metric), constants and inputs left out; counted as traced,
    before TensorFlow's graph optimizer (Grappler) folds or fuses any (notebook 08)."""
    if keras.backend.backend() != "tensorflow":
        raise ValueError("step_ops counts TensorFlow's graph; the Keras backend is "
                         f"{keras.backend.backend()}.")
    import tensorflow as tf

    if not model.optimizer.built:  # Adam's moments exist before the step is traced
        model.optimizer.build(model.trainable_variables)
    spec = tuple(tf.TensorSpec(np.shape(a), np.asarray(a).dtype) for a in (x, y))
    graph = tf.function(model.train_step).get_concrete_function(spec).graph
    return sum(op.type not in NOT_RUN for op in graph.get_operations())


class StepTimer:
    """The clock of one epoch: `start()` when it begins, `step()` after each step (notebook 10)."""

    def start(self):
        self.steps, self.started = [], time.perf_counter()
        self._last = self.started

    def step(self):
        now = time.perf_counter()
        self.steps.append(now - self._last)
        self._last = now

    def images_per_s(self, batch_size):
        """`batch_size` over the median step, the first (tracing, start-up) left out."""
        if not self.steps:
            return math.nan
        return batch_size / statistics.median(self.steps[1:] or self.steps)

    def wall_s(self):
        return time.perf_counter() - self.started


class Throughput(keras.callbacks.Callback):
    """Per epoch: images/s (first step left out), wall time, step times (notebook 01); with
    `to_logs` also `images_per_s` and `epoch_s` in the logs, for CSVLogger (notebook 05)."""

    def __init__(self, batch_size, to_logs=False):
        super().__init__()
        if batch_size < 1:
            raise ValueError(f"batch_size must be 1 or more, got {batch_size}.")
        self.batch_size, self.to_logs = batch_size, to_logs
        self.clock, self.epochs = StepTimer(), []

    def on_epoch_begin(self, epoch, logs=None):
        self.clock.start()

    def on_train_batch_end(self, batch, logs=None):
        self.clock.step()

    def on_epoch_end(self, epoch, logs=None):
        wall, steps = self.clock.wall_s(), self.clock.steps
        rate = self.clock.images_per_s(self.batch_size)
        self.epochs.append({"epoch": epoch + 1, "wall_s": wall, "steps": len(steps),
                            "images_per_s": rate, "first_step_s": steps[0] if steps else None,
                            "step_s": list(steps)})
        if self.to_logs and logs is not None:
            logs.update(images_per_s=rate, epoch_s=wall)

    @property
    def images_per_second(self):
        return self.epochs[-1]["images_per_s"] if self.epochs else None


def time_fit(model, data, batch_size, steps, warmup):
    """Step times (s) of `steps` training steps after `warmup` on (x, y) arrays or a repeating
    dataset or PyDataset (notebook 07)."""
    clock, needed = Throughput(batch_size), warmup + steps
    if isinstance(data, tuple):  # whole epochs, each one's first step left out below
        epochs = math.ceil(needed / (len(data[0]) // batch_size - 1))
        given = {"x": data[0], "y": data[1], "batch_size": batch_size, "epochs": epochs}
    else:
        given = {"x": data, "steps_per_epoch": needed + 1}
    model.fit(**given, shuffle=False, verbose=0, callbacks=[clock])
    intervals = [t for epoch in clock.epochs for t in epoch["step_s"][1:]]  # no start-up step
    return intervals[warmup:needed]


def time_steps(model, dataset, steps, batch_size, warmup=1):
    """Median training images/s of `steps` steps on `dataset` after `warmup` (notebook 10)."""
    return batch_size / statistics.median(time_fit(model, dataset.repeat(), batch_size, steps,
                                                   warmup))
