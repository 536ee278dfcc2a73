"""Training the course's way: timed, resumable, explained when memory runs out (notebooks
01-05); `fit` trains the ladder of notebook 05 and its recorded runs (tools/ladder.py)."""

import math
import os
from pathlib import Path

import keras

from . import config
from .images import plural
from .timing import Throughput

__all__ = ["FiniteCheck", "backup_dir", "batch_size_of", "fit", "nonfinite", "save_model"]


def backup_dir(name):
    """Where BackupAndRestore keeps the state of training `name` (notebooks 01, 02, 04)."""
    return config.BUILD_DIR / "backup" / name


def nonfinite(variables):
    """How many numbers of `variables` (weights, optimizer state) are NaN or infinite."""
    return sum(int(keras.ops.sum(~keras.ops.isfinite(v))) for v in variables)


class FiniteCheck(keras.callbacks.Callback):
    """After each epoch, the loss and every weight and optimizer variable checked for NaN and
    infinity, counted into the logs (`nonfinite_weights`); training stops at the first one.
    A compiled graph can hide NaN weights behind a constant output and a finite loss, so the
    weights are checked, not only the loss (notebooks 05, 09)."""

    def __init__(self):
        super().__init__()
        self.problem = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        weights = nonfinite(self.model.weights)
        state = nonfinite(self.model.optimizer.variables) if self.model.optimizer else 0
        logs["nonfinite_weights"] = weights
        loss = logs.get("loss", 0.0)
        if weights or state or not math.isfinite(loss):
            self.problem = (f"Training stopped after epoch {epoch + 1}: {plural(weights, 'weight')}"
                            f" and {plural(state, 'optimizer value')} NaN or infinite (loss "
                            f"{loss:.4g}). The "
                            "network's output is no longer a function of its input. Lower the "
                            "learning rate, or train in float32 to see whether a 16-bit kernel "
                            "caused it (notebook 09).")
            self.model.stop_training = True


def fit(model, train, validation=None, epochs=1, name=None, callbacks=(), verbose="auto",
        on_nonfinite="raise"):
    """`model.fit` with a Throughput timer that adds `images_per_s` and `epoch_s` to each
    epoch's logs, a FiniteCheck (a NaN or infinite weight stops the run: "raise" a
    FloatingPointError that says so, or "stop" and return what was trained) and, with a
    `name`, BackupAndRestore: a killed training run resumes from its last finished epoch
    (notebook 05). Returns (history, timer)."""
    if on_nonfinite not in ("raise", "stop"):
        raise ValueError(f"on_nonfinite is 'raise' or 'stop', not {on_nonfinite!r}.")
    batch_size = batch_size_of(train)
    timer, check = Throughput(batch_size, to_logs=True), FiniteCheck()
    extra = [timer, check, *callbacks]
    if name:
        # double_checkpoint keeps the previous epoch's files: a backup cut off mid-write
        # (a killed kernel) is replaced by the one before it instead of failing the resume.
        extra.append(keras.callbacks.BackupAndRestore(str(backup_dir(name)),
                                                      delete_checkpoint=True,
                                                      double_checkpoint=True))
    try:
        # our loaders shuffle already; shuffle=False also avoids Keras' tf.data warning
        history = model.fit(train, validation_data=validation, epochs=epochs, callbacks=extra,
                            shuffle=False, verbose=verbose)
    except Exception as e:
        if "ResourceExhausted" in type(e).__name__ or "out of memory" in str(e).lower():
            raise MemoryError(
                f"Out of memory while training with batch size {batch_size}. "
                f"Try batch size {max(1, batch_size // 2)} (or a smaller image size).") from e
        raise
    if check.problem and on_nonfinite == "raise":
        raise FloatingPointError(check.problem)
    return history, timer


def save_model(model, path):
    """Save a .keras file atomically: a temporary file renamed into place (notebooks 03, 04)."""
    path = Path(path)
    problem = config.build_problem(path.parent)
    if problem:
        raise PermissionError(problem)
    partial = path.with_name(path.stem + ".partial.keras")
    model.save(partial)
    os.replace(partial, path)
    return path


def batch_size_of(dataset):
    """The batch size of a batched tf.data dataset of (pictures, labels) (notebook 05's records);
    where its shape does not say (no drop_remainder), that of its first batch."""
    size = dataset.element_spec[0].shape[0]
    return int(size if size is not None else next(iter(dataset))[0].shape[0])
