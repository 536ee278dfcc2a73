"""The course's data as tf.data pipelines: pictures from the files folders.py lists and
images.py passes (decoded by decoding.py in parallel, cached, batched), the cat/dog splits,
CIFAR-10, MNIST and the text sets; and the Keras 2 way of feeding pictures, in Keras 3: a
PyDataset of Pillow pictures in Keras 2's units (notebook 07)."""

import gzip
import math
from pathlib import Path

import keras
import numpy as np
import psutil
import tensorflow as tf
from PIL import Image

from . import config, models
from .config import sample_path, source
from .decoding import read_picture
from .folders import cats_dogs_files, labelled_files
from .images import check_image

__all__ = [
    "PillowBatches",
    "cats_dogs",
    "cifar10",
    "image_pipeline",
    "imdb",
    "keras2_picture",
    "keras2_transform",
    "load_pictures",
    "mnist",
    "mnist_arrays",
    "need_memory",
    "read_cifar_bin",
    "read_idx",
    "read_text",
    "sample_pictures",
    "shakespeare",
]


def need_memory(nbytes, what):
    """Refuse a job needing over 80 % of the free memory, before it starts (notebook 07)."""
    free = psutil.virtual_memory().available
    if nbytes > 0.8 * free:
        raise MemoryError(
            f"{what} needs {nbytes / 1e6:,.0f} MB of memory and {free / 1e6:,.0f} MB "
            "are free: use a smaller image size or fewer pictures (limit=), or "
            "close other programs."
        )


# Written from notebooks/07_input_pipeline.ipynb by `make pages`: change it there.
def decoded(paths, labels, size, parallel=True, cache=True):  # @save
    if cache:  # 3 bytes a pixel
        need = len(paths) * size**2 * 3
        need_memory(need, f"caching {len(paths):,} pictures of {size} px")
    calls = tf.data.AUTOTUNE if parallel else None  # AUTOTUNE: as many as help

    def load(path, label):  # decoded and resized; rounded to uint8 for the cache
        return tf.cast(tf.round(read_picture(path, (size, size))), tf.uint8), label

    ds = tf.data.Dataset.from_tensor_slices((list(paths), list(labels)))
    ds = ds.map(load, num_parallel_calls=calls)
    return ds.cache() if cache else ds


# Written from notebooks/07_input_pipeline.ipynb by `make pages`: change it there.
def image_pipeline(  # @save
    paths, labels, size, batch_size, shuffle=False, repeat=False, prefetch=True, **parts
):
    ds = decoded(paths, labels, size, **parts)  # parallel=, cache=
    ds = ds.shuffle(len(paths), seed=config.SEED) if shuffle else ds
    ds = ds.batch(batch_size, drop_remainder=repeat)
    ds = ds.map(lambda x, y: (tf.cast(x, tf.float32), y))  # float32 pixels, 0..255
    ds = ds.repeat() if repeat else ds  # endless, for benchmarks: whole batches only
    return ds.prefetch(tf.data.AUTOTUNE) if prefetch else ds


def _check_split(split, splits=("train", "validation")):
    if split not in splits:
        raise ValueError(
            f"split must be {' or '.join(map(repr, splits))}, got {split!r}."
        )


def cats_dogs(split="train", image_size=64, batch_size=None, limit=None, root=None):
    """Cats vs dogs as tf.data of (image 0..255 float32, label 0=cat 1=dog) (notebook 04), from
    `cats_dogs_files`; `limit` keeps the first pictures of the seeded shuffle."""
    _check_split(split)
    s = config.settings("cats_dogs")
    limit = limit or (s.train if split == "train" else s.val)
    paths, labels, classes = cats_dogs_files(split, root, limit)
    ds = image_pipeline(
        paths, labels, image_size, batch_size or s.batch, split == "train"
    )
    ds.class_names, ds.num_examples = classes, len(paths)
    return ds


def read_cifar_bin(paths):
    """Images (N, 32, 32, 3 uint8) and labels of CIFAR-10's binary batches (notebook 03, `full`)."""
    raw = np.concatenate([np.fromfile(p, dtype=np.uint8) for p in paths])
    if raw.size % 3073:
        raise ValueError(f"{paths} are not CIFAR-10 binary batches (size {raw.size}).")
    rows = raw.reshape(-1, 3073)
    return rows[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1), rows[:, 0].astype(
        "int32"
    )


def cifar10(split="train", batch_size=128, limit=None):
    """CIFAR-10 as tf.data of (image 32x32x3 float32 0..255, label 0..9) (notebook 03); the
    sample's 200 test pictures per class are split 80/20 by the course seed."""
    _check_split(split)
    kind, root = source("cifar10")
    if kind == "sample":
        paths, labels, classes = labelled_files(root)
        n_val = round(len(paths) * 0.2)
        part = slice(n_val, None) if split == "train" else slice(n_val)
        ds = image_pipeline(
            paths[part][:limit], labels[part][:limit], 32, batch_size, split == "train"
        )
    else:
        folder = root / "cifar-10-batches-bin"
        x, y = read_cifar_bin(
            sorted(folder.glob("data_batch_*.bin"))
            if split == "train"
            else [folder / "test_batch.bin"]
        )
        classes = (folder / "batches.meta.txt").read_text().split()
        ds = tf.data.Dataset.from_tensor_slices(
            (x[:limit].astype("float32"), y[:limit])
        )
        ds = ds.shuffle(10000, seed=config.SEED) if split == "train" else ds
        ds = ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)
    ds.class_names = classes
    return ds


def read_idx(path):
    """A NumPy array from an idx file (gzip or plain), as MNIST publishes them (notebook 01)."""
    with (gzip.open if str(path).endswith(".gz") else open)(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[:3] != b"\x00\x00\x08":
        raise ValueError(f"{path} is not an idx file of unsigned bytes.")
    shape = tuple(
        int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(data[3])
    )
    array = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * data[3])
    if array.size != int(np.prod(shape)):
        raise ValueError(
            f"{path} is truncated: expected {shape}, got {array.size} values."
        )
    return array.reshape(shape)


def mnist_arrays(split="train"):
    """MNIST as NumPy arrays (images uint8 28x28, labels) in the profile's sizes (notebook 01);
    the sample's 10,000 test digits are split 80/20 by the course seed."""
    _check_split(split)
    kind, folder = source("mnist")
    prefix = "train" if kind == "full" and split == "train" else "t10k"
    x = read_idx(folder / f"{prefix}-images-idx3-ubyte.gz")
    y = read_idx(folder / f"{prefix}-labels-idx1-ubyte.gz")
    if kind != "full":
        order = np.random.default_rng(config.SEED).permutation(len(x))
        n_val = len(x) // 5
        order = order[n_val:] if split == "train" else order[:n_val]
        x, y = x[order], y[order]
    s = config.settings("mnist")
    limit = s.train if split == "train" else s.val
    return x[:limit], y[:limit]


def mnist(split="train", batch_size=None, one_hot=False):
    """MNIST as tf.data of (image float32 28x28x1 in 0..1, label) (notebook 01)."""
    x, y = mnist_arrays(split)
    x = (x.astype("float32") / 255.0)[..., None]
    y = np.eye(10, dtype="float32")[y] if one_hot else y.astype("int32")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).cache()
    ds = ds.shuffle(len(x), seed=config.SEED) if split == "train" else ds
    return ds.batch(batch_size or config.settings("mnist").batch).prefetch(
        tf.data.AUTOTUNE
    )


def read_text(path):
    """A UTF-8 text file as str, a clear error if empty or not UTF-8 (notebook 02's texts)."""
    data = Path(path).read_bytes()
    if not data.strip():
        raise ValueError(
            f"{path} is empty: a text model needs some text to learn from."
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(
            f"{path} is not UTF-8 (byte {e.start}: {data[e.start : e.start + 1]!r}); "
            "re-save it as UTF-8."
        ) from e


def shakespeare():
    """Tiny Shakespeare as one string (notebook 02; the sample holds the whole file)."""
    kind, path = source("tinyshakespeare")
    return read_text(path if kind == "full" else path / "input.txt")


def imdb(split="train", batch_size=32):
    """IMDB reviews as tf.data of (text, label 0=neg 1=pos) (notebook 02)."""
    _check_split(split, ("train", "test"))
    kind, root = source("imdb")
    return keras.utils.text_dataset_from_directory(
        root / ("aclImdb" if kind == "full" else "") / split,
        class_names=["neg", "pos"],
        batch_size=batch_size,
        shuffle=(split == "train"),
        seed=config.SEED,
    )


def sample_pictures():
    """The out-of-dataset pictures (cat, bird, parrot, sunflower, Grace Hopper) (notebook 06)."""
    folder = sample_path("sample_images")
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in (".jpg", ".png"))


def keras2_transform(image, shear_degrees=0.0, zoom=(1.0, 1.0), flip=False):
    """A picture sheared (degrees), zoomed (height, width; above 1 shows more) and mirrored as
    Keras 2's ImageDataGenerator did: bilinear, edges repeated (notebook 07)."""
    h, w = image.shape[:2]
    angle, zoom_h, zoom_w = math.radians(shear_degrees), *zoom
    rows, cols = np.mgrid[0:h, 0:w].astype("float32")
    rows, cols = rows - (h - 1) / 2, cols - (w - 1) / 2
    r = np.clip(zoom_h * rows - math.sin(angle) * zoom_w * cols + (h - 1) / 2, 0, h - 1)
    c = np.clip(math.cos(angle) * zoom_w * cols + (w - 1) / 2, 0, w - 1)
    r0, c0 = np.floor(r).astype(int), np.floor(c).astype(int)
    r1, c1 = np.minimum(r0 + 1, h - 1), np.minimum(c0 + 1, w - 1)
    fr, fc = (r - r0)[..., None], (c - c0)[..., None]
    out = (image[r0, c0] * (1 - fc) + image[r0, c1] * fc) * (1 - fr) + (
        image[r1, c0] * (1 - fc) + image[r1, c1] * fc
    ) * fr
    return np.ascontiguousarray(out[:, ::-1] if flip else out, dtype="float32")


# Written from notebooks/07_input_pipeline.ipynb by `make pages`: change it there.
def keras2_picture(path, size, augment=False, seed=None):  # @save
    with Image.open(path) as picture:  # decoded in Python, one picture at a time
        rgb = picture.convert("RGB").resize((size, size), Image.NEAREST)
    image = np.asarray(rgb, "float32")
    if not augment:
        return image
    rng = np.random.default_rng(seed)  # one seed, one draw: the same in every worker
    # Keras 2.1.3 on: degrees
    shear = rng.uniform(-models.SHEAR_DEGREES, models.SHEAR_DEGREES)
    zoom = rng.uniform(1 - models.ZOOM_RANGE, 1 + models.ZOOM_RANGE, 2)  # height, width
    return keras2_transform(image, shear, zoom, flip=rng.random() < 0.5)


# Written from notebooks/07_input_pipeline.ipynb by `make pages`: change it there.
class PillowBatches(keras.utils.PyDataset):  # @save
    def __init__(self, paths, labels, size, batch_size, augment=True, repeat=1, **kw):
        super().__init__(**kw)  # workers=, use_multiprocessing= (Keras 3: not on fit)
        if not 1 <= batch_size <= len(paths):
            raise ValueError(f"batch_size must be 1..{len(paths)}, not {batch_size}")
        self.paths, self.labels = list(paths) * repeat, list(labels) * repeat
        self.size, self.batch_size, self.augment = size, batch_size, augment

    def __len__(self):  # whole batches only
        return len(self.paths) // self.batch_size

    def __getitem__(self, index):  # batch `index`: pictures index * batch_size, ...
        batch = range(index * self.batch_size, (index + 1) * self.batch_size)
        x = [keras2_picture(self.paths[i], self.size, self.augment, i) for i in batch]
        return np.stack(x), np.float32([self.labels[i] for i in batch])


def load_pictures(paths, image_size):
    """Pictures as one float32 batch of 0..255 pixels, resized as in training (notebook 06)."""
    batch = []
    for path in paths:
        ok, why = check_image(path)
        if not ok:
            raise ValueError(f"{path} cannot be used: {why}. Remove it or replace it.")
        batch.append(read_picture(str(path), (image_size, image_size)).numpy())
    if not batch:
        raise ValueError("No pictures given: pass a list of image files.")
    return np.stack(batch)
