"""The roofline (notebooks 00 and 08): a device's roofs, measured here or published, the most
pictures/s they allow a network, and timed runs as points under them (plots.roofline draws them)."""

import functools

from . import bench, models, peak, published

__all__ = ["BYTES", "attainable", "blog_points", "blog_reading", "from_survey", "measured",
           "points", "predict", "predictions", "published_roofs", "reading", "roofs", "share",
           "summary", "table"]

# bytes per number of each format's activations ("16-bit": float16 or bfloat16)
BYTES = {"float32": 4, "tf32": 4, "bfloat16": 2, "float16": 2, "16-bit": 2}


@functools.cache
def _model(name, augment=True):
    return bench.build(name, augment)


def roofs(name, bytes_per_s, flops_per_s, source, kind="measured"):
    """One device's roofs: bytes/s, FLOP/s per number format, source, kind (notebook 00)."""
    if bytes_per_s <= 0 or not flops_per_s or min(flops_per_s.values()) <= 0:
        raise ValueError(f"{name}: a roofline needs a positive bandwidth and at least one "
                         f"positive peak, got {bytes_per_s} B/s and {flops_per_s}.")
    return {"name": name, "source": source, "kind": kind, "bytes_per_s": bytes_per_s,
            "flops_per_s": dict(flops_per_s)}


def measured(device="cpu:0", sizes=None, megabytes=256):
    """This machine's roofs on `device`, measured now: peak.measured_peak per supported format
    and peak.measured_bandwidth (notebook 08)."""
    flops = {dtype: peak.measured_peak(device, dtype, sizes)["flops_per_s"]
             for dtype in peak.supported_dtypes(device)}
    return roofs(device, peak.measured_bandwidth(device, megabytes), flops, "measured here")


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


def predict(model, device_roofs, dtype="float32", batch=32):
    """The most training pictures/s the roofline allows `model` on `device_roofs` in `dtype` at
    `batch` pictures a step, from its training intensity (peak.training_bytes: reads, backward,
    weights, Adam), with the binding roof, the training FLOPs per picture and the per-layer
    estimate (each layer at its own roof; caches ignored, so not a bound) (notebook 08)."""
    top = device_roofs["flops_per_s"]
    if dtype not in top:
        raise ValueError(f"{device_roofs['name']} has no {dtype} roof; it has "
                         f"{', '.join(top)}.")
    intensity = peak.training_intensity(model, batch, dtype)
    reach = attainable(intensity, top[dtype], device_roofs["bytes_per_s"])
    work = peak.TRAINING_FLOPS_FACTOR * peak.flops_per_image(model)
    layers = peak.layer_roofline_seconds(model, batch, top[dtype], device_roofs["bytes_per_s"],
                                         dtype)
    return {"intensity": intensity, "flops_per_s": reach, "training_flops": work,
            "bound": "compute" if reach == top[dtype] else "memory",
            "pictures_per_s": reach / work, "per_layer_pictures_per_s": 1 / layers}


def share(ratio):
    """A ratio as a percentage that tells small ones apart: 0.23 %, 11 % (notebook 08)."""
    return f"{ratio:.1%}" if ratio < 0.1 else f"{ratio:.0%}"


def predictions(names, device_roofs):
    """The float32 prediction for bench networks `names` on each device, as a DataFrame: what
    to show before timing them (notebook 08)."""
    import pandas as pd

    rows = []
    for name in names:
        for device in device_roofs:
            p = predict(_model(name), device, batch=bench.MODELS[name][2])
            rows.append({"network": name, "device": device["name"],
                         "training FLOP/byte": f"{p['intensity']:.0f}",
                         "MFLOP to train": f"{p['training_flops'] / 1e6:,.1f}",
                         "binding roof": f"{p['bound']}, {p['flops_per_s'] / 1e9:,.0f} GFLOP/s",
                         "predicted pictures/s (at most)": f"{p['pictures_per_s']:,.0f}",
                         "per-layer estimate": f"{p['per_layer_pictures_per_s']:,.0f}"})
    return pd.DataFrame(rows)


def _why_above(bound="compute", speed_now=None):
    """Why a run beat its roof: the roofs, where `speed_now` (peak.speed_now's share) says the
    machine ran faster than when notebook 00 measured it, else the prediction (notebook 08)."""
    if speed_now is not None and speed_now > 1.15:  # peak.speed_now's line: "00 ran ... busier"
        return ("the machine runs faster today than when notebook 00 measured its roofs, so they "
                "can still be low: run notebook 00 again on a quiet machine")
    work, roof = ("FLOP", "multiply") if bound == "compute" else ("byte", "copy")
    return (f"the roofs are the fastest {roof} this machine has shown, so the prediction is "
            f"wrong: its {work} count is more than the step did"
            + (" (3x the forward pass counts an input gradient the first layer never computes)"
               if bound == "compute" else " (the count ignores the caches, which keep part of "
               "the traffic off the memory bus)") + f", or a kernel beat the measured {roof}")


def reading(ratio, short=False, bound="compute", speed_now=None):
    """What a measured / predicted ratio says, in words; `bound`: the roof that bound the
    prediction; `speed_now`: peak.speed_now's share, which says why a run beat it (notebook 08)."""
    limit = "arithmetic" if bound == "compute" else "memory bandwidth"
    if ratio > 1:  # the prediction is an upper bound, and the roofs the best seen
        return "above the roof" if short else f"above the roof: {_why_above(bound, speed_now)}"
    if ratio >= 0.7:
        return "near the roof" if short else f"near the roof: {limit} set the pace"
    if ratio >= 0.3:
        return ("below the roof" if short else
                f"at the roof's rate its counted FLOPs would take {share(ratio)} of each step; "
                "the rest went on work the roofline leaves out (pooling, activations, the "
                "optimizer's update, fixed costs per step) or on layers too small to reach it")
    return ("far below the roof" if short else
            f"far below the roof: at its rate the counted FLOPs would take only {share(ratio)} "
            "of each step; fixed costs per step, small layers or waiting (for input, for other "
            "programs) set the pace")


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
            "intensity": peak.training_intensity(model, r["batch_size"], r["dtype"]),
            "flops_per_s": r["achieved_flops_per_s"], "pictures_per_s": r["images_per_s"],
            "predicted": p.get("pictures_per_s"), "bound": p.get("bound"),
            "ratio": r["images_per_s"] / p["pictures_per_s"] if p else None})
    return found


def table(found):
    """Points as a DataFrame: prediction, figure, their ratio and its reading (notebook 08)."""
    import pandas as pd

    return pd.DataFrame([{
        "network": p["network"], "where": p["where"], "batch": p["batch"] or "-",
        "FLOP/byte": f"{p['intensity']:.0f}",
        "GFLOP/s": f"{p['flops_per_s'] / 1e9:,.1f}",
        "predicted pictures/s": "-" if p["predicted"] is None else f"{p['predicted']:,.0f}",
        f"{p['kind']} pictures/s": f"{p['pictures_per_s']:,.0f}",
        "share of the prediction": "-" if p["ratio"] is None else share(p["ratio"]),
        "reading": "-" if p["ratio"] is None else reading(p["ratio"], short=True)}
        for p in found])


def summary(found, speed_now=None):
    """Runs above their roof and why (`speed_now`: peak.speed_now's share), the run closest to
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
    line += " One run each, not timed in alternation."
    if best["ratio"] < 1.2 * worst["ratio"]:  # single runs this close can swap on a busy machine
        return line + " Their shares lie within 20 % of each other: no run stands out."
    if abs(more - 1) < 0.01:
        return line + (" Both do the same arithmetic per step: their device made the "
                       "difference, or the noise between runs.")
    if more > 1:
        return line + (f" The closer one does {more:.1f}x the arithmetic per step "
                       f"({per_picture:.1f}x per picture): fixed costs weigh less in a longer "
                       "step.")
    return line + (" The closer one does less arithmetic per step: here something other "
                   "than the step's length decided.")


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
             + (": far below the roof, so something other than the GPU's arithmetic set their "
                "pace." if max(cats) < 0.3 else ".")]
    faster = plain["pictures_per_s"] / two["pictures_per_s"]
    if faster > 1.1:
        lines.append(f"Step 2b asks the GPU for step 2's arithmetic without the augmentation, "
                     f"yet ran {faster:.2f}x as fast: work outside the GPU held step 2 back, "
                     "as the blog's input-pipeline explanation says.")
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
                     "more arithmetic per picture kept the GPU busier, as the blog saw its "
                     "deeper networks do.")
    else:
        lines.append(f"Step 3 asks {more:.0f}x step 2's arithmetic per picture and ran at "
                     f"{speed:.2f}x its speed: about what the GPU's arithmetic alone predicts.")
    return " ".join(lines)
