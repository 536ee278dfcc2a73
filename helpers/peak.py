"""The machine's limits, measured (any Keras backend, any device) or published, and the FLOPs a
network asks per picture (notebooks 00 and 08)."""

import math
import re

import keras
from keras import ops

from . import hardware
from .published import GPU_DATASHEETS
from .timing import first_and_median, wait_for

__all__ = ["TRAINING_FLOPS_FACTOR", "activation_values", "arithmetic_intensity",
           "balance_verdict", "copy_bandwidth", "datasheet_balance_points", "devices",
           "flops_per_image", "layer_roofline_seconds", "limits", "matmul_flops",
           "measured_bandwidth", "measured_peak", "published_peak", "save_limits", "speed_now",
           "supported_dtypes", "training_bytes", "training_intensity"]


def devices():
    """'cpu:0', then every GPU Keras can place work on: 'gpu:0', ... (notebook 00)."""
    try:
        return ["cpu:0"] + keras.distribution.list_devices("gpu")
    except (RuntimeError, AttributeError):  # JAX without a GPU; a backend without the API
        return ["cpu:0"]


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
    """'within 3x', 'more than 3x higher' or '... lower' for a ratio of balance points
    (notebook 00)."""
    if 1 / within <= ratio <= within:
        return f"within {within:g}x"
    return f"more than {within:g}x {'higher' if ratio > within else 'lower'}"


def datasheet_balance_points(reference=None, gpus=None):
    """Each datasheet GPU's FLOP per byte in float32, TF32 and 16 bits, and with `reference`
    (this CPU's float32) their ratios to it, as a DataFrame (notebooks 00 and 08)."""
    import pandas as pd

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
    """How many numbers the layers write for one image (notebook 08)."""
    return sum(math.prod(layer.output.shape[1:]) for layer in _leaves(model))


def arithmetic_intensity(model):
    """Forward FLOPs per byte of float32 activations written, for one image (notebook 08)."""
    return flops_per_image(model) / (4 * activation_values(model))


# The course's count of the memory traffic of one training step (caches ignored, so an upper
# bound): each activation value is written, read by the next layer, read again by the backward
# pass, and its gradient written and read (5 touches, at the compute format's bytes); the input
# is read once; a layer that only reshapes (Flatten) moves nothing; each float32 parameter is
# read forward and backward and its gradient written (12 bytes), and Adam reads the gradient
# and reads and writes the weight and both moments (28).
ACTIVATION_TOUCHES = 5
BYTES_PER_PARAMETER_STEP = 12 + 28
_VALUE_BYTES = {"float32": 4, "tf32": 4, "bfloat16": 2, "float16": 2, "16-bit": 2}


def _layer_bytes(layer, batch, value_bytes):
    if isinstance(layer, (keras.layers.Flatten, keras.layers.Reshape)):
        return 0
    moved = ACTIVATION_TOUCHES * value_bytes * math.prod(layer.output.shape[1:])
    return moved + BYTES_PER_PARAMETER_STEP * layer.count_params() / batch


def _layer_flops(layer):
    weighted = (keras.layers.Conv2D, keras.layers.DepthwiseConv2D, keras.layers.Dense)
    if not isinstance(layer, weighted):
        return 0
    return 2 * math.prod(layer.kernel.shape) * math.prod(layer.output.shape[1:-1])


def training_bytes(model, batch, dtype="float32"):
    """Bytes one training step moves per picture at `batch` pictures a step, by the course's
    count above: activations, gradients, weights and Adam's state (notebook 08)."""
    value_bytes = _VALUE_BYTES[dtype]
    reads = value_bytes * math.prod(model.inputs[0].shape[1:])
    return reads + sum(_layer_bytes(layer, batch, value_bytes) for layer in _leaves(model))


def training_intensity(model, batch, dtype="float32"):
    """Training FLOPs (3x forward) per byte one training step moves, per picture (notebook 08)."""
    return TRAINING_FLOPS_FACTOR * flops_per_image(model) / training_bytes(model, batch, dtype)


def layer_roofline_seconds(model, batch, flops_per_s, bytes_per_s, dtype="float32"):
    """Seconds per picture if every layer ran at its own roof, max(FLOPs / peak, bytes /
    bandwidth), summed: a layer cannot borrow another's arithmetic (notebook 08)."""
    value_bytes = _VALUE_BYTES[dtype]
    reads = value_bytes * math.prod(model.inputs[0].shape[1:]) / bytes_per_s
    return reads + sum(max(TRAINING_FLOPS_FACTOR * _layer_flops(layer) / flops_per_s,
                           _layer_bytes(layer, batch, value_bytes) / bytes_per_s)
                       for layer in _leaves(model))


_PEAKS = {}
_STORED = {}  # the best of notebook 00's limits, once speed_now has read them


def measured_peak(device="cpu:0", dtype="float32", sizes=None, tries=5):
    """The best multiply FLOP/s seen on `device` in this process: other programs can only slow
    one down; the first call tries each size `tries` times, later ones one more (notebook 08)."""
    sizes = tuple(sizes or ((1024, 2048) if device.startswith("cpu") else (4096, 8192)))
    key = (device, dtype, sizes)
    if key in _PEAKS:
        sizes, tries = (_PEAKS[key]["n"],), 1
    for n in sizes:
        for _ in range(tries):
            rate = matmul_flops(n, dtype, device, repeats=1)
            if key not in _PEAKS or rate > _PEAKS[key]["flops_per_s"]:
                _PEAKS[key] = {"flops_per_s": rate, "n": n, "dtype": dtype}
    stored = _STORED.get((device, dtype), 0.0)
    if stored > _PEAKS[key]["flops_per_s"]:  # notebook 00 saw this machine faster
        return {"flops_per_s": stored, "n": _PEAKS[key]["n"], "dtype": dtype, "stored": True}
    return dict(_PEAKS[key])


_BANDWIDTHS = {}


def measured_bandwidth(device="cpu:0", megabytes=256, tries=3):
    """The best `copy_bandwidth` seen on `device` in this process, like `measured_peak`: the
    roofline's memory roof (notebook 08)."""
    key = (device, megabytes)
    for _ in range(1 if key in _BANDWIDTHS else tries):
        _BANDWIDTHS[key] = max(_BANDWIDTHS.get(key, 0.0),
                               copy_bandwidth(megabytes, device, repeats=3))
    return max(_BANDWIDTHS[key], _STORED.get((device, "bytes"), 0.0))


def limits(path=None):
    """Notebook 00's limits of this machine from build/limits.json, or, where 00 has not run
    here, the same survey measured now and saved; says which (notebooks 07-11)."""
    import json

    from . import config

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
        for d in devices() for t in supported_dtypes(d)},
        "bandwidth_gbs": {d: copy_bandwidth(s.copy_mb, d, s.repeats) / 1e9 for d in devices()},
        "hardware": hardware.describe()}
    save_limits(found, path)
    return found


def save_limits(found, path=None):
    """Write limits to build/limits.json, keeping for each multiply line and bandwidth the best
    of these and of earlier ones measured on the same CPU: other programs only slow a run down,
    so a busy rerun must not lower the roofs. Returns the labels kept from before (notebook 00)."""
    import json

    from . import config

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
    that says whether other work is sharing the machine; the roofs keep the best of both, so
    later `measured_peak` and `measured_bandwidth` calls never fall below them (notebooks 07-11)."""
    sizes, gflops = stored["matmul_gflops"][f"{device} {dtype}"]
    best = max(gflops) * 1e9
    now = max(matmul_flops(sizes[gflops.index(max(gflops))], dtype, device, 1)
              for _ in range(tries))
    for label, (_, gflops) in stored["matmul_gflops"].items():
        d, t = label.split()
        _STORED[(d, t)] = max(_STORED.get((d, t), 0.0), max(gflops) * 1e9)
    for d, gbs in stored["bandwidth_gbs"].items():
        _STORED[(d, "bytes")] = max(_STORED.get((d, "bytes"), 0.0), gbs * 1e9)
    share = now / best
    head = f"This machine is running at {100 * share:.0f} % of the speed notebook 00 measured: "
    if share < 0.85:
        line = head + ("other work is sharing it, so speeds below are lower than this machine "
                       "can do.")
    elif share > 1.15:
        line = head + "00 ran while it was busier; the roofs below use today's faster figure."
    else:
        line = head + "about as free as then."
    return share, line
