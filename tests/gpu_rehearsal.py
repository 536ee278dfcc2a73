"""A GPU rehearsal without a GPU: the fake `nvidia-smi` of tests/fake_bin first on PATH.

A test module imports the fixture (`from gpu_rehearsal import fake_nvidia_smi`) and takes it as
an argument; every process it starts (GPUtil's, the helpers', a notebook kernel's) then finds
the fake, which reports the GPUs named in FAKE_NVIDIA_SMI_GPUS with utilisation, memory, power
and temperature that change from call to call. TensorFlow still sees no GPU.

Notebook kernels started by nbval inherit the PATH pytest was started with:

    PATH=$PWD/tests/fake_bin:$PATH COURSE_PROFILE=smoke .venv/bin/python -m pytest \
        --nbval-lax notebooks/00_setup_and_hardware.ipynb
"""

import os
from pathlib import Path

import pytest

FAKE_BIN = Path(__file__).parent / "fake_bin"


@pytest.fixture
def fake_nvidia_smi(monkeypatch, tmp_path):
    """Two Tesla T4s (Colab's GPU) behind a fake nvidia-smi; returns the fake's path."""
    monkeypatch.setenv("PATH", f"{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_NVIDIA_SMI_GPUS", "Tesla T4,Tesla T4")
    monkeypatch.setenv("FAKE_NVIDIA_SMI_STATE", str(tmp_path / "nvidia-smi-calls"))
    return FAKE_BIN / "nvidia-smi"
