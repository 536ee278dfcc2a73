"""helpers.attribution (written from notebook 06's page): Grad-CAM's heat map lies on the
evidence for the class the model chose, with one sigmoid output (06) and with a softmax over
several classes (12's own classifier)."""

from helpers import attribution

import keras
import numpy as np
import pytest


def red_detector():
    """Conv(1x1) splits red and blue into two channels; the output reads only the red one."""
    model = keras.Sequential(
        [
            keras.Input((16, 16, 3)),
            keras.layers.Conv2D(2, 1, use_bias=False, name="split"),
            keras.layers.Flatten(),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    kernel = np.zeros((1, 1, 3, 2), "float32")
    kernel[0, 0, 0, 0] = kernel[0, 0, 2, 1] = 1.0
    dense = np.zeros((16 * 16 * 2, 1), "float32")
    dense[0::2] = 0.01  # every pixel's red channel counts, blue ones not at all
    model.layers[0].set_weights([kernel])
    model.layers[-1].set_weights([dense, np.zeros(1, "float32")])
    return model


@pytest.mark.parametrize("sign", [1, -1])  # the evidence for "dog" and for "cat"
def test_grad_cam_points_at_the_evidence_for_the_class_a_sigmoid_chose(sign):
    model = red_detector()
    model.layers[-1].kernel.assign(sign * model.layers[-1].kernel)
    picture = np.zeros((1, 16, 16, 3), "float32")
    picture[0, :, :8, 0] = 200.0  # red on the left: what the model looks at
    picture[0, :, 8:, 2] = 200.0  # blue on the right: ignored by the model
    heat = attribution.grad_cam(model, picture, "split")
    assert heat.shape == (1, 16, 16)
    assert heat.min() >= 0.0 and heat.max() == pytest.approx(1.0)
    assert heat[0, :, :8].mean() > 0.9 and heat[0, :, 8:].max() < 0.1


def colour_detector():
    """A base that splits red and blue into two maps, a softmax head: class 0 reads the red
    map, class 1 the blue one."""
    base = keras.Sequential(
        [keras.Input((16, 16, 3)), keras.layers.Conv2D(2, 1, use_bias=False)]
    )
    kernel = np.zeros((1, 1, 3, 2), "float32")
    kernel[0, 0, 0, 0] = kernel[0, 0, 2, 1] = 1.0
    base.layers[0].set_weights([kernel])
    head = keras.Sequential(
        [
            keras.Input((16, 16, 2)),
            keras.layers.Flatten(),
            keras.layers.Dense(2, activation="softmax"),
        ]
    )
    dense = np.zeros((16 * 16 * 2, 2), "float32")
    dense[0::2, 0] = dense[1::2, 1] = 0.01
    head.layers[-1].set_weights([dense, np.zeros(2, "float32")])
    return base, head


def test_grad_cam_points_at_the_evidence_for_the_class_a_softmax_chose():
    base, head = colour_detector()
    pictures = np.zeros((2, 16, 16, 3), "float32")
    pictures[0, :, :8, 0] = 200.0  # red on the left: class 0
    pictures[1, :, 8:, 2] = 200.0  # blue on the right: class 1
    assert head.predict(base.predict(pictures, verbose=0), verbose=0).argmax(
        1
    ).tolist() == [0, 1]
    in_order = keras.Sequential([base, *head.layers])  # as notebook 12 gives it
    heat = attribution.grad_cam(in_order, pictures, base.name)
    assert heat.shape == (2, 16, 16)
    assert heat.min() >= 0.0 and heat.max() == pytest.approx(1.0)
    assert heat[0, :, :8].mean() > 0.9 and heat[0, :, 8:].max() < 0.1
    assert heat[1, :, 8:].mean() > 0.9 and heat[1, :, :8].max() < 0.1
