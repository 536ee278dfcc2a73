# The GPU rehearsal in a notebook kernel (tests/gpu_rehearsal.py says how to start one):
# TensorFlow's device lists report the fake nvidia-smi's GPUs, whose work runs on the CPU.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # tests/
import fake_gpu  # noqa: E402

fake_gpu.install()
del fake_gpu, sys.path[0]
