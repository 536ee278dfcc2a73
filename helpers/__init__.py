"""Shared plumbing for the course notebooks: profiles, data, models, timing, plots.

Import it before Keras (`from helpers import config, data, plots`): it loads TensorFlow
with its start-up log lines (CUDA probing, CPU-feature notes) kept out of the notebook.
"""

import importlib.util
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _import_tensorflow_quietly():
    """Import TensorFlow with file descriptor 2 pointed at /dev/null; errors still raise."""
    if os.environ.get("KERAS_BACKEND", "tensorflow") != "tensorflow":
        return
    if importlib.util.find_spec("tensorflow") is None:
        return
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            import tensorflow as tf

            for gpu in tf.config.list_physical_devices("GPU"):  # CUDA probing: silenced too
                tf.config.experimental.set_memory_growth(gpu, True)  # take memory as needed
    finally:
        os.dup2(saved, 2)
        os.close(saved)


_import_tensorflow_quietly()

from . import config  # noqa: E402

if config.build_problem():  # a read-only course folder (a shared lab machine): say so once
    print("Notice:", config.build_problem())

__all__ = ["config"]
__version__ = "0.1.0"
