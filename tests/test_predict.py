"""Predicting single pictures (notebook 06): input checks, the rescaling bug, saved models."""

from helpers import config, data, models, predict

import keras
import numpy as np
import pytest


def test_pictures_scaled_to_0_1_are_refused_with_the_reason():
    model = models.cats_dogs_net("0")
    with pytest.raises(ValueError, match="pass 0..255 pixels"):
        predict.dog_probability(model, np.full((1, 64, 64, 3), 0.5))
    with pytest.raises(ValueError, match=r"picture\[None\]"):
        predict.dog_probability(model, np.zeros((64, 64, 3)))


def test_without_rescaling_is_the_same_net_expecting_0_1_input():
    model = models.cats_dogs_net("2")
    tutorial = predict.without_rescaling(model)
    pictures = np.random.default_rng(0).uniform(0, 255, (4, 64, 64, 3)).astype("float32")
    ours = model.predict(pictures, verbose=0)
    theirs = tutorial.predict(pictures / 255.0, verbose=0)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert tutorial.count_params() == model.count_params()
    with pytest.raises(ValueError, match="no Rescaling"):
        predict.without_rescaling(tutorial)


def test_out_of_dataset_pictures_load_as_0_255_batches():
    paths = data.sample_pictures()
    batch = predict.load_pictures(paths, 64)
    assert batch.shape == (len(paths), 64, 64, 3) and batch.dtype == np.float32
    assert batch.max() > 1.0 and batch.min() >= 0.0


def test_a_broken_picture_is_named_in_the_error(tmp_path):
    broken = tmp_path / "holiday.jpg"
    broken.write_text("<html>not a picture</html>")
    with pytest.raises(ValueError, match="holiday.jpg cannot be used"):
        predict.load_pictures([broken], 64)
    assert predict.my_pictures(tmp_path / "missing") == []


def test_my_pictures_uses_the_good_ones_and_names_every_other_file(tmp_path, capsys):
    from conftest import write_jpeg

    good = write_jpeg(tmp_path / "rex.jpg")
    (tmp_path / "holiday.jpg").write_text("<html>not a picture</html>")
    (tmp_path / "scan.tif").write_bytes(good.read_bytes())
    (tmp_path / "README.md").write_text("the folder's own")
    assert predict.my_pictures(tmp_path) == [good]
    out = capsys.readouterr().out
    assert "holiday.jpg: not an image" in out
    assert "not used: 1 file that" in out and "1 .tif" in out and ".md" not in out


def test_a_model_saved_in_one_profile_is_never_loaded_in_another(profile):
    profile("smoke")
    smoke = predict.model_path()
    profile("sample")
    assert predict.model_path() != smoke and predict.model_path().parent == smoke.parent


def test_a_missing_model_is_trained_saved_and_then_loaded(profile, monkeypatch, tmp_path, capsys):
    profile("smoke")
    monkeypatch.setattr(config, "BUILD_DIR", tmp_path)
    model = predict.trained_cats_dogs()
    assert predict.model_path().exists() and "is missing" in capsys.readouterr().out
    again = predict.trained_cats_dogs()
    assert "Loaded" in capsys.readouterr().out
    assert again.count_params() == model.count_params() == 813_217


def test_a_two_output_softmax_answers_with_its_dog_column():
    model = keras.Sequential([keras.Input((4, 4, 3)), keras.layers.Flatten(),
                              keras.layers.Dense(2, activation="softmax")])
    model.layers[-1].set_weights([np.zeros((48, 2), "float32"), np.array([0.0, 2.0], "float32")])
    p = predict.dog_probability(model, np.full((3, 4, 4, 3), 100.0))
    np.testing.assert_allclose(p, np.exp(2) / (1 + np.exp(2)), rtol=1e-5)  # (cat, dog): dog
    three = keras.Sequential([keras.Input((4, 4, 3)), keras.layers.Flatten(),
                              keras.layers.Dense(3, activation="softmax")])
    with pytest.raises(ValueError, match="has 3 outputs"):
        predict.dog_probability(three, np.full((1, 4, 4, 3), 100.0))


def test_my_pictures_names_a_hidden_folder_with_its_count(tmp_path, capsys):
    from conftest import write_jpeg

    good = write_jpeg(tmp_path / "rex.jpg")
    write_jpeg(tmp_path / ".ipynb_checkpoints" / "rex-checkpoint.jpg")
    assert predict.my_pictures(tmp_path) == [good]
    assert "1 file in hidden folders (.ipynb_checkpoints/ 1)" in capsys.readouterr().out


# Keras 3.15 converts MobileNet's variables with np.array(copy=False) while saving
@pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept a copy keyword")
def test_a_missing_transfer_model_is_trained_saved_and_loads_with_plain_keras(
        profile, monkeypatch, tmp_path, capsys):
    profile("smoke")
    monkeypatch.setattr(config, "BUILD_DIR", tmp_path)
    model = predict.trained_transfer()
    path = predict.model_path(predict.TRANSFER)
    assert path == tmp_path / "models" / "cats_dogs_transfer_smoke.keras" and path.exists()
    assert "is missing (run notebook 03 for it)" in capsys.readouterr().out
    plain = keras.saving.load_model(path)  # no course code needed to read it back
    pictures = predict.load_pictures(data.sample_pictures(), model.input_shape[1])
    np.testing.assert_allclose(predict.dog_probability(plain, pictures),
                               predict.dog_probability(model, pictures), atol=1e-6)
    predict.trained_transfer()
    assert "Loaded" in capsys.readouterr().out
