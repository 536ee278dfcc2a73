"""helpers.data: the Keras 2 style PyDataset and its augmentation (measured on
pictures, in Keras 2's units: shear in degrees, height and width zoomed apart, half mirrored)."""

import math

from helpers import data, models

import numpy as np
import pytest
from PIL import Image

SIZE = 401  # odd: the centre is a pixel row and column


def centre(profile):
    """Sub-pixel position of a bright line across one row or column of a picture."""
    weights = np.clip(profile, 0, None)
    return float((weights * np.arange(len(profile))).sum() / weights.sum())


def tilt(picture):
    """How far the bright middle row moved at its right end against its left end, as a share
    of the distance between the two columns measured."""
    return (centre(picture[:, -6, 0]) - centre(picture[:, 5, 0])) / (SIZE - 11)


def drawn(tmp_path, picture, draws=200):
    """`draws` pictures as PillowBatches augments `picture` (saved as a PNG), one per batch."""
    path = tmp_path / "picture.png"
    Image.fromarray(picture.astype("uint8")).save(path)
    loader = data.PillowBatches([str(path)], [0], picture.shape[0], 1, repeat=draws)
    return [loader[i][0][0] for i in range(draws)]


def test_a_shear_of_0_2_degrees_moves_a_corner_by_0_35_percent_of_the_width():
    lines = np.zeros((SIZE, SIZE, 3), "float32")
    lines[SIZE // 2] = 255
    expected = math.sin(math.radians(0.2))  # 0.0035: Keras 2 read shear_range in degrees
    assert tilt(data.keras2_transform(lines, shear_degrees=0.2)) == pytest.approx(
        expected, rel=0.05)
    assert tilt(data.keras2_transform(lines, shear_degrees=-0.2)) == pytest.approx(
        -expected, rel=0.05)
    assert tilt(data.keras2_transform(lines)) == pytest.approx(0, abs=1e-6)


@pytest.mark.processes
def test_the_loader_draws_keras_2s_shear_zoom_and_flip(tmp_path):
    lines = np.zeros((SIZE, SIZE, 3), "float32")
    lines[SIZE // 2] = 255
    tilts = np.abs([tilt(p) for p in drawn(tmp_path, lines)])
    most = math.sin(math.radians(models.SHEAR_DEGREES))
    # a zoom stretches the tilt by (width zoom / height zoom), at most 1.2 / 0.8
    assert tilts.max() <= most * 1.5 * 1.05 and tilts.max() >= most * 0.7
    assert tilts.max() < 0.01  # a fraction of 0.2 (Keras 3's unit) would tilt it up to 20 %

    square = np.zeros((SIZE, SIZE, 3), "float32")
    square[150:251, 150:251] = 255
    sides = np.array([((p[SIZE // 2, :, 0] > 127).sum() / 101, (p[:, SIZE // 2, 0] > 127).sum()
                       / 101) for p in drawn(tmp_path, square)])  # (width, height) / before
    assert sides.min() > 1 / 1.2 - 0.03 and sides.max() < 1 / 0.8 + 0.03
    assert sides.min() < 0.87 and sides.max() > 1.18  # the whole range 0.8..1.2 is drawn
    aspect = sides[:, 0] / sides[:, 1]
    assert aspect.min() < 0.8 and aspect.max() > 1.25  # width and height zoomed apart
    assert abs(np.corrcoef(sides[:, 0], sides[:, 1])[0, 1]) < 0.3

    left = np.zeros((8, 8, 3), "float32")
    left[:, :2] = 255  # bright on the left
    mirrored = [p[0, -1, 0] > 127 for p in drawn(tmp_path, left)]
    assert 0.35 < np.mean(mirrored) < 0.65 and all(p[0, 0, 0] > 127 or p[0, -1, 0] > 127
                                                   for p in drawn(tmp_path, left, 20))


def test_pillow_batches_are_real_augmented_pictures():
    paths, labels, _ = data.cats_dogs_files("train", limit=8)
    plain = data.PillowBatches(paths, labels, 64, 4, augment=False)
    augmented = data.PillowBatches(paths, labels, 64, 4, augment=True, repeat=3)
    x, y = plain[0]
    assert x.shape == (4, 64, 64, 3) and x.dtype == np.float32 and 0 <= x.min() < x.max() <= 255
    assert len(plain) == 2 and len(augmented) == 6
    assert not np.array_equal(augmented[0][0], x) and np.array_equal(augmented[0][1], y)
    with pytest.raises(ValueError, match="batch_size"):
        data.PillowBatches(paths, labels, 64, 100)


def test_a_batch_is_the_same_whichever_worker_makes_it_and_each_pass_draws_anew():
    # workers (threads or processes) ask for batches by index: its augmentation is fixed
    paths, labels, _ = data.cats_dogs_files("train", limit=8)
    loader = data.PillowBatches(paths, labels, 64, 4, repeat=2)
    assert np.array_equal(loader[1][0], loader[1][0])
    assert not np.array_equal(loader[0][0], loader[2][0]) and np.array_equal(loader[0][1],
                                                                             loader[2][1])
