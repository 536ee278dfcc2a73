"""Training the course's way: timed, resumable, explained when memory runs out (notebooks
01-05); and the plumbing around notebook 10's worker processes (TF_CONFIG and the launch,
written from its page; waiting, killing one, reading results) with notebook 10b's alpha-beta
model of the all-reduce, which predicts the scaling efficiency. The CPU's split and the
strategy are on notebook 10's page, the workers' script is notebooks/10_worker.py."""

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import keras
import numpy as np

from . import config
from .images import plural
from .timing import Throughput

__all__ = [
    "FiniteCheck",
    "Run",
    "WORKER",
    "all_reduce_time",
    "backup_dir",
    "batch_size_of",
    "fit",
    "fit_alpha_beta",
    "folder",
    "free_ports",
    "kill",
    "nonfinite",
    "predicted_efficiency",
    "ring_bytes",
    "save_model",
    "start",
    "tf_config",
    "wait",
    "weight_difference",
]


def backup_dir(name):
    """Where BackupAndRestore keeps the state of training `name` (notebooks 01, 02, 04)."""
    return config.BUILD_DIR / "backup" / name


def nonfinite(variables):
    """How many numbers of `variables` (weights, optimizer state) are NaN or infinite."""
    return sum(int(keras.ops.sum(~keras.ops.isfinite(v))) for v in variables)


class FiniteCheck(keras.callbacks.Callback):
    """After each epoch, the loss and every weight and optimizer variable checked for NaN and
    infinity, counted into the logs (`nonfinite_weights`); training stops at the first one.
    A compiled graph can hide NaN weights behind a constant output and a finite loss, so the
    weights are checked, not only the loss (notebooks 05, 09)."""

    def __init__(self):
        super().__init__()
        self.problem = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        weights = nonfinite(self.model.weights)
        state = nonfinite(self.model.optimizer.variables) if self.model.optimizer else 0
        logs["nonfinite_weights"] = weights
        loss = logs.get("loss", 0.0)
        if weights or state or not math.isfinite(loss):
            self.problem = (
                f"Training stopped after epoch {epoch + 1}: {plural(weights, 'weight')}"
                f" and {plural(state, 'optimizer value')} NaN or infinite (loss "
                f"{loss:.4g}). The "
                "network's output is no longer a function of its input. Lower the "
                "learning rate, or train in float32 to see whether a 16-bit kernel "
                "caused it: on a CPU with AMX, mixed_bfloat16 can turn weights NaN "
                "at random (notebook 09b, section 3)."
            )
            self.model.stop_training = True


def fit(
    model,
    train,
    validation=None,
    epochs=1,
    name=None,
    callbacks=(),
    verbose="auto",
    on_nonfinite="raise",
):
    """`model.fit` with a Throughput timer that adds `images_per_s` and `epoch_s` to each
    epoch's logs, a FiniteCheck (a NaN or infinite weight stops the run: "raise" a
    FloatingPointError that says so, or "stop" and return what was trained) and, with a
    `name`, BackupAndRestore: a killed training run resumes from its last finished epoch
    (notebook 05). Returns (history, timer)."""
    if on_nonfinite not in ("raise", "stop"):
        raise ValueError(f"on_nonfinite is 'raise' or 'stop', not {on_nonfinite!r}.")
    batch_size = batch_size_of(train)
    timer, check = Throughput(batch_size, to_logs=True), FiniteCheck()
    extra = [timer, check, *callbacks]
    if name:
        # double_checkpoint keeps the previous epoch's files: a backup cut off mid-write
        # (a killed kernel) is replaced by the one before it instead of failing the resume.
        extra.append(
            keras.callbacks.BackupAndRestore(
                str(backup_dir(name)), delete_checkpoint=True, double_checkpoint=True
            )
        )
    try:
        # our loaders shuffle already; shuffle=False also avoids Keras' tf.data warning
        history = model.fit(
            train,
            validation_data=validation,
            epochs=epochs,
            callbacks=extra,
            shuffle=False,
            verbose=verbose,
        )
    except Exception as e:
        if "ResourceExhausted" in type(e).__name__ or "out of memory" in str(e).lower():
            raise MemoryError(
                f"Out of memory while training with batch size {batch_size}. "
                f"Try batch size {max(1, batch_size // 2)} (or a smaller image size)."
            ) from e
        raise
    if check.problem and on_nonfinite == "raise":
        raise FloatingPointError(check.problem)
    return history, timer


def save_model(model, path):
    """Save a .keras file atomically: a temporary file renamed into place (notebooks 03, 04)."""
    path = Path(path)
    problem = config.build_problem(path.parent)
    if problem:
        raise PermissionError(problem)
    partial = path.with_name(path.stem + ".partial.keras")
    model.save(partial)
    os.replace(partial, path)
    return path


def batch_size_of(dataset):
    """The batch size of a batched tf.data dataset of (pictures, labels) (notebook 05's records);
    where its shape does not say (no drop_remainder), that of its first batch."""
    size = dataset.element_spec[0].shape[0]
    return int(size if size is not None else next(iter(dataset))[0].shape[0])


def folder(name):
    """The folder of run `name`: job, logs, results, weights, checkpoints (notebook 10)."""
    return config.BUILD_DIR / "distributed" / name


# The script every worker of notebook 10 runs (10b's workers run it too).
WORKER = config.ROOT / "notebooks" / "10_worker.py"


@dataclass
class Run:
    """A multi-worker run: its folder, processes and, once finished, results (notebook 10)."""

    name: str
    path: Path
    processes: list
    results: dict = field(default_factory=dict)
    killed: list = field(default_factory=list)

    def log(self, index, last=None):
        """Worker `index`'s log, or its last `last` lines."""
        text = (self.path / f"worker_{index}.log").read_text(errors="replace")
        return "\n".join(text.splitlines()[-last:]) if last else text

    def report(self, index):
        """The lines worker `index` printed itself ("worker 0: ..."), without TensorFlow's."""
        return "\n".join(
            line
            for line in self.log(index).splitlines()
            if line.startswith(f"worker {index}:")
        )

    def progress(self, index):
        """The progress lines worker `index` has written so far ("epoch 1 end", ...)."""
        path = self.path / f"progress_{index}.txt"
        return path.read_text().splitlines() if path.exists() else []

    def weights(self, index):
        """Worker `index`'s final weights, as a list of arrays."""
        with np.load(self.path / f"weights_{index}.npz") as f:
            return [f[f"arr_{i}"] for i in range(len(f.files))]


def kill(run, index):
    """Kill worker `index` with SIGKILL, like a machine losing power (notebook 10)."""
    process = run.processes[index]
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
        process.wait()
        run.killed.append(index)


def wait(run, timeout=600, kill_at=None, grace=30):
    """Wait for the workers and read the finished ones' results; kill_at=(index, epoch) kills
    worker `index` when it starts epoch `epoch + 1`, the others stopped `grace` s later
    (notebook 10)."""
    deadline, killed_at = time.monotonic() + timeout, None
    while any(p.poll() is None for p in run.processes):
        if (
            kill_at
            and killed_at is None
            and (f"epoch {kill_at[1] + 1} start" in run.progress(kill_at[0]))
        ):
            kill(run, kill_at[0])
            killed_at = time.monotonic()
        late = killed_at is not None and time.monotonic() > killed_at + grace
        if late or time.monotonic() > deadline:
            for index in range(len(run.processes)):
                kill(run, index)
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"The workers of {run.name!r} ran past {timeout} s; "
                f"last lines of worker 0:\n{run.log(0, last=15)}"
            )
        time.sleep(0.02)
    if kill_at and killed_at is None:
        raise RuntimeError(
            f"Worker {kill_at[0]} finished before epoch {kill_at[1] + 1} "
            "began, so nothing was killed: train for more epochs."
        )
    for index, process in enumerate(run.processes):
        if process.returncode == 0:
            run.results[index] = json.loads(
                (run.path / f"result_{index}.json").read_text()
            )
        elif not kill_at:
            raise RuntimeError(
                f"Worker {index} of {run.name!r} failed (exit code "
                f"{process.returncode}); last lines of its log:\n"
                f"{run.log(index, last=15)}"
            )
    return run


def weight_difference(run):
    """Largest absolute difference between any worker's weights and worker 0's (notebook 10)."""
    if len(run.results) < 2:
        raise ValueError(
            "Comparing weights needs a finished run with two or more workers."
        )
    first = run.weights(0)
    return max(
        float(np.max(np.abs(a - b))) if a.size else 0.0
        for index in list(run.results)[1:]
        for a, b in zip(first, run.weights(index))
    )


# Written from notebooks/10_multi_device_training.ipynb by `make pages`: change it there.
def tf_config(addresses, index):  # @save
    if not 0 <= index < len(addresses):
        raise ValueError(
            f"index {index} is outside the cluster of {len(addresses)} workers."
        )
    if not all(address.rpartition(":")[2].isdigit() for address in addresses):
        raise ValueError(f"{addresses} are not all host:port (e.g. 127.0.0.1:23456).")
    return {
        "cluster": {"worker": list(addresses)},
        "task": {"type": "worker", "index": index},
    }


# Written from notebooks/10_multi_device_training.ipynb by `make pages`: change it there.
def free_ports(count):  # @save
    if count < 1:
        raise ValueError(
            f"A cluster needs 1 or more workers (one port each), got {count}."
        )
    sockets = [socket.create_server(("127.0.0.1", 0)) for _ in range(count)]
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


# Written from notebooks/10_multi_device_training.ipynb by `make pages`: change it there.
def start(name, workers, fresh=True, script=WORKER, **job):  # @save
    path = folder(name)
    if fresh:
        shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    (path / "job.json").write_text(json.dumps({"profile": config.profile(), **job}))
    addresses = [f"127.0.0.1:{port}" for port in free_ports(workers)]
    processes, command = [], [sys.executable, script, path]
    for index in range(workers):
        cluster = json.dumps(tf_config(addresses, index))
        env = {**os.environ, "PYTHONPATH": str(config.ROOT), "TF_CONFIG": cluster}
        with open(path / f"worker_{index}.log", "w") as log:  # stdout and stderr
            processes.append(subprocess.Popen(command, env=env, stdout=log, stderr=log))
    return Run(name, path, processes)


def ring_bytes(size, workers):
    """Bytes each of `workers` sends in a ring all-reduce of `size` bytes: 2(N-1)/N x size,
    half in the reduce-scatter, half in the all-gather (notebook 10)."""
    if workers < 1:
        raise ValueError(f"An all-reduce needs 1 or more workers, got {workers}.")
    return 2 * (workers - 1) / workers * size


# Written from notebooks/10b_all_reduce_model.ipynb by `make pages`: change it there.
def all_reduce_time(size, workers, alpha, beta):  # @save
    """Seconds of a ring all-reduce of `size` bytes over `workers` (alpha-beta
    model): 2(N-1) messages in a row, each paying the latency `alpha` (s), and
    the bytes each worker sends, ring_bytes = 2(N-1)/N x size, at `beta` seconds
    a byte; 0 for one worker."""
    return 2 * (workers - 1) * alpha + ring_bytes(size, workers) * beta


# Written from notebooks/10b_all_reduce_model.ipynb by `make pages`: change it there.
def fit_alpha_beta(sizes, seconds, workers=2):  # @save
    """Latency alpha (s a message) and beta (s a byte) of all_reduce_time, fitted by
    least squares on relative errors to all-reduces of `sizes` bytes over `workers`
    that took `seconds`. An intercept below 0 gives alpha 0 and a line through 0."""
    sent = np.array([ring_bytes(s, workers) for s in sizes], dtype=float)
    took = np.asarray(seconds, dtype=float)
    if workers < 2 or len(set(sent)) < 2 or len(sent) != len(took) or took.min() <= 0:
        raise ValueError(
            "Fitting alpha and beta needs two or more workers and positive seconds "
            f"of two or more sizes: {workers}, {sizes}, {seconds}."
        )
    beta, latency = np.polyfit(sent, took, 1, w=1 / took)  # latency: 2(N-1) alpha
    if latency < 0:
        latency, beta = 0.0, float(np.sum(sent / took) / np.sum((sent / took) ** 2))
    return float(latency) / (2 * (workers - 1)), max(float(beta), 0.0)


def predicted_efficiency(step, all_reduce):
    """Scaling efficiency predicted when every worker keeps the one-worker step's `step`
    seconds (the same per-worker batch) and adds an all-reduce of `all_reduce` seconds that
    nothing overlaps: step / (step + all_reduce) (notebook 10)."""
    if step <= 0 or all_reduce < 0:
        raise ValueError(
            f"A step takes positive seconds and an all-reduce 0 or more: "
            f"{step}, {all_reduce}."
        )
    return step / (step + all_reduce)
