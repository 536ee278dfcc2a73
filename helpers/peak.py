"""The machine's limits: matrix-multiply FLOP/s and memory bandwidth, per device.

Backend-agnostic Keras 3 (TensorFlow or JAX): the same code measures a CPU or a GPU.
Times are medians of repeated runs after one warm-up run.
"""

import statistics
import time

import keras
from keras import ops

# Published dense peak figures (TFLOP/s) for GPUs learners meet, by name fragment.
GPU_PEAK_TFLOPS = {
    "H200": {"float32": 67.0, "bfloat16": 989.0, "float16": 989.0},
    "H100": {"float32": 67.0, "bfloat16": 989.0, "float16": 989.0},
    "A100": {"float32": 19.5, "bfloat16": 312.0, "float16": 312.0},
    "V100": {"float32": 15.7, "float16": 125.0},
    "T4": {"float32": 8.1, "float16": 65.0},
    "L4": {"float32": 30.3, "bfloat16": 121.0, "float16": 121.0},
}


def devices():
    """Device names Keras can place work on, e.g. ['cpu:0', 'gpu:0']."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        return [f"{d.device_type.lower()}:{i}" for kind in ("CPU", "GPU")
                for i, d in enumerate(tf.config.list_logical_devices(kind))]
    if backend == "jax":
        import jax

        return [f"{d.platform}:{d.id}" for d in jax.devices()] + (
            [] if jax.devices()[0].platform == "cpu" else ["cpu:0"])
    return ["cpu:0"]


def _sync(x):
    """Wait until `x` is computed (GPUs run asynchronously)."""
    ops.convert_to_numpy(ops.cast(x[:1, :1], "float32"))


def _median_seconds(fn, repeats):
    fn()  # warm-up: allocation, kernel selection, compilation
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def matmul_flops(n, dtype="float32", device="cpu:0", repeats=5):
    """FLOP/s of an n x n by n x n matrix multiply (2 n^3 operations) on `device`."""
    with keras.device(device):
        a = keras.random.normal((n, n), dtype=dtype, seed=1)
        b = keras.random.normal((n, n), dtype=dtype, seed=2)
        seconds = _median_seconds(lambda: _sync(ops.matmul(a, b)), repeats)
    return 2 * n**3 / seconds


def copy_bandwidth(megabytes=512, device="cpu:0", repeats=5):
    """Bytes/s of an element-wise pass (read + write) over a float32 array of `megabytes`."""
    n = int(megabytes * 1e6 // 4)
    with keras.device(device):
        a = ops.ones((n // 1024, 1024), dtype="float32")
        seconds = _median_seconds(lambda: _sync(a + 1.0), repeats)
    return 2 * a.shape[0] * 1024 * 4 / seconds


def published_peak(gpu_name, dtype="float32"):
    """The vendor's dense peak in FLOP/s for a known GPU, else None."""
    for fragment, peaks in GPU_PEAK_TFLOPS.items():
        if fragment in (gpu_name or "") and dtype in peaks:
            return peaks[dtype] * 1e12
    return None


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
