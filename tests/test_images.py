"""helpers.images: every file of a messy folder is used or named with its reason."""

import os

from helpers import data, images

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


@pytest.fixture
def phone_and_zip_folder(tmp_path):
    """What a class folder gathered from phones, scanners, browsers and other people's zips
    holds besides good JPEGs: every entry must end up used, or named with a reason."""
    folder = tmp_path / "dogs"
    good = write_jpeg(folder / "good.jpg")
    rgb = np.random.default_rng(2).integers(0, 255, (30, 30, 3), dtype=np.uint8)
    Image.fromarray(rgb).convert("1").save(folder / "one_bit.bmp")  # Pillow yes, TF no
    Image.fromarray(rgb).save(folder / "scan.jpg", "TIFF")  # a scanner's TIFF, renamed
    Image.fromarray(rgb).save(folder / "scan.tif")
    (folder / "IMG_0001.HEIC").write_bytes(b"\x00\x00\x00\x18ftypheic" + bytes(64))
    Image.fromarray(rgb).save(folder / "photo.avif")  # Pillow decodes AVIF, TF does not
    Image.fromarray(rgb).save(folder / "progressive.JPG", "JPEG", progressive=True)
    os.symlink(folder / "gone.jpg", folder / "dangling.jpg")  # a link into nowhere
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.jpg"), "wb") as f:  # Latin-1 name
        f.write(good.read_bytes())
    (folder / "Thumbs.db").write_bytes(b"\xd0\xcf\x11\xe0" + bytes(60))
    (folder / "labels.csv").write_text("file,label\n")
    (folder / "._good.jpg").write_bytes(b"\x00\x05\x16\x07")  # macOS resource fork
    (folder / "album.jpg").mkdir()  # a folder with a picture's name
    write_jpeg(folder / "album.jpg" / "inside.jpg", seed=3)
    return folder


def test_every_entry_is_used_or_named_with_its_reason(phone_and_zip_folder):
    report = images.check_images(phone_and_zip_folder)
    used = {p.name for p in report.good}
    bad = {p.name: why for p, why in report.bad}
    unused = {p.name for p in report.unused}
    assert used == {"good.jpg", "progressive.JPG", "inside.jpg"}
    assert "TensorFlow's decoder refuses" in bad["one_bit.bmp"]
    assert "TIFF images cannot be decoded" in bad["scan.jpg"]
    assert "cannot be read" in bad["dangling.jpg"]
    assert "not valid UTF-8" in bad["caf\udce9.jpg"]
    assert unused == {"scan.tif", "IMG_0001.HEIC", "photo.avif", "Thumbs.db", "labels.csv",
                      "._good.jpg"}
    every = {p.name for p in phone_and_zip_folder.rglob("*") if not p.is_dir()}
    assert used | set(bad) | unused == every  # nothing vanished
    line = images.unused_line(report.unused)
    assert line.startswith("not used: 6 files") and "1 .heic" in line and "1 hidden" in line


def test_a_loader_reports_the_counts_and_never_crashes_on_such_a_folder(phone_and_zip_folder,
                                                                        capsys):
    from helpers import data

    write_jpeg(phone_and_zip_folder.parent / "cats" / "cat.jpg", seed=5)
    paths, labels, _ = data.labelled_files(phone_and_zip_folder.parent)
    out = capsys.readouterr().out
    assert len(paths) == 4 and "4 skipped" in out and "not used: 6 files" in out
    # what the check kept, the real pipeline decodes: all of it, in one pass
    batches = list(data.image_pipeline(paths, labels, 16, batch_size=2))
    assert sum(int(x.shape[0]) for x, _ in batches) == 4


def test_unusual_formats_are_kept_noted_and_decoded(tmp_path):
    rgb = np.random.default_rng(0).integers(0, 255, (20, 20, 3), dtype=np.uint8)
    Image.fromarray(rgb).save(tmp_path / "webp.jpg", "WEBP")
    Image.fromarray(rgb).convert("P").save(tmp_path / "palette.png", transparency=0)
    frames = [Image.fromarray(rgb), Image.fromarray(255 - rgb)]
    frames[0].save(tmp_path / "anim.gif", save_all=True, append_images=frames[1:])
    report = images.check_images(tmp_path)
    notes = {p.name: n for p, n in report.notes}
    assert len(report.good) == 3 and not report.bad
    assert "WEBP data in a .jpg file" in notes["webp.jpg"]
    assert "mode P" in notes["palette.png"]
    assert "animated (2 frames)" in notes["anim.gif"]
    paths = [str(p) for p in report.good]
    batch = next(iter(data.image_pipeline(paths, [0, 1, 0], 16, batch_size=3)))
    assert batch[0].shape == (3, 16, 16, 3)


def test_pillow_decompression_bomb_limit_is_reported(tmp_path, monkeypatch):
    Image.new("RGB", (300, 300)).save(tmp_path / "bomb.png")
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 10_000)
    ok, why = images.check_image(tmp_path / "bomb.png")
    assert not ok and "decompression bomb" in why
