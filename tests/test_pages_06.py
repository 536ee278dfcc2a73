"""The mechanisms notebook 06 writes out on its page (p(dog), the tutorial's setup, the "not sure"
band) live on the page only, so the page is tested. (Its Grad-CAM is copied into the helpers by
`make pages`: tests/test_attribution.py.)"""

from helpers import data, folders, images, models

import keras
import numpy as np
import page_source
import pytest
import tensorflow as tf


def on_page_06(name):
    """Notebook 06's `def name`, run as the page runs it (with its imports)."""
    namespace = dict(
        keras=keras, np=np, tf=tf, data=data, folders=folders, images=images
    )
    exec(page_source.defined_on_page("06_cats_dogs_predictions", name), namespace)
    return namespace[name]


def test_not_sure_band_on_page_06():
    verdicts = on_page_06("verdicts")
    p = [0.05, 0.4, 0.5, 0.6, 0.95]
    assert verdicts(p) == ["cat", "cat", "not sure", "dog", "dog"]
    assert verdicts(p, unsure=(0.3, 0.7)) == ["cat"] + ["not sure"] * 3 + ["dog"]
    with pytest.raises(ValueError, match="low <= high"):
        verdicts([0.5], unsure=(0.7, 0.3))


def test_pictures_scaled_to_0_1_are_refused_with_the_reason():
    model = models.cats_dogs_net("0")
    with pytest.raises(ValueError, match="pass 0..255 pixels"):
        on_page_06("dog_probability")(model, np.full((1, 64, 64, 3), 0.5))
    with pytest.raises(ValueError, match=r"picture\[None\]"):
        on_page_06("dog_probability")(model, np.zeros((64, 64, 3)))


def test_without_rescaling_is_the_same_net_expecting_0_1_input():
    model = models.cats_dogs_net("2")
    tutorial = on_page_06("without_rescaling")(model)
    pictures = (
        np.random.default_rng(0).uniform(0, 255, (4, 64, 64, 3)).astype("float32")
    )
    ours = model.predict(pictures, verbose=0)
    theirs = tutorial.predict(pictures / 255.0, verbose=0)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert tutorial.count_params() == model.count_params()
    with pytest.raises(ValueError, match="no Rescaling"):
        on_page_06("without_rescaling")(tutorial)


def test_a_two_output_softmax_answers_with_its_dog_column():
    model = keras.Sequential(
        [
            keras.Input((4, 4, 3)),
            keras.layers.Flatten(),
            keras.layers.Dense(2, activation="softmax"),
        ]
    )
    model.layers[-1].set_weights(
        [np.zeros((48, 2), "float32"), np.array([0.0, 2.0], "float32")]
    )
    p = on_page_06("dog_probability")(model, np.full((3, 4, 4, 3), 100.0))
    # (cat, dog): dog
    np.testing.assert_allclose(p, np.exp(2) / (1 + np.exp(2)), rtol=1e-5)
    three = keras.Sequential(
        [
            keras.Input((4, 4, 3)),
            keras.layers.Flatten(),
            keras.layers.Dense(3, activation="softmax"),
        ]
    )
    with pytest.raises(ValueError, match="has 3 outputs"):
        on_page_06("dog_probability")(three, np.full((1, 4, 4, 3), 100.0))


def test_my_pictures_uses_the_good_ones_and_names_every_other_file(tmp_path, capsys):
    from conftest import write_jpeg

    assert on_page_06("my_pictures")(tmp_path / "missing") == []
    good = write_jpeg(tmp_path / "rex.jpg")
    (tmp_path / "holiday.jpg").write_text("<html>not a picture</html>")
    (tmp_path / "scan.tif").write_bytes(good.read_bytes())
    (tmp_path / "README.md").write_text("the folder's own")
    assert on_page_06("my_pictures")(tmp_path) == [good]
    out = capsys.readouterr().out
    assert "holiday.jpg: not an image" in out
    assert "not used: 1 file that" in out and "1 .tif" in out and ".md" not in out


def test_my_pictures_names_a_hidden_folder_with_its_count(tmp_path, capsys):
    from conftest import write_jpeg

    good = write_jpeg(tmp_path / "rex.jpg")
    write_jpeg(tmp_path / ".ipynb_checkpoints" / "rex-checkpoint.jpg")
    assert on_page_06("my_pictures")(tmp_path) == [good]
    assert "1 file in hidden folders (.ipynb_checkpoints/ 1)" in capsys.readouterr().out
