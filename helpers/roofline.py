"""The roofline model (notebook 08): the FLOPs and bytes a network asks per picture, its
intensity, the most pictures/s a device's roofs allow (an estimate, and an upper bound from
the bytes no cache can keep), timed runs read as points under the roofs, and the training
memory a network needs, predicted from its layer shapes. It counts and predicts; it times
nothing (the roofs come from `roofs`, the runs from `benchmark`)."""

import functools
import math

import keras
import pandas as pd

from . import models, published, roofs
from .models import MODELS, build

__all__ = [
    "BYTES_PER_PARAMETER",
    "DTYPES",
    "TRAINING_FLOPS_FACTOR",
    "activation_bytes",
    "activation_values",
    "arithmetic_intensity",
    "attainable",
    "blog_points",
    "blog_reading",
    "compare_intensities",
    "compulsory_bytes",
    "fixed_bytes",
    "flops_per_image",
    "forward_bytes",
    "largest_batch",
    "layer_roofline_seconds",
    "memory_table",
    "points",
    "predict",
    "predictions",
    "reading",
    "share",
    "summary",
    "table",
    "training_bytes",
    "training_intensity",
]


TRAINING_FLOPS_FACTOR = (
    3  # backward pass ~ 2x forward: gradients for inputs and for weights
)


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
    return reads + sum(
        _layer_bytes(layer, batch, value_bytes, passes) for layer in _leaves(model)
    )


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
    return (
        TRAINING_FLOPS_FACTOR
        * flops_per_image(model)
        / training_bytes(model, batch, dtype)
    )


def compare_intensities(forward, training):
    """A sentence comparing training intensities with forward ones (lists of equal length,
    one pair a network), computed from them (notebook 08)."""
    ratios = [t / f for f, t in zip(forward, training, strict=True)]
    low, high = min(ratios), max(ratios)
    word = (
        "higher"
        if low > 1
        else "lower"
        if high < 1
        else "higher for some networks, lower for others"
    )
    span = (
        f"{low:.2f}x"
        if round(low, 2) == round(high, 2)
        else f"{low:.2f}x to {high:.2f}x"
    )
    return (
        f"Training does {TRAINING_FLOPS_FACTOR}x the forward FLOPs and moves "
        f"{TRAINING_FLOPS_FACTOR / high:.1f}x to {TRAINING_FLOPS_FACTOR / low:.1f}x the "
        f"forward bytes: its intensity is {span} the forward figure, {word}."
    )


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
    state = STATE_BYTES_PER_PARAMETER * sum(
        math.prod(w.shape) for w in model.trainable_weights
    )
    pictures = batch * math.prod(model.inputs[0].shape[1:])
    return (
        max(0, state + pictures - cache_bytes) + max(0, state - cache_bytes)
    ) / batch


def layer_roofline_seconds(model, batch, flops_per_s, bytes_per_s, dtype="float32"):
    """Seconds per picture if every layer ran at its own roof, max(FLOPs / peak, bytes /
    bandwidth), summed: a layer cannot borrow another's arithmetic (notebook 08)."""
    value_bytes = _VALUE_BYTES[dtype]
    reads = value_bytes * math.prod(model.inputs[0].shape[1:]) / bytes_per_s
    return reads + sum(
        max(
            TRAINING_FLOPS_FACTOR * _layer_flops(layer) / flops_per_s,
            _layer_bytes(layer, batch, value_bytes) / bytes_per_s,
        )
        for layer in _leaves(model)
    )


@functools.cache
def _model(name, augment=True):
    return build(name, augment)


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
        raise ValueError(
            f"{device_roofs['name']} has no {dtype} roof; it has {', '.join(top)}."
        )
    intensity = training_intensity(model, batch, dtype)
    reach = attainable(intensity, top[dtype], device_roofs["bytes_per_s"])
    work = TRAINING_FLOPS_FACTOR * flops_per_image(model)
    layers = layer_roofline_seconds(
        model, batch, top[dtype], device_roofs["bytes_per_s"], dtype
    )
    if cache is None and device_roofs.get("kind") == "measured":
        cache = roofs.cache_bytes(device_roofs["name"])
    must = compulsory_bytes(model, batch, cache) if cache is not None else 0
    most = attainable(
        work / must if must else math.inf, top[dtype], device_roofs["bytes_per_s"]
    )
    return {
        "intensity": intensity,
        "flops_per_s": reach,
        "training_flops": work,
        "bound": "compute" if reach == top[dtype] else "memory",
        "pictures_per_s": reach / work,
        "per_layer_pictures_per_s": 1 / layers,
        "compulsory_bytes": must,
        "upper_bound": most / work,
        "upper_bound_roof": "compute" if most == top[dtype] else "memory",
    }


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
            rows.append(
                {
                    "network": name,
                    "device": device["name"],
                    "training FLOP/byte": f"{p['intensity']:.0f}",
                    "MFLOP to train": f"{p['training_flops'] / 1e6:,.1f}",
                    "binding roof": f"{p['bound']}, {p['flops_per_s'] / 1e9:,.0f} GFLOP/s",
                    "predicted pictures/s (estimate)": f"{p['pictures_per_s']:,.0f}",
                    "per-layer estimate": f"{p['per_layer_pictures_per_s']:,.0f}",
                    "upper bound": f"{p['upper_bound']:,.0f} ({p['upper_bound_roof']})",
                }
            )
    return pd.DataFrame(rows)


def _why_above(bound="compute", speed_now=None):
    """Why a run beat its roof: the roofs, where `speed_now` (speed_now's share) says the
    machine ran faster than when notebook 00 measured it, else the prediction (notebook 08)."""
    # speed_now's "ran ... busier"
    if speed_now is not None and speed_now > roofs.FASTER_NOW:
        return (
            "the machine runs faster today than when notebook 00 measured its roofs, so they "
            "can still be low: run notebook 00 again on a quiet machine"
        )
    # the cache-blind count's memory roof: an estimate, not a bound
    if bound == "memory":
        return (
            "the estimate's byte count ignores the caches, which kept part of the traffic "
            "off the memory bus (or a kernel beat the measured copy): its memory roof is an "
            "estimate, not a bound"
        )
    return (
        "the roofs are the fastest multiply this machine has shown, so either the "
        "prediction is wrong (its FLOP count is more than the step did: 3x the forward "
        "pass counts an input gradient the first layer never computes; or a kernel beat "
        "the measured multiply), or every multiply measured so far ran beside other work "
        "and the roofs are low"
    )


def reading(ratio, short=False, bound="compute", speed_now=None):
    """What a measured / predicted ratio says, in words; `bound`: the roof that binds the
    estimate; `speed_now`: speed_now's share, which says why a run beat it (notebook 08)."""
    limit = "arithmetic" if bound == "compute" else "memory bandwidth"
    if round(ratio, 2) > 1:  # judged as printed (100 % is at the roof, not above it)
        return (
            "above the roof"
            if short
            else f"above the roof: {_why_above(bound, speed_now)}"
        )
    if ratio >= 0.7:
        return (
            "near the roof"
            if short
            else f"near the roof: consistent with {limit} setting the pace"
        )
    if ratio >= 0.3:
        return (
            "below the roof"
            if short
            else f"at the roof's rate its counted FLOPs would take {share(ratio)} of each step; "
            "candidates for the rest, which this run does not tell apart: work the "
            "roofline leaves out (pooling, activations, the optimizer's update, fixed "
            "costs per step), layers too small to reach it, other programs sharing the "
            "cores (a profile, notebook 09, measures the first two)"
        )
    return (
        "far below the roof"
        if short
        else f"far below the roof: at its rate the counted FLOPs would take only {share(ratio)} "
        "of each step; candidates for the rest: fixed costs per step, small layers or "
        "waiting (for input, for other programs), which the roofline cannot tell apart"
    )


def points(records, device_roofs=(), kind="measured"):
    """One point per bench record: intensity and achieved FLOP/s, and where `device_roofs` has
    its device and format, the prediction and measured / predicted (notebook 08)."""
    from .results import machine_name

    by_device = {r["name"]: r for r in device_roofs}
    found = []
    for r in records:
        model = _model(r["model"], r["augment_in_model"])
        device = by_device.get(r["device"], {"flops_per_s": {}})
        p = (
            predict(model, device, r["dtype"], r["batch_size"])
            if r["dtype"] in device["flops_per_s"]
            else {}
        )
        where = r["device"] if kind == "measured" else machine_name(r)
        found.append(
            {
                "label": f"{r['model']} b{r['batch_size']}"
                + ("" if where == "cpu:0" else f" {where}"),
                "kind": kind,
                "network": r["model"],
                "where": where,
                "batch": r["batch_size"],
                "intensity": training_intensity(model, r["batch_size"], r["dtype"]),
                "flops_per_s": r["achieved_flops_per_s"],
                "pictures_per_s": r["images_per_s"],
                "predicted": p.get("pictures_per_s"),
                "bound": p.get("bound"),
                "ratio": r["images_per_s"] / p["pictures_per_s"] if p else None,
                "of_multiply_now": [
                    r["achieved_flops_per_s"] / f  # the highest share first
                    for f in sorted(r.get("multiply_now", []))
                ],
            }
        )
    return found


def table(found):
    """Points as a DataFrame: prediction, figure, their ratio and its reading, and where the
    run measured it, its FLOP/s against the multiply timed just before and after (08)."""
    probed = any(p.get("of_multiply_now") for p in found)
    return pd.DataFrame(
        [
            {
                "network": p["network"],
                "where": p["where"],
                "batch": p["batch"] or "-",
                "FLOP/byte": f"{p['intensity']:.0f}",
                "GFLOP/s": f"{p['flops_per_s'] / 1e9:,.1f}",
                "predicted pictures/s": "-"
                if p["predicted"] is None
                else f"{p['predicted']:,.0f}",
                f"{p['kind']} pictures/s": f"{p['pictures_per_s']:,.0f}",
                "share of the prediction": "-"
                if p["ratio"] is None
                else share(p["ratio"]),
                "reading": "-"
                if p["ratio"] is None
                else reading(p["ratio"], short=True),
                **(
                    {
                        "of the multiply then": "-".join(
                            dict.fromkeys(  # one figure where both agree
                                share(x) for x in p.get("of_multiply_now", [])[::-1]
                            )
                        )
                        or "-"
                    }
                    if probed
                    else {}
                ),
            }
            for p in found
        ]
    )


def summary(found, speed_now=None):
    """Runs above their roof and why (`speed_now`: speed_now's share), the run closest to
    its roof and the one furthest below, and whether more arithmetic per picture came closer
    (notebook 08)."""
    judged = [p for p in found if p["ratio"] is not None]
    # as printed, like `reading`
    above = [p for p in judged if round(p["ratio"], 2) > 1]
    bound = (
        "compute"
        if any(p.get("bound", "compute") == "compute" for p in above)
        else "memory"
    )
    line = (
        ""
        if not above
        else (
            "Above the roof: "
            + ", ".join(
                f"{p['label']} on {p['where']} ({share(p['ratio'])})" for p in above
            )
            + f"; {_why_above(bound, speed_now)}. "
        )
    )
    judged = [p for p in judged if p not in above]
    if len(judged) < 2:
        return line + "Fewer than two runs under their roof to compare."
    best, worst = (
        max(judged, key=lambda p: p["ratio"]),
        min(judged, key=lambda p: p["ratio"]),
    )
    line += (
        f"Closest to its roof: {best['label']} on {best['where']} ({share(best['ratio'])} "
        f"of the prediction); furthest below: {worst['label']} on {worst['where']} "
        f"({share(worst['ratio'])})."
    )
    per_picture = (best["flops_per_s"] / best["pictures_per_s"]) / (
        worst["flops_per_s"] / worst["pictures_per_s"]
    )
    # per step
    more = per_picture * (best.get("batch") or 1) / (worst.get("batch") or 1)
    line += (
        " One run each, not timed in alternation: the order ranks nothing by itself."
    )
    # single runs this close can swap on a busy machine
    if best["ratio"] < 1.2 * worst["ratio"]:
        return line + " Their shares lie within 20 % of each other: no run stands out."
    if abs(more - 1) < 0.01:
        return line + (
            " Both do the same arithmetic per step: their device, or the noise "
            "between single runs."
        )
    if more > 1:
        return line + (
            f" The closer one does {more:.1f}x the arithmetic per step "
            f"({per_picture:.1f}x per picture); how much of the gap fixed costs "
            "explain, the fixed-cost floor and the profile measure."
        )
    return line + (
        " The closer one does less arithmetic per step, which fixed costs alone "
        "do not explain: another cost, or the noise between single runs."
    )


def blog_points():
    """The blog's published V100 speeds (ladder steps 2, 2b, 3; CIFAR-10 at batch 512) as
    points with the V100 datasheet's float32 prediction, the blog's format (notebook 08)."""
    v100 = roofs.published_roofs(("V100",))[0]
    speeds = {
        **published.LADDER_V100_SPEED,
        "cifar10": published.CIFAR10_EXAMPLES_PER_S["Tesla V100"],
    }
    found = []
    for step, speed in speeds.items():
        cifar = step == "cifar10"
        # the blog's batches
        p = predict(
            models.cifar10_net() if cifar else models.cats_dogs_net(step),
            v100,
            batch=512 if cifar else 32,
        )
        found.append(
            {
                "label": "blog CIFAR-10 net" if cifar else f"blog step {step}",
                "step": step,
                "kind": "published",
                "network": "cifar10_net()" if cifar else f"cats_dogs_net('{step}')",
                "where": "V100 (the blog)",
                "batch": 512 if cifar else None,
                "intensity": p["intensity"],
                "flops_per_s": speed * p["training_flops"],
                "pictures_per_s": speed,
                "predicted": p["pictures_per_s"],
                "bound": p["bound"],
                "ratio": speed / p["pictures_per_s"],
            }
        )
    return found


def blog_reading(found):
    """Which of the blog's explanations, its input pipeline and depth, its V100 points
    support, in sentences computed from them (notebook 08)."""
    step = {p["step"]: p for p in found}
    two, plain, three = step["2"], step["2b"], step["3"]
    cats = [p["ratio"] for p in (two, plain, three)]
    lines = [
        f"The blog's cat/dog networks reached {share(min(cats))} to {share(max(cats))} of "
        f"the V100 roofline's pictures/s, its CIFAR-10 net {share(step['cifar10']['ratio'])}"
        + (
            ": far below the roof, so at the roof's rate their counted arithmetic would "
            "fill only that share of each step."
            if max(cats) < 0.3
            else "."
        )
    ]
    faster = plain["pictures_per_s"] / two["pictures_per_s"]
    if faster > 1.1:
        lines.append(
            f"Step 2b asks the GPU for step 2's arithmetic without the augmentation, "
            f"yet ran {faster:.2f}x as fast: consistent with the blog's explanation, "
            "an input pipeline on the CPU (Keras 2's generator augmented there) that "
            "held step 2 back."
        )
    else:
        lines.append(
            f"Step 2b, step 2 without augmentation, ran at {faster:.2f}x step 2's "
            "speed: no sign that augmenting the pictures held it back."
        )
    more = (three["flops_per_s"] / three["pictures_per_s"]) / (
        two["flops_per_s"] / two["pictures_per_s"]
    )
    speed, gain = (three[key] / two[key] for key in ("pictures_per_s", "ratio"))
    if speed > 2 / more:
        lines.append(
            f"Step 3 asks {more:.0f}x step 2's arithmetic per picture; if arithmetic "
            f"set both steps' pace it would run at about {1 / more:.2f}x step 2's speed, "
            f"yet it ran at {speed:.2f}x, its share of the roof {gain:.0f}x step 2's: "
            "consistent with the blog's reading that more arithmetic per picture "
            "keeps the GPU busier."
        )
    else:
        lines.append(
            f"Step 3 asks {more:.0f}x step 2's arithmetic per picture and ran at "
            f"{speed:.2f}x its speed: about what the GPU's arithmetic alone predicts."
        )
    return " ".join(lines)


BYTES_PER_PARAMETER = (
    16  # weight, gradient, Adam's first and second moment: float32 each
)
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
    return max(
        0, int((memory_bytes - fixed_bytes(model)) // activation_bytes(model, dtype))
    )


def memory_table(names=None, gpus=("T4", "H200"), dtype="float32"):
    """Predicted training memory of bench networks (default: all) and the largest batch on each
    of `gpus` (datasheet memory) (notebook 08)."""
    rows = []
    for name in names or MODELS:
        model = build(name)
        row = {
            "network": name,
            "parameters": f"{model.count_params():,}",
            "weights + gradients + Adam, MB": f"{fixed_bytes(model) / 1e6:,.1f}",
            f"activations per picture, MB ({dtype})": (
                f"{activation_bytes(model, dtype) / 1e6:,.2f}"
            ),
        }
        for gpu in gpus:
            gb = published.GPU_DATASHEETS[gpu]["memory_gb"]
            row[f"largest batch, {gpu} {gb} GB"] = (
                f"{largest_batch(model, gb * 1e9, dtype):,}"
            )
        rows.append(row)
    return pd.DataFrame(rows)
