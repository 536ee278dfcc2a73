"""Which picture files a pipeline can use, and why not the others: every file decoded whole
(formats, size limits against decompression bombs, a JPEG too large decoded at a reduced scale),
each verdict cached by path, size and time; the link-safe walk through a folder; and
`decode_picture`, which shows a picture as viewers do, upright by its EXIF orientation. The
folders in folders.py list, and data.py reads, only the files these checks pass."""

import contextlib
import errno
import functools
import hashlib
import json
import os
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import tensorflow as tf
from PIL import Image

from . import config

__all__ = [
    "ImageReport",
    "MAX_PIXELS",
    "check_image",
    "check_images",
    "decode_picture",
    "exif_orientation",
    "is_hidden",
    "plural",
    "printable",
    "read_picture",
    "unused_line",
]

# Formats that tf.io.decode_image reads (MPO is the multi-picture JPEG some cameras write).
PIPELINE_FORMATS = {"JPEG", "MPO", "PNG", "GIF", "BMP", "WEBP"}
# .jfif: the name Windows browsers give a saved JPEG
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".jfif", ".png", ".gif", ".bmp", ".webp"}
CHECK_VERSION = 6  # raise it when check_image changes: cached verdicts are then redone
# Most pixels decoded from one file (decompression bombs): a larger JPEG (a 48-200 MP phone photo)
# is decoded at 1/2, 1/4 or 1/8 scale to stay under it; other larger pictures are refused.
MAX_PIXELS = 40_000_000
# the reduced scales a JPEG decoder offers (libjpeg's DCT scaling)
JPEG_SCALES = (1, 2, 4, 8)
# Files that operating systems and apps put next to pictures, by name (lower case)
_SYSTEM_FILES = {
    "thumbs.db": "Windows Thumbs.db",
    "desktop.ini": "Windows desktop.ini",
    ".ds_store": "macOS .DS_Store",
}
# Picture formats the pipeline cannot decode (.heic: an iPhone's photos; .dng etc.: raw camera)
_CONVERT = {
    ".heic",
    ".heif",
    ".avif",
    ".tif",
    ".tiff",
    ".jxl",
    ".dng",
    ".cr2",
    ".nef",
    ".arw",
    ".psd",
}


@dataclass
class ImageReport:
    """What `check_images` found: usable files, skipped ones, notes on kept ones (notebook 04)."""

    good: list = field(default_factory=list)
    bad: list = field(default_factory=list)  # (path, reason): skipped
    notes: list = field(default_factory=list)  # (path, note): kept, but worth knowing
    unused: list = field(default_factory=list)  # files that are no pictures (by name)
    # (hidden folder, files in it): not entered
    hidden: list = field(default_factory=list)
    # path -> digest of its pixels (good files)
    digests: dict = field(default_factory=dict)
    decoded: int = (
        0  # files decoded now (the others had an up-to-date verdict in the cache)
    )
    seconds: float = 0.0  # time the check took


def printable(path):
    """A path as text that prints anywhere, non-UTF-8 bytes shown as \\xe9 (notebook 04)."""
    return os.fsencode(str(path)).decode("utf-8", "backslashreplace")


def is_hidden(name):
    """A name file browsers hide (.ipynb_checkpoints, macOS ._ files) or __MACOSX/ (notebook 04)."""
    return name.startswith(".") or name == "__MACOSX"


def _kind(path):
    name = path.name.lower()
    if name in _SYSTEM_FILES:
        return _SYSTEM_FILES[name]
    if name.startswith("._"):
        return "macOS ._ (AppleDouble)"
    if name.startswith("."):
        return "hidden"
    return path.suffix.lower() or "no suffix"


def plural(n, word):
    """'1 picture', '2 pictures' (the loaders' reports, notebook 04)."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def unused_line(paths, hidden=()):
    """One line on the files not read as pictures, by kind, and on the (hidden folder, file
    count) pairs of `hidden`, not read either (notebooks 04 and 06)."""
    parts = []
    if paths:
        groups = ", ".join(
            f"{n} {kind}" for kind, n in sorted(Counter(map(_kind, paths)).items())
        )
        verb = (
            "is not a picture by its name"
            if len(paths) == 1
            else "are not pictures by their name"
        )
        parts.append(f"{plural(len(paths), 'file')} that {verb} ({groups})")
    if hidden:
        counts = Counter()
        for folder, n in hidden:
            counts[f"{Path(folder).name}/"] += n
        folders = ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))
        parts.append(
            f"{plural(sum(counts.values()), 'file')} in hidden folders ({folders})"
        )
    suffixes = ", ".join(sorted(IMAGE_SUFFIXES))
    line = f"not used: {' and '.join(parts)}; only {suffixes} files are read"
    convert = sorted({p.suffix.lower() for p in paths} & _CONVERT)
    if convert:
        names = ", ".join(convert[:-1]) + " and " * (len(convert) > 1) + convert[-1]
        line += f": convert the {names} pictures to JPEG first"
    return line


# Where a picture keeps its EXIF block, and how far in its TIFF data begins: a JPEG in an APP1
# segment near its start, a PNG in an eXIf chunk before the pixels, a WebP in an EXIF chunk
# (4 bytes of size first) after them. A JPEG's or PNG's first 64 KB are searched, a WebP whole.
_PNG, _WEBP = b"\x89PNG", b"RIFF"
_EXIF = {"jpeg": b"Exif\x00\x00", "png": b"eXIf", "webp": b"EXIF"}
_HEAD = 1 << 16  # an EXIF block holds at most 64 KB
# a TIFF header: little-endian ("II") or big-endian ("MM")
_TIFF = (b"II*\x00", b"MM\x00*")
_ORIENTATION_TAG = 0x0112  # EXIF orientation: 1 upright, 2-8 mirrored and/or rotated
_ENTRIES = 32  # IFD entries looked at (tags are sorted, and 0x0112 comes early)
_READ = 1024  # bytes of the TIFF block read: its header and first IFD


def _tiff_orientation(tiff):
    """The orientation tag in the first IFD of a TIFF block (TensorFlow ops), 0 if none."""
    raw = tf.cast(
        tf.io.decode_raw(tf.strings.substr(tiff, 0, _READ), tf.uint8), tf.int32
    )
    b = tf.pad(raw, [[0, _READ - tf.shape(raw)[0]]])
    big = b[0] == 77  # "MM"

    def number(pairs):  # (n, 2) bytes -> n numbers in the block's byte order
        return tf.reduce_sum(pairs * tf.where(big, [256, 1], [1, 256]), -1)

    ifd = number(tf.reshape(b[4:8], (2, 2))) * tf.where(big, [65536, 1], [1, 65536])
    ifd = tf.clip_by_value(tf.reduce_sum(ifd), 0, _READ - 2 - 12 * _ENTRIES)
    count = number(b[ifd : ifd + 2][None])[0]
    entries = tf.reshape(b[ifd + 2 : ifd + 2 + 12 * _ENTRIES], (_ENTRIES, 6, 2))
    fields = number(entries)  # per entry: tag, type, count (2 halves), value (2 halves)
    match = (
        (fields[:, 0] == _ORIENTATION_TAG)
        & (fields[:, 1] == 3)
        & (tf.range(_ENTRIES) < count)
    )
    value = tf.reduce_max(tf.where(match, fields[:, 4], 0))
    return tf.where((value >= 1) & (value <= 8), value, 1)


def _orientation(contents):
    """The EXIF orientation of an encoded picture (TensorFlow ops), 1 if it has none."""
    magic = tf.strings.substr(contents, 0, 4)
    png, webp = magic == _PNG, magic == _WEBP
    marker = tf.where(png, _EXIF["png"], tf.where(webp, _EXIF["webp"], _EXIF["jpeg"]))
    text = tf.where(webp, contents, tf.strings.substr(contents, 0, _HEAD))
    parts = tf.raw_ops.StringSplitV2(
        input=[text], sep=marker, maxsplit=1
    ).values  # one op

    def read():  # the TIFF block after the marker, if it starts with a TIFF header
        after = parts[1]
        tiff = tf.strings.substr(
            after, tf.minimum(tf.where(webp, 4, 0), tf.strings.length(after)), _READ
        )
        header = tf.strings.substr(tiff, 0, 4)
        found = (header == _TIFF[0]) | (header == _TIFF[1])
        return tf.where(found, _tiff_orientation(tiff), 1)

    return tf.cond(tf.size(parts) == 2, read, lambda: tf.constant(1))


@functools.cache
def _traced(function):
    return tf.function(
        function, input_signature=[tf.TensorSpec([], tf.string)], autograph=False
    )


def _once(function, contents):
    """In tf.data as it is; eagerly (the check, `predict`) traced once: one call, not a hundred."""
    return _traced(function)(contents) if tf.executing_eagerly() else function(contents)


def exif_orientation(contents):
    """The EXIF orientation 1-8 of an encoded JPEG, PNG or WebP, 1 if none (notebook 06)."""
    return _once(_orientation, contents)


def decode_picture(contents):
    """An encoded picture as RGB uint8 as viewers show it: EXIF-upright, transparency on white;
    TensorFlow ops only (notebook 06). Give it files `check_image` keeps (not animated WebPs)."""
    return _once(_decode, contents)


def jpeg_scale(width, height):
    """The smallest of JPEG_SCALES that brings a JPEG under MAX_PIXELS, None if none does."""
    return next(
        (s for s in JPEG_SCALES if -(-width // s) * -(-height // s) <= MAX_PIXELS), None
    )


def _decode_jpeg(contents):
    """A JPEG decoded at the smallest reduction of JPEG_SCALES that fits MAX_PIXELS."""
    height, width = tf.unstack(
        tf.cast(tf.io.extract_jpeg_shape(contents)[:2], tf.int64)
    )

    def fits(s):
        return -(-height // s) * -(-width // s) <= MAX_PIXELS

    scales = [
        (fits(s), functools.partial(tf.io.decode_jpeg, contents, ratio=s))
        for s in JPEG_SCALES[:-1]
    ]
    return tf.case(
        scales, default=lambda: tf.io.decode_jpeg(contents, ratio=JPEG_SCALES[-1])
    )


def _stored(contents):
    """(RGB uint8 as stored, transparent parts on white; its EXIF orientation). Only a picture
    with alpha goes through float32; the others are copied at most once, as uint8."""
    jpeg = tf.strings.substr(contents, 0, 3) == b"\xff\xd8\xff"
    x = tf.cond(
        jpeg,
        lambda: _decode_jpeg(contents),  # channels as stored: 1 to 4
        lambda: tf.io.decode_image(contents, expand_animations=False),
    )
    channels = tf.shape(x)[-1]  # gray, gray + alpha, RGB, RGB + alpha

    def on_white():
        y = tf.cast(x, tf.float32)
        color = tf.gather(y, tf.where(channels >= 3, [0, 1, 2], [0, 0, 0]), axis=-1)
        alpha = tf.gather(y, [channels - 1], axis=-1) / 255
        return tf.saturate_cast(tf.round(color * alpha + 255 * (1 - alpha)), tf.uint8)

    rgb = tf.case(
        [
            ((channels == 2) | (channels == 4), on_white),
            (channels == 1, lambda: tf.tile(x, [1, 1, 3])),
        ],
        default=lambda: x,
    )
    return tf.ensure_shape(rgb, [None, None, 3]), _orientation(contents)


def _upright(picture, orientation):
    """`picture` (height, width, channels) turned as EXIF `orientation` says: 5-8 swap rows and
    columns (a phone held upright), then 2, 3, 6, 7 mirror and 3, 4, 7, 8 flip. No arithmetic."""
    picture = tf.transpose(picture, tf.where(orientation >= 5, [1, 0, 2], [0, 1, 2]))
    mirror, flip = (
        tf.reduce_any(orientation == v) for v in ([2, 3, 6, 7], [3, 4, 7, 8])
    )
    # 1: width, 0: height
    return tf.reverse(picture, tf.boolean_mask([1, 0], [mirror, flip]))


def _decode(contents):
    picture, orientation = _stored(contents)
    return tf.cond(
        orientation == 1, lambda: picture, lambda: _upright(picture, orientation)
    )


def _read(contents, size):
    """`_decode`, then resized to `size`: a picture stored on its side is resized first, to the
    size turned, and turned after (a few kB, not the whole photo); resizing commutes with it."""
    picture, orientation = _stored(contents)
    turned = tf.where(orientation >= 5, [size[1], size[0]], list(size))
    picture = _upright(tf.image.resize(picture, turned), orientation)
    return tf.ensure_shape(picture, [*size, 3])


def read_picture(path, size):
    """One picture file decoded as `decode_picture` shows it, resized to `size` (height, width):
    float32 0..255. The pipeline, `predict` and the check all read with it (notebooks 06, 07)."""
    contents = tf.io.read_file(path)
    if tf.executing_eagerly():
        return _traced_read(tuple(size))(contents)
    return _read(contents, tuple(size))


@functools.cache
def _traced_read(size):
    return tf.function(
        lambda contents: _read(contents, size),
        input_signature=[tf.TensorSpec([], tf.string)],
        autograph=False,
    )


def _pipeline_read(path):
    """(why TensorFlow's decoder refuses the file, None) or (None, its EXIF orientation)."""
    try:
        contents = tf.io.read_file(str(path))
        decode_picture(contents)
    except (tf.errors.OpError, ValueError) as e:
        return getattr(e, "message", str(e)).strip().splitlines()[-1][:160], None
    return None, int(exif_orientation(contents))


def _unidentified(path):
    """Why Pillow cannot identify a file: a picture format it lacks, or no picture at all."""
    head = path.read_bytes()[:64]
    if head[4:8] == b"ftyp":  # ISO media: HEIC (iPhone), AVIF
        avif = head[8:11] == b"avi"
        kind = "an AVIF picture" if avif else "a HEIC picture (an iPhone's format)"
        return f"{kind}, which the pipeline cannot decode; convert it to JPEG"
    head = head.lstrip().lower()
    kind = (
        "text or HTML" if head[:1] in (b"<", b"{") or head.isascii() else "unknown data"
    )
    return f"not an image ({kind}, {path.stat().st_size} bytes)"


@contextlib.contextmanager
def _pillow_limit(pixels):
    """Pillow's decompression-bomb limit set to `pixels` while opening: opening reads only the
    header, and the check applies MAX_PIXELS itself before anything is decoded."""
    before, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, pixels
    try:
        yield
    finally:
        Image.MAX_IMAGE_PIXELS = before


def _too_large(fmt, size):
    pixels = f"{size[0]}x{size[1]} pixels, limit {MAX_PIXELS:,}"
    if fmt in ("JPEG", "MPO"):
        return (
            f"too large to decode safely even at 1/{JPEG_SCALES[-1]} scale ({pixels}); "
            "resize it first"
        )
    return f"too large to decode safely ({pixels}); resize it or save it as JPEG first"


def _pillow_orientation(im):
    """The EXIF orientation tag as Pillow reads it, None if none or unreadable."""
    try:
        with warnings.catch_warnings():
            # "Corrupt EXIF data": the picture may still be fine
            warnings.simplefilter("ignore")
            return im.getexif().get(_ORIENTATION_TAG)
    except Exception:  # an EXIF block Pillow cannot read at all: no orientation either
        return None


def _bmp_bits(path):
    """Bits per pixel in a BMP's header (after the 14-byte file header, at offset 28)."""
    with open(path, "rb") as f:
        head = f.read(30)
    return int.from_bytes(head[28:30], "little") if len(head) == 30 else None


def check_image(path):
    """(ok, reason or note) for one file, decoded whole by Pillow and by the pipeline's decoder
    (notebook 06)."""
    return _check_image(path)[:2]


def _check_image(path):
    """check_image's (ok, reason or note), and for a usable picture the digest of what it shows:
    its size, its decoded pixels and its EXIF orientation. Two files with one digest are copies
    of one picture, whatever their bytes (a comment added, saved again as PNG)."""
    path = Path(path)
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return (
            False,
            "its name is not valid UTF-8, which TensorFlow cannot open; rename it",
        )
    if path.stat().st_size == 0:
        return False, "empty file (0 bytes)"
    try:
        with warnings.catch_warnings(), _pillow_limit(None):
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as im:
                fmt, mode, size = im.format, im.mode, im.size
                frames = getattr(im, "n_frames", 1)
                alpha = "A" in im.getbands() or "transparency" in im.info
                orientation = _pillow_orientation(im)
                scale = (
                    jpeg_scale(*size)
                    if fmt in ("JPEG", "MPO")
                    else 1
                    if size[0] * size[1] <= MAX_PIXELS
                    else None
                )
                if scale is None:
                    return False, _too_large(fmt, size)
                if scale > 1:  # decoded at 1/2 to 1/8 scale, as the pipeline does
                    im.draft(im.mode, (-(-size[0] // scale), -(-size[1] // scale)))
                im.load()
                shown_pixels = hashlib.blake2b(f"{im.size}".encode(), digest_size=16)
                shown_pixels.update(im.convert("RGBA" if alpha else "RGB").tobytes())
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as e:
        return False, f"refused as a decompression bomb ({e})"
    except Image.UnidentifiedImageError:
        return False, _unidentified(path)
    except (OSError, SyntaxError, ValueError) as e:
        return False, f"unreadable or truncated ({e})"
    if fmt not in PIPELINE_FORMATS:
        return (
            False,
            f"{fmt} images cannot be decoded by the pipeline; convert to JPEG or PNG",
        )
    # refused before TensorFlow's decoder, which it can crash
    if fmt == "WEBP" and frames > 1:
        return False, (
            f"an animated WebP ({frames} frames), which TensorFlow's decoder cannot "
            "read; save its first frame as PNG or JPEG"
        )
    refused, turned = _pipeline_read(path)
    if refused:
        return False, (
            f"a {fmt} file (mode {mode}) that TensorFlow's decoder refuses "
            f"({refused}); convert it to JPEG or PNG"
        )
    if fmt == "BMP" and not alpha and _bmp_bits(path) == 32:
        return False, (
            "a 32-bit BMP whose fourth byte is padding, which TensorFlow's decoder "
            "reads as transparency (the picture would be a white square); convert "
            "it to PNG or JPEG"
        )
    if fmt == "BMP" and mode == "P":
        return False, (
            "a BMP with a colour palette, which TensorFlow's decoder reads as gray "
            "levels; convert it to PNG or JPEG"
        )
    if orientation in range(1, 9) and orientation != turned:
        return False, (
            f"its EXIF orientation {orientation} is stored where the pipeline does "
            "not read it, so it would be used turned; save it upright as a JPEG"
        )
    notes = (
        []
        if scale == 1
        else [
            f"{size[0]}x{size[1]} pixels, above the limit of "
            f"{MAX_PIXELS:,}: decoded at 1/{scale} scale"
        ]
    )
    expected = Image.registered_extensions().get(path.suffix.lower())
    if expected and fmt not in (expected, "MPO"):
        notes.append(f"{fmt} data in a {path.suffix} file")
    if turned != 1:
        notes.append(f"turned upright as its EXIF orientation ({turned}) says")
    if alpha and fmt == "GIF":  # TensorFlow's GIF decoder drops the transparency
        notes.append(
            "transparent parts become black; save it as PNG to have them white"
        )
    elif alpha:
        notes.append(
            f"mode {mode} with transparency: transparent parts are shown on white"
        )
    elif mode not in ("RGB", "L"):
        notes.append(f"mode {mode} is converted to RGB")
    if frames > 1:
        notes.append(f"animated ({frames} frames): the first frame is used")
    shown_pixels.update(bytes([turned]))
    return True, "; ".join(notes), shown_pixels.hexdigest()


def _inside(path, folder):
    return os.path.commonpath([path, folder]) == folder


def _stray_link(real, folder, root):
    """Why a link to `real` is not followed, or None: a link may lead inside its class folder
    or out of the data folder `root`, not elsewhere into it (all three real paths)."""
    if root is None or _inside(real, folder) or not _inside(real, root):
        return None
    where = os.path.relpath(real, root)
    target = "the data folder itself" if where == "." else printable(where)
    return (
        f"a link to {target}, in the data folder but outside this class folder: its "
        "pictures would be used twice or under this folder's label (a link may lead inside "
        "its class folder or out of the data folder)"
    )


_AGAIN = "a link to a folder that is read anyway (its pictures would count twice)"


def _walk(folder, root=None):
    """(pictures, other files, (hidden folder, files in it), (link, why not followed)) below
    `folder`, sorted; hidden folders are not entered, link loops and stray links named."""
    seen, pictures, others, hidden, links = set(), [], [], [], []
    top = os.path.realpath(folder)
    root = root and os.path.realpath(root)

    # a folder os.walk cannot list: named, never skipped silently
    def unreadable(error):
        links.append(
            (
                Path(error.filename),
                _unreadable(Path(error.filename), error)
                + "; its pictures are not used",
            )
        )

    for dirpath, dirnames, filenames in os.walk(
        folder, onerror=unreadable, followlinks=True
    ):
        real = os.path.realpath(dirpath)
        if real in seen:  # reached twice through links from outside: read once
            links.append((Path(dirpath), f"{_AGAIN}; not followed"))
            dirnames[:] = []
            continue
        seen.add(real)
        for name in sorted(d for d in dirnames if is_hidden(d)):
            inside = Path(dirpath) / name
            hidden.append((inside, sum(len(files) for _, _, files in os.walk(inside))))
        dirnames[:] = sorted(d for d in dirnames if not is_hidden(d))
        for name in [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            target = os.path.realpath(os.path.join(dirpath, name))
            why = _stray_link(target, top, root) or (
                "a link back to a folder that holds it (a link loop)"
                if _inside(real, target)
                else _AGAIN
                if _inside(target, top) or target in seen
                else None
            )
            if why:
                links.append((Path(dirpath) / name, f"{why}; not followed"))
                dirnames.remove(name)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            picture = not is_hidden(name) and path.suffix.lower() in IMAGE_SUFFIXES
            why = picture and _stray_link(os.path.realpath(path), top, root)
            if why:
                links.append((path, why))
            else:
                (pictures if picture else others).append(path)
    return pictures, others, hidden, links


def _unreadable(path, error):
    """Why `path` cannot be read: a link loop, a link into nowhere, or the system's reason."""
    if error.errno == errno.ELOOP:
        return "cannot be read: a link loop (links that lead back to each other); delete them"
    if path.is_symlink():
        return f"cannot be read: a link to {printable(os.readlink(path))}, which does not exist"
    return f"cannot be read ({error.strerror or error})"


def _verdict_file(folder):
    """Where the verdicts on the files below `folder` are kept (in the cache, never there)."""
    key = hashlib.sha1(str(folder.resolve()).encode()).hexdigest()[:16]
    return config.CACHE_DIR / "image_checks" / f"{key}.json"


def _load_verdicts(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):  # none yet, or a cache cut off mid-write: check again
        return {}


def _save_verdicts(path, verdicts):
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        partial.write_text(json.dumps(verdicts))
        os.replace(partial, path)
    except OSError as e:  # a read-only cache costs time on the next load, nothing else
        print(
            f"Notice: could not keep the image checks in {path.parent} ({e}); "
            "set COURSE_CACHE to a writable folder to check each file only once."
        )


def check_images(folder, root=None):
    """An ImageReport on every file below `folder` (notebook 04); a file unchanged since its last
    check (path, size, time) keeps its cached verdict. `root`: the data folder, which links from
    `folder` may not lead into elsewhere (another class, a parent)."""
    start, folder = time.perf_counter(), Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder of images.")
    files, others, hidden, links = _walk(folder, root)
    cache = _verdict_file(folder)
    old = _load_verdicts(cache)
    if old.pop("version", None) != CHECK_VERSION:
        old = {}  # verdicts of an older check: check again
    verdicts = {"version": CHECK_VERSION}
    report = ImageReport(unused=others, hidden=hidden, bad=links)
    for path in files:
        key = str(path)
        try:
            info = path.stat()
            stamp = [info.st_size, info.st_mtime_ns]
        except OSError as e:
            report.bad.append((path, _unreadable(path, e)))
            continue
        if old.get(key, [None])[:2] == stamp:
            ok, message, digest = old[key][2:]
        else:
            ok, message, digest = (*_check_image(path), None)[:3]  # digest: its pixels
            report.decoded += 1
        verdicts[key] = [*stamp, ok, message, digest]
        if ok:
            report.good.append(path)
            report.digests[path] = digest
            if message:
                report.notes.append((path, message))
        else:
            report.bad.append((path, message))
    if verdicts != {"version": CHECK_VERSION, **old}:
        _save_verdicts(cache, verdicts)
    report.seconds = time.perf_counter() - start
    return report
