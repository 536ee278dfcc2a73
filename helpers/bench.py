"""Benchmark a course network: images/s, input-wait share, FLOP/s and share of the measured
peak (notebooks 07 and 08).

    python -m helpers.bench --model cats_dogs_128px --batch 64 --steps 20
    python -m helpers.bench --model cats_dogs_original --source python --workers 4
    python -m helpers.bench --all --record                # every network on every device
    python -m helpers.bench --all --device gpu --record   # every GPU only (make bench-gpu)
    KERAS_BACKEND=jax python -m helpers.bench --all --device gpu --record   # no TensorFlow

`--all` runs every network in every number format the device supports (CPUs: float32), the
batch sweep, a utilisation and power timeline per run, and the training-memory peaks
(helpers.memory); `--record` writes the records into results/ (helpers.results).
"""

import argparse
import math
import os
import re
import shlex
import sys
import time

import keras
import numpy as np

from . import config, hardware, models, monitor, peak, results
from .timing import step_stats, time_fit

__all__ = ["MODELS", "SOURCES", "build", "compare", "run", "synthetic_data"]

# name -> how to build it (augment=False when the input pipeline augments), classes, default batch
MODELS = {
    "mnist_cnn": (lambda augment: models.mnist_cnn(), 10, 64),
    "cifar10_net": (lambda augment: models.cifar10_net(), 10, 128),
    "cats_dogs_original": (lambda augment: models.cats_dogs_net("0", augment=augment), 1, 32),
    "cats_dogs_improved": (lambda augment: models.cats_dogs_net("2", augment=augment), 1, 32),
    "cats_dogs_128px": (lambda augment: models.cats_dogs_net("3", augment=augment), 1, 32),
    "cats_dogs_deep": (lambda augment: models.cats_dogs_deep(augment=augment), 1, 32),
}
SOURCES = {
    "synthetic": "random pictures held in memory: no input work at all (any Keras backend)",
    "jpeg": "the course's tf.data pipeline (TensorFlow only): JPEGs decoded in parallel, "
            "cached, prefetched; timed after one full pass, as in every epoch after the first",
    "python": "Keras 2 style: a PyDataset decodes and augments each batch in Python (PIL)",
}


def _check(name, choices, what):
    if name not in choices:
        raise ValueError(f"Unknown {what} {name!r}; choose one of {', '.join(choices)}.")


def build(name, augment=True):
    """A compiled benchmark model (adam; cross-entropy matching its output)."""
    _check(name, MODELS, "model")
    builder, classes, _ = MODELS[name]
    model = builder(augment)
    loss = "binary_crossentropy" if classes == 1 else "sparse_categorical_crossentropy"
    model.compile(optimizer="adam", loss=loss)
    return model


def synthetic_data(model, batch_size, batches, seed=config.SEED):
    """`batches` batches of random uint8 pictures and labels for `model` (NumPy, any backend).

    uint8 is a quarter of float32's bytes to move; the model's first layer casts it.
    """
    rng = np.random.default_rng(seed)
    shape = (batch_size * batches, *model.input_shape[1:])
    classes = model.output_shape[-1]
    labels = rng.integers(0, max(classes, 2), size=(shape[0], 1) if classes == 1 else shape[0])
    return rng.integers(0, 256, size=shape, dtype=np.uint8), labels.astype("float32")


def _real_data(job, model, steps):
    """(a repeating real source for `job`, steps per pass over its pictures or None)."""
    from . import data, keras2_loader, sources

    if job["model"] == "mnist_cnn":
        raise ValueError("mnist_cnn has no JPEG source in the course; use --source synthetic.")
    size, batch_size = model.input_shape[1], job["batch_size"]
    if job["model"] == "cifar10_net":
        paths, labels, _ = data.labelled_files(sources.source("cifar10")[1])
    else:
        paths, labels, _ = data.cats_dogs_files("train")
    per_pass = len(paths) // batch_size
    if job["source"] == "jpeg":
        pipeline = data.image_pipeline(paths, labels, size, batch_size, shuffle=True)
        return pipeline.repeat(), per_pass
    return keras2_loader.PillowBatches(paths, labels, size, batch_size,
                                   repeat=math.ceil((steps + 10) / per_pass),
                                   workers=job["workers"],
                                   use_multiprocessing=job["use_multiprocessing"]), None


def _stats(intervals, batch_size):
    steps = step_stats(intervals)
    return {"images_per_s": batch_size / steps["median"], "step_s": steps}


def run(model="cats_dogs_original", device="cpu:0", batch_size=None, source="synthetic",
        steps=None, warmup=None, workers=1, use_multiprocessing=False, dtype="float32",
        usage=None, command=None, label=None, augment=None):
    """One record (a dict) of `steps` timed training steps of `model` on `device` (notebooks
    07, 08). source: see SOURCES, or your own repeating dataset/PyDataset with a `label`
    (`augment=False` if it augments itself); a real source is also timed on synthetic data,
    which gives the input-wait share. dtype: float32, or bfloat16/float16 (mixed precision).
    usage: a running monitor.Utilization, whose timeline the record keeps."""
    _check(model, MODELS, "model")
    named = isinstance(source, str)
    if named:
        _check(source, SOURCES, "source")
    _check(dtype, ("float32", "bfloat16", "float16"), "dtype")
    if source == "jpeg" and keras.backend.backend() != "tensorflow":
        raise ValueError(f"source 'jpeg' is a tf.data pipeline and needs TensorFlow, not the "
                         f"{keras.backend.backend()} backend; use source 'python' or 'synthetic'.")
    s = config.settings("bench")
    steps, warmup = steps or s.steps, warmup if warmup is not None else s.warmup
    python = source == "python"
    job = {"model": model, "device": device, "batch_size": batch_size or MODELS[model][2],
           "source": source if named else (label or "custom"), "dtype": dtype,
           "workers": workers if python else None,
           "use_multiprocessing": use_multiprocessing if python else None,
           "timed_steps": steps, "warmup_steps": warmup}
    if job["batch_size"] < 1 or steps < 3 or warmup < 0:
        raise ValueError("batch_size must be >= 1, steps >= 3 and warmup >= 0; got "
                         f"{job['batch_size']}, {steps}, {warmup}.")
    previous_policy = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32" if dtype == "float32" else f"mixed_{dtype}")
    try:
        with keras.device(device):
            net = build(model, augment=not python if augment is None else augment)
            timed, job["warmup_steps"] = _time_sources(job, net, None if named else source,
                                                       usage)
    finally:
        keras.config.set_dtype_policy(previous_policy)
    return _record(job, net, timed, usage, command)


def _time_sources(job, net, own_source, usage):
    """Step times of `net` on the job's real source and on synthetic data; and the warm-up
    steps used (for JPEGs: long enough to fill the cache)."""
    batch_size, steps, warmup = job["batch_size"], job["timed_steps"], job["warmup_steps"]
    timed, used = {}, warmup
    if job["source"] != "synthetic":
        real, per_pass = ((own_source, None) if own_source is not None
                          else _real_data(job, net, steps + warmup))
        # jpeg: time the steady state, after one full pass has filled the cache
        used = max(warmup, per_pass + 1) if per_pass else warmup
        _mark(usage, f"{job['source']} start")
        timed["real"] = time_fit(net, real, batch_size, steps, used)
    batches = max(2, min(steps + warmup + 1, (256 << 20) // (
        batch_size * math.prod(net.input_shape[1:]))))
    _mark(usage, "synthetic start")
    timed["synthetic"] = time_fit(net, synthetic_data(net, batch_size, batches), batch_size,
                                  steps, warmup)
    _mark(usage, "end")
    return timed, used


def _mark(usage, label):
    if usage is not None:
        usage.mark(label)


def _device_name(device):
    """What `device` is: the CPU's model, or the GPU's name as the backend reports it."""
    kind, _, index = device.partition(":")
    if kind == "cpu":
        return hardware.cpu_info()["model"]
    if keras.backend.backend() == "jax":
        import jax

        return jax.devices(kind)[int(index or 0)].device_kind
    found = [d.get("gpu_name") for d in hardware.tensorflow_devices() if d["type"] == "GPU"]
    return found[int(index or 0)] if found else None


def _usage(usage):
    """Means of the utilisation (%) and power (W) columns of a monitor.Utilization, and its
    samples and marks: the run's timeline."""
    if usage is None or not usage.samples:
        return {}
    keys = [k for k in usage.samples[-1] if k != "memory_pct"]
    return {"utilization_pct": {k: usage.mean(k) for k in keys if k.endswith("_pct")},
            "power_w": {k: usage.mean(k) for k in keys if k.endswith("_power_w")},
            "timeline": {"samples": list(usage.samples), "marks": list(usage.marks)}}


def _record(job, net, timed, usage, command):
    watched = _usage(usage)  # before the matrix multiplies of the peak below
    stats = _stats(timed.get("real", timed["synthetic"]), job["batch_size"])
    synthetic = _stats(timed["synthetic"], job["batch_size"])["images_per_s"]
    forward = peak.flops_per_image(net)
    achieved = peak.TRAINING_FLOPS_FACTOR * forward * stats["images_per_s"]
    top = peak.measured_peak(job["device"], job["dtype"], config.settings("bench").peak_sizes)
    return {
        "kind": "recorded", **job, "parameters": net.count_params(),
        "augment_in_model": any(layer.name == "augmentation" for layer in net.layers),
        **stats, "synthetic_images_per_s": synthetic,
        "input_wait_share": max(0.0, 1 - stats["images_per_s"] / synthetic),
        "forward_flops_per_image": forward,
        "training_flops_per_image": peak.TRAINING_FLOPS_FACTOR * forward,
        "achieved_flops_per_s": achieved, "matmul_peak": top,
        "peak_share": achieved / top["flops_per_s"],
        "backend": keras.backend.backend(), "device_name": _device_name(job["device"]),
        "threads": hardware.threads(),
        "hardware": hardware.describe(), "date": results.now(),
        "command": command or (f"bench.run({job['model']!r}, device={job['device']!r}, "
                               f"batch_size={job['batch_size']}, source={job['source']!r}, "
                               f"steps={job['timed_steps']}, warmup={job['warmup_steps']}, "
                               f"workers={job['workers']}, dtype={job['dtype']!r})"),
        **watched,
    }


def compare(a, b, names, tolerance=0.10, unit="images/s"):
    """One line comparing two measured speeds `a` and `b`, named `names`: "within 10 % of each
    other" when a / b is within `tolerance` of 1, else which one is how many times as fast."""
    if a <= 0 or b <= 0:
        raise ValueError(f"speeds must be positive, got {a} and {b}.")
    ratio = a / b
    if abs(ratio - 1) <= tolerance:
        verdict = f"within {100 * tolerance:.0f} % of each other"
    else:
        faster, times = (names[0], ratio) if ratio > 1 else (names[1], 1 / ratio)
        verdict = f"{faster} is {times:.2f}x as fast"
    return f"{names[0]} {a:,.0f} vs {names[1]} {b:,.0f} {unit}: {verdict}"


# --- command line ------------------------------------------------------------------------------

# What `--all` adds on the CPU with TensorFlow: the input pipelines against in-memory data.
ALL_PIPELINE_RUNS = [("cats_dogs_original", "jpeg", 1, False),
                     ("cats_dogs_128px", "jpeg", 1, False),
                     ("cats_dogs_original", "python", 1, False),
                     ("cats_dogs_original", "python", 4, True)]
SWEEP = ("cifar10_net", "cats_dogs_128px")  # `--all` also runs these at 2x, 4x and 8x the batch


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m helpers.bench",
        description="Train a course model for a few steps and report images/s, input-wait "
                    "share, FLOP/s and the share of the measured matrix-multiply peak.")
    p.add_argument("--model", action="append", choices=list(MODELS),
                   help="model to run (repeatable; with --all: only these)")
    p.add_argument("--all", action="store_true",
                   help="every model in every dtype of each device (CPUs: float32), the "
                        f"{' and '.join(SWEEP)} also at 2, 4 and 8x the batch, utilisation "
                        "timelines and training memory; on the CPU with TensorFlow also the "
                        "input-pipeline runs")
    p.add_argument("--device", action="append", help="e.g. cpu:0, gpu:0, or gpu for every GPU "
                   "(default: cpu:0; with --all every device present)")
    p.add_argument("--batch", type=int, action="append", help="batch size (repeatable)")
    p.add_argument("--source", choices=list(SOURCES), default="synthetic",
                   help="; ".join(f"{k}: {v}" for k, v in SOURCES.items()))
    p.add_argument("--workers", type=int, default=1, help="PyDataset workers (source python)")
    p.add_argument("--multiprocessing", action="store_true",
                   help="PyDataset workers are processes, not threads (source python)")
    p.add_argument("--dtype", action="append", choices=["float32", "bfloat16", "float16"],
                   help="compute dtype, repeatable (bfloat16/float16: Keras mixed precision; "
                        "default float32, with --all every one the device supports)")
    p.add_argument("--steps", type=int, help="timed steps (default: the profile's)")
    p.add_argument("--warmup", type=int, help="warm-up steps (default: the profile's)")
    p.add_argument("--threads", type=int, help="TensorFlow intra-op threads: cores one "
                   "operation may use (default: all)")
    p.add_argument("--inter-threads", type=int, help="TensorFlow inter-op threads: operations "
                   "run side by side (default: chosen by TensorFlow)")
    p.add_argument("--record", action="store_true", help="save each record in results/")
    p.add_argument("--out", help="folder --record writes into (default: results/)")
    p.add_argument("--list", action="store_true", help="list models and devices, then stop")
    return p


def _devices(names):
    """The devices named (`gpu` or `cpu` alone: every one of that kind), or every one present."""
    present = peak.devices()
    found = [d for name in names or present for d in present
             if d == name or (":" not in name and d.startswith(name + ":"))]
    found += [name for name in names or [] if ":" in name and name not in found]
    if not found:
        raise SystemExit(
            f"python -m helpers.bench: no {' or '.join(names)} device here; Keras "
            f"({keras.backend.backend()}) sees {', '.join(present)}. Does nvidia-smi list a GPU? "
            "TensorFlow needs tensorflow[and-cuda], JAX its CUDA wheel (jax[cuda12]).")
    return found


def _plan(args):
    """(model, device, batch, source, workers, multiprocessing, dtype) of every run asked for."""
    names, dtypes = args.model or list(MODELS), args.dtype
    if not args.all:
        if not args.model:
            raise SystemExit("Name a model with --model (one of: " + ", ".join(MODELS)
                             + ") or use --all; --help explains every option.")
        return [(m, d, b, args.source, args.workers, args.multiprocessing, t) for m in names
                for d in _devices(args.device or ["cpu:0"]) for b in args.batch or [None]
                for t in dtypes or ["float32"]]
    plan = []
    for device in _devices(args.device):
        for dtype in dtypes or (["float32"] if device.startswith("cpu")
                                else peak.supported_dtypes(device)):
            for m in names:
                batches = args.batch or [MODELS[m][2]]
                if m in SWEEP:  # the batch sweep
                    batches = sorted({b * k for b in batches for k in (1, 2, 4, 8)})
                plan += [(m, device, b, "synthetic", 1, False, dtype) for b in batches]
    if any(job[1] == "cpu:0" for job in plan) and args.model is None:
        if keras.backend.backend() == "tensorflow":
            plan += [(m, "cpu:0", None, s, w, mp, "float32") for m, s, w, mp in ALL_PIPELINE_RUNS]
        else:
            print(f"Left out on {keras.backend.backend()}: the input-pipeline runs (tf.data "
                  "against the Python loader) need TensorFlow.")
    return plan


def _memory(device, jobs, command, folder):
    """Training-memory peaks of (model, dtype) `jobs` on `device` (helpers.memory, notebook 08),
    shown, and written as one record into `folder` unless it is None."""
    from . import memory

    try:
        found = memory.measure(jobs, device, config.settings("memory").span_mb)
    except RuntimeError as e:
        lines = str(e).strip().splitlines()
        print(f"Training memory on {device} not measured: {lines[0]} {lines[-1]}")
        return
    print(memory.check(found).to_string(index=False))
    record = {"kind": "recorded", "what": "training memory", "device": device, "runs": found,
              "backend": keras.backend.backend(), "device_name": _device_name(device),
              "hardware": hardware.describe(), "date": results.now(), "command": command}
    if folder:
        slug = re.sub(r"[^a-z0-9]+", "-", results.machine_name(record).lower()).strip("-")
        name = f"{record['date'][:10]}_{slug}_memory_{device.replace(':', '')}.json"
        print(f"  -> {results.write_json(f'{folder}/{name}', record)}")


def main(argv=None):
    from tqdm import tqdm

    # JAX takes GPU memory as needed (as helpers does for TensorFlow), not 75 % of it at start:
    # the memory measurement's processes share the GPU with this one.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    if args.list:
        print("models: " + ", ".join(MODELS) + "\ndevices: " + ", ".join(peak.devices()))
        return 0
    if args.threads or args.inter_threads:
        if keras.backend.backend() != "tensorflow":
            raise SystemExit("--threads and --inter-threads set TensorFlow's thread pools; "
                             f"drop them on the {keras.backend.backend()} backend.")
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(args.threads or 0)
        tf.config.threading.set_inter_op_parallelism_threads(args.inter_threads or 0)
    env = " ".join(f"{k}={os.environ[k]}" for k in ("KERAS_BACKEND", "COURSE_PROFILE",
                                                   "TF_ENABLE_ONEDNN_OPTS") if k in os.environ)
    command = f"{env + ' ' if env else ''}python -m helpers.bench {shlex.join(argv)}"
    folder = (args.out or config.RESULTS_DIR) if args.record else None
    done, started, plan = [], time.perf_counter(), _plan(args)
    bar = tqdm(plan, desc="bench", unit="run", disable=len(plan) < 2)  # time left, on stderr
    for model, device, batch, source, workers, mp, dtype in bar:
        try:
            with monitor.Utilization(interval=0.25) as usage:
                record = run(model, device, batch, source, steps=args.steps, warmup=args.warmup,
                             workers=workers, use_multiprocessing=mp, dtype=dtype, usage=usage,
                             command=command)
        except ValueError as e:  # a bad combination of options: say which, without a traceback
            raise SystemExit(f"python -m helpers.bench: {e}") from e
        done.append(record)
        saved = f"  -> {results.save(record, folder)}" if folder else ""
        bar.write(f"{model} {device} {dtype} b{record['batch_size']} {source}: "
                  f"{record['images_per_s']:,.0f} img/s, peak share {record['peak_share']:.0%}"
                  f"{saved}")
    if args.all:
        for device in dict.fromkeys(job[1] for job in plan):
            jobs = dict.fromkeys((m, t) for m, d, _, s, *_, t in plan if d == device
                                 and s == "synthetic")
            _memory(device, list(jobs), command, folder)
    print()
    print(results.table(done).to_string(index=False))
    print(f"{len(done)} runs in {time.perf_counter() - started:,.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
