"""tools/photo_cost.py: the phone photos it writes, and the figures it prints."""

from tools import photo_cost

import numpy as np
import pytest
from PIL import Image, ImageOps


def test_the_two_kinds_show_the_same_portrait_photo(tmp_path):
    paths = photo_cost.write_photos(tmp_path, photos=2, megapixels=0.3)
    for upright, side in zip(*paths.values()):
        stored = Image.open(side)
        assert stored.width > stored.height  # on its side, as the sensor saw it
        assert stored.getexif()[0x0112] == 6
        shown = np.asarray(ImageOps.exif_transpose(stored), "float32")
        straight = np.asarray(Image.open(upright), "float32")
        assert shown.shape == straight.shape and shown.shape[0] > shown.shape[1]
        # the same picture, but for JPEG's losses
        assert np.abs(shown - straight).mean() < 3


@pytest.mark.processes
def test_it_prints_memory_and_time_of_both_kinds(capsys):
    assert (
        photo_cost.main(["--photos", "2", "--megapixels", "0.5", "--size", "32"]) == 0
    )
    printed = capsys.readouterr().out
    assert "upright" in printed and "portrait (EXIF 6)" in printed
    assert "portrait / upright: memory" in printed and "time" in printed
