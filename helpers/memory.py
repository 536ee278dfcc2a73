"""Training memory, the first wall on a GPU (notebook 08): predicted from the layer shapes, then
measured in fresh processes (`python -m helpers.memory`, its command line below)."""

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pandas as pd

from . import bench, config, peak, published, roofline

__all__ = ["BYTES_PER_PARAMETER", "activation_bytes", "check", "fixed_bytes", "growth",
           "largest_batch", "largest_batches", "measure", "table"]

BYTES_PER_PARAMETER = 16  # weight, gradient, Adam's first and second moment: float32 each
DTYPES = ("float32", "bfloat16", "float16")  # the policies' compute formats


def activation_bytes(model, dtype="float32"):
    """Bytes of the layer outputs one training step keeps per picture, at `dtype`'s bytes per
    number (float32: 4; mixed bfloat16 or float16: 2) (notebook 08)."""
    if dtype not in DTYPES:
        raise ValueError(f"Unknown dtype {dtype!r}; choose one of {', '.join(DTYPES)}.")
    return peak.activation_values(model) * roofline.BYTES[dtype]


def fixed_bytes(model):
    """Bytes that do not grow with the batch: weights, gradients, Adam's moments (notebook 08)."""
    return BYTES_PER_PARAMETER * model.count_params()


def largest_batch(model, memory_bytes, dtype="float32"):
    """The largest batch whose predicted training memory fits `memory_bytes`, 0 if not even the
    weights and moments fit; a real limit is lower (notebook 08 measures by how much)."""
    if memory_bytes <= 0:
        raise ValueError(f"memory_bytes must be positive, got {memory_bytes}.")
    return max(0, int((memory_bytes - fixed_bytes(model)) // activation_bytes(model, dtype)))


def table(names=None, gpus=("T4", "H200"), dtype="float32"):
    """Predicted training memory of bench networks (default: all) and the largest batch on each
    of `gpus` (datasheet memory) (notebook 08)."""
    rows = []
    for name in names or bench.MODELS:
        model = bench.build(name)
        row = {"network": name, "parameters": f"{model.count_params():,}",
               "weights + gradients + Adam, MB": f"{fixed_bytes(model) / 1e6:,.1f}",
               f"activations per picture, MB ({dtype})":
                   f"{activation_bytes(model, dtype) / 1e6:,.2f}"}
        for gpu in gpus:
            gb = published.GPU_DATASHEETS[gpu]["memory_gb"]
            row[f"largest batch, {gpu} {gb} GB"] = f"{largest_batch(model, gb * 1e9, dtype):,}"
        rows.append(row)
    return pd.DataFrame(rows)


def growth(batches, peaks):
    """Bytes per picture: the least-squares slope of peak memory against batch (notebook 08)."""
    if len(set(batches)) < 2:
        raise ValueError(f"growth needs two or more different batch sizes, got {batches}.")
    return float(np.polyfit(batches, peaks, 1)[0])


def measure(jobs, device="cpu:0", span_mb=300):
    """Peak memory after one step at batches b, 2b, 4b (float32 activations growing by about
    `span_mb`) of each (bench network, dtype) of `jobs`, each in a fresh process (notebook 08)."""
    # JAX would give each process 75 % of a GPU's memory up front; these processes share one
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    if device.startswith("cpu"):
        env["CUDA_VISIBLE_DEVICES"] = "-1"  # no GPU context in a CPU measurement
    running = []
    for name, dtype in jobs:
        model = bench.build(name)  # an unknown name gets bench's clear error
        first = max(1, math.ceil(span_mb * 1e6 / (3 * activation_bytes(model))))
        command = [sys.executable, "-m", "helpers.memory", "--model", name, "--device", device,
                   "--dtype", dtype, "--batch", *map(str, (first, 2 * first, 4 * first))]
        running.append((name, dtype, activation_bytes(model, dtype), subprocess.Popen(
            command, cwd=config.ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)))
    found = []
    for name, dtype, predicted, process in running:
        out, err = process.communicate()
        if process.returncode:
            raise RuntimeError(f"measuring {name} ({dtype}) failed:\n{err[-2000:]}")
        result = json.loads(out.strip().splitlines()[-1])
        measured = growth(result["batches"], result["peak_bytes"])
        found.append({"network": name, "dtype": dtype, **result, "growth": measured,
                      "predicted": predicted, "ratio": measured / predicted})
    return found


def check(found, within=3.0):
    """Measured growth per picture against the prediction, with a verdict (notebook 08)."""
    return pd.DataFrame([{
        "network": m["network"], "dtype": m["dtype"],
        "batches": ", ".join(map(str, m["batches"])),
        "peak MB": ", ".join(f"{p / 1e6:,.0f}" for p in m["peak_bytes"]),
        "predicted MB per picture": f"{m['predicted'] / 1e6:,.2f}",
        "measured MB per picture": f"{m['growth'] / 1e6:,.2f}",
        "measured / predicted": f"{m['ratio']:.2f}",
        "verdict": peak.balance_verdict(m["ratio"], within)} for m in found])


def largest_batches(found, gpus=("T4", "H200")):
    """The largest batch on each of `gpus` (datasheet memory) for each measurement of `measure`:
    predicted, and at the growth measured here ("-" where none was measured) (notebook 08)."""
    rows = []
    for m in found:
        model = bench.build(m["network"])
        row = {"network": m["network"], "dtype": m["dtype"]}
        for gpu in gpus:
            room = published.GPU_DATASHEETS[gpu]["memory_gb"] * 1e9
            row[f"{gpu}: predicted"] = f"{largest_batch(model, room, m['dtype']):,}"
            row[f"{gpu}: at the measured growth"] = (
                f"{max(0, (room - fixed_bytes(model)) // m['growth']):,.0f}"
                if m["growth"] > 0 else "-")
        rows.append(row)
    return pd.DataFrame(rows)


# --- the measuring process that `measure` starts (python -m helpers.memory) ---------------------

def peak_bytes(device):
    """Peak memory so far: TensorFlow's or JAX's allocator peak on a GPU, else the process's
    peak resident memory: Linux's VmHWM (getrusage's maximum would keep the parent's from before
    the process started), psutil's peak working set on Windows, getrusage on macOS."""
    if not device.startswith("cpu"):
        if keras.backend.backend() == "jax":  # no reset there: a fresh process, growing batches
            import jax

            kind, _, index = device.partition(":")
            return jax.devices(kind)[int(index or 0)].memory_stats()["peak_bytes_in_use"]
        import tensorflow as tf

        return tf.config.experimental.get_memory_info(device.upper())["peak"]
    status = Path("/proc/self/status")
    if status.exists():
        line = next(x for x in status.read_text().splitlines() if x.startswith("VmHWM:"))
        return int(line.split()[1]) * 1024  # kB
    import psutil

    info = psutil.Process().memory_info()
    if hasattr(info, "peak_wset"):
        return info.peak_wset
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # macOS: bytes


def step_peaks(name, batches, device, dtype):
    """Peak memory after one training step at each batch size, smallest first (a process's
    peak resident memory only grows, so each step must need more than the one before)."""
    if dtype != "float32":
        keras.config.set_dtype_policy(f"mixed_{dtype}")
    batches = sorted(batches)
    on_tensorflow_gpu = not device.startswith("cpu") and keras.backend.backend() == "tensorflow"
    with keras.device(device):
        model = bench.build(name)
        x, y = bench.synthetic_data(model, batches[-1], 1)
        model.train_on_batch(x[:batches[0]], y[:batches[0]])  # builds Adam's moments, traces
        peaks = []
        for batch in batches:
            if on_tensorflow_gpu:
                import tensorflow as tf

                tf.config.experimental.reset_memory_stats(device.upper())
            model.train_on_batch(x[:batch], y[:batch])
            peaks.append(peak_bytes(device))
    backend = {"tensorflow": "TensorFlow", "jax": "JAX"}.get(keras.backend.backend(), "the")
    how = ("the process's peak resident memory" if device.startswith("cpu")
           else f"{backend}'s allocator peak")
    return {"batches": batches, "peak_bytes": peaks, "how": how}


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m helpers.memory",
                                description="Peak memory of one training step of a bench "
                                            "network at growing batch sizes, as JSON.")
    p.add_argument("--model", required=True, choices=list(bench.MODELS))
    p.add_argument("--batch", type=int, nargs="+", required=True)
    p.add_argument("--device", default="cpu:0")
    p.add_argument("--dtype", default="float32", choices=DTYPES)
    args = p.parse_args(argv)
    if len(set(args.batch)) < 2 or min(args.batch) < 1:
        p.error(f"give two or more different batch sizes of 1 or more, got {args.batch}")
    print(json.dumps(step_peaks(args.model, args.batch, args.device, args.dtype)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
