"""The mechanisms notebooks 03 and 06 write out on their pages. Notebook 03's are the helpers'
code (later notebooks and `predict.train_transfer` import them); Grad-CAM and the "not sure" band
live on notebook 06's page only, so the page's own code is tested."""

from helpers import models

import keras
import numpy as np
import page_source
import pytest
import tensorflow as tf


@pytest.mark.parametrize("name", ["frozen_base", "extract_features", "unfreeze_top_third"])
def test_notebook_03_writes_out_the_helpers_code(name):
    on_page = page_source.defined_on_page("03_transfer_learning", name)
    assert on_page == page_source.helper_source(getattr(models, name)), (
        f"notebook 03's {name} and models.{name} differ: change both together")


def on_page_06(name):
    """Notebook 06's `def name`, run as the page runs it (with its imports)."""
    namespace = {"keras": keras, "np": np, "tf": tf}
    exec(page_source.defined_on_page("06_cats_dogs_predictions", name), namespace)
    return namespace[name]


def red_detector():
    """Conv(1x1) splits red and blue into two channels; the output reads only the red one."""
    model = keras.Sequential([keras.Input((16, 16, 3)),
                              keras.layers.Conv2D(2, 1, use_bias=False, name="split"),
                              keras.layers.Flatten(),
                              keras.layers.Dense(1, activation="sigmoid")])
    kernel = np.zeros((1, 1, 3, 2), "float32")
    kernel[0, 0, 0, 0] = kernel[0, 0, 2, 1] = 1.0
    dense = np.zeros((16 * 16 * 2, 1), "float32")
    dense[0::2] = 0.01  # every pixel's red channel counts, blue ones not at all
    model.layers[0].set_weights([kernel])
    model.layers[-1].set_weights([dense, np.zeros(1, "float32")])
    return model


@pytest.mark.parametrize("sign", [1, -1])  # the evidence for "dog" and for "cat"
def test_grad_cam_on_page_06_points_at_the_evidence(sign):
    model = red_detector()
    model.layers[-1].kernel.assign(sign * model.layers[-1].kernel)
    picture = np.zeros((1, 16, 16, 3), "float32")
    picture[0, :, :8, 0] = 200.0  # red on the left: what the model looks at
    picture[0, :, 8:, 2] = 200.0  # blue on the right: ignored by the model
    heat = on_page_06("grad_cam")(model, picture, "split")
    assert heat.shape == (1, 16, 16)
    assert heat.min() >= 0.0 and heat.max() == pytest.approx(1.0)
    assert heat[0, :, :8].mean() > 0.9 and heat[0, :, 8:].max() < 0.1


def test_not_sure_band_on_page_06():
    verdicts = on_page_06("verdicts")
    p = [0.05, 0.4, 0.5, 0.6, 0.95]
    assert verdicts(p) == ["cat", "cat", "not sure", "dog", "dog"]
    assert verdicts(p, unsure=(0.3, 0.7)) == ["cat"] + ["not sure"] * 3 + ["dog"]
    with pytest.raises(ValueError, match="low <= high"):
        verdicts([0.5], unsure=(0.7, 0.3))
