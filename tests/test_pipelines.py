"""helpers.pipelines: the Keras 2 style PyDataset and the profile reader."""

from helpers import bench, data, pipelines

import keras
import numpy as np
import pytest


def test_pillow_batches_are_real_augmented_pictures():
    paths, labels, _ = data.cats_dogs_files("train", limit=8)
    plain = pipelines.PillowBatches(paths, labels, 64, 4, augment=False)
    augmented = pipelines.PillowBatches(paths, labels, 64, 4, augment=True, repeat=3)
    x, y = plain[0]
    assert x.shape == (4, 64, 64, 3) and x.dtype == np.float32 and 0 <= x.min() < x.max() <= 255
    assert len(plain) == 2 and len(augmented) == 6
    assert not np.array_equal(augmented[0][0], x) and np.array_equal(augmented[0][1], y)
    with pytest.raises(ValueError, match="batch_size"):
        pipelines.PillowBatches(paths, labels, 64, 100)


def test_read_profile_finds_the_steps_and_the_input_wait(tmp_path):
    paths, labels, _ = data.cats_dogs_files("train", limit=16)
    model = bench.build("cats_dogs_original")
    board = keras.callbacks.TensorBoard(str(tmp_path), profile_batch=(2, 3))
    model.fit(data.image_pipeline(paths, labels, 64, 4, repeat=True), steps_per_epoch=4,
              epochs=1, verbose=0, shuffle=False, callbacks=[board])
    summary = pipelines.read_profile(tmp_path)
    assert summary["steps"] == 2 and summary["step_ms"] > 0
    assert 0 <= summary["waiting_share"] <= 1 and "Conv2D" in " ".join(summary["top_ops_ms"])
    assert 0 < summary["input_busy_ms"] and 0 < summary["compute_busy_ms"]
    with pytest.raises(FileNotFoundError, match="profile_batch"):
        pipelines.read_profile(tmp_path / "empty")
