"""tf.distribute on one machine (notebook 10): logical CPUs, and worker processes with TF_CONFIG.

Notebook 10 writes out `mirrored_strategy`, `tf_config` and `start` (a test keeps them
identical); the helper adds waiting for the workers, killing one, their logs, results, weights:

    run = distributed.wait(distributed.start("two", 2, epochs=3, per_worker_batch=16))
    print(run.report(0)); run.results[0]["images_per_s"]; distributed.weight_difference(run)
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import tensorflow as tf

from . import config

__all__ = ["folder", "free_ports", "kill", "mirrored_strategy", "Run", "split_cpu", "start",
           "tf_config", "wait", "weight_difference"]


def folder(name):
    """Where run `name` keeps its job, logs, results, weights and checkpoints (notebook 10)."""
    return config.BUILD_DIR / "distributed" / name


def split_cpu(replicas=2):
    """Split the CPU into `replicas` logical devices, before TensorFlow's first op (notebook 10)."""
    if replicas < 1:
        raise ValueError(f"replicas must be 1 or more, got {replicas}.")
    cpu = tf.config.list_physical_devices("CPU")[0]
    current = tf.config.get_logical_device_configuration(cpu)
    if current is None or len(current) != replicas:
        try:
            tf.config.set_logical_device_configuration(
                cpu, [tf.config.LogicalDeviceConfiguration()] * replicas)
        except RuntimeError as e:
            raise RuntimeError("TensorFlow has already started its devices, so the CPU can no "
                               "longer be split: restart the kernel and run this cell before "
                               "any other TensorFlow work.") from e
    return [d.name for d in tf.config.list_logical_devices("CPU")]


def mirrored_strategy():
    """MirroredStrategy over the GPUs if there are two or more, else over the logical CPUs
    (notebook 10)."""
    gpus = [d.name for d in tf.config.list_logical_devices("GPU")]
    if len(gpus) > 1:  # NCCL, the GPUs' own all-reduce
        return tf.distribute.MirroredStrategy(gpus)
    cpus = [d.name for d in tf.config.list_logical_devices("CPU")]
    return tf.distribute.MirroredStrategy(
        cpus, cross_device_ops=tf.distribute.ReductionToOneDevice())


def free_ports(count):
    """`count` distinct TCP ports of 127.0.0.1 that are free right now (notebook 10)."""
    if count < 1:
        raise ValueError(f"A cluster needs 1 or more workers (one port each), got {count}.")
    sockets = [socket.create_server(("127.0.0.1", 0)) for _ in range(count)]
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def tf_config(addresses, index):
    """The TF_CONFIG of worker `index` in a cluster of "host:port" `addresses` (notebook 10)."""
    if not 0 <= index < len(addresses):
        raise ValueError(f"index {index} is outside the cluster of {len(addresses)} workers.")
    if not all(address.rpartition(":")[2].isdigit() for address in addresses):
        raise ValueError(f"{addresses} are not all host:port (e.g. 127.0.0.1:23456).")
    return {"cluster": {"worker": list(addresses)}, "task": {"type": "worker", "index": index}}


@dataclass
class Run:
    """A multi-worker run: its folder, processes and, once finished, results (notebook 10)."""

    name: str
    path: Path
    processes: list
    results: dict = field(default_factory=dict)
    killed: list = field(default_factory=list)

    def log(self, index, last=None):
        """Worker `index`'s log (stdout and stderr), or its last `last` lines."""
        text = (self.path / f"worker_{index}.log").read_text(errors="replace")
        return "\n".join(text.splitlines()[-last:]) if last else text

    def report(self, index):
        """The lines worker `index` printed itself ("worker 0: ..."), without TensorFlow's."""
        return "\n".join(line for line in self.log(index).splitlines()
                         if line.startswith(f"worker {index}:"))

    def progress(self, index):
        """The progress lines worker `index` has written so far ("epoch 1 end", ...)."""
        path = self.path / f"progress_{index}.txt"
        return path.read_text().splitlines() if path.exists() else []

    def weights(self, index):
        """Worker `index`'s final weights, as a list of arrays."""
        with np.load(self.path / f"weights_{index}.npz") as f:
            return [f[f"arr_{i}"] for i in range(len(f.files))]


def start(name, workers, fresh=True, **job):
    """Start `workers` processes of helpers.worker for `job`; fresh=False keeps the
    checkpoints, so they resume (notebook 10)."""
    path = folder(name)
    if fresh:
        shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    (path / "job.json").write_text(json.dumps({"profile": config.profile(), **job}))
    addresses = [f"127.0.0.1:{port}" for port in free_ports(workers)]
    processes = []
    for index in range(workers):
        env = {**os.environ, "TF_CONFIG": json.dumps(tf_config(addresses, index))}
        with open(path / f"worker_{index}.log", "w") as log:
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "helpers.worker", str(path)], cwd=config.ROOT, env=env,
                stdout=log, stderr=subprocess.STDOUT))
    return Run(name, path, processes)


def kill(run, index):
    """Kill worker `index` at once (SIGKILL: no clean-up, like a machine losing power)."""
    process = run.processes[index]
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
        process.wait()
        run.killed.append(index)


def wait(run, timeout=600, kill_at=None, grace=30):
    """Wait for every worker and read the results of those that finished (notebook 10).

    kill_at=(index, epoch): kill worker `index` as soon as it starts epoch `epoch + 1`; the
    others get `grace` seconds to fail on their own before they are stopped too. A worker
    that fails on its own, or a run past `timeout` seconds, is an error that shows its log.
    """
    deadline, killed_at = time.monotonic() + timeout, None
    while any(p.poll() is None for p in run.processes):
        if kill_at and killed_at is None and (
                f"epoch {kill_at[1] + 1} start" in run.progress(kill_at[0])):
            kill(run, kill_at[0])
            killed_at = time.monotonic()
        late = killed_at is not None and time.monotonic() > killed_at + grace
        if late or time.monotonic() > deadline:
            for index in range(len(run.processes)):
                kill(run, index)
        if time.monotonic() > deadline:
            raise TimeoutError(f"The workers of {run.name!r} ran past {timeout} s; "
                               f"last lines of worker 0:\n{run.log(0, last=15)}")
        time.sleep(0.02)
    if kill_at and killed_at is None:
        raise RuntimeError(f"Worker {kill_at[0]} finished before epoch {kill_at[1] + 1} "
                           "began, so nothing was killed: train for more epochs.")
    for index, process in enumerate(run.processes):
        if process.returncode == 0:
            run.results[index] = json.loads((run.path / f"result_{index}.json").read_text())
        elif not kill_at:
            raise RuntimeError(f"Worker {index} of {run.name!r} failed (exit code "
                               f"{process.returncode}); last lines of its log:\n"
                               f"{run.log(index, last=15)}")
    return run


def weight_difference(run):
    """Largest absolute difference between any worker's weights and worker 0's (notebook 10)."""
    if len(run.results) < 2:
        raise ValueError("Comparing weights needs a finished run with two or more workers.")
    first = run.weights(0)
    return max(float(np.max(np.abs(a - b))) if a.size else 0.0
               for index in list(run.results)[1:] for a, b in zip(first, run.weights(index)))
