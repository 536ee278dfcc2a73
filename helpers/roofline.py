"""The roofline (notebooks 00 and 08): the machine's limits, measured on any Keras backend and
device or published; the FLOPs and bytes a network asks per picture; the most pictures/s the
roofs allow and timed runs as points under them; the benchmark of a course network and the
three GPU rules, each predicted, then measured (`python -m tools.bench` records such runs);
and training memory, predicted from the layer shapes, then measured in fresh processes
(`python -m tools.memory`)."""

import functools
import json
import math
import os
import re
import statistics
import subprocess
import sys

import keras
import numpy as np
import pandas as pd
from keras import ops

from . import config, hardware, models, published, results, timing
from .published import GPU_DATASHEETS
from .timing import first_and_median, step_stats, time_fit, wait_for

__all__ = ["BYTES_PER_PARAMETER", "GPU_RULES", "MODELS", "TRAINING_FLOPS_FACTOR",
           "activation_bytes", "activation_values", "arithmetic_intensity", "attainable",
           "balance_verdict", "blog_points", "blog_reading", "build", "cache_bytes",
           "check_memory", "compare_intensities", "compulsory_bytes", "copy_bandwidth",
           "datasheet_balance_points", "fixed_bytes", "flops_per_image", "forward_bytes",
           "from_survey", "gpu_rules", "growth", "largest_batch", "largest_batches",
           "layer_roofline_seconds", "limits", "matmul_flops", "measure_memory", "measured",
           "measured_bandwidth", "measured_peak", "memory_table", "nhwc_vs_nchw", "points",
           "predict", "predictions", "published_peak", "published_roofs", "reading", "roofs",
           "rule_lines", "run", "save_limits", "share", "speed_now", "summary", "supported_dtypes",
           "synthetic_data", "table", "tensor_core_shapes", "training_bytes", "training_intensity",
           "uint8_vs_float32_copy"]


# Written from notebooks/00_setup_and_hardware.ipynb by `make pages`: change it there.
def matmul_flops(n, dtype="float32", device="cpu:0", repeats=5):  #@save
    with keras.device(device):  # the matrices are made on the device that multiplies them
        a = keras.random.normal((n, n), dtype=dtype, seed=1)
        b = keras.random.normal((n, n), dtype=dtype, seed=2)
        seconds = first_and_median(lambda: wait_for(keras.ops.matmul(a, b)), repeats)[1]
    return 2 * n**3 / seconds


def copy_bandwidth(megabytes=512, device="cpu:0", repeats=5):
    """Bytes/s of `x + 1` (read + write) over a float32 array of `megabytes` (notebook 00)."""
    n = int(megabytes * 1e6 // 4)
    with keras.device(device):
        a = ops.ones((n // 1024, 1024), dtype="float32")
        seconds = first_and_median(lambda: wait_for(a + 1.0), repeats)[1]
    return 2 * a.shape[0] * 1024 * 4 / seconds


def published_peak(gpu_name, dtype="float32"):
    """The datasheet's dense FLOP/s in `dtype` of the GPU whose sheet's name is a word of
    `gpu_name` (an "NVIDIA L40S" is no L4), else None (notebook 00)."""
    words = re.findall(r"[A-Za-z0-9]+", gpu_name or "")
    sheet = next((GPU_DATASHEETS[name] for name in GPU_DATASHEETS if name in words), {})
    tflops = sheet.get("tflops", {}).get(dtype)
    return tflops and tflops * 1e12


def balance_verdict(ratio, within=3.0):
    """'within 3x', 'more than 3x higher' or '... lower' for a ratio of balance points, judged
    as printed beside it, to one decimal (3.04 reads 3.0x: within) (notebook 00)."""
    shown = round(ratio, 1) if ratio >= 1 else 1 / round(1 / ratio, 1)
    if 1 / within <= shown <= within:
        return f"within {within:g}x"
    return f"more than {within:g}x {'higher' if ratio > within else 'lower'}"


def datasheet_balance_points(reference=None, gpus=None):
    """Each datasheet GPU's FLOP per byte in float32, TF32 and 16 bits, and with `reference`
    (this CPU's float32) their ratios to it, as a DataFrame (notebooks 00 and 08)."""
    rows = []
    for name in gpus or GPU_DATASHEETS:
        sheet = GPU_DATASHEETS[name]
        point = {dtype: tflops * 1e12 / (sheet["bandwidth_gbs"] * 1e9)
                 for dtype, tflops in sheet["tflops"].items()}
        half = max(point.get("float16", 0), point.get("bfloat16", 0))
        row = {"GPU (datasheet)": name, "memory GB/s": sheet["bandwidth_gbs"],
               "float32": round(point["float32"]),
               "TF32": round(point["tf32"]) if "tf32" in point else "none",
               "16-bit": round(half)}
        for key, value in (("float32", point["float32"]), ("16-bit", half)) if reference else ():
            ratio = value / reference
            row[f"{key} / this CPU's float32"] = f"{ratio:.1f}x: {balance_verdict(ratio)}"
        rows.append(row)
    return pd.DataFrame(rows)


def supported_dtypes(device):
    """float32, and bfloat16/float16 where the hardware has them (notebook 00)."""
    backend = keras.backend.backend()
    support = hardware.mixed_precision_support(
        hardware.cpu_info(), hardware.tensorflow_devices() if backend == "tensorflow" else [])
    if device.startswith("cpu"):
        return ["float32"] + (["bfloat16"] if support["cpu_bfloat16"] else [])
    jax_gpu = backend == "jax"  # JAX only runs on GPUs recent enough for both
    return (["float32"] + (["float16"] if support["gpu_float16_tensor_cores"] or jax_gpu else [])
            + (["bfloat16"] if support["gpu_bfloat16"] or jax_gpu else []))


TRAINING_FLOPS_FACTOR = 3  # backward pass ~ 2x forward: gradients for inputs and for weights


def _leaves(model):
    for layer in model.layers:
        yield from (_leaves(layer) if hasattr(layer, "layers") else [layer])


def flops_per_image(model):
    """Forward FLOPs for one image: 2 x each Conv2D, DepthwiseConv2D and Dense weight x the
    positions it is applied at; pooling, activations and biases left out (notebook 05)."""
    return sum(_layer_flops(layer) for layer in _leaves(model))


def activation_values(model):
    """How many numbers the layers write for one image: what training keeps (notebook 08)."""
    return sum(math.prod(layer.output.shape[1:]) for layer in _leaves(model))


def arithmetic_intensity(model, batch=32, dtype="float32"):
    """Forward FLOPs per byte the forward pass moves, per picture at `batch` pictures a step,
    by the same count as `training_intensity` (its forward touches alone) (notebook 08)."""
    return flops_per_image(model) / forward_bytes(model, batch, dtype)


# The course's one count of the memory traffic of a step, for inference and training alike,
# caches ignored (so an estimate: caches keep part of it off the memory bus, and a roof from it
# bounds nothing). Forward, each activation value is written and read by the next layer (2
# touches at the compute format's bytes) and each float32 weight read (4 B); backward adds 3
# touches (the value read again for the weight gradient, its gradient written and read) and 36 B
# a parameter (the weight read again, its gradient written, then Adam reads the gradient and
# reads and writes the weight and both moments: 4 + 4 + 28). The input is read once; a layer
# that only reshapes (Flatten) moves nothing. A training step is both passes: 5 touches, 40 B.
TOUCHES = {"forward": 2, "backward": 3}
PARAMETER_BYTES = {"forward": 4, "backward": 36}
PASSES = tuple(TOUCHES)  # a training step
ACTIVATION_TOUCHES = sum(TOUCHES.values())
BYTES_PER_PARAMETER_STEP = sum(PARAMETER_BYTES.values())
# bytes per number of each format ("16-bit": float16 or bfloat16)
_VALUE_BYTES = {"float32": 4, "tf32": 4, "bfloat16": 2, "float16": 2, "16-bit": 2}
FASTER_NOW = 1.15  # speed_now above this share: the machine runs faster than 00 measured it


def _layer_bytes(layer, batch, value_bytes, passes=PASSES):
    if isinstance(layer, (keras.layers.Flatten, keras.layers.Reshape)):
        return 0
    touches = sum(TOUCHES[p] for p in passes)
    per_parameter = sum(PARAMETER_BYTES[p] for p in passes)
    moved = touches * value_bytes * math.prod(layer.output.shape[1:])
    return moved + per_parameter * layer.count_params() / batch


def _step_bytes(model, batch, dtype, passes):
    value_bytes = _VALUE_BYTES[dtype]
    reads = value_bytes * math.prod(model.inputs[0].shape[1:])
    return reads + sum(_layer_bytes(layer, batch, value_bytes, passes) for layer in _leaves(model))


def _layer_flops(layer):
    weighted = (keras.layers.Conv2D, keras.layers.DepthwiseConv2D, keras.layers.Dense)
    if not isinstance(layer, weighted):
        return 0
    return 2 * math.prod(layer.kernel.shape) * math.prod(layer.output.shape[1:-1])


def forward_bytes(model, batch, dtype="float32"):
    """Bytes a forward pass moves per picture at `batch` pictures a step, by the course's count
    above: the input, each activation written and read, the weights (notebook 08)."""
    return _step_bytes(model, batch, dtype, ("forward",))


def training_bytes(model, batch, dtype="float32"):
    """Bytes one training step moves per picture at `batch` pictures a step, by the course's
    count above: the forward pass's bytes, then the backward pass's gradients, the weights
    again and Adam's state (notebook 08)."""
    return _step_bytes(model, batch, dtype, PASSES)


def training_intensity(model, batch, dtype="float32"):
    """Training FLOPs (3x forward) per byte one training step moves, per picture (notebook 08)."""
    return TRAINING_FLOPS_FACTOR * flops_per_image(model) / training_bytes(model, batch, dtype)


def compare_intensities(forward, training):
    """A sentence comparing training intensities with forward ones (lists of equal length,
    one pair a network), computed from them (notebook 08)."""
    ratios = [t / f for f, t in zip(forward, training, strict=True)]
    low, high = min(ratios), max(ratios)
    word = ("higher" if low > 1 else "lower" if high < 1 else
            "higher for some networks, lower for others")
    span = f"{low:.2f}x" if round(low, 2) == round(high, 2) else f"{low:.2f}x to {high:.2f}x"
    return (f"Training does {TRAINING_FLOPS_FACTOR}x the forward FLOPs and moves "
            f"{TRAINING_FLOPS_FACTOR / high:.1f}x to {TRAINING_FLOPS_FACTOR / low:.1f}x the "
            f"forward bytes: its intensity is {span} the forward figure, {word}.")


# What must cross the memory bus in every training step whatever the caches keep: Adam reads
# each trainable float32 weight and its two moments and writes all three back (12 B each way),
# and the step reads its pictures once (1 B a number at the least: uint8). A cache of C bytes
# holds at most C of what a step reads when it starts, and at most C of what it wrote is still
# unwritten when it ends. These bytes are a subset of the count above, so the memory roof at
# them, with the compute roof, is an upper bound on the speed: no step can beat it.
STATE_BYTES_PER_PARAMETER = 12


def compulsory_bytes(model, batch, cache_bytes=0):
    """Bytes per picture that must cross the memory bus in each training step at `batch`
    pictures a step, with caches of `cache_bytes` in all (notebook 08)."""
    state = STATE_BYTES_PER_PARAMETER * sum(math.prod(w.shape) for w in model.trainable_weights)
    pictures = batch * math.prod(model.inputs[0].shape[1:])
    return (max(0, state + pictures - cache_bytes) + max(0, state - cache_bytes)) / batch


def cache_bytes(device="cpu:0"):
    """All of this CPU's caches together (each cache counted once, from Linux's
    /sys/devices/system/cpu), or None where unknown: another device, another system (notebook
    08)."""
    from pathlib import Path

    if not device.startswith("cpu"):
        return None
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    found = {}
    for cache in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/cache/index[0-9]*"):
        try:
            size, level, kind, shared = (
                (cache / name).read_text().strip()
                for name in ("size", "level", "type", "shared_cpu_list"))
        except OSError:
            continue
        if kind != "Instruction" and size:
            found[(level, kind, shared)] = int(size.rstrip("KMG")) * units.get(size[-1], 1)
    return sum(found.values()) or None


def layer_roofline_seconds(model, batch, flops_per_s, bytes_per_s, dtype="float32"):
    """Seconds per picture if every layer ran at its own roof, max(FLOPs / peak, bytes /
    bandwidth), summed: a layer cannot borrow another's arithmetic (notebook 08)."""
    value_bytes = _VALUE_BYTES[dtype]
    reads = value_bytes * math.prod(model.inputs[0].shape[1:]) / bytes_per_s
    return reads + sum(max(TRAINING_FLOPS_FACTOR * _layer_flops(layer) / flops_per_s,
                           _layer_bytes(layer, batch, value_bytes) / bytes_per_s)
                       for layer in _leaves(model))


_PEAKS = {}


def _stored_best(stored, device, dtype):
    """The best of `stored` limits (notebook 00's, `limits()`) for `device` in `dtype` (a
    number format, or "bytes" for the copy bandwidth), in FLOP/s or B/s; 0 where none."""
    if not stored:
        return 0.0
    if dtype == "bytes":
        return stored["bandwidth_gbs"].get(device, 0.0) * 1e9
    line = stored["matmul_gflops"].get(f"{device} {dtype}")
    return max(line[1]) * 1e9 if line else 0.0


def measured_peak(device="cpu:0", dtype="float32", sizes=None, tries=5, stored=None):
    """The best multiply FLOP/s seen on `device` in this process, or in `stored` limits where
    they are faster: other programs can only slow one down; the first call tries each size
    `tries` times, later ones one more (notebook 08)."""
    sizes = tuple(sizes or ((1024, 2048) if device.startswith("cpu") else (4096, 8192)))
    key = (device, dtype, sizes)
    if key in _PEAKS:
        sizes, tries = (_PEAKS[key]["n"],), 1
    for n in sizes:
        for _ in range(tries):
            rate = matmul_flops(n, dtype, device, repeats=1)
            if key not in _PEAKS or rate > _PEAKS[key]["flops_per_s"]:
                _PEAKS[key] = {"flops_per_s": rate, "n": n, "dtype": dtype}
    best = _stored_best(stored, device, dtype)
    if best > _PEAKS[key]["flops_per_s"]:  # notebook 00 saw this machine faster
        return {"flops_per_s": best, "n": _PEAKS[key]["n"], "dtype": dtype, "stored": True}
    return dict(_PEAKS[key])


_BANDWIDTHS = {}


def measured_bandwidth(device="cpu:0", megabytes=256, tries=3, stored=None):
    """The best `copy_bandwidth` seen on `device` in this process or in `stored` limits, like
    `measured_peak`: the roofline's memory roof (notebook 08)."""
    key = (device, megabytes)
    for _ in range(1 if key in _BANDWIDTHS else tries):
        _BANDWIDTHS[key] = max(_BANDWIDTHS.get(key, 0.0),
                               copy_bandwidth(megabytes, device, repeats=3))
    return max(_BANDWIDTHS[key], _stored_best(stored, device, "bytes"))


def limits(path=None):
    """Notebook 00's limits of this machine from build/limits.json, or, where 00 has not run
    here, the same survey measured now and saved; says which (notebooks 07-11)."""
    path = path or config.BUILD_DIR / "limits.json"
    cpu = hardware.cpu_info()["model"]
    if path.exists():
        stored = json.loads(path.read_text())
        where = stored.get("hardware", {}).get("cpu", {}).get("model")
        if where == cpu:
            return stored
        print(f"{path.name} was measured on {where}, not on this {cpu}: measuring now.")
    else:
        print("Notebook 00 has not run here: measuring this machine's limits now.")
    s = config.settings("matmul")
    found = {"matmul_gflops": {
        f"{d} {t}": (list(s.sizes), [matmul_flops(n, t, d, s.repeats) / 1e9 for n in s.sizes])
        for d in hardware.devices() for t in supported_dtypes(d)},
        "bandwidth_gbs": {d: copy_bandwidth(s.copy_mb, d, s.repeats) / 1e9
                          for d in hardware.devices()},
        "hardware": hardware.describe()}
    save_limits(found, path)
    return {**found, "measured_now": True}  # speed_now then compares with seconds ago


def save_limits(found, path=None):
    """Write limits to build/limits.json, keeping for each multiply line and bandwidth the best
    of these and of earlier ones measured on the same CPU: other programs only slow a run down,
    so a busy rerun must not lower the roofs. Returns the labels kept from before (notebook 00)."""
    path = path or config.BUILD_DIR / "limits.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    kept, lines = [], found["matmul_gflops"]
    if old.get("hardware", {}).get("cpu", {}).get("model") == found["hardware"]["cpu"]["model"]:
        for label, line in old["matmul_gflops"].items():
            if label in lines and max(line[1]) > max(lines[label][1]):
                lines[label], kept = line, [*kept, label]
        for device, gbs in old["bandwidth_gbs"].items():
            if gbs > found["bandwidth_gbs"].get(device, gbs):
                found["bandwidth_gbs"][device], kept = gbs, [*kept, f"{device} bandwidth"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(found, indent=1))
    return kept


def speed_now(stored, device="cpu:0", dtype="float32", tries=3):
    """This machine's multiply speed now as a share of `stored` limits' best, with one line
    that says whether other work is sharing the machine; it changes nothing else: pass the
    same limits as `stored=` to `measured` for roofs that never fall below them (07-11)."""
    sizes, gflops = stored["matmul_gflops"][f"{device} {dtype}"]
    best = max(gflops) * 1e9
    now = max(matmul_flops(sizes[gflops.index(max(gflops))], dtype, device, 1)
              for _ in range(tries))
    share, fresh = now / best, stored.get("measured_now", False)
    head = f"This machine is running at {100 * share:.0f} % of the speed " + (
        "measured a moment ago (notebook 00 has not run here): " if fresh
        else "notebook 00 measured: ")
    if share < 0.85:
        line = head + ("consistent with other work sharing it: speeds below can be lower than "
                       "this machine can do.")
    elif share > FASTER_NOW:
        line = head + ("consistent with that run sharing the machine more; the roofs below use "
                       "today's faster figure.")
    elif fresh:
        line = head + ("about as fast, which says nothing about other work: both ran now. Run "
                       "notebook 00 on a quiet machine for roofs to compare with.")
    else:
        line = head + ("about as fast as then: as free as then, or as busy (if 00 ran "
                       "beside other work, both are low).")
    return share, line

# name -> how to build it (augment=False when the input pipeline augments), classes, default batch
MODELS = {
    "mnist_cnn": (lambda augment: models.mnist_cnn(), 10, 64),
    "cifar10_net": (lambda augment: models.cifar10_net(), 10, 128),
    "cats_dogs_original": (lambda augment: models.cats_dogs_net("0", augment=augment), 1, 32),
    "cats_dogs_improved": (lambda augment: models.cats_dogs_net("2", augment=augment), 1, 32),
    "cats_dogs_128px": (lambda augment: models.cats_dogs_net("3", augment=augment), 1, 32),
    "cats_dogs_deep": (lambda augment: models.cats_dogs_deep(augment=augment), 1, 32),
}


def _check(name, choices, what):
    if name not in choices:
        raise ValueError(f"Unknown {what} {name!r}; choose one of {', '.join(choices)}.")


def build(name, augment=True, jit_compile="auto"):
    """A bench network compiled with Adam and its cross-entropy; `jit_compile` as Keras takes it
    ("auto": XLA where Keras' rules allow it, never with augmentation layers) (notebooks 07, 08)."""
    _check(name, MODELS, "model")
    builder, classes, _ = MODELS[name]
    model = builder(augment)
    loss = "binary_crossentropy" if classes == 1 else "sparse_categorical_crossentropy"
    model.compile(optimizer="adam", loss=loss, jit_compile=jit_compile)
    return model


def synthetic_data(model, batch_size, batches, seed=config.SEED):
    """`batches` batches of random uint8 pictures and labels: run's in-memory data (notebook 07)."""
    rng = np.random.default_rng(seed)
    shape = (batch_size * batches, *model.input_shape[1:])
    classes = model.output_shape[-1]
    labels = rng.integers(0, max(classes, 2), size=(shape[0], 1) if classes == 1 else shape[0])
    return rng.integers(0, 256, size=shape, dtype=np.uint8), labels.astype("float32")


def run(model="cats_dogs_original", device="cpu:0", batch_size=None, source=None, steps=None,
        warmup=None, dtype="float32", usage=None, command=None, label="custom", augment=True,
        jit_compile="auto"):
    """A record of `steps` timed training steps of `model` on `device`, on a repeating dataset
    or PyDataset `source` if given, and on synthetic data; `jit_compile` as `build` takes it, the
    record says what was asked and whether XLA compiled the step (notebooks 07 and 08)."""
    _check(model, MODELS, "model")
    _check(dtype, ("float32", "bfloat16", "float16"), "dtype")
    if isinstance(source, str):
        raise ValueError(f"source is a repeating dataset or PyDataset, not {source!r}: leave it "
                         "out for synthetic data, or see `python -m tools.bench --source`.")
    s = config.settings("bench")
    steps, warmup = steps or s.steps, s.warmup if warmup is None else warmup
    batch_size = batch_size or MODELS[model][2]
    if batch_size < 1 or steps < 3 or warmup < 0:
        raise ValueError("batch_size must be >= 1, steps >= 3 and warmup >= 0; got "
                         f"{batch_size}, {steps}, {warmup}.")
    job = {"model": model, "device": device, "batch_size": batch_size,
           "source": "synthetic" if source is None else label, "dtype": dtype,
           "workers": getattr(source, "workers", None),  # a PyDataset's
           "use_multiprocessing": getattr(source, "use_multiprocessing", None),
           "timed_steps": steps, "warmup_steps": warmup, "jit_compile": jit_compile}
    command = command or (f"roofline.run({model!r}, {device!r}, {batch_size}, source="
                          f"{job['source']!r}, steps={steps}, warmup={warmup}, dtype={dtype!r})")
    previous_policy = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32" if dtype == "float32" else f"mixed_{dtype}")
    n = 2048 if device.startswith("cpu") else 8192  # measured_peak's largest default size
    try:
        with keras.device(device):
            net, timed = build(model, augment, jit_compile), {}
            probe = [matmul_flops(n, dtype, device, repeats=1)]  # the multiply's speed now
            if source is not None:
                _mark(usage, f"{label} start")
                timed["real"] = time_fit(net, source, batch_size, steps, warmup)
            held = max(2, min(steps + warmup + 1, (256 << 20) // (  # at most 256 MB of pictures
                batch_size * math.prod(net.input_shape[1:]))))
            _mark(usage, "synthetic start")
            timed["synthetic"] = time_fit(net, synthetic_data(net, batch_size, held),
                                          batch_size, steps, warmup)
            _mark(usage, "end")
            probe.append(matmul_flops(n, dtype, device, repeats=1))  # and right after
    finally:
        keras.config.set_dtype_policy(previous_policy)
    return {**_record(job, net, timed, usage, command), "multiply_now": probe}


def _mark(usage, label):
    if usage is not None:
        usage.mark(label)


def _usage(usage):
    """Mean utilisation (%) and power (W) of a timing.Utilization, and its timeline."""
    if usage is None or not usage.samples:
        return {}
    keys = usage.samples[-1]
    return {"utilization_pct": {k: usage.mean(k) for k in keys if k.endswith("_pct")},
            "power_w": {k: usage.mean(k) for k in keys if k.endswith("_power_w")},
            "timeline": {"samples": list(usage.samples), "marks": list(usage.marks)}}


def _record(job, net, timed, usage, command):
    watched = _usage(usage)  # before the matrix multiplies of the peak below
    stats = step_stats(timed.get("real", timed["synthetic"]))
    speed = job["batch_size"] / stats["median"]
    synthetic = job["batch_size"] / step_stats(timed["synthetic"])["median"]
    forward = flops_per_image(net)
    training = TRAINING_FLOPS_FACTOR * forward
    top = measured_peak(job["device"], job["dtype"], config.settings("bench").peak_sizes)
    return {"kind": "recorded", **job, "parameters": net.count_params(),
            "augment_in_model": any(layer.name == "augmentation" for layer in net.layers),
            "xla": bool(net.jit_compile),  # what Keras resolved jit_compile to
            "images_per_s": speed, "step_s": stats, "synthetic_images_per_s": synthetic,
            "input_wait_share": max(0.0, 1 - speed / synthetic),
            "forward_flops_per_image": forward, "training_flops_per_image": training,
            "achieved_flops_per_s": training * speed, "matmul_peak": top,
            "peak_share": training * speed / top["flops_per_s"],
            "backend": keras.backend.backend(), "threads": hardware.threads(),
            "hardware": hardware.describe(), "date": results.now(), "command": command,
            **watched}



# Three rules a learner checks on a first GPU run, each a prediction printed beside its
# measurement and timing.ratio's verdict (`python -m tools.bench --rules`, make bench-gpu).
GPU_RULES = ("tensor_core_shapes", "nhwc_vs_nchw", "uint8_vs_float32_copy")
_NOT_ON_A_CPU = ("skipped on {device}: it is about a GPU (Tensor Cores, cuDNN's layouts, PCIe); "
                 "run it on a GPU (make bench-gpu), or rehearse it on the CPU with "
                 "make test-gpu-rehearsal")


def _sizes(batch, pixels):
    """The rules' convolution batch and picture side: a ResNet stage's 56 x 56 at batch 128,
    or a tiny one in the `smoke` profile (the rehearsal runs them on a CPU)."""
    smoke = config.profile() == "smoke"
    return batch or (2 if smoke else 128), pixels or (8 if smoke else 56)


def _convolutions(device, dtype, shape, filters, data_format="channels_last", repeats=4,
                  transpose=False):
    """A call that runs `repeats` 3x3 convolutions of a `shape` batch into `filters` channels on
    `device` and waits for them (`transpose`: NCHW data transposed around an NHWC convolution),
    and the FLOPs of one call."""
    channels = shape[-1] if data_format == "channels_last" else shape[1]
    with keras.device(device):
        x = keras.random.normal(shape, dtype=dtype, seed=1)
        kernel = keras.random.normal((3, 3, channels, filters), dtype=dtype, seed=2)

    def convolve():
        for _ in range(repeats):
            if transpose:  # NCHW through an NHWC convolution, as cuDNN does it
                y = keras.ops.transpose(keras.ops.conv(keras.ops.transpose(
                    x, (0, 2, 3, 1)), kernel, padding="same"), (0, 3, 1, 2))
            else:
                y = keras.ops.conv(x, kernel, padding="same", data_format=data_format)
        return y

    if keras.backend.backend() == "tensorflow":  # a graph, as fit runs a step; TensorFlow's
        import tensorflow as tf  # graph optimizer may change the layout (on a CPU: NCHW's)

        convolve = tf.function(convolve)

    def call():
        with keras.device(device):
            return wait_for(convolve())

    return call, repeats * 2 * 9 * channels * filters * math.prod(shape) // channels


def _n(x):
    """A figure to three digits, thousands with commas: 0.000384, 14.2, 3,757."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _alternate(work, units, unit, names=None):
    c = config.settings("compare")
    speeds = timing.alternate(work, units, rounds=c.rounds, seconds=c.seconds)
    a, b = names or list(work)
    return speeds, timing.ratio(speeds[a], speeds[b], (a, b), unit=unit)


def tensor_core_shapes(device, gpu_name=None, dtype="float16", channels=(64, 63), batch=None,
                       pixels=None):
    """Rule (a): a convolution with channels a multiple of 8 against one without, in GFLOP/s
    (NVIDIA's "Deep Learning Performance" guide: float16 Tensor Cores want multiples of 8)."""
    batch, pixels = _sizes(batch, pixels)
    work, flops = {}, {}
    for c in channels:
        work[f"{c}-channel conv"], flops[f"{c}-channel conv"] = _convolutions(
            device, dtype, (batch, pixels, pixels, c), c)
    a, b = work
    sheet = hardware.gpu_datasheet(gpu_name)
    gain = sheet and sheet[1]["tflops"].get(dtype, 0) / sheet[1]["tflops"]["float32"]
    top = (f"{gain:.1f}x (the {sheet[0]} datasheet's {dtype} over float32: {b} off the Tensor "
           "Cores)" if gain else "the Tensor Cores' gain (no datasheet figure for this GPU)")
    more = flops[a] / flops[b]
    prediction = (f"the {a} (in and out) does {more:.3f}x the FLOPs of the {b}; NVIDIA's guide "
                  f"wants {dtype} channels a multiple of 8 for the Tensor Cores, so expect the "
                  f"{a} at {more:.3f}x the other's FLOP/s (cuDNN pads {channels[1]} channels to "
                  f"{-(-channels[1] // 8) * 8}: the same time) up to {top}")
    speeds, verdict = _alternate(work, {k: v / 1e9 for k, v in flops.items()}, "GFLOP/s")
    return _rule("tensor-core shapes", device, dtype, prediction, speeds, "GFLOP/s", verdict)


def nhwc_vs_nchw(device, gpu_name=None, dtype="float16", channels=64, batch=None, pixels=None):
    """Rule (b): the same convolution on NHWC (Keras' channels_last) and NCHW (channels_first)
    data, in convolutions/s; the prediction: NCHW's two transposes at the measured bandwidth."""
    batch, pixels = _sizes(batch, pixels)
    shapes = {"NHWC": (batch, pixels, pixels, channels), "NCHW": (batch, channels, pixels, pixels)}
    work = {k: _convolutions(device, dtype, s, channels, fmt, repeats=1)[0] for (k, s), fmt
            in zip(shapes.items(), ("channels_last", "channels_first"), strict=True)}
    try:
        work["NCHW"]()
        how = ""
    except Exception as e:  # TensorFlow on a CPU (the rehearsal) has no NCHW convolution
        if type(e).__name__ != "UnimplementedError":
            raise
        work["NCHW"] = _convolutions(device, dtype, shapes["NCHW"], channels, repeats=1,
                                     transpose=True)[0]
        how = " (no NCHW convolution on this device: NCHW is transposed around an NHWC one)"
    moved = 2 * 2 * math.prod(shapes["NHWC"]) * np.dtype(dtype).itemsize  # in + out, read + write
    gbs = measured_bandwidth(device, megabytes=16 if config.profile() == "smoke" else 256)
    extra_ms = moved / gbs * 1e3
    prediction = (f"cuDNN's Tensor Core kernels take NHWC (NVIDIA's guide), so NCHW input and "
                  f"output are transposed: {_n(moved / 1e6)} MB read and written at the "
                  f"{_n(gbs / 1e9)} GB/s measured now, {_n(extra_ms)} ms more a convolution")
    top = published_peak(gpu_name, dtype)
    if top:  # the convolution's own time at the datasheet's peak
        conv_ms = 2 * 9 * channels * math.prod(shapes["NHWC"]) / top * 1e3
        prediction += (f" of {_n(conv_ms)} ms at the datasheet's {dtype} peak: NHWC up to "
                       f"{_n((conv_ms + extra_ms) / conv_ms)}x as fast")
    speeds, verdict = _alternate(work, 1, "convolutions/s")
    return _rule("NHWC vs NCHW", device, dtype, prediction + how, speeds, "convolutions/s",
                 verdict)


def _to_device(device):
    """A call that copies a host array onto `device` and waits until it is there."""
    if keras.backend.backend() == "jax":
        import jax

        kind, _, index = device.partition(":")
        target = jax.devices(kind)[int(index or 0)]
        return lambda x: jax.device_put(x, target).block_until_ready()
    import tensorflow as tf

    def copy(x):
        with tf.device(device):
            y = tf.identity(x)  # host to device, as fit's batches go
        return y[0, 0, 0, 0].numpy()  # one number back: waits for the copy

    return copy


def uint8_vs_float32_copy(device, gpu_name=None, batch=None, pixels=None):
    """Rule (c): one batch of pictures copied host to device as uint8 and as float32, in
    batches/s; the prediction: 4x the bytes, at the bandwidth of a large copy measured first."""
    smoke = config.profile() == "smoke"  # else the 128-px network's batch
    batch, pixels = batch or (2 if smoke else 32), pixels or (8 if smoke else 128)
    rng = np.random.default_rng(config.SEED)
    pictures = {"uint8": rng.integers(0, 256, (batch, pixels, pixels, 3), dtype=np.uint8)}
    pictures["float32"] = pictures["uint8"].astype("float32")
    sizes = {k: v.nbytes for k, v in pictures.items()}
    copy, big = _to_device(device), np.ones((8 * batch, pixels, pixels, 3), dtype="float32")
    gbs = big.nbytes / first_and_median(lambda: copy(big), 3)[1] / 1e9
    times = ", ".join(f"{k} {_n(v / gbs / 1e6)} ms" for k, v in sizes.items())
    prediction = (f"a batch of {batch} {pixels}-px pictures is {_n(sizes['uint8'] / 1e6)} MB as "
                  f"uint8 and {_n(sizes['float32'] / 1e6)} MB as float32 (4x); at the "
                  f"{_n(gbs)} GB/s of a {_n(big.nbytes / 1e6)} MB copy measured now: {times}, "
                  "uint8 up to 4x as fast (less where a copy's fixed cost weighs)")
    work = {f"{k} batch": (lambda x=x: copy(x)) for k, x in pictures.items()}
    speeds, verdict = _alternate(work, 1, "batches/s")
    return _rule("uint8 vs float32 over PCIe", device, "uint8/float32", prediction, speeds,
                 "batches/s", verdict)


def _rule(name, device, dtype, prediction, speeds, unit, verdict):
    measured = ", ".join(f"{k} {_n(statistics.median(v))} {unit}" for k, v in speeds.items())
    return {"rule": name, "device": device, "dtype": dtype, "prediction": prediction,
            "measured": f"{measured} (median of {len(next(iter(speeds.values())))} rounds)",
            "verdict": verdict["verdict"], "ratio": verdict["ratio"], "text": verdict["text"],
            "speeds": speeds}


def gpu_rules(device, gpu_name=None):
    """Each GPU rule on `device` (prediction, measurement, verdict); on a CPU each is skipped with
    the reason (make bench-gpu; make test-gpu-rehearsal runs them on a CPU under a fake GPU)."""
    rules = (tensor_core_shapes, nhwc_vs_nchw, uint8_vs_float32_copy)
    if device.startswith("cpu"):
        return [{"rule": rule.__name__, "device": device,
                 "skipped": _NOT_ON_A_CPU.format(device=device)} for rule in rules]
    return [rule(device, gpu_name) for rule in rules]


def rule_lines(found):
    """A rule's result as the lines the recording command prints."""
    if "skipped" in found:
        return [f"GPU rule {found['rule']}: {found['skipped']}"]
    return [f"GPU rule: {found['rule']} on {found['device']} ({found['dtype']})",
            f"  predict: {found['prediction']}", f"  measure: {found['measured']}",
            f"  verdict: {found['text']}"]


@functools.cache
def _model(name, augment=True):
    return build(name, augment)


def roofs(name, bytes_per_s, flops_per_s, source, kind="measured"):
    """One device's roofs: bytes/s, FLOP/s per number format, source, kind (notebook 00)."""
    if bytes_per_s <= 0 or not flops_per_s or min(flops_per_s.values()) <= 0:
        raise ValueError(f"{name}: a roofline needs a positive bandwidth and at least one "
                         f"positive peak, got {bytes_per_s} B/s and {flops_per_s}.")
    return {"name": name, "source": source, "kind": kind, "bytes_per_s": bytes_per_s,
            "flops_per_s": dict(flops_per_s)}


def measured(device="cpu:0", sizes=None, megabytes=256, stored=None):
    """This machine's roofs on `device`, measured now, or `stored` limits' where those are
    faster: measured_peak per supported format and measured_bandwidth (notebook 08)."""
    flops = {dtype: measured_peak(device, dtype, sizes, stored=stored)["flops_per_s"]
             for dtype in supported_dtypes(device)}
    return roofs(device, measured_bandwidth(device, megabytes, stored=stored), flops,
                 "measured here")


def from_survey(survey, bandwidth_gbs):
    """Roofs per device from notebook 00's survey ({'cpu:0 float32': (sizes, GFLOP/s)}: the
    best of each line) and bandwidths ({'cpu:0': GB/s})."""
    found = {}
    for label, (_, gflops) in survey.items():
        device, dtype = label.split()
        found.setdefault(device, {})[dtype] = max(gflops) * 1e9
    return [roofs(device, bandwidth_gbs[device] * 1e9, flops, "measured here")
            for device, flops in found.items()]


def published_roofs(gpus=("V100", "T4", "A100", "H200")):
    """The roofs of `gpus` from NVIDIA's datasheets, Tensor Cores' float16 and bfloat16 as one
    "16-bit" roof (notebook 08)."""
    found = []
    for name in gpus:
        sheet = published.GPU_DATASHEETS[name]
        flops = {("16-bit" if dtype in ("float16", "bfloat16") else dtype): tflops * 1e12
                 for dtype, tflops in sheet["tflops"].items()}
        found.append(roofs(name, sheet["bandwidth_gbs"] * 1e9, flops, sheet["source"],
                           "published"))
    return found


def attainable(intensity, flops_per_s, bytes_per_s):
    """The FLOP/s an operation of `intensity` FLOP per byte can reach (notebook 00)."""
    return min(flops_per_s, intensity * bytes_per_s)


def predict(model, device_roofs, dtype="float32", batch=32, cache=None):
    """Two speeds for `model` on `device_roofs` in `dtype` at `batch` pictures a step. The
    estimate (`pictures_per_s`, `bound`: its binding roof) reads the roofline at the training
    intensity of the cache-blind count (training_bytes), and per layer
    (`per_layer_pictures_per_s`); caches can beat its memory roof. The upper bound
    (`upper_bound`, `upper_bound_roof`) reads it at the compulsory bytes beyond the caches,
    `cache` bytes (None: `cache_bytes` of a measured CPU, else unknown, so the compute roof
    alone) (notebook 08)."""
    top = device_roofs["flops_per_s"]
    if dtype not in top:
        raise ValueError(f"{device_roofs['name']} has no {dtype} roof; it has "
                         f"{', '.join(top)}.")
    intensity = training_intensity(model, batch, dtype)
    reach = attainable(intensity, top[dtype], device_roofs["bytes_per_s"])
    work = TRAINING_FLOPS_FACTOR * flops_per_image(model)
    layers = layer_roofline_seconds(model, batch, top[dtype], device_roofs["bytes_per_s"],
                                         dtype)
    if cache is None and device_roofs.get("kind") == "measured":
        cache = cache_bytes(device_roofs["name"])
    must = compulsory_bytes(model, batch, cache) if cache is not None else 0
    most = attainable(work / must if must else math.inf, top[dtype], device_roofs["bytes_per_s"])
    return {"intensity": intensity, "flops_per_s": reach, "training_flops": work,
            "bound": "compute" if reach == top[dtype] else "memory",
            "pictures_per_s": reach / work, "per_layer_pictures_per_s": 1 / layers,
            "compulsory_bytes": must, "upper_bound": most / work,
            "upper_bound_roof": "compute" if most == top[dtype] else "memory"}


def share(ratio):
    """A ratio as a percentage that tells small ones apart: 0.23 %, 11 % (notebook 08)."""
    return f"{ratio:.1%}" if ratio < 0.1 else f"{ratio:.0%}"


def predictions(names, device_roofs):
    """The float32 prediction for bench networks `names` on each device, as a DataFrame: what
    to show before timing them (notebook 08)."""
    rows = []
    for name in names:
        for device in device_roofs:
            p = predict(_model(name), device, batch=MODELS[name][2])
            rows.append({"network": name, "device": device["name"],
                         "training FLOP/byte": f"{p['intensity']:.0f}",
                         "MFLOP to train": f"{p['training_flops'] / 1e6:,.1f}",
                         "binding roof": f"{p['bound']}, {p['flops_per_s'] / 1e9:,.0f} GFLOP/s",
                         "predicted pictures/s (estimate)": f"{p['pictures_per_s']:,.0f}",
                         "per-layer estimate": f"{p['per_layer_pictures_per_s']:,.0f}",
                         "upper bound": f"{p['upper_bound']:,.0f} ({p['upper_bound_roof']})"})
    return pd.DataFrame(rows)


def _why_above(bound="compute", speed_now=None):
    """Why a run beat its roof: the roofs, where `speed_now` (speed_now's share) says the
    machine ran faster than when notebook 00 measured it, else the prediction (notebook 08)."""
    if speed_now is not None and speed_now > FASTER_NOW:  # speed_now's "ran ... busier"
        return ("the machine runs faster today than when notebook 00 measured its roofs, so they "
                "can still be low: run notebook 00 again on a quiet machine")
    if bound == "memory":  # the cache-blind count's memory roof: an estimate, not a bound
        return ("the estimate's byte count ignores the caches, which kept part of the traffic "
                "off the memory bus (or a kernel beat the measured copy): its memory roof is an "
                "estimate, not a bound")
    return ("the roofs are the fastest multiply this machine has shown, so either the "
            "prediction is wrong (its FLOP count is more than the step did: 3x the forward "
            "pass counts an input gradient the first layer never computes; or a kernel beat "
            "the measured multiply), or every multiply measured so far ran beside other work "
            "and the roofs are low")


def reading(ratio, short=False, bound="compute", speed_now=None):
    """What a measured / predicted ratio says, in words; `bound`: the roof that binds the
    estimate; `speed_now`: speed_now's share, which says why a run beat it (notebook 08)."""
    limit = "arithmetic" if bound == "compute" else "memory bandwidth"
    if ratio > 1:  # compute-bound, the estimate is the compute roof: a bound
        return "above the roof" if short else f"above the roof: {_why_above(bound, speed_now)}"
    if ratio >= 0.7:
        return ("near the roof" if short else
                f"near the roof: consistent with {limit} setting the pace")
    if ratio >= 0.3:
        return ("below the roof" if short else
                f"at the roof's rate its counted FLOPs would take {share(ratio)} of each step; "
                "the rest went on work the roofline leaves out (pooling, activations, the "
                "optimizer's update, fixed costs per step), on layers too small to reach it, "
                "or to other programs sharing the cores")
    return ("far below the roof" if short else
            f"far below the roof: at its rate the counted FLOPs would take only {share(ratio)} "
            "of each step; the rest went elsewhere: fixed costs per step, small layers or "
            "waiting (for input, for other programs), which the roofline cannot tell apart")


def points(records, device_roofs=(), kind="measured"):
    """One point per bench record: intensity and achieved FLOP/s, and where `device_roofs` has
    its device and format, the prediction and measured / predicted (notebook 08)."""
    from .results import machine_name

    by_device = {r["name"]: r for r in device_roofs}
    found = []
    for r in records:
        model = _model(r["model"], r["augment_in_model"])
        device = by_device.get(r["device"], {"flops_per_s": {}})
        p = (predict(model, device, r["dtype"], r["batch_size"])
             if r["dtype"] in device["flops_per_s"] else {})
        where = r["device"] if kind == "measured" else machine_name(r)
        found.append({
            "label": f"{r['model']} b{r['batch_size']}" + ("" if where == "cpu:0" else f" {where}"),
            "kind": kind, "network": r["model"], "where": where, "batch": r["batch_size"],
            "intensity": training_intensity(model, r["batch_size"], r["dtype"]),
            "flops_per_s": r["achieved_flops_per_s"], "pictures_per_s": r["images_per_s"],
            "predicted": p.get("pictures_per_s"), "bound": p.get("bound"),
            "ratio": r["images_per_s"] / p["pictures_per_s"] if p else None,
            "of_multiply_now": [r["achieved_flops_per_s"] / f  # the highest share first
                                for f in sorted(r.get("multiply_now", []))]})
    return found


def table(found):
    """Points as a DataFrame: prediction, figure, their ratio and its reading, and where the
    run measured it, its FLOP/s against the multiply timed just before and after (08)."""
    probed = any(p.get("of_multiply_now") for p in found)
    return pd.DataFrame([{
        "network": p["network"], "where": p["where"], "batch": p["batch"] or "-",
        "FLOP/byte": f"{p['intensity']:.0f}",
        "GFLOP/s": f"{p['flops_per_s'] / 1e9:,.1f}",
        "predicted pictures/s": "-" if p["predicted"] is None else f"{p['predicted']:,.0f}",
        f"{p['kind']} pictures/s": f"{p['pictures_per_s']:,.0f}",
        "share of the prediction": "-" if p["ratio"] is None else share(p["ratio"]),
        "reading": "-" if p["ratio"] is None else reading(p["ratio"], short=True),
        **({"of the multiply then": "-".join(dict.fromkeys(  # one figure where both agree
            share(x) for x in p.get("of_multiply_now", [])[::-1])) or "-"} if probed else {})}
        for p in found])


def summary(found, speed_now=None):
    """Runs above their roof and why (`speed_now`: speed_now's share), the run closest to
    its roof and the one furthest below, and whether more arithmetic per picture came closer
    (notebook 08)."""
    judged = [p for p in found if p["ratio"] is not None]
    above = [p for p in judged if p["ratio"] > 1]
    bound = "compute" if any(p.get("bound", "compute") == "compute" for p in above) else "memory"
    line = "" if not above else (
        "Above the roof: " + ", ".join(f"{p['label']} on {p['where']} ({share(p['ratio'])})"
                                       for p in above)
        + f"; {_why_above(bound, speed_now)}. ")
    judged = [p for p in judged if p["ratio"] <= 1]
    if len(judged) < 2:
        return line + "Fewer than two runs under their roof to compare."
    best, worst = max(judged, key=lambda p: p["ratio"]), min(judged, key=lambda p: p["ratio"])
    line += (f"Closest to its roof: {best['label']} on {best['where']} ({share(best['ratio'])} "
             f"of the prediction); furthest below: {worst['label']} on {worst['where']} "
             f"({share(worst['ratio'])}).")
    per_picture = (best["flops_per_s"] / best["pictures_per_s"]) / (
        worst["flops_per_s"] / worst["pictures_per_s"])
    more = per_picture * (best.get("batch") or 1) / (worst.get("batch") or 1)  # per step
    line += " One run each, not timed in alternation: the order ranks nothing by itself."
    if best["ratio"] < 1.2 * worst["ratio"]:  # single runs this close can swap on a busy machine
        return line + " Their shares lie within 20 % of each other: no run stands out."
    if abs(more - 1) < 0.01:
        return line + (" Both do the same arithmetic per step: their device, or the noise "
                       "between single runs.")
    if more > 1:
        return line + (f" The closer one does {more:.1f}x the arithmetic per step "
                       f"({per_picture:.1f}x per picture); how much of the gap fixed costs "
                       "explain, the fixed-cost floor and the profile measure.")
    return line + (" The closer one does less arithmetic per step, which fixed costs alone "
                   "do not explain: another cost, or the noise between single runs.")


def blog_points():
    """The blog's published V100 speeds (ladder steps 2, 2b, 3; CIFAR-10 at batch 512) as
    points with the V100 datasheet's float32 prediction, the blog's format (notebook 08)."""
    v100 = published_roofs(("V100",))[0]
    speeds = {**published.LADDER_V100_SPEED,
              "cifar10": published.CIFAR10_EXAMPLES_PER_S["Tesla V100"]}
    found = []
    for step, speed in speeds.items():
        cifar = step == "cifar10"
        p = predict(models.cifar10_net() if cifar else models.cats_dogs_net(step), v100,
                    batch=512 if cifar else 32)  # the blog's batches
        found.append({"label": "blog CIFAR-10 net" if cifar else f"blog step {step}",
                      "step": step, "kind": "published",
                      "network": "cifar10_net()" if cifar else f"cats_dogs_net('{step}')",
                      "where": "V100 (the blog)", "batch": 512 if cifar else None,
                      "intensity": p["intensity"], "flops_per_s": speed * p["training_flops"],
                      "pictures_per_s": speed, "predicted": p["pictures_per_s"],
                      "bound": p["bound"], "ratio": speed / p["pictures_per_s"]})
    return found


def blog_reading(found):
    """Which of the blog's explanations, its input pipeline and depth, its V100 points
    support, in sentences computed from them (notebook 08)."""
    step = {p["step"]: p for p in found}
    two, plain, three = step["2"], step["2b"], step["3"]
    cats = [p["ratio"] for p in (two, plain, three)]
    lines = [f"The blog's cat/dog networks reached {share(min(cats))} to {share(max(cats))} of "
             f"the V100 roofline's pictures/s, its CIFAR-10 net {share(step['cifar10']['ratio'])}"
             + (": far below the roof, so at the roof's rate their counted arithmetic would "
                "fill only that share of each step." if max(cats) < 0.3 else ".")]
    faster = plain["pictures_per_s"] / two["pictures_per_s"]
    if faster > 1.1:
        lines.append(f"Step 2b asks the GPU for step 2's arithmetic without the augmentation, "
                     f"yet ran {faster:.2f}x as fast: consistent with the blog's explanation, "
                     "an input pipeline on the CPU (Keras 2's generator augmented there) that "
                     "held step 2 back.")
    else:
        lines.append(f"Step 2b, step 2 without augmentation, ran at {faster:.2f}x step 2's "
                     "speed: no sign that augmenting the pictures held it back.")
    more = (three["flops_per_s"] / three["pictures_per_s"]) / (
        two["flops_per_s"] / two["pictures_per_s"])
    speed, gain = (three[key] / two[key] for key in ("pictures_per_s", "ratio"))
    if speed > 2 / more:
        lines.append(f"Step 3 asks {more:.0f}x step 2's arithmetic per picture; bound by the "
                     f"GPU's arithmetic it would run at about {1 / more:.2f}x step 2's speed, "
                     f"yet it ran at {speed:.2f}x, its share of the roof {gain:.0f}x step 2's: "
                     "consistent with the blog's reading that more arithmetic per picture "
                     "keeps the GPU busier.")
    else:
        lines.append(f"Step 3 asks {more:.0f}x step 2's arithmetic per picture and ran at "
                     f"{speed:.2f}x its speed: about what the GPU's arithmetic alone predicts.")
    return " ".join(lines)

BYTES_PER_PARAMETER = 16  # weight, gradient, Adam's first and second moment: float32 each
DTYPES = ("float32", "bfloat16", "float16")  # the policies' compute formats


def activation_bytes(model, dtype="float32"):
    """Bytes of the layer outputs one training step keeps per picture, at `dtype`'s bytes per
    number (float32: 4; mixed bfloat16 or float16: 2) (notebook 08)."""
    if dtype not in DTYPES:
        raise ValueError(f"Unknown dtype {dtype!r}; choose one of {', '.join(DTYPES)}.")
    return activation_values(model) * _VALUE_BYTES[dtype]


def fixed_bytes(model):
    """Bytes that do not grow with the batch: weights, gradients, Adam's moments (notebook 08)."""
    return BYTES_PER_PARAMETER * model.count_params()


def largest_batch(model, memory_bytes, dtype="float32"):
    """The largest batch whose predicted training memory fits `memory_bytes`, 0 if not even the
    weights and moments fit; a real limit is lower (notebook 08 measures by how much)."""
    if memory_bytes <= 0:
        raise ValueError(f"memory_bytes must be positive, got {memory_bytes}.")
    return max(0, int((memory_bytes - fixed_bytes(model)) // activation_bytes(model, dtype)))


def memory_table(names=None, gpus=("T4", "H200"), dtype="float32"):
    """Predicted training memory of bench networks (default: all) and the largest batch on each
    of `gpus` (datasheet memory) (notebook 08)."""
    rows = []
    for name in names or MODELS:
        model = build(name)
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


def measure_memory(jobs, device="cpu:0", span_mb=300):
    """Peak memory after one step at batches b, 2b, 4b (float32 activations growing by about
    `span_mb`) of each (bench network, dtype) of `jobs`, each in a fresh process (notebook 08)."""
    # JAX would give each process 75 % of a GPU's memory up front; these processes share one
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    if device.startswith("cpu"):
        env["CUDA_VISIBLE_DEVICES"] = "-1"  # no GPU context in a CPU measurement
    running = []
    for name, dtype in jobs:
        model = build(name)  # an unknown name gets bench's clear error
        first = max(1, math.ceil(span_mb * 1e6 / (3 * activation_bytes(model))))
        command = [sys.executable, "-m", "tools.memory", "--model", name, "--device", device,
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


def check_memory(found, within=3.0):
    """Measured growth per picture against the prediction, with a verdict (notebook 08)."""
    return pd.DataFrame([{
        "network": m["network"], "dtype": m["dtype"],
        "batches": ", ".join(map(str, m["batches"])),
        "peak MB": ", ".join(f"{p / 1e6:,.0f}" for p in m["peak_bytes"]),
        "predicted MB per picture": f"{m['predicted'] / 1e6:,.2f}",
        "measured MB per picture": f"{m['growth'] / 1e6:,.2f}",
        "measured / predicted": f"{m['ratio']:.2f}",
        "verdict": balance_verdict(m["ratio"], within)} for m in found])


def largest_batches(found, gpus=("T4", "H200")):
    """The largest batch on each of `gpus` (datasheet memory) for each measurement of `measure`:
    predicted, and at the growth measured here ("-" where none was measured) (notebook 08)."""
    rows = []
    for m in found:
        model = build(m["network"])
        row = {"network": m["network"], "dtype": m["dtype"]}
        for gpu in gpus:
            room = published.GPU_DATASHEETS[gpu]["memory_gb"] * 1e9
            row[f"{gpu}: predicted"] = f"{largest_batch(model, room, m['dtype']):,}"
            row[f"{gpu}: at the measured growth"] = (
                f"{max(0, (room - fixed_bytes(model)) // m['growth']):,.0f}"
                if m["growth"] > 0 else "-")
        rows.append(row)
    return pd.DataFrame(rows)
