"""The measuring process that helpers.benchmark's `measure_memory` starts, one per network and
dtype: peak memory after one training step at growing batch sizes, printed as JSON (notebook 08).

    python -m tools.memory --model original --batch 16 32 64 [--device gpu:0] [--dtype bfloat16]
"""

import argparse
import json
import sys
from pathlib import Path

from helpers import benchmark, models, roofline

import keras


def peak_bytes(device):
    """Peak memory so far: TensorFlow's or JAX's allocator peak on a GPU, else the process's
    peak resident memory: Linux's VmHWM (getrusage's maximum would keep the parent's from before
    the process started), psutil's peak working set on Windows, getrusage on macOS."""
    if not device.startswith("cpu"):
        # no reset there: a fresh process, growing batches
        if keras.backend.backend() == "jax":
            import jax

            kind, _, index = device.partition(":")
            return jax.devices(kind)[int(index or 0)].memory_stats()[
                "peak_bytes_in_use"
            ]
        import tensorflow as tf

        return tf.config.experimental.get_memory_info(device.upper())["peak"]
    status = Path("/proc/self/status")
    if status.exists():
        line = next(
            x for x in status.read_text().splitlines() if x.startswith("VmHWM:")
        )
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
    on_tensorflow_gpu = (
        not device.startswith("cpu") and keras.backend.backend() == "tensorflow"
    )
    with keras.device(device):
        model = models.build(name)
        x, y = benchmark.synthetic_data(model, batches[-1], 1)
        # builds Adam's moments, traces
        model.train_on_batch(x[: batches[0]], y[: batches[0]])
        peaks = []
        for batch in batches:
            if on_tensorflow_gpu:
                import tensorflow as tf

                tf.config.experimental.reset_memory_stats(device.upper())
            model.train_on_batch(x[:batch], y[:batch])
            peaks.append(peak_bytes(device))
    backend = {"tensorflow": "TensorFlow", "jax": "JAX"}.get(
        keras.backend.backend(), "the"
    )
    how = (
        "the process's peak resident memory"
        if device.startswith("cpu")
        else f"{backend}'s allocator peak"
    )
    return {"batches": batches, "peak_bytes": peaks, "how": how}


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m tools.memory",
        description="Peak memory of one training step of a bench "
        "network at growing batch sizes, as JSON.",
    )
    p.add_argument("--model", required=True, choices=list(models.MODELS))
    p.add_argument("--batch", type=int, nargs="+", required=True)
    p.add_argument("--device", default="cpu:0")
    p.add_argument("--dtype", default="float32", choices=roofline.DTYPES)
    args = p.parse_args(argv)
    if len(set(args.batch)) < 2 or min(args.batch) < 1:
        p.error(
            f"give two or more different batch sizes of 1 or more, got {args.batch}"
        )
    print(json.dumps(step_peaks(args.model, args.batch, args.device, args.dtype)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
