"""The Keras 2 way of feeding cat/dog pictures, in Keras 3 (notebook 07).

PillowBatches   the Keras 2 generator style (`flow_from_directory` + `fit_generator(workers=)`)
                as a keras.utils.PyDataset: each batch is read, decoded, resized and augmented
                in Python, by `workers` threads or processes.
                (The same pictures through tf.data, every optimisation a switch, are
                helpers.data.image_pipeline.)
keras2_transform  what Keras 2's ImageDataGenerator did to one picture: a shear by an angle
                in degrees, its own zoom for height and width, edges repeated, a mirror.
"""

import math

import keras
import numpy as np
from PIL import Image

from . import config, models

__all__ = ["PillowBatches", "keras2_transform"]


def keras2_transform(image, shear_degrees=0.0, zoom=(1.0, 1.0), flip=False):
    """One picture (height, width, channels; float) changed as Keras 2's ImageDataGenerator
    did it: output pixel (row, col), counted from the centre, shows the input at
    (zoom_h * row - sin(angle) * zoom_w * col, cos(angle) * zoom_w * col), read bilinearly,
    the nearest edge pixel where that falls outside (fill_mode="nearest"); then, with `flip`,
    mirrored left-right. A zoom factor above 1 shows more of the picture, so it looks smaller.
    """
    h, w = image.shape[:2]
    angle, zoom_h, zoom_w = math.radians(shear_degrees), *zoom
    rows, cols = np.mgrid[0:h, 0:w].astype("float32")
    rows, cols = rows - (h - 1) / 2, cols - (w - 1) / 2
    r = np.clip(zoom_h * rows - math.sin(angle) * zoom_w * cols + (h - 1) / 2, 0, h - 1)
    c = np.clip(math.cos(angle) * zoom_w * cols + (w - 1) / 2, 0, w - 1)
    r0, c0 = np.floor(r).astype(int), np.floor(c).astype(int)
    r1, c1 = np.minimum(r0 + 1, h - 1), np.minimum(c0 + 1, w - 1)
    fr, fc = (r - r0)[..., None], (c - c0)[..., None]
    out = ((image[r0, c0] * (1 - fc) + image[r0, c1] * fc) * (1 - fr)
           + (image[r1, c0] * (1 - fc) + image[r1, c1] * fc) * fr)
    return np.ascontiguousarray(out[:, ::-1] if flip else out, dtype="float32")


class PillowBatches(keras.utils.PyDataset):
    """Batches of (images float32 0..255, labels) made per batch in Python, like Keras 2's
    ImageDataGenerator(shear_range=0.2, zoom_range=0.2, horizontal_flip=True): decode and
    resize each JPEG with Pillow, then (`augment`) draw as Keras 2 did a shear angle from
    -0.2..0.2 *degrees*, height and width zoom factors each from 0.8..1.2, and a mirror for
    half the pictures, and apply them with `keras2_transform`.

    `repeat` makes the dataset that many passes long, so a benchmark can run many steps.
    Pass `workers` and `use_multiprocessing` here: Keras 3 took them off `fit`.
    """

    def __init__(self, paths, labels, image_size, batch_size, augment=True, repeat=1,
                 seed=config.SEED, **kwargs):
        super().__init__(**kwargs)
        if batch_size < 1 or batch_size > len(paths):
            raise ValueError(f"batch_size must be between 1 and the {len(paths)} pictures, "
                             f"got {batch_size}.")
        self.paths, self.labels = list(paths), np.asarray(labels, dtype="float32")
        self.size, self.batch_size, self.augment = image_size, batch_size, augment
        self.batches, self.repeat, self.seed = len(self.paths) // batch_size, repeat, seed

    def __len__(self):
        return self.batches * self.repeat

    def __getitem__(self, index):
        rng = np.random.default_rng((self.seed, index))
        start = (index % self.batches) * self.batch_size
        chosen = range(start, start + self.batch_size)
        images = np.stack([self._load(self.paths[i], rng) for i in chosen])
        return images, self.labels[start:start + self.batch_size]

    def _load(self, path, rng):
        with Image.open(path) as picture:
            image = picture.convert("RGB").resize((self.size, self.size), Image.BILINEAR)
        image = np.asarray(image, dtype="float32")
        if not self.augment:
            return image
        shear = rng.uniform(-models.SHEAR_DEGREES, models.SHEAR_DEGREES)  # Keras 2: degrees
        zoom = rng.uniform(1 - models.ZOOM_RANGE, 1 + models.ZOOM_RANGE, 2)  # height, width
        return keras2_transform(image, shear, zoom, flip=rng.random() < 0.5)
