"""The GPU rehearsal in every Python process `make test-gpu-rehearsal` starts (it puts this
folder on PYTHONPATH): once a process imports TensorFlow, tests/fake_gpu.py makes its device
lists report the fake nvidia-smi's GPUs. Processes that never import TensorFlow pay nothing."""

import importlib.abc
import importlib.util
import sys
from pathlib import Path


class _FakeGpuAfterTensorFlow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "tensorflow":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/
            import fake_gpu

            fake_gpu.install()

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _FakeGpuAfterTensorFlow())
