"""Notebook 06's pictures and saved models: loading, checking, training when missing."""

from helpers import config, data, ladder

import keras
import numpy as np
import pytest


def test_out_of_dataset_pictures_load_as_0_255_batches():
    paths = data.sample_pictures()
    batch = data.load_pictures(paths, 64)
    assert batch.shape == (len(paths), 64, 64, 3) and batch.dtype == np.float32
    assert batch.max() > 1.0 and batch.min() >= 0.0


def test_a_broken_picture_is_named_in_the_error(tmp_path):
    broken = tmp_path / "holiday.jpg"
    broken.write_text("<html>not a picture</html>")
    with pytest.raises(ValueError, match="holiday.jpg cannot be used"):
        data.load_pictures([broken], 64)


def test_a_model_saved_in_one_profile_is_never_loaded_in_another(profile):
    profile("smoke")
    smoke = ladder.model_path()
    profile("sample")
    assert ladder.model_path() != smoke and ladder.model_path().parent == smoke.parent


def test_a_missing_model_is_trained_saved_and_then_loaded(profile, monkeypatch, tmp_path, capsys):
    profile("smoke")
    monkeypatch.setattr(config, "BUILD_DIR", tmp_path)
    model = ladder.trained_cats_dogs()
    assert ladder.model_path().exists() and "is missing" in capsys.readouterr().out
    again = ladder.trained_cats_dogs()
    assert "Loaded" in capsys.readouterr().out
    assert again.count_params() == model.count_params() == 813_217


# Keras 3.15 converts MobileNet's variables with np.array(copy=False) while saving
@pytest.mark.processes
@pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept a copy keyword")
def test_a_missing_transfer_model_is_trained_saved_and_loads_with_plain_keras(
        profile, monkeypatch, tmp_path, capsys):
    profile("smoke")
    monkeypatch.setattr(config, "BUILD_DIR", tmp_path)
    model = ladder.trained_transfer()
    path = ladder.model_path(ladder.TRANSFER)
    assert path == tmp_path / "models" / "cats_dogs_transfer_smoke.keras" and path.exists()
    assert "is missing (run notebook 03 for it)" in capsys.readouterr().out
    plain = keras.saving.load_model(path)  # no course code needed to read it back
    pictures = data.load_pictures(data.sample_pictures(), model.input_shape[1])
    np.testing.assert_allclose(plain.predict(pictures, verbose=0),
                               model.predict(pictures, verbose=0), atol=1e-6)
    ladder.trained_transfer()
    assert "Loaded" in capsys.readouterr().out
