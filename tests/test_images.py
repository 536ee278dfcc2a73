"""helpers.images: every file of a messy folder is used or named with its reason."""

import os
import struct
import zlib
from pathlib import Path

from helpers import config, data, decoding, folders, images

import numpy as np
import pytest
from conftest import write_jpeg
from PIL import Image, ImageOps


@pytest.fixture
def messy_folder(tmp_path):
    """A folder of deliberately broken and unusual files, as real downloads contain."""
    folder = tmp_path / "cats"
    good = write_jpeg(folder / "good.jpg")
    (folder / "truncated.jpg").write_bytes(
        good.read_bytes()[: good.stat().st_size // 2]
    )
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
    for path in images.check_images(messy_folder).good:
        image = decoding.read_picture(str(path), (16, 16))
        assert image.shape == (16, 16, 3), path


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
    with open(
        os.path.join(os.fsencode(folder), b"caf\xe9.jpg"), "wb"
    ) as f:  # Latin-1 name
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
    assert unused == {
        "scan.tif",
        "IMG_0001.HEIC",
        "photo.avif",
        "Thumbs.db",
        "labels.csv",
        "._good.jpg",
    }
    every = {p.name for p in phone_and_zip_folder.rglob("*") if not p.is_dir()}
    assert used | set(bad) | unused == every  # nothing vanished
    line = images.unused_line(report.unused)
    assert line.startswith("not used: 6 files")
    assert "1 .heic" in line and "1 macOS ._ (AppleDouble)" in line
    assert (
        "1 Windows Thumbs.db" in line
        and "convert the .avif, .heic and .tif pictures" in line
    )


def test_a_loader_reports_the_counts_and_never_crashes_on_such_a_folder(
    phone_and_zip_folder, capsys
):
    from helpers import data, folders

    write_jpeg(phone_and_zip_folder.parent / "cats" / "cat.jpg", seed=5)
    paths, labels, _ = folders.labelled_files(phone_and_zip_folder.parent)
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


def _png(width, height):
    """A tiny PNG file whose header claims width x height pixels (a decompression bomb)."""

    def chunk(kind, body):
        return (
            struct.pack(">I", len(body))
            + kind
            + body
            + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )


def test_decompression_bombs_are_refused_before_any_decoding(tmp_path):
    # 900 MP in a 100-byte file
    (tmp_path / "bomb.png").write_bytes(_png(30_000, 30_000))
    ok, why = images.check_image(tmp_path / "bomb.png")
    assert not ok and "too large to decode safely (30000x30000 pixels" in why
    jpeg = bytearray(write_jpeg(tmp_path / "small.jpg").read_bytes())
    start = jpeg.index(b"\xff\xc0") + 5  # the frame header: height, then width
    # 4.2 GP: 66 MP even at 1/8
    jpeg[start : start + 4] = struct.pack(">HH", 65_000, 65_000)
    (tmp_path / "bomb.jpg").write_bytes(jpeg)
    ok, why = images.check_image(tmp_path / "bomb.jpg")
    assert not ok and "even at 1/8 scale (65000x65000 pixels" in why


# --- pictures as a phone, an app or another operating system leaves them -------------------

# A raw EXIF block with only the orientation tag, in both byte orders cameras write:
# "MM" (big-endian: iPhones, Pillow) and "II" (little-endian: most Android phones).
EXIF = {
    "big-endian": b"Exif\x00\x00MM\x00*\x00\x00\x00\x08\x00\x01\x01\x12\x00\x03\x00\x00\x00\x01"
    b"\x00%c\x00\x00\x00\x00\x00\x00",
    "little-endian": b"Exif\x00\x00II*\x00\x08\x00\x00\x00\x01\x00\x12\x01\x03\x00\x01\x00"
    b"\x00\x00%c\x00\x00\x00\x00\x00\x00\x00",
}


def portrait():
    """An upright picture 40 wide, 60 high: red top half, blue bottom half."""
    array = np.zeros((60, 40, 3), np.uint8)
    array[:30, :, 0] = array[30:, :, 2] = 255
    return Image.fromarray(array)


def top_is_red(picture):
    """True when the top rows of a (height, width, 3) picture are red and the bottom ones blue."""
    picture = np.asarray(picture, dtype="float32")
    quarter = len(picture) // 4
    top, bottom = picture[:quarter].mean((0, 1)), picture[-quarter:].mean((0, 1))
    return top[0] > 200 > top[2] and bottom[2] > 200 > bottom[0]


@pytest.mark.parametrize("order", EXIF)
def test_a_phone_photo_is_read_upright_by_the_pipeline_and_by_predict(tmp_path, order):

    import tensorflow as tf

    # stored as the phone's sensor saw it, turned 90 degrees anticlockwise, with orientation 6
    # ("turn it 90 degrees clockwise to show it")
    path = tmp_path / "IMG_0042.JPG"
    portrait().rotate(90, expand=True).save(
        path, "JPEG", quality=95, exif=EXIF[order] % 6
    )
    stored = tf.io.decode_jpeg(tf.io.read_file(str(path))).numpy()
    # as stored: on its side
    assert stored.shape == (40, 60, 3) and not top_is_red(stored)
    assert top_is_red(ImageOps.exif_transpose(Image.open(path)))  # as a viewer shows it
    assert int(decoding.exif_orientation(tf.io.read_file(str(path)))) == 6
    assert decoding.decode_picture(tf.io.read_file(str(path))).shape == (60, 40, 3)
    batch, _ = next(iter(data.image_pipeline([str(path)], [0], 32, batch_size=1)))
    assert top_is_red(batch[0])  # what the network trains on
    assert top_is_red(data.load_pictures([path], 32)[0])  # what it is asked about
    ok, note = images.check_image(path)
    assert ok and "turned upright as its EXIF orientation (6) says" in note


# Pillow, writing the broken block
@pytest.mark.filterwarnings("ignore:Corrupt EXIF data")
def test_a_picture_without_exif_or_with_a_broken_one_is_left_as_it_is(tmp_path):
    import tensorflow as tf

    plain = write_jpeg(tmp_path / "plain.jpg")
    assert int(decoding.exif_orientation(tf.io.read_file(str(plain)))) == 1
    # an orientation entry pointing past the block's end
    broken = tmp_path / "broken_exif.jpg"
    Image.open(plain).save(broken, exif=b"Exif\x00\x00MM\x00*\xff\xff\xff\xf0")
    assert int(decoding.exif_orientation(tf.io.read_file(str(broken)))) == 1
    assert images.check_image(broken)[0]


def test_transparent_parts_are_shown_on_white_as_viewers_show_them(tmp_path):
    rgba = np.zeros((20, 20, 4), np.uint8)
    # the right half a red object; the left half transparent
    rgba[:, 10:] = [200, 30, 30, 255]
    Image.fromarray(rgba, "RGBA").save(tmp_path / "sticker.png")
    Image.fromarray(rgba, "RGBA").save(tmp_path / "sticker.webp", lossless=True)
    Image.fromarray(rgba[..., [0, 3]], "LA").save(tmp_path / "gray_alpha.png")
    report = images.check_images(tmp_path)
    # an RGBA WebP too, which TF's own refuses
    assert len(report.good) == 3 and not report.bad
    for path in report.good:
        picture = decoding.read_picture(str(path), (20, 20)).numpy()
        # white where it is transparent, not black
        assert picture[:, :8].min() > 250, path
        assert picture[:, 12:, 1].max() < 60 or "gray" in path.name, path
    assert all(
        "transparent parts are shown on white" in note for _, note in report.notes
    )


def test_hidden_folders_inside_a_class_folder_are_named_with_their_counts(tmp_path):
    write_jpeg(tmp_path / "cats" / "tom.jpg")
    write_jpeg(tmp_path / "cats" / ".ipynb_checkpoints" / "tom-checkpoint.jpg")
    write_jpeg(tmp_path / "cats" / ".ipynb_checkpoints" / "deep" / "x.jpg", seed=1)
    write_jpeg(tmp_path / "cats" / "garden" / ".thumbnails" / "small.jpg", seed=2)
    (tmp_path / "cats" / "__MACOSX").mkdir()  # what unzipping a Mac's zip leaves
    (tmp_path / "cats" / "__MACOSX" / "._tom.jpg").write_bytes(b"\x00\x05\x16\x07")
    report = images.check_images(tmp_path / "cats")
    assert [p.name for p in report.good] == ["tom.jpg"] and not report.unused
    line = images.unused_line(report.unused, report.hidden)
    assert (
        "not used: 4 files in hidden folders (.ipynb_checkpoints/ 2, .thumbnails/ 1, "
        "__MACOSX/ 1)"
    ) in line


def test_the_not_used_line_counts_in_good_english():
    one = images.unused_line([Path("cats/notes.txt")])
    two = images.unused_line([Path("cats/notes.txt"), Path("cats/desktop.ini")])
    assert one.startswith("not used: 1 file ") and "(1 .txt)" in one
    assert (
        two.startswith("not used: 2 files ")
        and "(1 .txt, 1 Windows desktop.ini)" in two
    )
    assert "1 file in hidden folders" in images.unused_line(
        [], [(Path("c/.thumbnails"), 1)]
    )


def test_names_and_formats_from_other_systems_are_used_or_named(tmp_path):
    rgb = np.random.default_rng(6).integers(0, 255, (20, 20, 3), dtype=np.uint8)
    for name in ("A.JPEG", "B.PNG", "C.Jpg", "saved_by_edge.jfif", "D.WEBP", "E.GIF"):
        Image.fromarray(rgb).save(
            tmp_path / name, {".jfif": "JPEG"}.get(Path(name).suffix)
        )
    # renamed
    (tmp_path / "IMG_0007.jpg").write_bytes(b"\x00\x00\x00\x18ftypheic" + bytes(64))
    (tmp_path / "desktop.ini").write_text("[.ShellClassInfo]\n")
    (tmp_path / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    report = images.check_images(tmp_path)
    assert len(report.good) == 6
    assert report.bad == [
        (
            tmp_path / "IMG_0007.jpg",
            "a HEIC picture (an iPhone's format), "
            "which the pipeline cannot decode; convert it to JPEG",
        )
    ]
    line = images.unused_line(report.unused)
    assert "1 Windows desktop.ini" in line and "1 macOS .DS_Store" in line


def test_the_check_keeps_a_digest_of_each_picture_so_copies_can_be_found(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    a = write_jpeg(tmp_path / "pics" / "a.jpg")
    (tmp_path / "pics" / "copy of a.jpg").write_bytes(a.read_bytes())
    write_jpeg(tmp_path / "pics" / "b.jpg", seed=1)
    for _ in range(2):  # the second time from the cache
        digests = images.check_images(tmp_path / "pics").digests
        assert len(digests) == 3 and len(set(digests.values())) == 2


def test_copies_by_pixels_are_copies_whatever_their_bytes(tmp_path, monkeypatch):
    """A comment segment added, the same pixels saved as PNG: one picture, one digest; turned
    by EXIF, or one pixel changed, it is another picture."""
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    a = write_jpeg(tmp_path / "pics" / "a.jpg")
    comment = (
        b"holiday 2025"  # a COM segment after the start marker: the same coded pixels
    )
    (tmp_path / "pics" / "a_comment.jpg").write_bytes(
        a.read_bytes()[:2]
        + b"\xff\xfe"
        + (len(comment) + 2).to_bytes(2, "big")
        + comment
        + a.read_bytes()[2:]
    )
    with Image.open(a) as im:
        pixels = np.asarray(im.convert("RGB"))
        Image.fromarray(pixels).save(tmp_path / "pics" / "a_again.png")
        exif = Image.Exif()
        exif[0x0112] = 3  # shown upside down
        Image.fromarray(pixels).save(tmp_path / "pics" / "a_turned.png", exif=exif)
        other = pixels.copy()
        other[0, 0] ^= 1
        Image.fromarray(other).save(tmp_path / "pics" / "a_one_pixel.png")
    assert (tmp_path / "pics" / "a_comment.jpg").read_bytes() != a.read_bytes()
    digests = {
        p.name: d for p, d in images.check_images(tmp_path / "pics").digests.items()
    }
    assert digests["a_comment.jpg"] == digests["a_again.png"] == digests["a.jpg"]
    assert (
        len({digests["a.jpg"], digests["a_turned.png"], digests["a_one_pixel.png"]})
        == 3
    )


def test_a_validation_picture_with_the_pixels_of_a_training_one_is_left_out(
    tmp_path, capsys
):
    root = tmp_path / "pets"
    for split in ("train", "validation"):
        for i, animal in enumerate(("cats", "dogs")):
            for j in range(2):
                write_jpeg(
                    root / split / animal / f"{j}.jpg",
                    seed=10 * i + j + 100 * (split == "validation"),
                )
    with Image.open(root / "train" / "cats" / "0.jpg") as im:  # saved again, as PNG
        im.convert("RGB").save(root / "validation" / "cats" / "resaved.png")
    paths, _, _ = folders.cats_dogs_files("validation", root)
    assert len(paths) == 4 and not any(p.endswith("resaved.png") for p in paths)
    out = capsys.readouterr().out
    assert "not used: 1 picture also among the training pictures" in out
    assert "resaved.png = " in out


def test_a_palette_bmp_is_refused_and_a_transparent_gif_is_named(tmp_path):
    rgb = np.zeros((10, 10, 3), np.uint8)
    rgb[:, :5], rgb[:, 5:] = [20, 200, 20], [200, 30, 30]
    # TF: palette numbers as gray
    Image.fromarray(rgb).convert("P").save(tmp_path / "paint.bmp")
    # two palette colours, the left one transparent
    gif = Image.fromarray(rgb).quantize(2)
    gif.save(tmp_path / "logo.gif", transparency=gif.getpixel((0, 0)))
    report = images.check_images(tmp_path)
    assert [p.name for p, _ in report.bad] == ["paint.bmp"]
    assert (
        "colour palette, which TensorFlow's decoder reads as gray" in report.bad[0][1]
    )
    assert report.notes == [
        (
            tmp_path / "logo.gif",
            "transparent parts become black; save it as PNG to have them white",
        )
    ]
    assert (
        decoding.read_picture(str(tmp_path / "logo.gif"), (10, 10)).numpy()[:, :4].max()
        < 5
    )


def bmp_32bit(path, rgb):
    """A 32-bit BMP as Windows' Paint and many scanners write it: BI_RGB, each pixel B, G, R and
    a fourth byte of padding (0), rows bottom-up."""
    height, width, _ = rgb.shape
    pixels = np.concatenate(
        [rgb[::-1, :, ::-1], np.zeros((height, width, 1), np.uint8)], -1
    )
    info = struct.pack(
        "<IiiHHIIiiII", 40, width, height, 1, 32, 0, pixels.nbytes, 2835, 2835, 0, 0
    )
    path.write_bytes(
        b"BM"
        + struct.pack("<IHHI", 54 + pixels.nbytes, 0, 0, 54)
        + info
        + pixels.tobytes()
    )


def test_a_32_bit_bmp_is_refused_by_name_not_read_as_a_white_square(tmp_path):
    rgb = np.zeros((8, 8, 3), np.uint8)
    rgb[:, :4] = [200, 30, 30]
    bmp_32bit(tmp_path / "scan.bmp", rgb)
    # as Pillow, and a viewer, show it
    assert Image.open(tmp_path / "scan.bmp").mode == "RGB"
    ok, why = images.check_image(tmp_path / "scan.bmp")
    assert not ok and "32-bit BMP whose fourth byte is padding" in why


def test_a_kept_picture_with_a_note_is_named_by_the_loader(tmp_path, capsys):
    rgb = np.zeros((10, 10, 3), np.uint8)
    rgb[:, 5:] = [200, 30, 30]
    for folder in ("logos", "photos"):
        (tmp_path / folder).mkdir()
    gif = Image.fromarray(rgb).quantize(2)
    gif.save(tmp_path / "logos" / "logo.gif", transparency=gif.getpixel((0, 0)))
    Image.fromarray(rgb).save(tmp_path / "logos" / "plain.png")
    Image.fromarray(255 - rgb).save(tmp_path / "photos" / "a.png")
    folders.labelled_files(tmp_path)
    assert (
        "logos: 1 picture used with a note: logo.gif (transparent parts become black"
        in capsys.readouterr().out
    )


def test_an_animated_webp_is_refused_with_its_reason(tmp_path):
    rgb = np.random.default_rng(7).integers(0, 255, (20, 30, 3), dtype=np.uint8)
    frames = [Image.fromarray(rgb), Image.fromarray(255 - rgb)]
    frames[0].save(tmp_path / "sticker.webp", save_all=True, append_images=frames[1:])
    # TensorFlow would abort on it
    ok, why = images.check_image(tmp_path / "sticker.webp")
    assert not ok and why.startswith("an animated WebP (2 frames)")


def test_an_orientation_the_pipeline_cannot_find_is_refused_rather_than_used_turned(
    tmp_path,
):
    path = tmp_path / "IMG_0043.JPG"
    portrait().rotate(90, expand=True).save(path, "JPEG", exif=EXIF["big-endian"] % 6)
    # a maker's own segment
    app15 = b"\xff\xef" + (65000).to_bytes(2, "big") + bytes(64998)
    # EXIF > 64 KB in
    path.write_bytes(path.read_bytes()[:2] + 2 * app15 + path.read_bytes()[2:])
    ok, why = images.check_image(path)
    assert not ok and why.startswith(
        "its EXIF orientation 6 is stored where the pipeline does not read it"
    )


def test_a_phone_photo_above_the_pixel_limit_is_decoded_at_a_reduced_scale(
    tmp_path, capsys
):
    # 8000 x 6000 = 48 MP, a phone's full-size photo: above MAX_PIXELS, read at 1/2 scale
    assert 8000 * 6000 > decoding.MAX_PIXELS >= 4000 * 3000
    ramp = np.linspace(0, 255, 8000, dtype=np.uint8)
    photo = tmp_path / "dogs" / "IMG_0001.jpg"
    photo.parent.mkdir()
    Image.fromarray(np.broadcast_to(ramp[None, :, None], (6000, 8000, 3))).save(
        photo, quality=80
    )
    ok, note = images.check_image(photo)
    assert (
        ok
        and "8000x6000 pixels, above the limit of 40,000,000: decoded at 1/2 scale"
        in note
    )
    assert decoding.decode_picture(data.tf.io.read_file(str(photo))).shape == (
        3000,
        4000,
        3,
    )
    assert decoding.read_picture(str(photo), (64, 64)).shape == (64, 64, 3)
    write_jpeg(tmp_path / "cats" / "c.jpg")
    paths, _, _ = folders.labelled_files(tmp_path)
    assert (
        len(paths) == 2
        and (
            "dogs: 1 picture above the limit of 40,000,000 pixels, decoded at "
            "a reduced scale to stay under it: IMG_0001.jpg (8000x6000 at 1/2)"
        )
        in capsys.readouterr().out
    )


@pytest.fixture
def pixel_limit(monkeypatch):
    """`pixel_limit(n)` sets MAX_PIXELS for one test; the decoder's traced functions, which read
    it when they are traced, are traced again with it, and again after the test."""

    def retrace():
        decoding._traced.cache_clear()
        decoding._traced_read.cache_clear()

    def set_limit(pixels):
        monkeypatch.setattr(decoding, "MAX_PIXELS", pixels)
        retrace()

    yield set_limit
    retrace()


def test_what_even_the_smallest_scale_cannot_bring_under_the_limit_is_refused(
    tmp_path, pixel_limit
):
    pixel_limit(100)  # 10 x 10 pixels
    write_jpeg(tmp_path / "fits.jpg", size=(80, 80))  # 1/8 scale: 10 x 10
    write_jpeg(tmp_path / "too_big.jpg", size=(88, 88))  # 1/8 scale: 11 x 11
    Image.new("RGB", (11, 10)).save(tmp_path / "big.png")
    assert images.check_image(tmp_path / "fits.jpg") == (
        True,
        "80x80 pixels, above the limit of 100: decoded at 1/8 scale",
    )
    ok, why = images.check_image(tmp_path / "too_big.jpg")
    assert not ok and "even at 1/8 scale (88x88 pixels, limit 100)" in why
    ok, why = images.check_image(tmp_path / "big.png")
    assert not ok and "(11x10 pixels, limit 100); resize it or save it as JPEG" in why
