"""Training the course's way: timed, resumable, explained when memory runs out (notebooks
01-05); `fit` trains the ladder of notebook 05 and its recorded runs (tools/ladder.py)."""

import os
from pathlib import Path

import keras

from . import config
from .timing import Throughput

__all__ = ["backup_dir", "batch_size_of", "fit", "save_model"]


def backup_dir(name):
    """Where BackupAndRestore keeps the state of training `name` (notebooks 01, 02, 04)."""
    return config.BUILD_DIR / "backup" / name


def fit(model, train, validation=None, epochs=1, name=None, callbacks=(), verbose="auto"):
    """`model.fit` with a Throughput timer that adds `images_per_s` and `epoch_s` to each
    epoch's logs and, with a `name`, BackupAndRestore: a killed training run again resumes
    from its last finished epoch (notebook 05). Returns (history, timer)."""
    batch_size = batch_size_of(train)
    timer = Throughput(batch_size, to_logs=True)
    extra = [timer, *callbacks]
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
