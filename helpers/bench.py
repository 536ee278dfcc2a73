"""Benchmark a course network: images/s, slowdown against in-memory data, FLOP/s and share of
the measured peak (notebooks 07 and 08). `python -m tools.bench` records such runs into results/."""

import math

import keras
import numpy as np

from . import config, hardware, models, peak, results
from .timing import step_stats, time_fit

__all__ = ["MODELS", "build", "run", "synthetic_data"]

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


def build(name, augment=True):
    """A bench network compiled with Adam and its cross-entropy (notebooks 07 and 08)."""
    _check(name, MODELS, "model")
    builder, classes, _ = MODELS[name]
    model = builder(augment)
    loss = "binary_crossentropy" if classes == 1 else "sparse_categorical_crossentropy"
    model.compile(optimizer="adam", loss=loss)
    return model


def synthetic_data(model, batch_size, batches, seed=config.SEED):
    """`batches` batches of random uint8 pictures and labels: run's in-memory data (notebook 07)."""
    rng = np.random.default_rng(seed)
    shape = (batch_size * batches, *model.input_shape[1:])
    classes = model.output_shape[-1]
    labels = rng.integers(0, max(classes, 2), size=(shape[0], 1) if classes == 1 else shape[0])
    return rng.integers(0, 256, size=shape, dtype=np.uint8), labels.astype("float32")


def run(model="cats_dogs_original", device="cpu:0", batch_size=None, source=None, steps=None,
        warmup=None, dtype="float32", usage=None, command=None, label="custom", augment=True):
    """A record of `steps` timed training steps of `model` on `device`, on a repeating dataset
    or PyDataset `source` if given, and on synthetic data (notebooks 07 and 08)."""
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
           "timed_steps": steps, "warmup_steps": warmup}
    command = command or (f"bench.run({model!r}, {device!r}, {batch_size}, source="
                          f"{job['source']!r}, steps={steps}, warmup={warmup}, dtype={dtype!r})")
    previous_policy = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32" if dtype == "float32" else f"mixed_{dtype}")
    try:
        with keras.device(device):
            net, timed = build(model, augment), {}
            if source is not None:
                _mark(usage, f"{label} start")
                timed["real"] = time_fit(net, source, batch_size, steps, warmup)
            held = max(2, min(steps + warmup + 1, (256 << 20) // (  # at most 256 MB of pictures
                batch_size * math.prod(net.input_shape[1:]))))
            _mark(usage, "synthetic start")
            timed["synthetic"] = time_fit(net, synthetic_data(net, batch_size, held),
                                          batch_size, steps, warmup)
            _mark(usage, "end")
    finally:
        keras.config.set_dtype_policy(previous_policy)
    return _record(job, net, timed, usage, command)


def _mark(usage, label):
    if usage is not None:
        usage.mark(label)


def _usage(usage):
    """Mean utilisation (%) and power (W) of a monitor.Utilization, and its timeline."""
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
    forward = peak.flops_per_image(net)
    training = peak.TRAINING_FLOPS_FACTOR * forward
    top = peak.measured_peak(job["device"], job["dtype"], config.settings("bench").peak_sizes)
    return {"kind": "recorded", **job, "parameters": net.count_params(),
            "augment_in_model": any(layer.name == "augmentation" for layer in net.layers),
            "images_per_s": speed, "step_s": stats, "synthetic_images_per_s": synthetic,
            "input_wait_share": max(0.0, 1 - speed / synthetic),
            "forward_flops_per_image": forward, "training_flops_per_image": training,
            "achieved_flops_per_s": training * speed, "matmul_peak": top,
            "peak_share": training * speed / top["flops_per_s"],
            "backend": keras.backend.backend(), "threads": hardware.threads(),
            "hardware": hardware.describe(), "date": results.now(), "command": command,
            **watched}

