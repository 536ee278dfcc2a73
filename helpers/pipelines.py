"""Input pipelines for the cat/dog pictures, from the Keras 2 way to tf.data (notebook 07).

PillowBatches   the Keras 2 generator style (`flow_from_directory` + `fit_generator(workers=)`)
                as a keras.utils.PyDataset: each batch is read, decoded, resized and augmented
                in Python, by `workers` threads or processes.
                (The same pictures through tf.data, every optimisation a switch, are
                helpers.data.image_pipeline.)
keras2_transform  what Keras 2's ImageDataGenerator did to one picture: a shear by an angle
                in degrees, its own zoom for height and width, edges repeated, a mirror.
read_profile    what a TensorBoard profile says about a training run: step time, time spent
                waiting for the next batch, and the busiest operations.
"""

import collections
import math
from pathlib import Path

import keras
import numpy as np
from PIL import Image

from . import config, models

__all__ = ["PillowBatches", "keras2_transform", "read_profile"]


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


def _busy_ms(spans):
    """Wall time covered by at least one of `spans` (start, stop in ps), in milliseconds."""
    busy, end = 0, None
    for start, stop in sorted(spans):
        if end is None or start > end:
            busy, end = busy + stop - start, stop
        elif stop > end:
            busy, end = busy + stop - end, stop
    return busy / 1e9


def read_profile(logdir):
    """Summarise the newest TensorFlow profile under `logdir` (what TensorBoard's Profile tab
    shows), in milliseconds: the profiled steps and their time; the part the step waited for
    its next batch (IteratorGetNext); how long the input pipeline (tf.data's threads, which
    also run a PyDataset) and the network's operations were at work; the longest operations."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    found = sorted(Path(logdir).glob("**/plugins/profile/*/*.xplane.pb"))
    if not found:
        raise FileNotFoundError(f"No profile under {logdir}: train with keras.callbacks."
                                "TensorBoard(log_dir, profile_batch=(first, last)) first.")
    space = xplane_pb2.XSpace()
    space.ParseFromString(found[-1].read_bytes())
    host = next(p for p in space.planes if p.name.startswith("/host:CPU"))
    names = {key: meta.name for key, meta in host.event_metadata.items()}
    steps, step_ms, wait_ms, ops = 0, 0.0, 0.0, collections.Counter()
    spans = {"input": [], "compute": []}
    for line in host.lines:
        kind = "input" if line.name.startswith("tf_data") else (
            "compute" if line.name.startswith("tf_Compute") else None)
        for event in line.events:
            if kind:
                start = line.timestamp_ns * 1000 + event.offset_ps
                spans[kind].append((start, start + event.duration_ps))
            name, ms = names.get(event.metadata_id, "?"), event.duration_ps / 1e9
            if line.name == "python" and name == "multi_step_on_iterator":
                steps, step_ms = steps + 1, step_ms + ms
            elif name == "IteratorGetNextOp::DoCompute":
                wait_ms += ms
            elif kind == "compute" and ":" in name and "::" not in name:
                ops[name.rsplit(":", 1)[-1]] += ms  # "scope/op:OpType" -> OpType
    return {"file": str(found[-1]), "steps": steps, "step_ms": step_ms,
            "waiting_for_input_ms": wait_ms,
            "waiting_share": wait_ms / step_ms if step_ms else math.nan,
            "input_busy_ms": _busy_ms(spans["input"]),
            "compute_busy_ms": _busy_ms(spans["compute"]),
            "top_ops_ms": dict(ops.most_common(8))}
