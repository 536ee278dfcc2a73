"""The course's helpers (notebook 00): `from helpers import config, data, plots` before Keras.

Importing them loads TensorFlow with its info and warning lines off (TF_CPP_MIN_LOG_LEVEL=2).
"""

import importlib.util
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _import_tensorflow():
    """Import TensorFlow (when it is the backend), GPU memory taken as needed; return what it
    wrote to stderr meanwhile (notebook 00 shows it when a GPU goes unused)."""
    backend = os.environ.get("KERAS_BACKEND", "tensorflow")
    if backend != "tensorflow" or importlib.util.find_spec("tensorflow") is None:
        return ""
    saved = os.dup(2)
    with tempfile.TemporaryFile() as log:
        os.dup2(log.fileno(), 2)
        failed = True
        try:
            import tensorflow as tf

            for gpu in tf.config.list_physical_devices("GPU"):
                tf.config.experimental.set_memory_growth(gpu, True)
            failed = False
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            log.seek(0)
            text = log.read().decode(errors="replace")
            if failed:  # the import's error comes with what TensorFlow said
                sys.stderr.write(text)
    return text


startup_log = _import_tensorflow()

from . import config  # noqa: E402

if config.build_problem():  # a read-only course folder (a shared lab machine): say so once
    print("Notice:", config.build_problem())

__all__ = ["config", "startup_log"]
