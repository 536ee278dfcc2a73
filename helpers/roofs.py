"""A machine's roofs (notebooks 00 and 07-11): the best matrix-multiply FLOP/s in each number
format and the copy bandwidth, measured now on any Keras backend and device, stored by notebook
00 in build/limits.json and read back (never lowered by a busier rerun), or published in GPU
datasheets; and how fast the machine runs now against what 00 stored."""

import json
import re
import statistics

import keras
import pandas as pd
from keras import ops

from . import config, hardware, published
from .published import GPU_DATASHEETS
from .timing import SAME_WITHIN, first_and_median, wait_for

__all__ = [
    "FASTER_NOW",
    "balance_verdict",
    "cache_bytes",
    "copy_bandwidth",
    "datasheet_balance_points",
    "from_survey",
    "limits",
    "matmul_flops",
    "measured",
    "measured_bandwidth",
    "measured_peak",
    "probe",
    "published_peak",
    "published_roofs",
    "roof_in_rounds",
    "roofs",
    "save_limits",
    "speed_now",
    "supported_dtypes",
]


# Written from notebooks/00b_inside_the_measurements.ipynb by `make pages`: change it there.
def matmul_flops(n, dtype="float32", device="cpu:0", repeats=5):  # @save
    with keras.device(device):  # the matrices are made where they are multiplied
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
        point = {
            dtype: tflops * 1e12 / (sheet["bandwidth_gbs"] * 1e9)
            for dtype, tflops in sheet["tflops"].items()
        }
        half = max(point.get("float16", 0), point.get("bfloat16", 0))
        row = {
            "GPU (datasheet)": name,
            "memory GB/s": sheet["bandwidth_gbs"],
            "float32": round(point["float32"]),
            "TF32": round(point["tf32"]) if "tf32" in point else "none",
            "16-bit": round(half),
        }
        for key, value in (
            (("float32", point["float32"]), ("16-bit", half)) if reference else ()
        ):
            ratio = value / reference
            row[f"{key} / this CPU's float32"] = (
                f"{ratio:.1f}x: {balance_verdict(ratio)}"
            )
        rows.append(row)
    return pd.DataFrame(rows)


def supported_dtypes(device):
    """float32, and bfloat16/float16 where the hardware has them (notebook 00)."""
    backend = keras.backend.backend()
    support = hardware.mixed_precision_support(
        hardware.cpu_info(),
        hardware.tensorflow_devices() if backend == "tensorflow" else [],
    )
    if device.startswith("cpu"):
        return ["float32"] + (["bfloat16"] if support["cpu_bfloat16"] else [])
    jax_gpu = backend == "jax"  # JAX only runs on GPUs recent enough for both
    return (
        ["float32"]
        + (["float16"] if support["gpu_float16_tensor_cores"] or jax_gpu else [])
        + (["bfloat16"] if support["gpu_bfloat16"] or jax_gpu else [])
    )


# speed_now outside this band: slower or faster than 00 measured it (the course's 10 % "same")
SLOWER_NOW, FASTER_NOW = 1 / (1 + SAME_WITHIN), 1 + SAME_WITHIN


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
                for name in ("size", "level", "type", "shared_cpu_list")
            )
        except OSError:
            continue
        if kind != "Instruction" and size:
            found[(level, kind, shared)] = int(size.rstrip("KMG")) * units.get(
                size[-1], 1
            )
    return sum(found.values()) or None


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
        return {
            "flops_per_s": best,
            "n": _PEAKS[key]["n"],
            "dtype": dtype,
            "stored": True,
        }
    return dict(_PEAKS[key])


_BANDWIDTHS = {}


def measured_bandwidth(device="cpu:0", megabytes=256, tries=3, stored=None):
    """The best `copy_bandwidth` seen on `device` in this process or in `stored` limits, like
    `measured_peak`: the roofline's memory roof (notebook 08)."""
    key = (device, megabytes)
    for _ in range(1 if key in _BANDWIDTHS else tries):
        _BANDWIDTHS[key] = max(
            _BANDWIDTHS.get(key, 0.0), copy_bandwidth(megabytes, device, repeats=3)
        )
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
    found = {
        "matmul_gflops": {
            f"{d} {t}": (
                list(s.sizes),
                [matmul_flops(n, t, d, s.repeats) / 1e9 for n in s.sizes],
            )
            for d in hardware.devices()
            for t in supported_dtypes(d)
        },
        "bandwidth_gbs": {
            d: copy_bandwidth(s.copy_mb, d, s.repeats) / 1e9 for d in hardware.devices()
        },
        "hardware": hardware.describe(),
    }
    save_limits(found, path)
    return {**found, "measured_now": True}  # speed_now then compares with seconds ago


def save_limits(found, path=None):
    """Write limits to build/limits.json, keeping for each multiply line and bandwidth the best
    of these and of earlier ones measured on the same CPU: other programs only slow a run down,
    so a busy rerun must not lower the roofs. Returns the labels kept from before (notebook 00)."""
    path = path or config.BUILD_DIR / "limits.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    kept, lines = [], found["matmul_gflops"]
    if (
        old.get("hardware", {}).get("cpu", {}).get("model")
        == found["hardware"]["cpu"]["model"]
    ):
        for label, line in old["matmul_gflops"].items():
            if label in lines and max(line[1]) > max(lines[label][1]):
                lines[label], kept = line, [*kept, label]
        for device, gbs in old["bandwidth_gbs"].items():
            if gbs > found["bandwidth_gbs"].get(device, gbs):
                found["bandwidth_gbs"][device], kept = (
                    gbs,
                    [*kept, f"{device} bandwidth"],
                )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(found, indent=1))
    return kept


def _fastest_size(stored, device, dtype):
    """The matrix size at which `stored` limits' multiply on `device` in `dtype` ran fastest,
    or None where they hold no such line."""
    line = (stored or {}).get("matmul_gflops", {}).get(f"{device} {dtype}")
    return line[0][line[1].index(max(line[1]))] if line else None


def speed_now(stored, device="cpu:0", dtype="float32", tries=3):
    """This machine's multiply speed now as a share of `stored` limits' best, with one line
    that says whether other work is sharing the machine; it changes nothing else: pass the
    same limits as `stored=` to `measured` for roofs that never fall below them (07-11)."""
    best = max(stored["matmul_gflops"][f"{device} {dtype}"][1]) * 1e9
    now = max(
        matmul_flops(_fastest_size(stored, device, dtype), dtype, device, 1)
        for _ in range(tries)
    )
    share, fresh = now / best, stored.get("measured_now", False)
    head = f"This machine is running at {100 * share:.0f} % of the speed " + (
        "measured a moment ago (notebook 00 has not run here): "
        if fresh
        else "notebook 00 measured: "
    )
    shown = round(share, 2)  # judged as printed
    if shown < SLOWER_NOW:
        line = head + (
            "consistent with other work sharing it: speeds below can be lower than "
            "this machine can do."
        )
    elif shown > FASTER_NOW:
        line = head + (
            "consistent with that run sharing the machine more; the roofs below use "
            "today's faster figure."
        )
    elif fresh:
        line = head + (
            "about as fast (within 10 %), which says nothing about other work: "
            "both ran now. Run notebook 00 on a quiet machine for roofs to compare "
            "with."
        )
    else:
        line = head + (
            "about as fast as then (within 10 %): as free as then, or as busy (if "
            "00 ran beside other work, both are low)."
        )
    return share, line


def probe(stored=None, device="cpu:0", dtype="float32"):
    """A roof probe for an alternation's work: a call that multiplies two matrices in `dtype` on
    `device`, of the size at which `stored` limits (notebook 00's) ran fastest (else 1,024 on a
    CPU, 2,048 on a GPU), and the GFLOP of one call, its `units` (notebooks 07 and 09)."""
    n = _fastest_size(stored, device, dtype) or (
        1024 if device.startswith("cpu") else 2048
    )
    with keras.device(device):
        a = keras.random.normal((n, n), dtype=dtype, seed=1)
        b = keras.random.normal((n, n), dtype=dtype, seed=2)

    def multiply():
        with keras.device(device):
            return wait_for(ops.matmul(a, b))

    return multiply, 2 * n**3 / 1e9


def roof_in_rounds(gflops, stored=None, device="cpu:0", dtype="float32"):
    """One line on a probe's GFLOP/s in an alternation's rounds: the median, the slowest and
    fastest round, and the median as a share of `stored` limits' best, where they hold one."""
    best, mid = _stored_best(stored, device, dtype) / 1e9, statistics.median(gflops)
    said = (
        f"the {dtype} multiply on {device}, timed in the same rounds: {mid:,.0f} GFLOP/s "
        f"(median; rounds {min(gflops):,.0f}-{max(gflops):,.0f})"
    )
    if best:
        said += f", {100 * mid / best:.0f} % of the best " + (
            "measured at this notebook's start"
            if stored.get("measured_now")
            else "notebook 00 stored"
        )
    return said


def roofs(name, bytes_per_s, flops_per_s, source, kind="measured"):
    """One device's roofs: bytes/s, FLOP/s per number format, source, kind (notebook 00)."""
    if bytes_per_s <= 0 or not flops_per_s or min(flops_per_s.values()) <= 0:
        raise ValueError(
            f"{name}: a roofline needs a positive bandwidth and at least one "
            f"positive peak, got {bytes_per_s} B/s and {flops_per_s}."
        )
    return {
        "name": name,
        "source": source,
        "kind": kind,
        "bytes_per_s": bytes_per_s,
        "flops_per_s": dict(flops_per_s),
    }


def measured(device="cpu:0", sizes=None, megabytes=256, stored=None):
    """This machine's roofs on `device`, measured now, or `stored` limits' where those are
    faster: measured_peak per supported format and measured_bandwidth (notebook 08)."""
    flops = {
        dtype: measured_peak(device, dtype, sizes, stored=stored)["flops_per_s"]
        for dtype in supported_dtypes(device)
    }
    return roofs(
        device,
        measured_bandwidth(device, megabytes, stored=stored),
        flops,
        "measured here",
    )


def from_survey(survey, bandwidth_gbs):
    """Roofs per device from notebook 00's survey ({'cpu:0 float32': (sizes, GFLOP/s)}: the
    best of each line) and bandwidths ({'cpu:0': GB/s})."""
    found = {}
    for label, (_, gflops) in survey.items():
        device, dtype = label.split()
        found.setdefault(device, {})[dtype] = max(gflops) * 1e9
    return [
        roofs(device, bandwidth_gbs[device] * 1e9, flops, "measured here")
        for device, flops in found.items()
    ]


def published_roofs(gpus=("V100", "T4", "A100", "H200")):
    """The roofs of `gpus` from NVIDIA's datasheets, Tensor Cores' float16 and bfloat16 as one
    "16-bit" roof (notebook 08)."""
    found = []
    for name in gpus:
        sheet = published.GPU_DATASHEETS[name]
        flops = {
            ("16-bit" if dtype in ("float16", "bfloat16") else dtype): tflops * 1e12
            for dtype, tflops in sheet["tflops"].items()
        }
        found.append(
            roofs(
                name, sheet["bandwidth_gbs"] * 1e9, flops, sheet["source"], "published"
            )
        )
    return found
