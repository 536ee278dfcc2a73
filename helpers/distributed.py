"""Training on several devices and several processes with TensorFlow's own engine, tf.distribute.

In one process, `mirrored_strategy()` mirrors a model over the GPUs present, or over two
logical CPU devices (`split_cpu`) so the mechanics can be seen without a GPU.

Across processes, `train(workers=2, ...)` starts that many copies of `helpers.worker` on this
machine, each with its own TF_CONFIG (127.0.0.1 and a free port per worker), waits for them
and returns their logs, results and final weights:

    run = distributed.train(workers=2, name="two", epochs=3, per_worker_batch=16)
    print(run.log(0)); run.results[0]["images_per_s"]; distributed.weight_difference(run)

`train(..., kill=(1, 1))` kills worker 1 once it has started epoch 2 (a machine failing),
and a second `train` with the same name resumes from the backup of epoch 1.
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

from . import config

__all__ = ["WORKER_MODULE", "folder", "free_ports", "kill", "mirrored_strategy", "Run",
           "scaling_efficiency", "split_cpu", "start", "tf_config", "train", "wait",
           "weight_difference"]

WORKER_MODULE = "helpers.worker"


def folder(name):
    """Where run `name` keeps its job file, logs, results, weights and backups (build/)."""
    return config.BUILD_DIR / "distributed" / name


# --- one process, several devices -------------------------------------------------------------


def split_cpu(replicas=2):
    """Split the CPU into `replicas` logical devices; must run before TensorFlow's first op."""
    import tensorflow as tf

    if replicas < 1:
        raise ValueError(f"replicas must be 1 or more, got {replicas}.")
    cpu = tf.config.list_physical_devices("CPU")[0]
    wanted = [tf.config.LogicalDeviceConfiguration()] * replicas
    current = tf.config.get_logical_device_configuration(cpu)
    if current is not None and len(current) == replicas:
        return [d.name for d in tf.config.list_logical_devices("CPU")]
    try:
        tf.config.set_logical_device_configuration(cpu, wanted)
    except RuntimeError as e:
        raise RuntimeError("TensorFlow has already started its devices, so the CPU can no "
                           "longer be split: restart the kernel and run this cell before "
                           "any other TensorFlow work.") from e
    return [d.name for d in tf.config.list_logical_devices("CPU")]


def mirrored_strategy():
    """MirroredStrategy over every GPU, or over the logical CPUs when there is no GPU."""
    import tensorflow as tf

    gpus = [d.name for d in tf.config.list_logical_devices("GPU")]
    devices = gpus or [d.name for d in tf.config.list_logical_devices("CPU")]
    # On CPUs NCCL does not exist; the plain cross-device ops do the all-reduce there.
    ops = None if gpus else tf.distribute.ReductionToOneDevice()
    return tf.distribute.MirroredStrategy(devices, cross_device_ops=ops)


# --- several processes: TF_CONFIG and worker processes ---------------------------------------


def free_ports(count, host="127.0.0.1"):
    """`count` distinct TCP ports on `host` that are free right now."""
    if count < 1:
        raise ValueError(f"count must be 1 or more, got {count}.")
    sockets, ports = [], []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind((host, 0))
            sockets.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in sockets:
            s.close()
    return ports


def tf_config(addresses, index):
    """The TF_CONFIG of worker `index` in a cluster of `addresses` ("host:port" each)."""
    addresses = list(addresses)
    if not addresses:
        raise ValueError("A cluster needs at least one worker address (host:port).")
    for address in addresses:
        host, _, port = str(address).rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"{address!r} is not host:port (e.g. 127.0.0.1:23456).")
    if not 0 <= index < len(addresses):
        raise ValueError(f"index {index} is outside the cluster of {len(addresses)} workers.")
    return {"cluster": {"worker": addresses}, "task": {"type": "worker", "index": index}}


@dataclass
class Run:
    """A multi-worker run: its folder, processes and, once finished, results and logs."""

    name: str
    path: Path
    processes: list
    addresses: list
    results: dict = field(default_factory=dict)
    killed: list = field(default_factory=list)

    def log(self, index, last=None):
        """Worker `index`'s log (stdout and stderr), or its last `last` lines."""
        text = (self.path / f"worker_{index}.log").read_text(errors="replace")
        return "\n".join(text.splitlines()[-last:]) if last else text

    def progress(self, index):
        """The progress lines worker `index` has written so far ("epoch 1 end", ...)."""
        path = self.path / f"progress_{index}.txt"
        return path.read_text().splitlines() if path.exists() else []

    def weights(self, index):
        """Worker `index`'s final weights, as a list of arrays."""
        with np.load(self.path / f"weights_{index}.npz") as f:
            return [f[f"arr_{i}"] for i in range(len(f.files))]


def start(workers=2, name="run", fresh=True, **job):
    """Start `workers` worker processes for `job` (see helpers/worker.py) and return a Run.

    fresh=True deletes run `name`'s earlier files, backups included; fresh=False keeps the
    backups, so the workers resume from the last finished epoch.
    """
    if workers < 1:
        raise ValueError(f"workers must be 1 or more, got {workers}.")
    path = folder(name)
    if fresh:
        shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    for old in [*path.glob("worker_*.log"), *path.glob("result_*.json"),
                *path.glob("weights_*.npz"), *path.glob("progress_*.txt")]:
        old.unlink()
    (path / "job.json").write_text(json.dumps({"profile": config.profile(), **job}, indent=1))
    addresses = [f"127.0.0.1:{p}" for p in free_ports(workers)]
    processes = []
    for index in range(workers):
        env = {**os.environ, "TF_CONFIG": json.dumps(tf_config(addresses, index)),
               "PYTHONPATH": os.pathsep.join([str(config.ROOT), os.environ.get("PYTHONPATH", "")]),
               "COURSE_ROOT": str(config.ROOT), "TF_CPP_MIN_LOG_LEVEL": "2"}
        with open(path / f"worker_{index}.log", "w") as log:
            processes.append(subprocess.Popen(
                [sys.executable, "-u", "-m", WORKER_MODULE, str(path)], env=env,
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=config.ROOT, start_new_session=True))
    return Run(name, path, processes, addresses)


def kill(run, index):
    """Kill worker `index` at once (SIGKILL: no clean-up, like a machine losing power)."""
    process = run.processes[index]
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
        process.wait()
        run.killed.append(index)


def wait(run, timeout=600, kill_at=None, grace=30):
    """Wait for every worker; return the Run with the results of those that finished.

    kill_at=(index, epoch): kill worker `index` as soon as it starts epoch `epoch + 1`; the
    others are then given `grace` seconds to notice and stop on their own before they are
    stopped too (a cluster scheduler restarts the whole job). A worker that fails on its
    own, or a run past `timeout` seconds, is an error that shows the end of the logs.
    """
    deadline, killed_at = time.monotonic() + timeout, None
    while any(p.poll() is None for p in run.processes):
        if kill_at and killed_at is None and f"epoch {kill_at[1] + 1} start" in run.progress(
                kill_at[0]):
            kill(run, kill_at[0])
            killed_at = time.monotonic()
        if killed_at is not None and time.monotonic() > killed_at + grace:
            for index in range(len(run.processes)):
                kill(run, index)
        if time.monotonic() > deadline:
            for index in range(len(run.processes)):
                kill(run, index)
            raise TimeoutError(f"The workers of {run.name!r} ran past {timeout} s; "
                               f"last lines of worker 0:\n{run.log(0, last=15)}")
        time.sleep(0.02)
    if kill_at and killed_at is None:
        raise RuntimeError(f"Worker {kill_at[0]} finished before epoch {kill_at[1] + 1} "
                           "began, so nothing was killed: train for more epochs.")
    for index, process in enumerate(run.processes):
        result = run.path / f"result_{index}.json"
        if result.exists():
            run.results[index] = json.loads(result.read_text())
        elif not kill_at:
            raise RuntimeError(f"Worker {index} of {run.name!r} failed (exit code "
                               f"{process.returncode}); last lines of its log:\n"
                               f"{run.log(index, last=15)}")
    return run


def train(workers=2, name="run", timeout=600, kill_at=None, fresh=True, **job):
    """start(...) then wait(...): train on `workers` processes and return the finished Run."""
    return wait(start(workers, name, fresh=fresh, **job), timeout=timeout, kill_at=kill_at)


# --- what the runs show ------------------------------------------------------------------------


def weight_difference(run):
    """Largest absolute difference between any worker's weights and worker 0's (0.0: identical)."""
    if len(run.results) < 2:
        raise ValueError("Comparing weights needs a finished run with two or more workers.")
    first = run.weights(0)
    return max(float(np.max(np.abs(a - b))) if a.size else 0.0
               for index in list(run.results)[1:] for a, b in zip(first, run.weights(index)))


def scaling_efficiency(one, many):
    """Throughput with N workers / (N x throughput with one): 1.0 is perfect scaling."""
    n = len(many.results)
    if len(one.results) != 1 or n < 2:
        raise ValueError("Pass a finished one-worker run and a finished run with 2+ workers.")
    return many.results[0]["images_per_s"] / (n * one.results[0]["images_per_s"])
