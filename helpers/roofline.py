"""The roofline: how fast a network can train at most, predicted from FLOPs, bytes and limits.

A device has a memory roof (bytes/s times FLOP per byte) and one compute roof per number format
(FLOP/s). An operation with an arithmetic intensity of I FLOP per byte reaches at most
min(peak, I x bandwidth), so a network trains at most that many FLOP/s over its training FLOPs
per picture (2 FLOPs per multiply-add, training ~3x the forward pass: helpers.peak). Roofs are
measured here (helpers.peak) or published (NVIDIA's datasheets in helpers.published); measured
runs (helpers.bench) and the blog's V100 figures become points under them. Notebooks 00 and 08;
plots.roofline draws them.
"""

import functools

from . import bench, models, peak, published

__all__ = ["BYTES", "attainable", "blog_points", "blog_reading", "expected", "from_survey",
           "measured", "points", "predict", "predictions", "published_roofs", "reading", "roofs",
           "share", "summary", "table"]

# bytes per number of each format's activations ("16-bit": float16 or bfloat16)
BYTES = {"float32": 4, "tf32": 4, "bfloat16": 2, "float16": 2, "16-bit": 2}


@functools.cache
def _model(name, augment=True):
    """A bench network, built once per process (only its shapes are read here)."""
    return bench.MODELS[name][0](augment) if name in bench.MODELS else bench.build(name)


def _intensity(name, augment):
    return peak.arithmetic_intensity(_model(name, augment))


def roofs(name, bytes_per_s, flops_per_s, source, kind="measured"):
    """One device's roofs: its memory bytes/s, its FLOP/s per number format, their source
    and their kind (measured here, or published)."""
    if bytes_per_s <= 0 or not flops_per_s or min(flops_per_s.values()) <= 0:
        raise ValueError(f"{name}: a roofline needs a positive bandwidth and at least one "
                         f"positive peak, got {bytes_per_s} B/s and {flops_per_s}.")
    return {"name": name, "source": source, "kind": kind, "bytes_per_s": bytes_per_s,
            "flops_per_s": dict(flops_per_s)}


def measured(device="cpu:0", sizes=None, megabytes=256):
    """This machine's roofs on `device`, measured now: the best matrix multiply per supported
    number format (peak.measured_peak, the figure bench records are judged against with the
    same `sizes`) and the best copy bandwidth (peak.measured_bandwidth)."""
    flops = {dtype: peak.measured_peak(device, dtype, sizes)["flops_per_s"]
             for dtype in peak.supported_dtypes(device)}
    return roofs(device, peak.measured_bandwidth(device, megabytes), flops, "measured here")


def from_survey(survey, bandwidth_gbs):
    """Roofs per device from notebook 00's measurements: `survey` ({'cpu:0 float32': (sizes,
    GFLOP/s)}, its best figure per line is the roof) and `bandwidth_gbs` ({'cpu:0': GB/s})."""
    found = {}
    for label, (_, gflops) in survey.items():
        device, dtype = label.split()
        found.setdefault(device, {})[dtype] = max(gflops) * 1e9
    return [roofs(device, bandwidth_gbs[device] * 1e9, flops, "measured here")
            for device, flops in found.items()]


def published_roofs(gpus=("V100", "T4", "A100", "H200")):
    """The roofs of `gpus` from NVIDIA's datasheets (published, not measured): float32, TF32
    where listed, and the Tensor Cores' 16-bit formats as one roof, "16-bit"."""
    found = []
    for name in gpus:
        sheet = published.GPU_DATASHEETS[name]
        flops = {("16-bit" if dtype in ("float16", "bfloat16") else dtype): tflops * 1e12
                 for dtype, tflops in sheet["tflops"].items()}
        found.append(roofs(name, sheet["bandwidth_gbs"] * 1e9, flops, sheet["source"],
                           "published"))
    return found


def attainable(intensity, flops_per_s, bytes_per_s):
    """The roofline: the FLOP/s an operation of `intensity` FLOP per byte can reach."""
    return min(flops_per_s, intensity * bytes_per_s)


def predict(model, device_roofs, dtype="float32"):
    """The most training pictures/s the roofline allows `model` on `device_roofs` in `dtype`:
    the binding roof at its arithmetic intensity over its training FLOPs per picture. A dict:
    intensity (FLOP/byte, with `dtype`'s bytes per number), the roof's FLOP/s, which roof binds
    (compute or memory), the training FLOPs per picture and the pictures/s."""
    shown = device_roofs["flops_per_s"]
    if dtype not in shown:
        raise ValueError(f"{device_roofs['name']} has no {dtype} roof; it has "
                         f"{', '.join(shown)}.")
    intensity = peak.arithmetic_intensity(model) * 4 / BYTES[dtype]
    reach = attainable(intensity, shown[dtype], device_roofs["bytes_per_s"])
    work = peak.TRAINING_FLOPS_FACTOR * peak.flops_per_image(model)
    return {"intensity": intensity, "flops_per_s": reach, "training_flops": work,
            "bound": "compute" if reach == shown[dtype] else "memory",
            "pictures_per_s": reach / work}


def share(ratio):
    """A ratio as a percentage with enough digits to tell small ones apart: 0.23 %, 11 %."""
    return f"{ratio:.1%}" if ratio < 0.1 else f"{ratio:.0%}"


def predictions(names, device_roofs):
    """The roofline's prediction for bench networks `names` on each of `device_roofs` in
    float32, as a DataFrame: intensity, training MFLOP per picture, the binding roof and the
    most pictures/s it allows."""
    import pandas as pd

    rows = []
    for name in names:
        model = _model(name)
        for device in device_roofs:
            p = predict(model, device)
            rows.append({"network": name, "device": device["name"],
                         "FLOP/byte": f"{p['intensity']:.0f}",
                         "MFLOP to train": f"{p['training_flops'] / 1e6:,.1f}",
                         "binding roof": f"{p['bound']}, {p['flops_per_s'] / 1e9:,.0f} GFLOP/s",
                         "predicted pictures/s (at most)": f"{p['pictures_per_s']:,.0f}"})
    return pd.DataFrame(rows)


def expected(names, device_roofs):
    """The predicted pictures/s of bench networks `names` in float32, one line per device:
    what to print before timing them."""
    models_ = {name: _model(name) for name in names}
    return "\n".join(f"predicted on {device['name']}, at most: " + " · ".join(
        f"{name} {predict(model, device)['pictures_per_s']:,.0f}"
        for name, model in models_.items()) + " pictures/s" for device in device_roofs)


def reading(ratio, short=False, bound="compute"):
    """What a measured / predicted ratio says, in words (the course's reading of it); `bound`:
    which roof bound the prediction, compute or memory."""
    limit = "arithmetic" if bound == "compute" else "memory bandwidth"
    if ratio > 1.1:
        return ("above the roof" if short else "above the roof: the roof was measured while other"
                " programs slowed the machine more than during this run; measure it again")
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
    """One point per bench record (helpers.bench): its arithmetic intensity and achieved
    training FLOP/s; where `device_roofs` (a list from `measured`) has its device, also the
    roofline's pictures/s for it and measured / predicted."""
    from .results import machine_name

    by_device = {r["name"]: r for r in device_roofs}
    found = []
    for r in records:
        intensity = _intensity(r["model"], r["augment_in_model"]) * 4 / BYTES[r["dtype"]]
        where = r["device"] if kind == "measured" else machine_name(r)
        label = f"{r['model']} b{r['batch_size']}" + ("" if where == "cpu:0" else f" {where}")
        point = {"label": label, "kind": kind,
                 "network": r["model"], "where": where, "batch": r["batch_size"],
                 "intensity": intensity, "flops_per_s": r["achieved_flops_per_s"],
                 "pictures_per_s": r["images_per_s"], "predicted": None, "ratio": None,
                 "bound": None}
        if r["device"] in by_device and r["dtype"] in by_device[r["device"]]["flops_per_s"]:
            device = by_device[r["device"]]
            reach = attainable(intensity, device["flops_per_s"][r["dtype"]],
                               device["bytes_per_s"])
            point["predicted"] = reach / r["training_flops_per_image"]
            point["bound"] = ("compute" if reach == device["flops_per_s"][r["dtype"]]
                              else "memory")
            point["ratio"] = r["images_per_s"] / point["predicted"]
        found.append(point)
    return found


def table(found):
    """Points (from `points` or `blog_points`) as a DataFrame: prediction, figure, ratio, and
    the reading of the ratio."""
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


def summary(found):
    """One sentence or two: runs above their roof (the roof was measured on a busier machine),
    then which run came closest to its roof, which fell furthest below, and whether more
    arithmetic per picture came closer."""
    judged = [p for p in found if p["ratio"] is not None]
    above = [p for p in judged if p["ratio"] > 1.1]
    line = "" if not above else (
        "Above the roof: " + ", ".join(f"{p['label']} on {p['where']} ({share(p['ratio'])})"
                                       for p in above)
        + "; the roof was measured while other programs slowed the machine more, so measure "
          "again on a quiet machine. ")
    judged = [p for p in judged if p["ratio"] <= 1.1]
    if len(judged) < 2:
        return line + "Fewer than two runs under their roof to compare."
    best, worst = max(judged, key=lambda p: p["ratio"]), min(judged, key=lambda p: p["ratio"])
    line += (f"Closest to its roof: {best['label']} on {best['where']} ({share(best['ratio'])} "
             f"of the prediction); furthest below: {worst['label']} on {worst['where']} "
             f"({share(worst['ratio'])}).")
    work = {p["label"]: p["flops_per_s"] / p["pictures_per_s"] for p in judged}
    if best["ratio"] < 1.2 * worst["ratio"]:
        return line + " Within 20 % of each other: no run stands out."
    if abs(work[best["label"]] / work[worst["label"]] - 1) < 0.01:
        return line + (" Both do the same arithmetic per picture: their batch or device made "
                       "the difference, or the noise between runs.")
    if work[best["label"]] > work[worst["label"]]:
        return line + (f" The closer one does {work[best['label']] / work[worst['label']]:.1f}x "
                       "the arithmetic per picture: fixed costs weigh less in a longer step.")
    return line + (" The closer one does less arithmetic per picture: here something other "
                   "than the step's length decided.")


# --- the blog's V100 figures as points under the V100's roof ------------------------------

def _blog_networks():
    speed, cifar = published.LADDER_V100_SPEED, published.CIFAR10_EXAMPLES_PER_S["Tesla V100"]
    return [(step, f"step {step}", f"cats_dogs_net('{step}')", models.cats_dogs_net(step),
             speed[step], None) for step in ("2", "2b", "3")] + [
        ("cifar10", "CIFAR-10 net", "cifar10_net()", models.cifar10_net(), cifar, 512)]


def blog_points(gpu="V100", dtype="float32"):
    """The blog's published V100 speeds (ladder steps 2, 2b, 3 and the CIFAR-10 net) as points:
    pictures/s times the training FLOPs the course counts for those networks, with the
    roofline's prediction for the `gpu` datasheet's `dtype` roof (the blog names no other
    format than float32, Keras' default) and the share of it each reached."""
    sheet = published_roofs((gpu,))[0]
    found = []
    for step, label, network, model, speed, batch in _blog_networks():
        expected = predict(model, sheet, dtype)
        found.append({"label": f"blog {label}", "step": step, "kind": "published",
                      "network": network,
                      "where": f"{gpu} (the blog)", "batch": batch,
                      "intensity": expected["intensity"],
                      "flops_per_s": speed * expected["training_flops"],
                      "pictures_per_s": speed, "predicted": expected["pictures_per_s"],
                      "bound": expected["bound"],
                      "ratio": speed / expected["pictures_per_s"]})
    return found


def blog_reading(found):
    """Which of the blog's explanations its V100 points support, in sentences computed from
    them: the input pipeline (step 2b is step 2's arithmetic without augmentation) and depth
    (step 3 asks more arithmetic per picture)."""
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
