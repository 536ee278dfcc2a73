"""TensorFlow's half of the GPU rehearsal: the device lists report one GPU per card that the
fake `nvidia-smi` names (FAKE_NVIDIA_SMI_GPUS, default "Tesla T4"), and the work placed on
them runs on the CPU (TensorFlow's soft placement). Their memory counters are the process's
resident memory. Only the test environment installs this: a fixture (gpu_rehearsal.py) in
the test process, and `make test-gpu-rehearsal` in every Python process it starts (notebook
kernels, the memory measurements' subprocesses) through gpu_rehearsal_site/sitecustomize.py.
What it cannot rehearse: any GPU speed (float16 Tensor Cores, a GPU's bandwidth), and the
memory a real GPU allocator would report.
"""

import os
from pathlib import Path

import tensorflow as tf

# compute capability per card, as NVIDIA lists them
CAPABILITY = {
    "Tesla T4": (7, 5),
    "NVIDIA A100-SXM4-40GB": (8, 0),
    "NVIDIA L4": (8, 9),
    "Tesla V100-SXM2-16GB": (7, 0),
    "NVIDIA H100 80GB HBM3": (9, 0),
}


def names():
    return [
        n.strip() for n in os.environ.get("FAKE_NVIDIA_SMI_GPUS", "Tesla T4").split(",")
    ]


def _resident(field):
    line = next(
        x
        for x in Path("/proc/self/status").read_text().splitlines()
        if x.startswith(field + ":")
    )
    return int(line.split()[1]) * 1024


def install(setattr=setattr):
    """Patch tf.config so that the GPUs of FAKE_NVIDIA_SMI_GPUS appear; `setattr` may be a
    pytest monkeypatch's, which undoes it after the test."""
    physical = getattr(
        tf.config.list_physical_devices, "real", tf.config.list_physical_devices
    )
    logical = getattr(
        tf.config.list_logical_devices, "real", tf.config.list_logical_devices
    )
    cards = names()
    fake = [
        tf.config.PhysicalDevice(f"/physical_device:GPU:{i}", "GPU")
        for i in range(len(cards))
    ]
    fake_logical = [
        tf.config.LogicalDevice(f"/device:GPU:{i}", "GPU") for i in range(len(cards))
    ]

    def list_physical_devices(device_type=None):
        return physical(device_type) + (fake if device_type in (None, "GPU") else [])

    def list_logical_devices(device_type=None):
        return logical(device_type) + (
            fake_logical if device_type in (None, "GPU") else []
        )

    def get_device_details(device):
        if device not in fake:
            return {}
        name = cards[fake.index(device)]
        return {"device_name": name, "compute_capability": CAPABILITY.get(name, (7, 5))}

    def get_memory_info(device):
        return {"current": _resident("VmRSS"), "peak": _resident("VmHWM")}

    def reset_memory_stats(device):
        # Linux: the peak starts again from now
        Path("/proc/self/clear_refs").write_text("5")

    # one fake, ever
    list_physical_devices.real, list_logical_devices.real = (physical, logical)
    tf.config.set_soft_device_placement(True)
    setattr(tf.config, "list_physical_devices", list_physical_devices)
    setattr(tf.config, "list_logical_devices", list_logical_devices)
    setattr(tf.config.experimental, "get_device_details", get_device_details)
    setattr(tf.config.experimental, "get_memory_info", get_memory_info)
    setattr(tf.config.experimental, "reset_memory_stats", reset_memory_stats)
    setattr(tf.config.experimental, "set_memory_growth", lambda device, enable: None)
