"""Run a training the way the course does every time: timed, resumable, and explained when it fails.

    history, timer = training.fit(model, train_ds, val_ds, epochs=5, name="mnist_cnn")
"""

import os
from pathlib import Path

import keras

from . import config
from .timing import Throughput

__all__ = ["backup_dir", "batch_size_of", "fit", "save_model"]


def backup_dir(name):
    """Where the resumable state of training `name` is kept (under build/)."""
    return config.BUILD_DIR / "backup" / name


def fit(model, train, validation=None, epochs=1, name=None, batch_size=None, callbacks=(),
        resume=True, verbose="auto"):
    """`model.fit` plus a Throughput timer (which adds `images_per_s` and `epoch_s` to each
    epoch's logs, so History and a CSVLogger keep them) and, with a `name`, BackupAndRestore.

    A training killed mid-way resumes from its last finished epoch when run again with the
    same name; the backup is removed once it completes. Returns (history, timer).
    """
    batch_size = batch_size or batch_size_of(train)
    timer = Throughput(batch_size, to_logs=True)
    extra = [timer, *callbacks]
    if name and resume:
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
    return history, timer


def save_model(model, path):
    """Save a .keras file atomically: write a temporary file, then rename it into place."""
    path = Path(path)
    problem = config.build_problem(path.parent)
    if problem:
        raise PermissionError(problem)
    partial = path.with_name(path.stem + ".partial.keras")
    model.save(partial)
    os.replace(partial, path)
    return path


def batch_size_of(dataset):
    """The batch size of a batched tf.data dataset (from its first element's spec)."""
    spec = getattr(dataset, "element_spec", None)
    first = spec[0] if isinstance(spec, tuple) else spec
    size = getattr(first, "shape", [None])[0] if first is not None else None
    if size is None:  # unknown static size: look at one batch
        size = int(keras.ops.shape(next(iter(dataset))[0])[0])
    return int(size)

