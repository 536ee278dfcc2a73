"""The course's helpers (notebook 00): `from helpers import config, data, plots` before Keras.

Importing them imports nothing heavy and writes nothing; a module imports TensorFlow only if it
needs it. TensorFlow's info and warning lines are off (TF_CPP_MIN_LOG_LEVEL=2) and it takes GPU
memory as needed; what it still writes while it starts (CUDA's probes) goes to `startup_log`
instead of the learner's output (notebook 00 shows it when a GPU goes unused).
"""

import importlib.abc
import importlib.util
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")

startup_log = ""  # what TensorFlow wrote to stderr while it started


def _quietly(exec_module):
    """TensorFlow's `exec_module`, its stderr kept in `startup_log` while it starts and looks
    for GPUs; an error comes with what TensorFlow said."""

    def start(module):
        global startup_log
        saved, failed = os.dup(2), True
        with tempfile.TemporaryFile() as log:
            os.dup2(log.fileno(), 2)
            try:
                exec_module(module)
                module.config.list_physical_devices("GPU")  # where CUDA's probes write
                failed = False
            finally:
                os.dup2(saved, 2)
                os.close(saved)
                log.seek(0)
                startup_log = log.read().decode(errors="replace")
                if failed:
                    sys.stderr.write(startup_log)

    return start


class _QuietTensorFlow(importlib.abc.MetaPathFinder):
    """Finds nothing itself: the first import of TensorFlow (by Keras or by hand) starts it
    `_quietly`; then it steps aside."""

    def find_spec(self, name, path=None, target=None):
        if name != "tensorflow":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader.exec_module = _quietly(spec.loader.exec_module)
        return spec


if "tensorflow" not in sys.modules:
    sys.meta_path.insert(0, _QuietTensorFlow())

__all__ = ["startup_log"]
