"""Notebook 10b's worker: `python 10b_worker.py FOLDER`. It runs notebook 10's worker whole
(it trains and reports as there), then times its step's parts and all-reduces of four sizes
with the same strategy, and adds them to its results file."""

import json
import runpy
import time

from helpers.training import WORKER

import numpy as np
import tensorflow as tf

worker = runpy.run_path(str(WORKER), run_name="__main__")  # 10's names, after its run
strategy, compute_step, batches = (
    worker[n] for n in ("strategy", "compute_step", "batches")
)


def all_reduce_of(floats):  # a function that all-reduces `floats` numbers
    numbers = tf.ones([floats])
    context = tf.distribute.get_replica_context
    return tf.function(
        lambda: strategy.run(lambda: context().all_reduce("sum", numbers))
    )


def time_all_reduces(repeats=15):
    """[bytes, median seconds] of all-reduces from one number to a float a weight."""
    floats, timings = worker["model"].count_params(), []
    for n in (1, floats // 100, floats // 10, floats):
        reduce = all_reduce_of(n)
        reduce()  # traces it; the workers meet
        seconds = []
        for _ in range(repeats):
            started = time.perf_counter()
            reduce()
            seconds.append(time.perf_counter() - started)
        timings.append([4 * n, float(np.median(seconds))])
    return timings


parts = worker["time_parts"](  # a step's parts, in alternated rounds
    {
        "alone": lambda: compute_step(batches),  # worker 0 only
        "together": lambda: compute_step(batches),  # every worker at once
        "all_reduce": all_reduce_of(worker["model"].count_params()),  # all gradients
        "with_all_reduce": lambda: compute_step(batches, all_reduce=True),
    }
)
found = worker["folder"] / f"result_{worker['index']}.json"
result = json.loads(found.read_text())
result.update(parts=parts, all_reduce=time_all_reduces())
found.write_text(json.dumps(result, indent=1))
worker[
    "barrier"
]()  # worker 0 hosts the cluster's coordination: it must not leave first
