"""Benchmark a course model: images/s, input-wait share, FLOP/s and share of the measured peak.

    python -m helpers.bench --model cats_dogs_128px --batch 64 --steps 20
    python -m helpers.bench --model cats_dogs_original --source python --workers 4
    python -m helpers.bench --all --record      # re-record every CPU run into results/
    KERAS_BACKEND=jax python -m helpers.bench --model cifar10_net   # synthetic data: any backend

Python: `record = bench.run("cifar10_net", batch_size=256)`; `bench.save(record)`;
`bench.load()` reads results/; `bench.table(records)` (a DataFrame) and `bench.plot(records)`
show them.
Each record holds the images/s (median of the timed steps after warm-up), the step-time
spread, the input-wait share, FLOPs per image, achieved FLOP/s and its share of this
machine's measured matrix-multiply peak, plus hardware, versions, backend, date and command.
"""

import argparse
import datetime
import json
import math
import os
import re
import shlex
import statistics
import sys
import time

import keras
import numpy as np

from . import config, hardware, models, peak

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
TRAINING_FLOPS_FACTOR = 3  # backward pass ~ 2x forward: gradients for inputs and for weights


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


# --- FLOPs ---------------------------------------------------------------------------------


def _leaves(model):
    for layer in model.layers:
        yield from (_leaves(layer) if hasattr(layer, "layers") else [layer])


def flops_per_image(model):
    """Forward-pass FLOPs for one image, from the layer shapes: 2 x the multiply-adds of
    every Conv2D and Dense layer. Pooling, activations, biases and augmentation are left
    out (together a few per cent, and limited by memory speed rather than arithmetic)."""
    total = 0
    for layer in _leaves(model):
        if isinstance(layer, (keras.layers.Conv2D, keras.layers.Dense)):
            kernel = layer.kernel.shape  # Conv2D: (kh, kw, cin/groups, cout); Dense: (in, out)
            outputs = math.prod(layer.output.shape[1:])  # per image: H x W x cout, or units
            total += 2 * math.prod(kernel[:-1]) * outputs
    return total


def arithmetic_intensity(model):
    """Forward FLOPs per byte of float32 activations the layers write, for one image: a rough
    measure of how much arithmetic a network does per byte it moves through memory."""
    written = sum(math.prod(layer.output.shape[1:]) for layer in _leaves(model))
    return flops_per_image(model) / (4 * written)


def profiler_flops(model):
    """FLOPs per op type for one image, counted by TensorFlow's graph profiler (TensorFlow
    backend only): the second method that tests check `flops_per_image` against."""
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2,
    )

    spec = tf.TensorSpec((1, *model.input_shape[1:]), tf.float32)
    forward = tf.function(lambda x: model(x, training=False), autograph=False)
    graph = convert_variables_to_constants_v2(forward.get_concrete_function(spec)).graph
    options = tf.compat.v1.profiler.ProfileOptionBuilder.float_operation()
    options["output"] = "none"
    report = tf.compat.v1.profiler.profile(graph=graph, cmd="op", options=options)
    counts, todo = {}, list(report.children)
    while todo:  # the "op" view nests op types in a chain; float_ops is each type's own count
        node = todo.pop()
        counts[node.name] = node.float_ops
        todo += node.children
    return counts


# --- the measured peak ---------------------------------------------------------------------

_PEAKS = {}


def measured_peak(device="cpu:0", dtype="float32", sizes=None, tries=5):
    """This machine's matrix-multiply FLOP/s on `device`: the best timed multiply seen so far
    in this process. The first call tries every size `tries` times; later calls time one more
    multiply at the best size. The best, because other programs can only slow a multiply down."""
    sizes = tuple(sizes or ((1024, 2048) if device.startswith("cpu") else (4096, 8192)))
    key = (device, dtype, sizes)
    if key in _PEAKS:
        sizes, tries = (_PEAKS[key]["n"],), 1
    for n in sizes:
        for _ in range(tries):
            rate = peak.matmul_flops(n, dtype, device, repeats=1)
            if key not in _PEAKS or rate > _PEAKS[key]["flops_per_s"]:
                _PEAKS[key] = {"flops_per_s": rate, "n": n, "dtype": dtype}
    return dict(_PEAKS[key])


# --- timing --------------------------------------------------------------------------------


class StepClock(keras.callbacks.Callback):
    """Times the steps of `fit`; the first step of every epoch (iterator start-up) is dropped."""

    def __init__(self):
        super().__init__()
        self.intervals = []

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.intervals.append(now - self._last)
        self._last = now


def synthetic_data(model, batch_size, batches, seed=config.SEED):
    """`batches` batches of random uint8 pictures and labels for `model` (NumPy, any backend).

    uint8 is a quarter of float32's bytes to move; the model's first layer casts it.
    """
    rng = np.random.default_rng(seed)
    shape = (batch_size * batches, *model.input_shape[1:])
    classes = model.output_shape[-1]
    labels = rng.integers(0, max(classes, 2), size=(shape[0], 1) if classes == 1 else shape[0])
    return rng.integers(0, 256, size=shape, dtype=np.uint8), labels.astype("float32")


def time_fit(model, data, batch_size, steps, warmup, everything=False):
    """Step times (s) of `steps` timed training steps after `warmup` steps (`everything`:
    of the warm-up steps too). `data` is (x, y) arrays (repeated over several epochs) or a
    repeating dataset/PyDataset.
    """
    clock = StepClock()
    needed = warmup + steps
    if isinstance(data, tuple):
        per_epoch = len(data[0]) // batch_size
        epochs = math.ceil(needed / (per_epoch - 1))
        model.fit(*data, batch_size=batch_size, epochs=epochs, shuffle=False, verbose=0,
                  callbacks=[clock])
    else:
        model.fit(data, steps_per_epoch=needed + 1, epochs=1, verbose=0, shuffle=False,
                  callbacks=[clock])
    return clock.intervals[:needed] if everything else clock.intervals[warmup:needed]


def _real_data(source, name, model, batch_size, steps, workers, use_multiprocessing):
    from . import data, pipelines

    if name == "mnist_cnn":
        raise ValueError("mnist_cnn has no JPEG source in the course; use --source synthetic.")
    size = model.input_shape[1]
    if name == "cifar10_net":
        paths, labels, _ = data.labelled_files(data.source("cifar10")[1])
    else:
        paths, labels = pipelines.train_files()
    per_pass = len(paths) // batch_size
    if source == "jpeg":
        pipeline = data.image_pipeline(paths, labels, size, batch_size, shuffle=True)
        return pipeline.repeat(), per_pass
    repeat = math.ceil((steps + 10) / per_pass)
    return pipelines.PillowBatches(paths, labels, size, batch_size, repeat=repeat, workers=workers,
                                   use_multiprocessing=use_multiprocessing), None


def _stats(intervals, batch_size):
    median = statistics.median(intervals)
    q = statistics.quantiles(intervals, n=10) if len(intervals) >= 3 else [median] * 9
    return {"images_per_s": batch_size / median,
            "images_per_s_wall": batch_size * len(intervals) / sum(intervals),
            "step_s": {"median": median, "p10": q[0], "p90": q[-1],
                       "spread": (q[-1] - q[0]) / median}}


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
    batch_size = batch_size or MODELS[model][2]
    steps, warmup = steps or s.steps, warmup if warmup is not None else s.warmup
    if batch_size < 1 or steps < 3 or warmup < 0:
        raise ValueError("batch_size must be >= 1, steps >= 3 and warmup >= 0; got "
                         f"{batch_size}, {steps}, {warmup}.")
    augment = (source != "python") if augment is None else augment
    previous_policy = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32" if dtype == "float32" else f"mixed_{dtype}")
    try:
        with keras.device(device):
            net = build(model, augment=augment)
            timed, warmup_used = {}, warmup
            if source != "synthetic":
                real, per_pass = (_real_data(source, model, net, batch_size, steps + warmup,
                                             workers, use_multiprocessing) if named
                                  else (source, None))
                # jpeg: time the steady state, after one full pass has filled the cache
                steady = max(warmup, per_pass + 1) if per_pass else warmup
                _mark(usage, f"{label or source} start")
                times = time_fit(net, real, batch_size, steps, steady, everything=True)
                timed["real"], warmup_used = times[steady:], steady
                if per_pass and per_pass > warmup:
                    timed["first_pass"] = times[warmup:min(per_pass, warmup + steps)]
            if baseline is None or source == "synthetic":
                batches = max(2, min(steps + warmup + 1, (256 << 20) // (
                    batch_size * math.prod(net.input_shape[1:]))))
                _mark(usage, "synthetic start")
                timed["synthetic"] = time_fit(net, synthetic_data(net, batch_size, batches),
                                              batch_size, steps, warmup)
            _mark(usage, "end")
    finally:
        keras.config.set_dtype_policy(previous_policy)
    return _record(model, net, device, batch_size, source if named else (label or "custom"),
                   steps, warmup_used, workers, use_multiprocessing, dtype, timed, baseline, usage,
                   command)


def _mark(usage, label):
    if usage is not None:
        usage.mark(label)


def _record(name, net, device, batch_size, source, steps, warmup, workers, multiprocessing,
            dtype, timed, baseline, usage, command):
    stats = _stats(timed.get("real", timed.get("synthetic")), batch_size)
    synthetic = _stats(timed["synthetic"], batch_size)["images_per_s"] if "synthetic" in \
        timed else baseline
    forward = flops_per_image(net)
    achieved = TRAINING_FLOPS_FACTOR * forward * stats["images_per_s"]
    top = measured_peak(device, "float32" if dtype == "float32" else dtype,
                        config.settings("bench").peak_sizes)
    record = {
        "kind": "recorded", "model": name, "parameters": net.count_params(), "device": device,
        "batch_size": batch_size, "source": source, "dtype": dtype,
        "workers": workers if source == "python" else None,
        "use_multiprocessing": multiprocessing if source == "python" else None,
        "augment_in_model": any(layer.name == "augmentation" for layer in net.layers),
        "warmup_steps": warmup, "timed_steps": steps, **stats,
        "synthetic_images_per_s": synthetic,
        "first_pass_images_per_s": (_stats(timed["first_pass"], batch_size)["images_per_s"]
                                    if timed.get("first_pass") else None),
        "ratio_to_synthetic": stats["images_per_s"] / synthetic,
        "input_wait_share": max(0.0, 1 - stats["images_per_s"] / synthetic),
        "forward_flops_per_image": forward,
        "training_flops_per_image": TRAINING_FLOPS_FACTOR * forward,
        "achieved_flops_per_s": achieved, "matmul_peak": top,
        "peak_share": achieved / top["flops_per_s"],
        "backend": keras.backend.backend(), "threads": _threads(),
        "hardware": hardware.describe(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command or (f"bench.run({name!r}, device={device!r}, batch_size="
                               f"{batch_size}, source={source!r}, steps={steps}, "
                               f"warmup={warmup}, workers={workers}, dtype={dtype!r})"),
    }
    if usage is not None and usage.samples:
        record["utilization_pct"] = {k: usage.mean(k) for k in usage.samples[-1]
                                     if k.endswith("_pct") and k != "memory_pct"}
    return record


def _threads():
    if keras.backend.backend() != "tensorflow":
        return None
    import tensorflow as tf

    return {"intra_op": tf.config.threading.get_intra_op_parallelism_threads(),
            "inter_op": tf.config.threading.get_inter_op_parallelism_threads(),
            "onednn": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default")}


# --- recorded runs: save, load, show -------------------------------------------------------


def machine_name(record):
    """A short name of the machine a record was made on: its first GPU if the run used one."""
    hw = record["hardware"]
    if not record["device"].startswith("cpu") and hw["gpus"]:
        return hw["gpus"][0]["name"]
    cpu = hw["cpu"]
    return f"{cpu['model']} ({cpu['usable_cores']} cores)"


def save(record, folder=None):
    """Write `record` as JSON into results/ (or `folder`); returns the path."""
    folder = folder or config.RESULTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"[^a-z0-9]+", "-", machine_name(record).lower()).strip("-")
    workers = f"_w{record['workers']}{'p' if record['use_multiprocessing'] else 't'}" \
        if record["source"] == "python" else ""
    name = (f"{record['date'][:10]}_{slug}_{record['model']}_{record['device'].replace(':', '')}"
            f"_{record['source']}{workers}_b{record['batch_size']}_{record['dtype']}.json")
    path = folder / name
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return path


RECORD_KEYS = {"model", "device", "source", "images_per_s", "hardware", "date", "command"}


def load(folder=None):
    """Every benchmark record in results/ (or `folder`), oldest first; other JSON files there
    (results of other tools) are left alone."""
    folder = folder or config.RESULTS_DIR
    records = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    records = [r for r in records if isinstance(r, dict) and RECORD_KEYS <= r.keys()]
    return sorted(records, key=lambda r: (r["date"], r["model"]))




def rows(records):
    """One row (dict) per record, with the columns the tables show."""
    out = []
    for r in records:
        source = r["source"] + (f" w{r['workers']}{'p' if r['use_multiprocessing'] else 't'}"
                                if r["source"] == "python" else "")
        out.append({"model": r["model"], "machine": machine_name(r), "source": source,
                    "batch": r["batch_size"], "dtype": r["dtype"],
                    "img/s": f"{r['images_per_s']:,.0f}",
                    "wait": f"{r['input_wait_share']:.0%}",
                    "GFLOP/s": f"{r['achieved_flops_per_s'] / 1e9:,.1f}",
                    "peak": f"{r['peak_share']:.0%}", "date": r["date"][:10]})
    return out


def table(records, title=None):
    """Records (dicts from `run` or `load`, or plain rows) as a pandas DataFrame, which Jupyter,
    the site and the slides show as a table; with a `title`, a Styler with that caption."""
    import pandas as pd

    frame = pd.DataFrame(rows(records) if records and "hardware" in records[0] else records)
    return frame.style.set_caption(title).hide(axis="index") if title else frame


def plot(records, title="Recorded runs (images/s, log scale)"):
    """Bar chart of images/s per recorded run, labelled by model, machine and batch."""
    from . import plots

    values = {f"{r['model']}\n{machine_name(r)[:22]}\nb{r['batch_size']} {r['source']}":
              r["images_per_s"] for r in records}
    return plots.bars(values, "images/s", title=title, log=True)


# --- the source's published figures ----------------------------------------------------------

PUBLISHED = [  # source 000 (blog, two parts): figures as published, not measured here
    ("cifar10_net", "Tesla V100 (batch 512)", "15,000-17,000 examples/s", "GPU ~45 % busy"),
    ("cifar10_net", "2x Xeon Silver 4110, 16 cores, AVX2 build (batch 512)",
     "~210 examples/s", ""),
    ("cifar10_net", "VirtualBox VM", "~90 examples/s", ""),
    ("cats_dogs_original", "VirtualBox VM, workers 1 / batch 32", "47 img/s", ""),
    ("cats_dogs_original", "VirtualBox VM, workers 4 / batch 64", "64 img/s", ""),
    ("cats_dogs_original", "Tesla V100", "~3x after tuning workers and batch; ~4x the "
     "16-core server", "GPU 0-10 % busy, CPU ~10 %: input-bound"),
    ("cats_dogs_improved", "Tesla V100", "425 img/s; ~23x the CPU", "GPU ~50 % busy"),
    ("cats_dogs_improved", "Tesla V100, no shear/zoom/flip (step 2b)", "533 img/s", ""),
    ("cats_dogs_128px", "Tesla V100", "333 img/s", ""),
    ("cats_dogs_deep", "16-core server, CPU only", "~3 img/s", ""),
    ("cats_dogs_deep", "Tesla V100", "~100x the CPU, about the improved net's speed",
     "GPU 100 % busy"),
]


def published_table(models=None):
    """The source's figures (optionally only for `models`) as a table labelled as the source's."""
    columns = ("model", "machine (source 000, not measured here)", "published speed",
               "utilisation")
    return table([dict(zip(columns, row)) for row in PUBLISHED
                  if models is None or row[0] in models])


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
    records = []
    plan = _plan(args)
    bar = tqdm(plan, desc="bench", unit="run", disable=len(plan) < 2)  # time left, on stderr
    for model, device, batch, source, workers, mp in bar:
        try:
            record = run(model, device, batch, source, args.steps, args.warmup, workers, mp,
                         args.dtype, command=command)
        except ValueError as e:  # a bad combination of options: say which, without a traceback
            raise SystemExit(f"python -m helpers.bench: {e}") from e
        records.append(record)
        saved = f"  -> {save(record)}" if args.record else ""
        bar.write(f"{model} {device} b{record['batch_size']} {source}: "
                  f"{record['images_per_s']:,.0f} img/s, peak share {record['peak_share']:.0%}"
                  f"{saved}")
    print()
    print(table(records).to_string(index=False))
    for line in targets(records):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
