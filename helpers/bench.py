"""Benchmark a course model: images/s, input-wait share, FLOP/s and share of the measured peak.

    python -m helpers.bench --model cats_dogs_128px --batch 64 --steps 20
    python -m helpers.bench --model cats_dogs_original --source python --workers 4
    python -m helpers.bench --all --record      # re-record every CPU run into results/
    KERAS_BACKEND=jax python -m helpers.bench --model cifar10_net   # synthetic data: any backend

Python: `record = bench.run("cifar10_net", batch_size=256)`; helpers.results saves, loads
and shows such records (`results.save(record)`, `results.load()`, `results.table(records)`).
Each record holds the images/s (median of the timed steps after warm-up), the step-time
spread, the input-wait share, FLOPs per image, achieved FLOP/s and its share of this
machine's measured matrix-multiply peak, plus hardware, versions, backend, date and command.
"""

import argparse
import math
import os
import shlex
import sys

import keras
import numpy as np

from . import config, hardware, models, peak, results
from .timing import step_stats, time_fit

__all__ = ["MODELS", "SOURCES", "build", "compare", "run", "synthetic_data", "targets"]

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
    "jpeg": "the course's tf.data pipeline: JPEGs decoded in parallel, cached, prefetched; "
            "timed after one full pass (as in every epoch after the first), the first pass "
            "is recorded too",
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
    return {"images_per_s": batch_size / steps["median"],
            "images_per_s_wall": batch_size * len(intervals) / sum(intervals), "step_s": steps}


def run(model="cats_dogs_original", device="cpu:0", batch_size=None, source="synthetic",
        steps=None, warmup=None, workers=1, use_multiprocessing=False, dtype="float32",
        usage=None, command=None, label=None, augment=None, baseline=None):
    """Train `model` for `steps` timed steps on `device` and return one record (a dict).

    source: synthetic | jpeg | python (see SOURCES), or your own repeating dataset/PyDataset
    (then give it a `label`, and `augment=False` if it augments the pictures itself).
    A real source is compared with the same model on synthetic data (or with `baseline`
    images/s measured before): that gives the input-wait share. `dtype`: float32, or
    bfloat16/float16 for mixed precision. `usage`: a running monitor.Utilization to mark.
    """
    _check(model, MODELS, "model")
    named = isinstance(source, str)
    if named:
        _check(source, SOURCES, "source")
    _check(dtype, ("float32", "bfloat16", "float16"), "dtype")
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
                                                       baseline, usage)
    finally:
        keras.config.set_dtype_policy(previous_policy)
    return _record(job, net, timed, baseline, usage, command)


def _time_sources(job, net, own_source, baseline, usage):
    """Step times of `net` on the job's real source and, unless a `baseline` is given, on
    synthetic data; and the warm-up steps used (for JPEGs: long enough to fill the cache)."""
    batch_size, steps, warmup = job["batch_size"], job["timed_steps"], job["warmup_steps"]
    timed, used = {}, warmup
    if job["source"] != "synthetic":
        real, per_pass = ((own_source, None) if own_source is not None
                          else _real_data(job, net, steps + warmup))
        # jpeg: time the steady state, after one full pass has filled the cache
        used = max(warmup, per_pass + 1) if per_pass else warmup
        _mark(usage, f"{job['source']} start")
        times = time_fit(net, real, batch_size, steps, used, everything=True)
        timed["real"] = times[used:]
        if per_pass and per_pass > warmup:
            timed["first_pass"] = times[warmup:min(per_pass, warmup + steps)]
    if baseline is None or job["source"] == "synthetic":
        batches = max(2, min(steps + warmup + 1, (256 << 20) // (
            batch_size * math.prod(net.input_shape[1:]))))
        _mark(usage, "synthetic start")
        timed["synthetic"] = time_fit(net, synthetic_data(net, batch_size, batches),
                                      batch_size, steps, warmup)
    _mark(usage, "end")
    return timed, used


def _mark(usage, label):
    if usage is not None:
        usage.mark(label)


def _record(job, net, timed, baseline, usage, command):
    stats = _stats(timed.get("real", timed.get("synthetic")), job["batch_size"])
    synthetic = (_stats(timed["synthetic"], job["batch_size"])["images_per_s"]
                 if "synthetic" in timed else baseline)
    forward = peak.flops_per_image(net)
    achieved = peak.TRAINING_FLOPS_FACTOR * forward * stats["images_per_s"]
    top = peak.measured_peak(job["device"], job["dtype"], config.settings("bench").peak_sizes)
    record = {
        "kind": "recorded", **job, "parameters": net.count_params(),
        "augment_in_model": any(layer.name == "augmentation" for layer in net.layers),
        **stats, "synthetic_images_per_s": synthetic,
        "first_pass_images_per_s": (_stats(timed["first_pass"], job["batch_size"])
                                    ["images_per_s"] if timed.get("first_pass") else None),
        "ratio_to_synthetic": stats["images_per_s"] / synthetic,
        "input_wait_share": max(0.0, 1 - stats["images_per_s"] / synthetic),
        "forward_flops_per_image": forward,
        "training_flops_per_image": peak.TRAINING_FLOPS_FACTOR * forward,
        "achieved_flops_per_s": achieved, "matmul_peak": top,
        "peak_share": achieved / top["flops_per_s"],
        "backend": keras.backend.backend(), "threads": hardware.threads(),
        "hardware": hardware.describe(), "date": results.now(),
        "command": command or (f"bench.run({job['model']!r}, device={job['device']!r}, "
                               f"batch_size={job['batch_size']}, source={job['source']!r}, "
                               f"steps={job['timed_steps']}, warmup={job['warmup_steps']}, "
                               f"workers={job['workers']}, dtype={job['dtype']!r})"),
    }
    if usage is not None and usage.samples:
        record["utilization_pct"] = {k: usage.mean(k) for k in usage.samples[-1]
                                     if k.endswith("_pct") and k != "memory_pct"}
    return record


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


# --- targets of the course, as ratios within one run -----------------------------------------


def targets(records):
    """The course's speed targets, evaluated on records of one run; lines of text."""
    def find(model, source, workers=None):
        return next((r for r in records if r["model"] == model and r["source"] == source
                     and r["device"].startswith("cpu")
                     and (workers is None or (r["workers"] == workers
                                              and not r["use_multiprocessing"]))), None)

    lines = []
    for name in ("cats_dogs_original", "cats_dogs_128px"):
        r = find(name, "jpeg")
        if r:
            lines.append(_verdict(f"{name}: real-JPEG pipeline / synthetic",
                                  r["ratio_to_synthetic"], 0.95))
            if r.get("first_pass_images_per_s"):
                lines.append(f"  (first pass, while decoding: "
                             f"{r['first_pass_images_per_s'] / r['synthetic_images_per_s']:.0%})")
    jpeg, python = find("cats_dogs_original", "jpeg"), find("cats_dogs_original", "python", 1)
    if jpeg and python:
        lines.append(_verdict("cats_dogs_original: tf.data pipeline / 1-worker Python loader",
                              jpeg["images_per_s"] / python["images_per_s"], 1.5, "x"))
    r = find("cats_dogs_128px", "synthetic")
    if r:
        lines.append(_verdict("cats_dogs_128px: share of the measured matmul peak",
                              r["peak_share"], 0.30))
    return lines


def _verdict(what, value, target, unit="%"):
    shown = (f"{value:.0%}", f"{target:.0%}") if unit == "%" else (f"{value:.2f}x",
                                                                    f"{target:.1f}x")
    return f"{what}: {shown[0]} (target >= {shown[1]}: {'met' if value >= target else 'NOT met'})"


# --- command line ------------------------------------------------------------------------------

# What `--all` records: every model on synthetic data on every device, plus the pipeline runs.
ALL_PIPELINE_RUNS = [("cats_dogs_original", "jpeg", 1, False),
                     ("cats_dogs_128px", "jpeg", 1, False),
                     ("cats_dogs_original", "python", 1, False),
                     ("cats_dogs_original", "python", 4, True)]


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m helpers.bench",
        description="Train a course model for a few steps and report images/s, input-wait "
                    "share, FLOP/s and the share of the measured matrix-multiply peak.")
    p.add_argument("--model", action="append", choices=list(MODELS),
                   help="model to run (repeatable)")
    p.add_argument("--all", action="store_true",
                   help="every model on every device, plus the input-pipeline runs on the CPU")
    p.add_argument("--device", action="append", help="e.g. cpu:0, gpu:0 (default: cpu:0; "
                   "with --all every device present)")
    p.add_argument("--batch", type=int, action="append", help="batch size (repeatable)")
    p.add_argument("--source", choices=list(SOURCES), default="synthetic",
                   help="; ".join(f"{k}: {v}" for k, v in SOURCES.items()))
    p.add_argument("--workers", type=int, default=1, help="PyDataset workers (source python)")
    p.add_argument("--multiprocessing", action="store_true",
                   help="PyDataset workers are processes, not threads (source python)")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"],
                   help="compute dtype (bfloat16/float16: Keras mixed precision)")
    p.add_argument("--steps", type=int, help="timed steps (default: the profile's)")
    p.add_argument("--warmup", type=int, help="warm-up steps (default: the profile's)")
    p.add_argument("--threads", type=int, help="TensorFlow intra-op threads: cores one "
                   "operation may use (default: all)")
    p.add_argument("--inter-threads", type=int, help="TensorFlow inter-op threads: operations "
                   "run side by side (default: chosen by TensorFlow)")
    p.add_argument("--record", action="store_true", help="save each record in results/")
    p.add_argument("--list", action="store_true", help="list models and devices, then stop")
    return p


def _plan(args):
    if args.all:
        devices = args.device or peak.devices()
        plan = [(m, d, b, "synthetic", 1, False) for d in devices for m in MODELS
                for b in (args.batch or [MODELS[m][2]])]
        return plan + [(m, "cpu:0", None, s, w, mp) for m, s, w, mp in ALL_PIPELINE_RUNS]
    if not args.model:
        raise SystemExit("Name a model with --model (one of: " + ", ".join(MODELS)
                         + ") or use --all; --help explains every option.")
    return [(m, d, b, args.source, args.workers, args.multiprocessing) for m in args.model
            for d in (args.device or ["cpu:0"]) for b in (args.batch or [None])]


def main(argv=None):
    from tqdm import tqdm

    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    if args.list:
        print("models: " + ", ".join(MODELS) + "\ndevices: " + ", ".join(peak.devices()))
        return 0
    if args.threads or args.inter_threads:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(args.threads or 0)
        tf.config.threading.set_inter_op_parallelism_threads(args.inter_threads or 0)
    env = " ".join(f"{k}={os.environ[k]}" for k in ("KERAS_BACKEND", "COURSE_PROFILE",
                                                   "TF_ENABLE_ONEDNN_OPTS") if k in os.environ)
    command = f"{env + ' ' if env else ''}python -m helpers.bench {shlex.join(argv)}"
    done = []
    plan = _plan(args)
    bar = tqdm(plan, desc="bench", unit="run", disable=len(plan) < 2)  # time left, on stderr
    for model, device, batch, source, workers, mp in bar:
        try:
            record = run(model, device, batch, source, steps=args.steps, warmup=args.warmup,
                         workers=workers, use_multiprocessing=mp, dtype=args.dtype,
                         command=command)
        except ValueError as e:  # a bad combination of options: say which, without a traceback
            raise SystemExit(f"python -m helpers.bench: {e}") from e
        done.append(record)
        saved = f"  -> {results.save(record)}" if args.record else ""
        bar.write(f"{model} {device} b{record['batch_size']} {source}: "
                  f"{record['images_per_s']:,.0f} img/s, peak share {record['peak_share']:.0%}"
                  f"{saved}")
    print()
    print(results.table(done).to_string(index=False))
    for line in targets(done):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
