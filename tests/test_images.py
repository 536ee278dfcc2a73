import os

from helpers import images

import numpy as np
import pytest
from conftest import write_jpeg
from PIL import Image


@pytest.fixture
def messy_folder(tmp_path):
    """A folder of deliberately broken and unusual files, as real downloads contain."""
    folder = tmp_path / "cats"
    good = write_jpeg(folder / "good.jpg")
    (folder / "truncated.jpg").write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    (folder / "empty.jpg").write_bytes(b"")
    (folder / "page.jpg").write_text("<html><body>404 Not Found</body></html>")
    rgb = np.random.default_rng(1).integers(0, 255, (30, 30, 3), dtype=np.uint8)
    Image.fromarray(rgb).save(folder / "png_named.jpg", "PNG")
    Image.fromarray(rgb[:, :, 0]).save(folder / "gray.jpg", "JPEG")
    Image.fromarray(rgb).convert("CMYK").save(folder / "cmyk.jpg", "JPEG")
    Image.fromarray(rgb[:, :, 0].astype("uint16") * 256).save(folder / "deep16.png")
    Image.new("L", (9000, 9000)).save(folder / "huge.png")  # 81 megapixels, small file
    (folder / ".DS_Store").write_bytes(b"\x00\x01")
    (folder / "notes.txt").write_text("not an image suffix")
    return folder


def test_every_bad_file_is_reported_by_path_and_reason(messy_folder):
    report = images.check_images(messy_folder)
    bad = {p.name: why for p, why in report.bad}
    assert set(bad) == {"truncated.jpg", "empty.jpg", "page.jpg", "huge.png"}
    assert "truncated" in bad["truncated.jpg"]
    assert "empty" in bad["empty.jpg"]
    assert "not an image" in bad["page.jpg"] and "text or HTML" in bad["page.jpg"]
    assert "too large" in bad["huge.png"]


def test_usable_oddities_are_kept_with_a_note(messy_folder):
    report = images.check_images(messy_folder)
    good = {p.name for p in report.good}
    assert good == {"good.jpg", "png_named.jpg", "gray.jpg", "cmyk.jpg", "deep16.png"}
    notes = {p.name: n for p, n in report.notes}
    assert "PNG data in a .jpg file" in notes["png_named.jpg"]
    assert "CMYK" in notes["cmyk.jpg"]
    assert "gray.jpg" not in notes  # grayscale is simply converted


def test_the_pipeline_decodes_every_kept_file(messy_folder):
    import tensorflow as tf

    for path in images.check_images(messy_folder).good:
        image = tf.io.decode_image(tf.io.read_file(str(path)), channels=3, expand_animations=False)
        assert image.shape[-1] == 3, path


def test_summary_names_each_skipped_file(messy_folder):
    text = images.check_images(messy_folder).summary()
    assert text.startswith("5 usable images, 4 skipped")
    assert "truncated.jpg" in text


def test_hidden_files_and_link_loops_do_not_hang(tmp_path):
    write_jpeg(tmp_path / "a" / "x.jpg")
    write_jpeg(tmp_path / "a" / "._x.jpg")
    os.symlink(tmp_path / "a", tmp_path / "a" / "loop")
    report = images.check_images(tmp_path)
    assert [p.name for p in report.good] == ["x.jpg"]


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a folder"):
        images.check_images(tmp_path / "nowhere")
