"""What this machine has: CPU, SIMD, memory, GPUs, Colab, library versions (notebook 00)."""

import contextlib
import functools
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import psutil

from .published import GPU_DATASHEETS

__all__ = [
    "SIMD_FLAGS",
    "amx_bfloat16",
    "cpu_info",
    "cpu_kind",
    "describe",
    "devices",
    "gpu_datasheet",
    "gpu_roof_shares",
    "gpus",
    "mixed_precision_support",
    "nvidia_smi_gpus",
    "summary",
    "table",
    "tensorflow_devices",
    "theoretical_peaks",
    "threads",
    "versions",
]

SIMD_FLAGS = (
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "avx512f",
    "avx512_bf16",
    "avx512_fp16",
    "amx_bf16",
    "amx_tile",
    "neon",
    "asimd",
)


def cpu_info():
    """CPU model, cores, memory and the SIMD extensions that matter for training (notebook 00)."""
    model, flags, mhz, family = (
        platform.processor() or platform.machine(),
        set(),
        None,
        None,
    )
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model in ("", platform.machine()):
                    model = value.strip()
                elif key.strip() in ("flags", "Features") and not flags:
                    flags = set(value.split())
                elif key.strip() == "cpu MHz" and mhz is None:
                    mhz = float(value)
                elif key.strip() == "cpu family" and family is None:
                    family = int(value)
    except (OSError, ValueError):
        pass
    try:  # the highest clock the cores may run at (boost); guests often have no cpufreq
        top = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").read_text()
        max_ghz = round(int(top) / 1e6, 2)  # kHz
    except (OSError, ValueError):
        max_ghz = None
    return {
        "model": model,
        "physical_cores": psutil.cpu_count(logical=False),
        "logical_cores": psutil.cpu_count(logical=True),
        "usable_cores": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else None,
        "simd": [f for f in SIMD_FLAGS if f in flags],
        "memory_gb": round(psutil.virtual_memory().total / 1e9, 1),
        "ghz": mhz
        and round(mhz / 1000, 2),  # the clock the system reports (boost may differ)
        "max_ghz": max_ghz,  # the boost clock, where the system reports it
        "family": family,  # x86 CPU family: AMD's 25 is Zen 3 and 4, 26 Zen 5
    }


def cpu_kind(simd):
    """The widest vector or matrix unit among `simd` flags: "AMX", "AVX-512 bf16", "AVX-512",
    "AVX2", "Arm NEON" or "older SIMD" (notebook 08)."""
    kinds = (
        ("amx_bf16", "AMX"),
        ("avx512_bf16", "AVX-512 bf16"),
        ("avx512f", "AVX-512"),
        ("avx2", "AVX2"),
        ("asimd", "Arm NEON"),
        ("neon", "Arm NEON"),
    )
    return next((kind for flag, kind in kinds if flag in simd), "older SIMD")


def amx_bfloat16(info=None, environ=None):
    """Whether oneDNN may run bfloat16 on AMX in this process: the CPU lists `amx_bf16` and
    ONEDNN_MAX_CPU_ISA, where set, does not cap oneDNN below AMX (notebook 09)."""
    simd = (info or cpu_info())["simd"]
    cap = (
        (os.environ if environ is None else environ)
        .get("ONEDNN_MAX_CPU_ISA", "")
        .upper()
    )
    return "amx_bf16" in simd and (cap in ("", "ALL", "DEFAULT") or "AMX" in cap)


# Float32 FLOP per clock cycle per core of the widest vector unit, a fused multiply-add counted as
# 2: two FMA pipes of 8 float32 lanes (AVX2, and AMD's AVX-512 up to Zen 4, which runs it on
# 256-bit pipes); two 16-lane FMA ports (Intel's AVX-512 server cores, some have one; AMD's Zen 5,
# family 26). bfloat16: AVX-512 BF16's dot product does twice float32's work; AMX 1,024 bfloat16
# FLOP (Intel's figure).
_FLOP_PER_CYCLE = {
    "AVX2": (32, None),
    "AVX-512": (32, None),
    "AVX-512 bf16": (32, 64),
    "AMX": (64, 1024),
}
_FULL_AVX512 = {"AVX-512": (64, None), "AVX-512 bf16": (64, 128)}


# The part of the core that does each format's multiplies, by the widest unit: float32 always on
# the vector unit's FMA (AMX has no float32), bfloat16 on AVX-512 BF16's dot product or AMX's tiles.
_UNITS = {
    "AVX2": ("AVX2 FMA", None),
    "AVX-512": ("AVX-512 FMA", None),
    "AVX-512 bf16": ("AVX-512 FMA", "AVX-512 BF16 dot product"),
    "AMX": ("AVX-512 FMA", "AMX tiles"),
}


def theoretical_peaks(info=None):
    """{"float32": FLOP/s, "bfloat16": FLOP/s or None, "per_cycle": (...), "cores", "ghz",
    "clock" (which clock that is), "units": {dtype: the unit computing it}}: cores x FLOP per
    cycle x the boost clock where the system reports one, else the clock it reports now; None
    where the unit or clock is unknown (00)."""
    info = info or cpu_info()
    unit = (
        cpu_kind(info["simd"])
        if "fma" in info["simd"] or "amx_bf16" in info["simd"]
        else None
    )
    full = "intel" in info["model"].lower() or (info.get("family") or 0) >= 26
    per_cycle = (_FULL_AVX512 if full else {}).get(unit, _FLOP_PER_CYCLE.get(unit))
    cores, ghz = info["usable_cores"] or info["physical_cores"], info.get("max_ghz")
    clock = "the boost clock the system reports"
    if not ghz:
        ghz, clock = (
            info.get("ghz"),
            "the clock the system reports now; a boost may be faster",
        )
    if not per_cycle or not cores or not ghz:
        return None
    return {
        dtype: per * cores * ghz * 1e9 if per else None
        for dtype, per in zip(("float32", "bfloat16"), per_cycle)
    } | {
        "per_cycle": per_cycle,
        "cores": cores,
        "ghz": ghz,
        "clock": clock,
        "units": dict(zip(("float32", "bfloat16"), _UNITS[unit])),
    }


def gpu_datasheet(gpu_name):
    """(sheet name, NVIDIA's datasheet figures from helpers.published) of the GPU whose sheet's
    name is a word of `gpu_name` ("Tesla T4", "NVIDIA H200": an "NVIDIA L40S" is no L4), else
    None (notebook 00)."""
    words = re.findall(r"[A-Za-z0-9]+", gpu_name or "")
    return next(
        ((name, GPU_DATASHEETS[name]) for name in GPU_DATASHEETS if name in words), None
    )


def gpu_roof_shares(info, limits):
    """Lines: each GPU's measured roofs (`limits` as notebook 00 keeps them: the best multiply
    GFLOP/s per "gpu:N dtype", GB/s of `x + 1` per "gpu:N") as shares of its datasheet's dense
    peaks and memory bandwidth; [] without a GPU (notebook 00)."""
    names = [
        d.get("gpu_name") for d in info["tensorflow_devices"] if d["type"] == "GPU"
    ]
    # another backend: nvidia-smi's names
    names = names or [g["name"] for g in info["gpus"]]
    lines = []
    for i, name in enumerate(names):
        found, device = gpu_datasheet(name), f"gpu:{i}"
        if not found:
            lines.append(f"{device} ({name}): unknown GPU: no datasheet figure")
            continue
        sheet, tflops = found[1], found[1]["tflops"]
        lines.append(f"{device} ({name}) against the {sheet['source']} (published):")
        for dtype in ("float32", "bfloat16", "float16"):
            line = limits["matmul_gflops"].get(f"{device} {dtype}")
            if not line or dtype not in tflops:
                continue
            measured = max(line[1]) / 1e3  # TFLOP/s
            text = (
                f"  {dtype}: measured {measured:,.1f} TFLOP/s, {measured / tflops[dtype]:.0%} "
                f"of the datasheet's {tflops[dtype]:,.1f}"
            )
            # TensorFlow multiplies float32 as TF32
            if dtype == "float32" and "tf32" in tflops:
                text += f", {measured / tflops['tf32']:.0%} of its TF32 {tflops['tf32']:,.0f}"
            lines.append(text)
        gbs = limits["bandwidth_gbs"].get(device)
        if gbs:
            lines.append(
                f"  memory: measured {gbs:,.0f} GB/s, {gbs / sheet['bandwidth_gbs']:.0%} "
                f"of the datasheet's {sheet['bandwidth_gbs']:,} GB/s"
            )
    return lines


def _number(text):
    """nvidia-smi's number, or None for "[N/A]" and "[Not Supported]"."""
    try:
        return float(text)
    except ValueError:
        return None


def nvidia_smi_gpus():
    """GPUs as nvidia-smi reports them: name, memory, driver, utilisation, power in W and
    temperature in °C (None where a card reports none); [] without one (notebook 08)."""
    if not shutil.which("nvidia-smi"):
        return []
    command = [
        "nvidia-smi",
        "--format=csv,noheader,nounits",
        "--query-gpu=name,memory.total,"
        "memory.used,driver_version,utilization.gpu,power.draw,temperature.gpu",
    ]
    try:
        out = subprocess.run(
            command, capture_output=True, text=True, timeout=10, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    gpus = []
    for line in out.strip().splitlines():
        name, total, used, driver, util, power, temperature = [
            v.strip() for v in line.split(",")
        ]
        gpus.append(
            {
                "name": name,
                "memory_total_mb": float(total),
                "memory_used_mb": float(used),
                "driver": driver,
                "utilization_pct": _number(util),
                "power_w": _number(power),
                "temperature_c": _number(temperature),
            }
        )
    return gpus


@functools.cache  # once per process
def _notice_once(text):
    print(text)


def gpus():
    """GPUs through GPUtil when it works, else nvidia-smi directly; [] without (notebook 00)."""
    try:
        import GPUtil  # GPUtil 1.4 imports distutils, which Python 3.12 no longer ships

        found = GPUtil.getGPUs()
    except (
        Exception
    ) as e:  # no distutils (and no setuptools to stand in), or odd output
        _notice_once(
            f"Notice: GPUtil does not work here ({type(e).__name__}: {e}); "
            "asking nvidia-smi directly."
        )
        return nvidia_smi_gpus()
    return [
        {
            "name": g.name,
            "memory_total_mb": g.memoryTotal,
            "memory_used_mb": g.memoryUsed,
            "driver": g.driver,
            "utilization_pct": g.load * 100,
        }
        for g in found
    ]


def tensorflow_devices():
    """The devices TensorFlow sees, with name and compute capability for GPUs (notebook 00)."""
    import tensorflow as tf

    devices = []
    for d in tf.config.list_physical_devices():
        entry = {"name": d.name, "type": d.device_type}
        if d.device_type == "GPU":
            details = tf.config.experimental.get_device_details(d)
            entry["gpu_name"] = details.get("device_name")
            entry["compute_capability"] = details.get("compute_capability")
        devices.append(entry)
    return devices


def mixed_precision_support(cpu=None, tf_devices=None):
    """Which 16-bit formats the CPU and GPUs have hardware for (notebook 09)."""
    cpu = cpu or cpu_info()
    tf_devices = tf_devices if tf_devices is not None else tensorflow_devices()
    caps = [d.get("compute_capability") for d in tf_devices if d["type"] == "GPU"]
    return {
        "gpu_float16_tensor_cores": any(c and c >= (7, 0) for c in caps),
        "gpu_bfloat16": any(c and c >= (8, 0) for c in caps),
        "cpu_bfloat16": any(f in cpu["simd"] for f in ("avx512_bf16", "amx_bf16")),
    }


def versions():
    """Versions of Python and of the libraries the course uses (notebook 00)."""
    from importlib import metadata

    found = {"python": platform.python_version()}
    for name in ("tensorflow", "keras", "numpy", "matplotlib", "PIL", "jax", "torch"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[name] = metadata.version("pillow" if name == "PIL" else name)
    return found


def describe():
    """Everything above as one dict, as bench records store it (notebook 00)."""
    import keras

    cpu = cpu_info()
    tf_devices = tensorflow_devices() if keras.backend.backend() == "tensorflow" else []
    return {
        "cpu": cpu,
        "gpus": gpus(),
        "tensorflow_devices": tf_devices,
        "mixed_precision": mixed_precision_support(cpu, tf_devices),
        "colab": "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ,
        "platform": platform.platform(),
        "keras_backend": keras.backend.backend(),
        "versions": versions(),
    }


def threads():
    """TensorFlow's intra-op and inter-op thread pools (0: TensorFlow's choice) and the oneDNN
    switch; None on another backend (notebook 08)."""
    import keras

    if keras.backend.backend() != "tensorflow":
        return None
    import tensorflow as tf

    return {
        "intra_op": tf.config.threading.get_intra_op_parallelism_threads(),
        "inter_op": tf.config.threading.get_inter_op_parallelism_threads(),
        "onednn": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default"),
    }


def summary(info=None):
    """One line on a machine: CPU, cores usable, widest SIMD unit, GPUs (notebook 08)."""
    info = info or describe()
    gpus = ", ".join(g["name"] for g in info["gpus"]) or "no GPU"
    cpu = info["cpu"]
    return f"{cpu['model']} ({cpu['usable_cores']} cores usable, {cpu_kind(cpu['simd'])}), {gpus}"


def table(info=None):
    """`describe()` as a one-column DataFrame, one row per fact (notebook 00)."""
    import pandas as pd

    info = info or describe()
    cpu = info["cpu"]
    rows = {
        "CPU": cpu["model"],
        "Cores": f"{cpu['physical_cores']} physical, {cpu['logical_cores']} logical, "
        f"{cpu['usable_cores']} usable by this process",
        "SIMD": ", ".join(cpu["simd"]) or "none detected",
        "Memory": f"{cpu['memory_gb']} GB",
    }
    rows.update(
        {
            f"GPU {i}": f"{g['name']}, {g['memory_total_mb'] / 1024:.0f} GiB, "
            f"driver {g['driver']}"
            for i, g in enumerate(info["gpus"])
        }
        or {"GPU": "none found"}
    )
    seen = ", ".join(d["name"] for d in info["tensorflow_devices"])
    rows["Devices TensorFlow uses"] = seen or "(not the TensorFlow backend)"
    supported = ", ".join(k for k, v in info["mixed_precision"].items() if v)
    rows["Mixed precision"] = supported or "no hardware support"
    rows["Colab"] = "yes" if info["colab"] else "no"
    rows["Versions"] = ", ".join(f"{k} {v}" for k, v in info["versions"].items())
    return pd.DataFrame({"this machine": rows})


def devices():
    """'cpu:0', then every GPU Keras can place work on: 'gpu:0', ... (notebook 00)."""
    import keras

    try:
        return ["cpu:0"] + keras.distribution.list_devices("gpu")
    # JAX without a GPU; a backend without the API
    except (RuntimeError, AttributeError):
        return ["cpu:0"]
