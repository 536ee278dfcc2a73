"""Which picture files a pipeline can use, and why not the others: every file decoded whole by
Pillow and by the pipeline's decoder (decoding.py), against size limits and decompression bombs;
each verdict cached by path, size and time; the link-safe walk through a folder. The folders in
folders.py list, and data.py reads, only the files these checks pass."""

import contextlib
import errno
import hashlib
import json
import os
import re
import sys
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import tensorflow as tf
from PIL import Image

from . import config, decoding

__all__ = [
    "ARCHIVE_SUFFIXES",
    "ImageReport",
    "check_image",
    "check_images",
    "is_hidden",
    "plural",
    "printable",
    "unused_line",
]

# Formats that tf.io.decode_image reads (MPO is the multi-picture JPEG some cameras write).
PIPELINE_FORMATS = {"JPEG", "MPO", "PNG", "GIF", "BMP", "WEBP"}
# .jfif: the name Windows browsers give a saved JPEG
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".jfif", ".png", ".gif", ".bmp", ".webp"}
# Archives a learner may leave unextracted where pictures belong
ARCHIVE_SUFFIXES = {".zip", ".tar", ".gz", ".tgz", ".7z", ".rar"}
# The first bytes of each format the pipeline decodes: a file named otherwise (.jpe, .pjp,
# .jpg_large from a browser, a name ending in a space or a dot, none) is used for what it holds
# (WebP too, by its RIFF header), unless its name says another picture format (.tif, .heic) or
# an archive.
_SIGNATURES = {
    b"\xff\xd8\xff": "JPEG",
    b"\x89PNG\r\n\x1a\n": "PNG",
    b"GIF87a": "GIF",
    b"GIF89a": "GIF",
}


def _webp(head):
    return head[:4] == b"RIFF" and head[8:12] == b"WEBP"


# libjpeg's "N extraneous bytes before marker": a few are common and harmless (cameras pad);
# this many or more mean lost picture data
DAMAGED_BYTES = 16
CHECK_VERSION = 8  # raise it when check_image changes: cached verdicts are then redone
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
    # files that are no pictures (by name or first bytes)
    unused: list = field(default_factory=list)
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
            "is not read as a picture"
            if len(paths) == 1
            else "are not read as pictures"
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
    line = (
        f"not used: {' and '.join(parts)}; only {suffixes} files are read, and pictures "
        "under other names that no other format claims"
    )
    convert = sorted({p.suffix.lower() for p in paths} & _CONVERT)
    if convert:
        names = ", ".join(convert[:-1]) + " and " * (len(convert) > 1) + convert[-1]
        line += f": convert the {names} pictures to JPEG first"
    archives = [p for p in paths if p.suffix.lower() in ARCHIVE_SUFFIXES]
    if archives:
        line += (
            f"; extract {', '.join(printable(p.name) for p in archives[:3])}"
            f"{', ...' * (len(archives) > 3)} into the folder to use the pictures in "
            f"{'them' if len(archives) > 1 else 'it'}"
        )
    return line


def _signature(path):
    """The pipeline format a file's first bytes say it holds (JPEG, PNG, GIF, WebP), or None; read
    only from a regular file (a FIFO would block)."""
    if not path.is_file():
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(12)
    except OSError:  # named by the check, which reads it again
        return None
    if _webp(head):
        return "WEBP"
    return next((fmt for sig, fmt in _SIGNATURES.items() if head.startswith(sig)), None)


def _picture_name(name):
    return not is_hidden(name) and Path(name).suffix.lower() in IMAGE_SUFFIXES


@contextlib.contextmanager
def _decoder_warnings(said):
    """What libjpeg writes to the process's stderr while inside ('Corrupt JPEG data: ...',
    each time a damaged JPEG is decoded), added to the list `said`; anything else written
    there is passed on. It catches file descriptor 2 for the whole process for the few
    milliseconds of one decode: a warning another thread's decode writes then (a tf.data
    pipeline running beside the check) would be taken for this file's."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to catch: nothing is said either
        yield
        return
    with tempfile.TemporaryFile() as log:
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            log.seek(0)
            lines = log.read().decode(errors="replace").splitlines(keepends=True)
    said += [line.strip() for line in lines if "Corrupt JPEG data" in line]
    rest = "".join(line for line in lines if "Corrupt JPEG data" not in line)
    if rest:
        sys.stderr.write(rest)


def _pipeline_read(path):
    """(why TensorFlow's decoder refuses the file, None, []) or (None, its EXIF orientation,
    the warnings libjpeg wrote while decoding it)."""
    said = []
    try:
        contents = tf.io.read_file(str(path))
        with _decoder_warnings(said):
            decoding.decode_picture(contents)
    except (tf.errors.OpError, ValueError) as e:
        return getattr(e, "message", str(e)).strip().splitlines()[-1][:160], None, []
    return None, int(decoding.exif_orientation(contents)), said


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
    pixels = f"{size[0]}x{size[1]} pixels, limit {decoding.MAX_PIXELS:,}"
    if fmt in ("JPEG", "MPO"):
        return (
            f"too large to decode safely even at 1/{decoding.JPEG_SCALES[-1]} scale ({pixels}); "
            "resize it first"
        )
    return f"too large to decode safely ({pixels}); resize it or save it as JPEG first"


def _pillow_orientation(im):
    """The EXIF orientation tag as Pillow reads it, None if none or unreadable."""
    try:
        with warnings.catch_warnings():
            # "Corrupt EXIF data": the picture may still be fine
            warnings.simplefilter("ignore")
            return im.getexif().get(decoding.ORIENTATION_TAG)
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
                    decoding.jpeg_scale(*size)
                    if fmt in ("JPEG", "MPO")
                    else 1
                    if size[0] * size[1] <= decoding.MAX_PIXELS
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
    refused, turned, said = _pipeline_read(path)
    if refused:
        return False, (
            f"a {fmt} file (mode {mode}) that TensorFlow's decoder refuses "
            f"({refused}); convert it to JPEG or PNG"
        )
    if any("premature end" in line for line in said):
        return False, (
            "a damaged JPEG: its picture data stops early (libjpeg: 'premature end of data "
            "segment'), so part of it would be used gray; copy or export it again"
        )
    junk = [
        int(n) for line in said for n in re.findall(r"(\d+) extraneous bytes", line)
    ]
    if max(junk, default=0) >= DAMAGED_BYTES:
        return False, (
            f"a damaged JPEG: {max(junk):,} bytes of its picture data cannot be decoded "
            "(libjpeg: 'extraneous bytes'), so part of it would be garbled; copy or export "
            "it again"
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
            f"{decoding.MAX_PIXELS:,}: decoded at 1/{scale} scale"
        ]
    )
    expected = Image.registered_extensions().get(path.suffix.lower())
    if not _picture_name(path.name):
        notes.append(
            f"{fmt} data in a file whose name ({printable(path.name)!r}) does not say so; "
            "rename it to end in "
            f".{'jpg' if fmt in ('JPEG', 'MPO') else fmt.lower()}"
        )
    elif expected and fmt not in (expected, "MPO"):
        notes.append(f"{fmt} data in a {path.suffix} file")
    notes += [f"libjpeg: {line}" for line in dict.fromkeys(said)]
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
            picture = _picture_name(name) or (
                not is_hidden(name)
                and path.suffix.lower() not in _CONVERT | ARCHIVE_SUFFIXES
                and _signature(path) is not None
            )
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
