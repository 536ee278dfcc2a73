"""The machine's limits and what a network asks of them, per device.

Matrix-multiply FLOP/s and memory bandwidth, measured (backend-agnostic Keras 3: the same
code measures a CPU or a GPU; medians of repeated runs after one warm-up run), the vendors'
published peaks, and the FLOPs a network needs per picture, counted from its layer shapes.
"""

import math
import re

import keras
from keras import ops

from . import hardware
from .published import GPU_DATASHEETS
from .timing import first_and_median

__all__ = ["GPU_PEAK_TFLOPS", "TRAINING_FLOPS_FACTOR", "activation_values", "arithmetic_intensity",
           "balance_verdict", "copy_bandwidth", "datasheet", "datasheet_balance_points",
           "devices", "flops_per_image", "matmul_flops", "measured_bandwidth", "measured_peak",
           "profiler_flops", "published_peak", "supported_dtypes", "survey"]

# Published dense peak figures (TFLOP/s) for GPUs learners meet, by name fragment, per number
# format ("tf32": float32 work on the Tensor Cores); NVIDIA's datasheets, see helpers.published.
GPU_PEAK_TFLOPS = {name: dict(sheet["tflops"]) for name, sheet in GPU_DATASHEETS.items()}


def devices():
    """Device names Keras can place work on, e.g. ['cpu:0', 'gpu:0']."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        kinds = [d["type"].lower() for d in hardware.tensorflow_devices()
                 if d["type"] in ("CPU", "GPU")]
        return [f"{kind}:{kinds[:i].count(kind)}" for i, kind in enumerate(kinds)]
    if backend == "jax":
        import jax

        return [f"{d.platform}:{d.id}" for d in jax.devices()] + (
            [] if jax.devices()[0].platform == "cpu" else ["cpu:0"])
    return ["cpu:0"]


def _sync(x):
    """Wait until `x` is computed (GPUs run asynchronously)."""
    ops.convert_to_numpy(ops.cast(x[:1, :1], "float32"))


def matmul_flops(n, dtype="float32", device="cpu:0", repeats=5):
    """FLOP/s of an n x n by n x n matrix multiply (2 n^3 operations) on `device`."""
    with keras.device(device):
        a = keras.random.normal((n, n), dtype=dtype, seed=1)
        b = keras.random.normal((n, n), dtype=dtype, seed=2)
        seconds = first_and_median(lambda: _sync(ops.matmul(a, b)), repeats)[1]
    return 2 * n**3 / seconds


def copy_bandwidth(megabytes=512, device="cpu:0", repeats=5):
    """Bytes/s of an element-wise pass (read + write) over a float32 array of `megabytes`."""
    n = int(megabytes * 1e6 // 4)
    with keras.device(device):
        a = ops.ones((n // 1024, 1024), dtype="float32")
        seconds = first_and_median(lambda: _sync(a + 1.0), repeats)[1]
    return 2 * a.shape[0] * 1024 * 4 / seconds


def datasheet(gpu_name):
    """The name of the datasheet in helpers.published for a reported GPU name, else None. The
    datasheet's name must stand as a word of the reported one: "NVIDIA L40S" is not an L4,
    "RTX A1000" no A100."""
    words = re.findall(r"[A-Za-z0-9]+", gpu_name or "")
    return next((name for name in GPU_DATASHEETS if name in words), None)


def published_peak(gpu_name, dtype="float32"):
    """The vendor's dense peak in FLOP/s for a known GPU in `dtype`, else None."""
    peaks = GPU_PEAK_TFLOPS.get(datasheet(gpu_name), {})
    return peaks[dtype] * 1e12 if dtype in peaks else None


def balance_verdict(ratio, within=3.0):
    """Words for a ratio of two balance points: 'within 3x' when neither is more than
    `within` times the other, else 'more than 3x higher' or 'more than 3x lower'."""
    if 1 / within <= ratio <= within:
        return f"within {within:g}x"
    return f"more than {within:g}x {'higher' if ratio > within else 'lower'}"


def datasheet_balance_points(reference=None, gpus=None, within=3.0):
    """Each GPU's balance points from its datasheet (helpers.published): peak FLOP/s divided
    by memory bytes/s, in FLOP per byte, for plain float32, TF32 and 16-bit floats on the
    Tensor Cores; one row per GPU, as a DataFrame. With `reference` (a float32 balance point
    measured here) the float32 and 16-bit ones are divided by it and judged by
    `balance_verdict`. `gpus`: the names to keep (default: every GPU listed)."""
    import pandas as pd

    rows = []
    for name, sheet in GPU_DATASHEETS.items():
        if gpus is not None and name not in gpus:
            continue
        point = {dtype: tflops * 1e12 / (sheet["bandwidth_gbs"] * 1e9)
                 for dtype, tflops in sheet["tflops"].items()}
        half = max(point.get("float16", 0), point.get("bfloat16", 0))
        row = {"GPU (datasheet)": name, "memory GB/s": sheet["bandwidth_gbs"],
               "float32": round(point["float32"]),
               "TF32": round(point["tf32"]) if "tf32" in point else "none",
               "16-bit": round(half)}
        if reference:
            for key, value in (("float32", point["float32"]), ("16-bit", half)):
                row[f"{key} / this CPU's float32"] = (
                    f"{value / reference:.1f}x: {balance_verdict(value / reference, within)}")
        rows.append(row)
    return pd.DataFrame(rows)


def supported_dtypes(device):
    """float32 everywhere; bfloat16/float16 only where the hardware has support for them."""
    from .hardware import cpu_info, mixed_precision_support, tensorflow_devices

    tf_devices = tensorflow_devices() if keras.backend.backend() == "tensorflow" else []
    support = mixed_precision_support(cpu_info(), tf_devices)
    if device.startswith("cpu"):
        return ["float32"] + (["bfloat16"] if support["cpu_bfloat16"] else [])
    jax_gpu = keras.backend.backend() == "jax"  # JAX only runs on GPUs recent enough for both
    return (["float32"] + (["float16"] if support["gpu_float16_tensor_cores"] or jax_gpu else [])
            + (["bfloat16"] if support["gpu_bfloat16"] or jax_gpu else []))


def survey(sizes, repeats=5):
    """GFLOP/s of square matrix multiplies, per device and supported dtype, at each size."""
    results = {}
    for device in devices():
        for dtype in supported_dtypes(device):
            gflops = [matmul_flops(n, dtype, device, repeats) / 1e9 for n in sizes]
            results[f"{device} {dtype}"] = (list(sizes), gflops)
    return results


# --- what a network asks: FLOPs per picture ----------------------------------------------

TRAINING_FLOPS_FACTOR = 3  # backward pass ~ 2x forward: gradients for inputs and for weights


def _leaves(model):
    for layer in model.layers:
        yield from (_leaves(layer) if hasattr(layer, "layers") else [layer])


def flops_per_image(model):
    """Forward-pass FLOPs for one image, from the layer shapes: 2 x the multiply-adds of
    every Conv2D and Dense layer. Pooling, activations, biases and augmentation are left
    out (together a few per cent, and limited by memory speed rather than arithmetic)."""
    total = 0
    for layer in _leaves(model):
        if isinstance(layer, keras.layers.DepthwiseConv2D):  # kh x kw per output value
            kh, kw = layer.kernel.shape[:2]
            total += 2 * kh * kw * math.prod(layer.output.shape[1:])
        elif isinstance(layer, (keras.layers.Conv2D, keras.layers.Dense)):
            kernel = layer.kernel.shape  # Conv2D: (kh, kw, cin/groups, cout); Dense: (in, out)
            outputs = math.prod(layer.output.shape[1:])  # per image: H x W x cout, or units
            total += 2 * math.prod(kernel[:-1]) * outputs
    return total


def activation_values(model):
    """How many numbers the layers write for one image: every layer's output, from its shape
    (the activations a training step keeps for the backward pass, notebook 08)."""
    return sum(math.prod(layer.output.shape[1:]) for layer in _leaves(model))


def arithmetic_intensity(model):
    """Forward FLOPs per byte of float32 activations the layers write, for one image: a rough
    measure of how much arithmetic a network does per byte it moves through memory."""
    return flops_per_image(model) / (4 * activation_values(model))


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


# --- the measured peak: the best multiply seen in this process ---------------------------

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
            rate = matmul_flops(n, dtype, device, repeats=1)
            if key not in _PEAKS or rate > _PEAKS[key]["flops_per_s"]:
                _PEAKS[key] = {"flops_per_s": rate, "n": n, "dtype": dtype}
    return dict(_PEAKS[key])


_BANDWIDTHS = {}


def measured_bandwidth(device="cpu:0", megabytes=256, tries=3):
    """This machine's memory bytes/s on `device`, the best `copy_bandwidth` seen so far in this
    process (the first call tries `tries` times, later ones once): the memory roof of the
    roofline (notebooks 00 and 08), kept like `measured_peak`."""
    key = (device, megabytes)
    for _ in range(1 if key in _BANDWIDTHS else tries):
        _BANDWIDTHS[key] = max(_BANDWIDTHS.get(key, 0.0),
                               copy_bandwidth(megabytes, device, repeats=3))
    return _BANDWIDTHS[key]
