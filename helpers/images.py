"""Find the image files a training pipeline can use, and report every one it cannot.

Every file is fully decoded (not just its header): a truncated JPEG only shows up
when its last rows are read. The verdict on each file of a folder is kept in the course
cache, keyed by path, size and modification time, so an unchanged file is decoded once.
"""

import hashlib
import json
import os
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from . import config

__all__ = ["CHECK_VERSION", "IMAGE_SUFFIXES", "MAX_PIXELS", "PIPELINE_FORMATS", "check_image",
           "check_images", "ImageReport", "printable", "read_picture", "unused_line",
           "verdict_file"]

# Formats that tf.io.decode_image reads (MPO is the multi-picture JPEG some cameras write).
PIPELINE_FORMATS = {"JPEG", "MPO", "PNG", "GIF", "BMP", "WEBP"}
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp"}
CHECK_VERSION = 2  # raise it when check_image changes: cached verdicts are then redone
MAX_PIXELS = 40_000_000  # larger pictures are refused before decoding (decompression bombs)
_SUFFIX_FORMAT = {".jpg": "JPEG", ".jpeg": "JPEG", ".png": "PNG", ".gif": "GIF",
                  ".bmp": "BMP", ".webp": "WEBP"}


@dataclass
class ImageReport:
    """The result of `check_images`: usable files, skipped files and notes on kept ones."""

    good: list = field(default_factory=list)
    bad: list = field(default_factory=list)  # (path, reason): skipped
    notes: list = field(default_factory=list)  # (path, note): kept, but worth knowing
    unused: list = field(default_factory=list)  # files that are no pictures (by name)
    decoded: int = 0  # files decoded now (the others had an up-to-date verdict in the cache)
    seconds: float = 0.0  # time the check took

    def summary(self):
        text = f"{len(self.good)} usable images, {len(self.bad)} skipped"
        lines = [text] + [f"  skipped {printable(p)}: {why}" for p, why in self.bad]
        if self.unused:
            lines.append(f"  {unused_line(self.unused)}")
        return "\n".join(lines)


def printable(path):
    """A path as text that prints anywhere, its bytes that are not UTF-8 shown as \\xe9."""
    return os.fsencode(str(path)).decode("utf-8", "backslashreplace")


def unused_line(paths):
    """One line on the files that were not read as pictures, grouped by kind."""
    kinds = Counter("hidden" if p.name.startswith(".") else (p.suffix.lower() or "no suffix")
                    for p in paths)
    groups = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
    files = f"{len(paths)} file{'s' if len(paths) != 1 else ''}"
    return (f"not used: {files} that are not pictures by their name ({groups}); "
            f"only {', '.join(sorted(IMAGE_SUFFIXES))} files are read")


def read_picture(path, size):
    """Decode one picture file (JPEG, PNG, GIF, BMP, WebP) to RGB and resize it to `size`
    (height, width): float32 pixels 0..255. Training, prediction and benchmarks all use it,
    and so does the check, so a file the check keeps is one the pipeline can decode."""
    import tensorflow as tf

    image = tf.io.decode_image(tf.io.read_file(path), channels=3, expand_animations=False)
    return tf.image.resize(image, size)


def _pipeline_error(path):
    """Why TensorFlow's decoder refuses a file that Pillow reads, or None."""
    import tensorflow as tf

    try:
        read_picture(str(path), (8, 8))
    except (tf.errors.OpError, ValueError) as e:
        return getattr(e, "message", str(e)).strip().splitlines()[-1][:160]
    return None


def check_image(path):
    """Decode one file fully, with Pillow and with the pipeline's own decoder.
    Returns (ok, message); message is a reason or a note."""
    path = Path(path)
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False, "its name is not valid UTF-8, which TensorFlow cannot open; rename it"
    if path.stat().st_size == 0:
        return False, "empty file (0 bytes)"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as im:
                fmt, mode, size = im.format, im.mode, im.size
                frames = getattr(im, "n_frames", 1)
                if size[0] * size[1] > MAX_PIXELS:
                    return False, (f"too large to decode safely ({size[0]}x{size[1]} pixels, "
                                   f"limit {MAX_PIXELS:,}); resize it first")
                im.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as e:
        return False, f"refused as a decompression bomb ({e})"
    except Image.UnidentifiedImageError:
        head = path.read_bytes()[:64].lstrip().lower()
        kind = "text or HTML" if head[:1] in (b"<", b"{") or head.isascii() else "unknown data"
        return False, f"not an image ({kind}, {path.stat().st_size} bytes)"
    except (OSError, SyntaxError, ValueError) as e:
        return False, f"unreadable or truncated ({e})"
    if fmt not in PIPELINE_FORMATS:
        return False, f"{fmt} images cannot be decoded by the pipeline; convert to JPEG or PNG"
    refused = _pipeline_error(path)
    if refused:
        return False, (f"a {fmt} file (mode {mode}) that TensorFlow's decoder refuses "
                       f"({refused}); convert it to JPEG or PNG")
    notes = []
    expected = _SUFFIX_FORMAT.get(path.suffix.lower())
    if expected and fmt not in (expected, "MPO"):
        notes.append(f"{fmt} data in a {path.suffix} file")
    if mode not in ("RGB", "L"):
        notes.append(f"mode {mode} is converted to RGB")
    if frames > 1:
        notes.append(f"animated ({frames} frames): the first frame is used")
    return True, "; ".join(notes)


def _walk(folder):
    """(pictures, others): files below `folder` with a picture suffix, and every other file
    (hidden ones too), both sorted; hidden folders are not entered, link loops walked once."""
    seen, pictures, others = set(), [], []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen:
            dirnames[:] = []
            continue
        seen.add(real)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            picture = not name.startswith(".") and Path(name).suffix.lower() in IMAGE_SUFFIXES
            (pictures if picture else others).append(Path(dirpath) / name)
    return pictures, others


def verdict_file(folder):
    """Where the verdicts on the files below `folder` are kept (in the cache, never there)."""
    key = hashlib.sha1(str(Path(folder).resolve()).encode()).hexdigest()[:16]
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
        print(f"Notice: could not keep the image checks in {path.parent} ({e}); "
              "set COURSE_CACHE to a writable folder to check each file only once.")


def check_images(folder_or_files):
    """Check every image below a folder (or in a list of paths); returns an ImageReport.

    Below a folder, a file whose path, size and modification time are unchanged since its
    last check keeps its verdict from the cache; a new or changed file is decoded again.
    """
    start = time.perf_counter()
    folder = None
    if isinstance(folder_or_files, (str, os.PathLike)):
        folder = Path(folder_or_files)
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder} is not a folder of images.")
        files, others = _walk(folder)
    else:
        files, others = [Path(p) for p in folder_or_files], []
    cache = verdict_file(folder) if folder else None
    old = _load_verdicts(cache) if cache else {}
    if old.pop("version", None) != CHECK_VERSION:
        old = {}  # verdicts of an older check: check again
    verdicts = {"version": CHECK_VERSION}
    report = ImageReport(unused=others)
    for path in files:
        key = str(path)
        try:
            info = path.stat()
            stamp = [info.st_size, info.st_mtime_ns]
        except OSError as e:
            report.bad.append((path, f"cannot be read ({e.strerror or e})"))
            continue
        if old.get(key, [None])[:2] == stamp:
            ok, message = old[key][2:]
        else:
            ok, message = check_image(path)
            report.decoded += 1
        verdicts[key] = [*stamp, ok, message]
        if ok:
            report.good.append(path)
            if message:
                report.notes.append((path, message))
        else:
            report.bad.append((path, message))
    if cache and verdicts != {"version": CHECK_VERSION, **old}:
        _save_verdicts(cache, verdicts)
    report.seconds = time.perf_counter() - start
    return report
