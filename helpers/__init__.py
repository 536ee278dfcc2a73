"""Shared plumbing for the course notebooks: profiles, data, models, timing, plots.

Import it before Keras (`from helpers import config, data, plots`): it loads TensorFlow
with its info and warning lines turned off (TF_CPP_MIN_LOG_LEVEL=2); errors still show.
"""

import importlib.util
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _import_tensorflow():
    """Import TensorFlow (when it is the backend) and let it take GPU memory as needed.

    What TensorFlow writes to stderr meanwhile (CUDA probing: on a machine without a GPU a few
    lines of it, some labelled E) is kept, not thrown away: it is `startup_log`, which
    notebook 00 shows when nvidia-smi sees a GPU that TensorFlow cannot use. If the import
    fails, the log goes to stderr with the error.
    """
    if os.environ.get("KERAS_BACKEND", "tensorflow") != "tensorflow":
        return ""
    if importlib.util.find_spec("tensorflow") is None:
        return ""
    saved = os.dup(2)
    with tempfile.TemporaryFile() as log:
        os.dup2(log.fileno(), 2)
        try:
            import tensorflow as tf

            for gpu in tf.config.list_physical_devices("GPU"):
                tf.config.experimental.set_memory_growth(gpu, True)  # take memory as needed
            failed = False
        except BaseException:
            failed = True
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            log.seek(0)
            text = log.read().decode(errors="replace")
            if failed:
                sys.stderr.write(text)
    return text


startup_log = _import_tensorflow()

from . import config  # noqa: E402

if config.build_problem():  # a read-only course folder (a shared lab machine): say so once
    print("Notice:", config.build_problem())

__all__ = ["config", "startup_log"]
__version__ = "0.1.0"
