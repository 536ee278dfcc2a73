"""The tutorial's augmentation, translated with Keras 2's units: shear in degrees, x/y zoom
drawn independently, horizontal flip. Measured on pictures, not read from the layers' settings."""

import math

from helpers import models

import numpy as np
import pytest

SIZE = 401  # odd: the zoom's centre (SIZE - 1) / 2 is a pixel row and column


def centre(profile):
    """Sub-pixel position of a bright line across one row or column of a picture."""
    weights = np.clip(profile, 0, None)
    return float((weights * np.arange(len(profile))).sum() / weights.sum())


def lines_picture():
    """A black picture with one white line across its middle row and one down its middle column."""
    picture = np.zeros((1, SIZE, SIZE, 3), "float32")
    picture[:, SIZE // 2, :, :] = 255
    picture[:, :, SIZE // 2, :] = 255
    return picture


def tilts(layer, draws=200):
    """The largest tilt of either line per draw: how far one end moved against the other,
    as a share of the picture's side."""
    picture, result = lines_picture(), []
    for _ in range(draws):
        out = np.asarray(layer(picture, training=True))[0, :, :, 0]
        row_left, row_right = centre(out[:, 5]), centre(out[:, -6])
        col_top, col_bottom = centre(out[5, :]), centre(out[-6, :])
        result.append(max(abs(row_right - row_left), abs(col_bottom - col_top)) / (SIZE - 11))
    return np.array(result)


@pytest.mark.processes
def test_shear_is_a_fraction_of_a_degree_as_in_keras_2():
    # Keras 2's shear_range=0.2 is 0.2 degrees: one side moves sin(0.2 deg) = 0.35 % of the
    # picture against the other. Keras 3's RandomShear(0.2) would move it up to 20 %.
    most = math.sin(math.radians(models.SHEAR_DEGREES))
    shear = models.augmentation(seed=3).layers[0]
    measured = tilts(shear)
    assert measured.max() <= most * 1.05
    assert measured.max() >= most * 0.7  # it does shear, nearly up to its limit
    # the whole augmentation (zoom can stretch a tilt by 1.2 / 0.8) stays below 1 %
    assert tilts(models.augmentation(seed=4), draws=100).max() < 0.01


def square_sides(layer, draws=200):
    """Width and height of a centred white square after each draw, as a share of before."""
    picture = np.zeros((1, SIZE, SIZE, 3), "float32")
    picture[:, 150:251, 150:251, :] = 255
    sides = []
    for _ in range(draws):
        out = np.asarray(layer(picture, training=True))[0, :, :, 0]
        sides.append(((out[SIZE // 2] > 127).sum() / 101, (out[:, SIZE // 2] > 127).sum() / 101))
    return np.array(sides)


def test_zoom_draws_width_and_height_independently_from_0_8_to_1_2():
    zoom = models.augmentation(seed=5).layers[1]
    sides = square_sides(zoom)
    # a zoom factor z shows 1/z of the picture: sides from 1/1.2 to 1/0.8 of their size
    assert sides.min() > 1 / 1.2 - 0.03 and sides.max() < 1 / 0.8 + 0.03
    assert sides.min() < 0.87 and sides.max() > 1.18  # the whole range is used
    aspect = sides[:, 0] / sides[:, 1]
    assert aspect.min() < 0.8 and aspect.max() > 1.25  # width and height change separately
    assert abs(np.corrcoef(sides[:, 0], sides[:, 1])[0, 1]) < 0.3


def test_flip_mirrors_left_and_right_about_half_the_time():
    picture = np.zeros((1, 8, 8, 3), "float32")
    picture[:, :, :2, :] = 255  # bright on the left
    flip = models.augmentation(seed=6).layers[2]
    flipped = [np.asarray(flip(picture, training=True))[0, 0, -1, 0] > 127 for _ in range(200)]
    assert 0.35 < np.mean(flipped) < 0.65


def test_augmentation_leaves_pictures_alone_outside_training():
    picture = np.random.default_rng(0).uniform(0, 255, (2, 64, 64, 3)).astype("float32")
    out = models.augmentation(seed=1)(picture, training=False)
    np.testing.assert_array_equal(np.asarray(out), picture)
