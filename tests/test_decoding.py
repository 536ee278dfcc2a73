"""helpers.decoding: a picture decoded as a viewer shows it, upright by its EXIF orientation, in
its true colours, and resized for a network without a pixel lost to the turn."""

from helpers import config, decoding

import numpy as np
import pytest
from PIL import Image, ImageOps


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP"])
def test_every_exif_orientation_is_applied_as_pillow_applies_it(tmp_path, fmt):
    import tensorflow as tf

    blocks = np.random.default_rng(4).integers(0, 255, (3, 5, 3), dtype=np.uint8)
    # 24 x 40 in blocks: JPEG keeps them well
    rgb = blocks.repeat(8, axis=0).repeat(8, axis=1)
    rgb[:8, :8] = 255  # a white corner, so that every turn and mirror looks different
    options = {
        "JPEG": dict(quality=100, subsampling=0),
        "PNG": {},
        "WEBP": dict(lossless=True),
    }
    options = options[fmt]
    for orientation in range(1, 9):
        exif = Image.Exif()
        exif[0x0112] = orientation
        path = tmp_path / f"o{orientation}.{fmt.lower()}"
        Image.fromarray(rgb).save(path, fmt, exif=exif, **options)
        viewer = np.asarray(
            ImageOps.exif_transpose(Image.open(path)).convert("RGB"), "float32"
        )
        ours = decoding.decode_picture(tf.io.read_file(str(path))).numpy()
        assert ours.shape == viewer.shape, (fmt, orientation)
        assert np.abs(ours - viewer).mean() < 3, (fmt, orientation)


def test_a_photo_stored_on_its_side_is_turned_without_changing_a_pixel(tmp_path):
    """Orientation 6 is a transpose and a mirror of the stored uint8 pixels: the picture equals
    the same photo stored upright, exactly (no float copy, no rounding), in gray and RGB."""
    import tensorflow as tf

    rgb = np.asarray(
        Image.open(config.DATA_DIR / "sample_images" / "parrot.jpg").convert("RGB")
    )
    for mode in ("RGB", "L"):
        upright = Image.fromarray(rgb).convert(mode)
        upright.save(tmp_path / f"upright_{mode}.png")
        exif = Image.Exif()
        exif[0x0112] = 6  # "turn it 90 degrees clockwise to show it"
        upright.rotate(90, expand=True).save(tmp_path / f"side_{mode}.png", exif=exif)
        read = [
            decoding.decode_picture(
                tf.io.read_file(str(tmp_path / f"{how}_{mode}.png"))
            ).numpy()
            for how in ("upright", "side")
        ]
        assert read[0].dtype == read[1].dtype == np.uint8 and read[0].shape[-1] == 3
        np.testing.assert_array_equal(read[1], read[0])
        # turned after resizing: the same picture
        small = [
            decoding.read_picture(str(tmp_path / f"{how}_{mode}.png"), (48, 40)).numpy()
            for how in ("upright", "side")
        ]
        assert small[0].shape == small[1].shape == (48, 40, 3)
        # float32 rounding, of 255
        np.testing.assert_allclose(small[1], small[0], atol=0.01)


def test_a_cmyk_jpeg_has_the_colours_other_programs_show(tmp_path):
    rgb = np.zeros((16, 32, 3), np.uint8)
    rgb[:, :16] = [220, 40, 40]
    rgb[:, 16:] = [40, 40, 220]
    Image.fromarray(rgb).convert("CMYK").save(tmp_path / "print.jpg", quality=95)
    viewer = np.asarray(Image.open(tmp_path / "print.jpg").convert("RGB"), "float32")
    ours = decoding.read_picture(str(tmp_path / "print.jpg"), (16, 32)).numpy()
    assert np.abs(ours - viewer).mean() < 8 and np.abs(ours - rgb).mean() < 20
