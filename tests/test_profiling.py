"""helpers.timing: a real TensorFlow profile of a few training steps, read back."""

from helpers import data, models, timing

import keras
import pytest


def test_read_profile_finds_the_steps_and_the_input_wait(tmp_path):
    paths, labels, _ = data.cats_dogs_files("train", limit=16)
    model = models.build("cats_dogs_original")
    board = keras.callbacks.TensorBoard(str(tmp_path), profile_batch=(2, 3))
    model.fit(data.image_pipeline(paths, labels, 64, 4, repeat=True), steps_per_epoch=4,
              epochs=1, verbose=0, shuffle=False, callbacks=[board])
    summary = timing.read_profile(tmp_path)
    assert summary["steps"] == 2 and summary["step_ms"] > 0
    assert 0 <= summary["waiting_share"] <= 1 and "Conv2D" in " ".join(summary["top_ops_ms"])
    assert 0 < summary["input_busy_ms"]
    convs = sum(ms for op, ms in summary["ops_ms"].items() if "Conv2D" in op)
    assert convs / sum(summary["ops_ms"].values()) > 0.1  # a large share, never all of it
    assert set(summary["top_ops_ms"]) <= set(summary["ops_ms"])
    with pytest.raises(FileNotFoundError, match="profile_batch"):
        timing.read_profile(tmp_path / "empty")
