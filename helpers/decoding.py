"""A picture decoded as viewers show it, in TensorFlow ops that run eagerly and in tf.data alike:
upright by its EXIF orientation (read from the JPEG, PNG or WebP bytes), transparent parts on
white, a JPEG too large for MAX_PIXELS decoded at a reduced scale; `read_picture` resizes it for a
network. The pipeline, `predict` and the check in images.py all decode with it."""

import functools

import tensorflow as tf

__all__ = [
    "JPEG_SCALES",
    "MAX_PIXELS",
    "ORIENTATION_TAG",
    "decode_picture",
    "exif_orientation",
    "jpeg_scale",
    "read_picture",
]

# Most pixels decoded from one file (decompression bombs): a larger JPEG (a 48-200 MP phone photo)
# is decoded at 1/2, 1/4 or 1/8 scale to stay under it; other larger pictures are refused.
MAX_PIXELS = 40_000_000
# the reduced scales a JPEG decoder offers (libjpeg's DCT scaling)
JPEG_SCALES = (1, 2, 4, 8)

# Where a picture keeps its EXIF block, and how far in its TIFF data begins: a JPEG in an APP1
# segment near its start, a PNG in an eXIf chunk before the pixels, a WebP in an EXIF chunk
# (4 bytes of size first) after them. A JPEG's or PNG's first 64 KB are searched, a WebP whole.
_PNG, _WEBP = b"\x89PNG", b"RIFF"
_EXIF = {"jpeg": b"Exif\x00\x00", "png": b"eXIf", "webp": b"EXIF"}
_HEAD = 1 << 16  # an EXIF block holds at most 64 KB
# a TIFF header: little-endian ("II") or big-endian ("MM")
_TIFF = (b"II*\x00", b"MM\x00*")
ORIENTATION_TAG = 0x0112  # EXIF orientation: 1 upright, 2-8 mirrored and/or rotated
_ENTRIES = 32  # IFD entries looked at (tags are sorted, and 0x0112 comes early)
_READ = 1024  # bytes of the TIFF block read: its header and first IFD


def _tiff_orientation(tiff):
    """The orientation tag in the first IFD of a TIFF block (TensorFlow ops), 1 if none."""
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
        (fields[:, 0] == ORIENTATION_TAG)
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
    TensorFlow ops only (notebook 06). Give it files `images.check_image`
    keeps (not animated WebPs)."""
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
    float32 0..255. The pipeline and `predict` read with it (notebooks 06, 07)."""
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
