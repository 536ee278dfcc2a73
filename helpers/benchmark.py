"""The benchmark (notebooks 07 and 08): a course network's measured training steps as a record
(`python -m tools.bench` keeps them in results/), the three GPU rules, each predicted, then
measured, and training memory measured in fresh processes (`python -m tools.memory`)."""

import json
import math
import os
import statistics
import subprocess
import sys

import keras
import numpy as np
import pandas as pd

from . import config, hardware, published, results, roofs, timing
from .models import MODELS, build
from .roofline import (
    TRAINING_FLOPS_FACTOR,
    activation_bytes,
    fixed_bytes,
    flops_per_image,
    largest_batch,
)
from .timing import first_and_median, step_stats, time_fit, wait_for

__all__ = [
    "check_memory",
    "gpu_rules",
    "growth",
    "largest_batches",
    "measure_memory",
    "nhwc_vs_nchw",
    "rule_lines",
    "run",
    "synthetic_data",
    "tensor_core_shapes",
    "uint8_vs_float32_copy",
]


def _check(name, choices, what):
    if name not in choices:
        raise ValueError(
            f"Unknown {what} {name!r}; choose one of {', '.join(choices)}."
        )


def synthetic_data(model, batch_size, batches, seed=config.SEED):
    """`batches` batches of random uint8 pictures and labels: run's in-memory data (notebook 07)."""
    rng = np.random.default_rng(seed)
    shape = (batch_size * batches, *model.input_shape[1:])
    classes = model.output_shape[-1]
    labels = rng.integers(
        0, max(classes, 2), size=(shape[0], 1) if classes == 1 else shape[0]
    )
    return rng.integers(0, 256, size=shape, dtype=np.uint8), labels.astype("float32")


def run(
    model="cats_dogs_original",
    device="cpu:0",
    batch_size=None,
    source=None,
    steps=None,
    warmup=None,
    dtype="float32",
    usage=None,
    command=None,
    label="custom",
    augment=True,
    jit_compile="auto",
):
    """A record of `steps` timed training steps of `model` on `device`, on a repeating dataset
    or PyDataset `source` if given, and on synthetic data; `jit_compile` as `build` takes it, the
    record says what was asked and whether XLA compiled the step (notebooks 07 and 08)."""
    _check(model, MODELS, "model")
    _check(dtype, ("float32", "bfloat16", "float16"), "dtype")
    if isinstance(source, str):
        raise ValueError(
            f"source is a repeating dataset or PyDataset, not {source!r}: leave it "
            "out for synthetic data, or see `python -m tools.bench --source`."
        )
    s = config.settings("bench")
    steps, warmup = steps or s.steps, s.warmup if warmup is None else warmup
    batch_size = batch_size or MODELS[model][2]
    if batch_size < 1 or steps < 3 or warmup < 0:
        raise ValueError(
            "batch_size must be >= 1, steps >= 3 and warmup >= 0; got "
            f"{batch_size}, {steps}, {warmup}."
        )
    job = {
        "model": model,
        "device": device,
        "batch_size": batch_size,
        "source": "synthetic" if source is None else label,
        "dtype": dtype,
        "workers": getattr(source, "workers", None),  # a PyDataset's
        "use_multiprocessing": getattr(source, "use_multiprocessing", None),
        "timed_steps": steps,
        "warmup_steps": warmup,
        "jit_compile": jit_compile,
    }
    command = command or (
        f"benchmark.run({model!r}, {device!r}, {batch_size}, source="
        f"{job['source']!r}, steps={steps}, warmup={warmup}, dtype={dtype!r})"
    )
    previous_policy = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32" if dtype == "float32" else f"mixed_{dtype}")
    # measured_peak's largest default size
    n = 2048 if device.startswith("cpu") else 8192
    try:
        with keras.device(device):
            net, timed = build(model, augment, jit_compile), {}
            # the multiply's speed now
            probe = [roofs.matmul_flops(n, dtype, device, repeats=1)]
            if source is not None:
                _mark(usage, f"{label} start")
                timed["real"] = time_fit(net, source, batch_size, steps, warmup)
            held = max(
                2,
                min(
                    steps + warmup + 1,
                    (256 << 20)
                    // (  # at most 256 MB of pictures
                        batch_size * math.prod(net.input_shape[1:])
                    ),
                ),
            )
            _mark(usage, "synthetic start")
            timed["synthetic"] = time_fit(
                net, synthetic_data(net, batch_size, held), batch_size, steps, warmup
            )
            _mark(usage, "end")
            # and right after
            probe.append(roofs.matmul_flops(n, dtype, device, repeats=1))
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
    return {
        "utilization_pct": {k: usage.mean(k) for k in keys if k.endswith("_pct")},
        "power_w": {k: usage.mean(k) for k in keys if k.endswith("_power_w")},
        "timeline": {"samples": list(usage.samples), "marks": list(usage.marks)},
    }


def _record(job, net, timed, usage, command):
    watched = _usage(usage)  # before the matrix multiplies of the peak below
    stats = step_stats(timed.get("real", timed["synthetic"]))
    speed = job["batch_size"] / stats["median"]
    synthetic = job["batch_size"] / step_stats(timed["synthetic"])["median"]
    forward = flops_per_image(net)
    training = TRAINING_FLOPS_FACTOR * forward
    top = roofs.measured_peak(
        job["device"], job["dtype"], config.settings("bench").peak_sizes
    )
    return {
        "kind": "recorded",
        **job,
        "parameters": net.count_params(),
        "augment_in_model": any(layer.name == "augmentation" for layer in net.layers),
        "xla": bool(net.jit_compile),  # what Keras resolved jit_compile to
        "images_per_s": speed,
        "step_s": stats,
        "synthetic_images_per_s": synthetic,
        "input_wait_share": max(0.0, 1 - speed / synthetic),
        "forward_flops_per_image": forward,
        "training_flops_per_image": training,
        "achieved_flops_per_s": training * speed,
        "matmul_peak": top,
        "peak_share": training * speed / top["flops_per_s"],
        "backend": keras.backend.backend(),
        "threads": hardware.threads(),
        "hardware": hardware.describe(),
        "date": results.now(),
        "command": command,
        **watched,
    }


_NOT_ON_A_CPU = (
    "skipped on {device}: it is about a GPU (Tensor Cores, cuDNN's layouts, PCIe); "
    "run it on a GPU (make bench-gpu), or rehearse it on the CPU with "
    "make test-gpu-rehearsal"
)


def _sizes(batch, pixels):
    """The rules' convolution batch and picture side: a ResNet stage's 56 x 56 at batch 128,
    or a tiny one in the `smoke` profile (the rehearsal runs them on a CPU)."""
    smoke = config.profile() == "smoke"
    return batch or (2 if smoke else 128), pixels or (8 if smoke else 56)


def _convolutions(
    device,
    dtype,
    shape,
    filters,
    data_format="channels_last",
    repeats=4,
    transpose=False,
):
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
                y = keras.ops.transpose(
                    keras.ops.conv(
                        keras.ops.transpose(x, (0, 2, 3, 1)), kernel, padding="same"
                    ),
                    (0, 3, 1, 2),
                )
            else:
                y = keras.ops.conv(x, kernel, padding="same", data_format=data_format)
        return y

    # a graph, as fit runs a step; TensorFlow's
    if keras.backend.backend() == "tensorflow":
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


def tensor_core_shapes(
    device, gpu_name=None, dtype="float16", channels=(64, 63), batch=None, pixels=None
):
    """Rule (a): a convolution with channels a multiple of 8 against one without, in GFLOP/s
    (NVIDIA's "Deep Learning Performance" guide: float16 Tensor Cores want multiples of 8)."""
    batch, pixels = _sizes(batch, pixels)
    work, flops = {}, {}
    for c in channels:
        work[f"{c}-channel conv"], flops[f"{c}-channel conv"] = _convolutions(
            device, dtype, (batch, pixels, pixels, c), c
        )
    a, b = work
    sheet = hardware.gpu_datasheet(gpu_name)
    gain = sheet and sheet[1]["tflops"].get(dtype, 0) / sheet[1]["tflops"]["float32"]
    top = (
        f"{gain:.1f}x (the {sheet[0]} datasheet's {dtype} over float32: {b} off the Tensor "
        "Cores)"
        if gain
        else "the Tensor Cores' gain (no datasheet figure for this GPU)"
    )
    more = flops[a] / flops[b]
    prediction = (
        f"the {a} (in and out) does {more:.3f}x the FLOPs of the {b}; NVIDIA's guide "
        f"wants {dtype} channels a multiple of 8 for the Tensor Cores, so expect the "
        f"{a} at {more:.3f}x the other's FLOP/s (cuDNN pads {channels[1]} channels to "
        f"{-(-channels[1] // 8) * 8}: the same time) up to {top}"
    )
    speeds, verdict = _alternate(
        work, {k: v / 1e9 for k, v in flops.items()}, "GFLOP/s"
    )
    return _rule(
        "tensor-core shapes", device, dtype, prediction, speeds, "GFLOP/s", verdict
    )


def nhwc_vs_nchw(
    device, gpu_name=None, dtype="float16", channels=64, batch=None, pixels=None
):
    """Rule (b): the same convolution on NHWC (Keras' channels_last) and NCHW (channels_first)
    data, in convolutions/s; the prediction: NCHW's two transposes at the measured bandwidth."""
    batch, pixels = _sizes(batch, pixels)
    shapes = {
        "NHWC": (batch, pixels, pixels, channels),
        "NCHW": (batch, channels, pixels, pixels),
    }
    work = {
        k: _convolutions(device, dtype, s, channels, fmt, repeats=1)[0]
        for (k, s), fmt in zip(
            shapes.items(), ("channels_last", "channels_first"), strict=True
        )
    }
    try:
        work["NCHW"]()
        how = ""
    except (
        Exception
    ) as e:  # TensorFlow on a CPU (the rehearsal) has no NCHW convolution
        if type(e).__name__ != "UnimplementedError":
            raise
        work["NCHW"] = _convolutions(
            device, dtype, shapes["NCHW"], channels, repeats=1, transpose=True
        )[0]
        how = " (no NCHW convolution on this device: NCHW is transposed around an NHWC one)"
    # in + out, read + write
    moved = 2 * 2 * math.prod(shapes["NHWC"]) * np.dtype(dtype).itemsize
    gbs = roofs.measured_bandwidth(
        device, megabytes=16 if config.profile() == "smoke" else 256
    )
    extra_ms = moved / gbs * 1e3
    prediction = (
        f"cuDNN's Tensor Core kernels take NHWC (NVIDIA's guide), so NCHW input and "
        f"output are transposed: {_n(moved / 1e6)} MB read and written at the "
        f"{_n(gbs / 1e9)} GB/s measured now, {_n(extra_ms)} ms more a convolution"
    )
    top = roofs.published_peak(gpu_name, dtype)
    if top:  # the convolution's own time at the datasheet's peak
        conv_ms = 2 * 9 * channels * math.prod(shapes["NHWC"]) / top * 1e3
        prediction += (
            f" of {_n(conv_ms)} ms at the datasheet's {dtype} peak: NHWC up to "
            f"{_n((conv_ms + extra_ms) / conv_ms)}x as fast"
        )
    speeds, verdict = _alternate(work, 1, "convolutions/s")
    return _rule(
        "NHWC vs NCHW",
        device,
        dtype,
        prediction + how,
        speeds,
        "convolutions/s",
        verdict,
    )


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
    pictures = {
        "uint8": rng.integers(0, 256, (batch, pixels, pixels, 3), dtype=np.uint8)
    }
    pictures["float32"] = pictures["uint8"].astype("float32")
    sizes = {k: v.nbytes for k, v in pictures.items()}
    copy, big = (
        _to_device(device),
        np.ones((8 * batch, pixels, pixels, 3), dtype="float32"),
    )
    gbs = big.nbytes / first_and_median(lambda: copy(big), 3)[1] / 1e9
    times = ", ".join(f"{k} {_n(v / gbs / 1e6)} ms" for k, v in sizes.items())
    prediction = (
        f"a batch of {batch} {pixels}-px pictures is {_n(sizes['uint8'] / 1e6)} MB as "
        f"uint8 and {_n(sizes['float32'] / 1e6)} MB as float32 (4x); at the "
        f"{_n(gbs)} GB/s of a {_n(big.nbytes / 1e6)} MB copy measured now: {times}, "
        "uint8 up to 4x as fast (less where a copy's fixed cost weighs)"
    )
    work = {f"{k} batch": (lambda x=x: copy(x)) for k, x in pictures.items()}
    speeds, verdict = _alternate(work, 1, "batches/s")
    return _rule(
        "uint8 vs float32 over PCIe",
        device,
        "uint8/float32",
        prediction,
        speeds,
        "batches/s",
        verdict,
    )


def _rule(name, device, dtype, prediction, speeds, unit, verdict):
    measured = ", ".join(
        f"{k} {_n(statistics.median(v))} {unit}" for k, v in speeds.items()
    )
    return {
        "rule": name,
        "device": device,
        "dtype": dtype,
        "prediction": prediction,
        "measured": f"{measured} (median of {len(next(iter(speeds.values())))} rounds)",
        "verdict": verdict["verdict"],
        "ratio": verdict["ratio"],
        "text": verdict["text"],
        "speeds": speeds,
    }


def gpu_rules(device, gpu_name=None):
    """The three rules a learner checks on a first GPU run on `device`, each a prediction printed
    beside its measurement and timing.ratio's verdict; on a CPU each is skipped with the reason
    (make bench-gpu; make test-gpu-rehearsal runs them on a CPU under a fake GPU)."""
    rules = (tensor_core_shapes, nhwc_vs_nchw, uint8_vs_float32_copy)
    if device.startswith("cpu"):
        return [
            {
                "rule": rule.__name__,
                "device": device,
                "skipped": _NOT_ON_A_CPU.format(device=device),
            }
            for rule in rules
        ]
    return [rule(device, gpu_name) for rule in rules]


def rule_lines(found):
    """A rule's result as the lines the recording command prints."""
    if "skipped" in found:
        return [f"GPU rule {found['rule']}: {found['skipped']}"]
    return [
        f"GPU rule: {found['rule']} on {found['device']} ({found['dtype']})",
        f"  predict: {found['prediction']}",
        f"  measure: {found['measured']}",
        f"  verdict: {found['text']}",
    ]


def growth(batches, peaks):
    """Bytes per picture: the least-squares slope of peak memory against batch (notebook 08)."""
    if len(set(batches)) < 2:
        raise ValueError(
            f"growth needs two or more different batch sizes, got {batches}."
        )
    return float(np.polyfit(batches, peaks, 1)[0])


def measure_memory(jobs, device="cpu:0", span_mb=300):
    """Peak memory after one step at batches b, 2b, 4b (float32 activations growing by about
    `span_mb`) of each (bench network, dtype) of `jobs`, each in a fresh process (notebook 08)."""
    # JAX would give each process 75 % of a GPU's memory up front; these processes share one
    env = {
        **os.environ,
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
    }
    if device.startswith("cpu"):
        env["CUDA_VISIBLE_DEVICES"] = "-1"  # no GPU context in a CPU measurement
    running = []
    for name, dtype in jobs:
        model = build(name)  # an unknown name gets bench's clear error
        first = max(1, math.ceil(span_mb * 1e6 / (3 * activation_bytes(model))))
        command = [
            sys.executable,
            "-m",
            "tools.memory",
            "--model",
            name,
            "--device",
            device,
            "--dtype",
            dtype,
            "--batch",
            *map(str, (first, 2 * first, 4 * first)),
        ]
        running.append(
            (
                name,
                dtype,
                activation_bytes(model, dtype),
                subprocess.Popen(
                    command,
                    cwd=config.ROOT,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                ),
            )
        )
    found = []
    for name, dtype, predicted, process in running:
        out, err = process.communicate()
        if process.returncode:
            raise RuntimeError(f"measuring {name} ({dtype}) failed:\n{err[-2000:]}")
        result = json.loads(out.strip().splitlines()[-1])
        measured = growth(result["batches"], result["peak_bytes"])
        found.append(
            {
                "network": name,
                "dtype": dtype,
                **result,
                "growth": measured,
                "predicted": predicted,
                "ratio": measured / predicted,
            }
        )
    return found


def check_memory(found, within=3.0):
    """Measured growth per picture against the prediction, with a verdict (notebook 08)."""
    return pd.DataFrame(
        [
            {
                "network": m["network"],
                "dtype": m["dtype"],
                "batches": ", ".join(map(str, m["batches"])),
                "peak MB": ", ".join(f"{p / 1e6:,.0f}" for p in m["peak_bytes"]),
                "predicted MB per picture": f"{m['predicted'] / 1e6:,.2f}",
                "measured MB per picture": f"{m['growth'] / 1e6:,.2f}",
                "measured / predicted": f"{m['ratio']:.2f}",
                "verdict": roofs.balance_verdict(m["ratio"], within),
            }
            for m in found
        ]
    )


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
                if m["growth"] > 0
                else "-"
            )
        rows.append(row)
    return pd.DataFrame(rows)
