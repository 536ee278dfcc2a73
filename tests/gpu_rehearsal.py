"""A GPU rehearsal without a GPU: the fake `nvidia-smi` of tests/fake_bin first on PATH, and
TensorFlow's device lists reporting its GPUs (tests/fake_gpu.py), whose work runs on the CPU.

A test module imports a fixture (`from gpu_rehearsal import fake_gpu`) and takes it as an
argument. `fake_nvidia_smi`: every process the test starts (GPUtil's, the helpers', a notebook
kernel's) finds the fake nvidia-smi, which reports two Tesla T4s with utilisation, memory,
power and temperature that change from call to call. `fake_gpu`: that, and TensorFlow in the
test's own process lists those two GPUs.

Notebook kernels and every other Python process get both from `make test-gpu-rehearsal`, which
puts tests/fake_bin first on PATH and tests/gpu_rehearsal_site (a sitecustomize.py that installs
fake_gpu once TensorFlow is imported) on PYTHONPATH.
"""

import os
from pathlib import Path

import pytest

FAKE_BIN = Path(__file__).parent / "fake_bin"


def _on_path(monkeypatch, tmp_path, cards):
    monkeypatch.setenv("PATH", f"{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_NVIDIA_SMI_GPUS", cards)
    monkeypatch.setenv("FAKE_NVIDIA_SMI_STATE", str(tmp_path / "nvidia-smi-calls"))
    return FAKE_BIN / "nvidia-smi"


@pytest.fixture
def fake_nvidia_smi(monkeypatch, tmp_path):
    """Two Tesla T4s (Colab's GPU) behind a fake nvidia-smi; returns the fake's path."""
    return _on_path(monkeypatch, tmp_path, "Tesla T4,Tesla T4")


@pytest.fixture
def fake_gpu(fake_nvidia_smi, monkeypatch):
    """The two T4s of fake_nvidia_smi, also in TensorFlow's device lists of this process."""
    import fake_gpu as fake

    fake.install(monkeypatch.setattr)
    return fake_nvidia_smi


@pytest.fixture
def one_fake_gpu(monkeypatch, tmp_path):
    """One T4, in nvidia-smi and TensorFlow: what `make test-gpu-rehearsal` gives notebooks.
    (A MirroredStrategy over two fake GPUs waits forever: its all-reduce is NCCL's.)"""
    import fake_gpu as fake

    path = _on_path(monkeypatch, tmp_path, "Tesla T4")
    fake.install(monkeypatch.setattr)
    return path
