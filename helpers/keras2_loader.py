"""The Keras 2 way of feeding pictures, in Keras 3: a PyDataset of Pillow pictures augmented in
Keras 2's units (notebook 07 writes it out)."""

import math

import keras
import numpy as np
from PIL import Image

from . import models

__all__ = ["PillowBatches", "keras2_picture", "keras2_transform"]


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
    out = ((image[r0, c0] * (1 - fc) + image[r0, c1] * fc) * (1 - fr)
           + (image[r1, c0] * (1 - fc) + image[r1, c1] * fc) * fr)
    return np.ascontiguousarray(out[:, ::-1] if flip else out, dtype="float32")


# Written from notebooks/07_input_pipeline.ipynb by `make pages`: change it there.
def keras2_picture(path, size, augment=False, seed=None):  #@save
    with Image.open(path) as picture:  # decoded in Python, one picture at a time
        image = np.asarray(picture.convert("RGB").resize((size, size), Image.NEAREST), "float32")
    if not augment:
        return image
    rng = np.random.default_rng(seed)  # one seed, one draw: the same in every worker
    shear = rng.uniform(-models.SHEAR_DEGREES, models.SHEAR_DEGREES)  # Keras 2.1.3 on: degrees
    zoom = rng.uniform(1 - models.ZOOM_RANGE, 1 + models.ZOOM_RANGE, 2)  # height, width
    return keras2_transform(image, shear, zoom, flip=rng.random() < 0.5)


# Written from notebooks/07_input_pipeline.ipynb by `make pages`: change it there.
class PillowBatches(keras.utils.PyDataset):  #@save
    def __init__(self, paths, labels, size, batch_size, augment=True, repeat=1, **kwargs):
        super().__init__(**kwargs)  # workers=, use_multiprocessing=: Keras 3 took them off fit
        if not 1 <= batch_size <= len(paths):
            raise ValueError(f"batch_size must be 1..{len(paths)} (the pictures), not {batch_size}")
        self.paths, self.labels = list(paths) * repeat, np.float32(list(labels) * repeat)
        self.size, self.batch_size, self.augment = size, batch_size, augment

    def __len__(self):  # batches: whole ones only
        return len(self.paths) // self.batch_size

    def __getitem__(self, index):  # batch number `index`: pictures index * batch_size, ...
        batch = range(index * self.batch_size, (index + 1) * self.batch_size)
        x = np.stack([keras2_picture(self.paths[i], self.size, self.augment, i) for i in batch])
        return x, self.labels[batch]
