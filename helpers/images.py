"""Find the image files a training pipeline can use, and report every one it cannot.

Every file is fully decoded (not just its header): a truncated JPEG only shows up
when its last rows are read.
"""

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

# Formats that tf.io.decode_image reads (MPO is the multi-picture JPEG some cameras write).
PIPELINE_FORMATS = {"JPEG", "MPO", "PNG", "GIF", "BMP", "WEBP"}
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp"}
MAX_PIXELS = 40_000_000  # larger pictures are refused before decoding (decompression bombs)
_SUFFIX_FORMAT = {".jpg": "JPEG", ".jpeg": "JPEG", ".png": "PNG", ".gif": "GIF",
                  ".bmp": "BMP", ".webp": "WEBP"}


@dataclass
class ImageReport:
    """The result of `check_images`: usable files, skipped files and notes on kept ones."""

    good: list = field(default_factory=list)
    bad: list = field(default_factory=list)  # (path, reason): skipped
    notes: list = field(default_factory=list)  # (path, note): kept, but worth knowing

    def summary(self):
        text = f"{len(self.good)} usable images, {len(self.bad)} skipped"
        lines = [text] + [f"  skipped {p}: {why}" for p, why in self.bad]
        return "\n".join(lines)


def check_image(path):
    """Decode one file fully. Returns (ok, message); message is a reason or a note."""
    path = Path(path)
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
    """Image-like files below `folder`, sorted, skipping hidden files and link loops."""
    seen, files = set(), []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen:
            dirnames[:] = []
            continue
        seen.add(real)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith(".") and Path(name).suffix.lower() in IMAGE_SUFFIXES:
                files.append(Path(dirpath) / name)
    return files


def check_images(folder_or_files):
    """Check every image below a folder (or in a list of paths); returns an ImageReport."""
    if isinstance(folder_or_files, (str, os.PathLike)):
        folder = Path(folder_or_files)
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder} is not a folder of images.")
        files = _walk(folder)
    else:
        files = [Path(p) for p in folder_or_files]
    report = ImageReport()
    for path in files:
        ok, message = check_image(path)
        if ok:
            report.good.append(path)
            if message:
                report.notes.append((path, message))
        else:
            report.bad.append((path, message))
    return report
