"""Export a trained model and time it: .keras, SavedModel, TFLite (float32, dynamic-range, int8).

    paths = export.export_all(model, export.folder(), calibration_images)
    tflite = export.TFLiteModel(paths["tflite_int8"])   # LiteRT if installed, else TensorFlow's
    probabilities = tflite.predict(images)              # 0..255 float pixels in, floats out
    export.latency(tflite.predict, images[:1])          # {"first_s": ..., "median_s": ...}

The TFLite files run with LiteRT (`ai-edge-litert`, the interpreter TensorFlow's own
`tf.lite.Interpreter` is being replaced by); where that package is missing, with TensorFlow's.
"""

import shutil
from pathlib import Path

import numpy as np

from . import config
from .timing import first_and_median

__all__ = ["CAT_CLASSES", "VARIANTS", "accuracy", "export_all", "folder", "imagenet_labels",
           "interpreter_class", "latency", "load", "saved_model", "size_bytes", "TFLiteModel",
           "top5"]

VARIANTS = {
    "keras": "the .keras file (architecture + weights), loaded back in safe mode",
    "saved_model": "TensorFlow SavedModel (Keras' ExportArchive): a graph to serve, no Python",
    "tflite_float32": "TFLite, float32 weights and maths",
    "tflite_dynamic": "TFLite, weights stored as int8, maths in float32 (dynamic range)",
    "tflite_int8": "TFLite, weights and maths in int8, uint8 pixels in and out (full integer)",
}


def folder(name="11_exports"):
    """Where the exported files go (build/)."""
    return config.BUILD_DIR / name


def size_bytes(path):
    """Size of a file, or of every file in a folder (a SavedModel), in bytes."""
    path = Path(path)
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def export_all(model, out, calibration):
    """Write every variant of VARIANTS for `model` into folder `out`; returns {variant: path}.

    `calibration`: a few hundred typical inputs (N, H, W, 3) from which the int8 variant
    learns the value range of every tensor (the "representative dataset").
    """
    import tensorflow as tf

    from .training import save_model

    calibration = np.asarray(calibration, dtype="float32")
    if calibration.ndim != 4 or len(calibration) == 0:
        raise ValueError("calibration must be a non-empty batch of images (N, H, W, C), got "
                         f"shape {calibration.shape}.")
    out = Path(out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    paths = {"keras": save_model(model, out / "model.keras"),
             "saved_model": saved_model(model, out / "saved_model")}

    def representative():
        for image in calibration:
            yield [image[None]]

    options = {
        "tflite_float32": {},
        "tflite_dynamic": {"optimizations": [tf.lite.Optimize.DEFAULT]},
        "tflite_int8": {"optimizations": [tf.lite.Optimize.DEFAULT],
                        "representative_dataset": representative,
                        "target_spec": {"supported_ops": [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]},
                        "inference_input_type": tf.uint8, "inference_output_type": tf.uint8},
    }
    for variant, kwargs in options.items():
        paths[variant] = out / f"{variant}.tflite"
        model.export(str(paths[variant]), format="litert", verbose=False, **kwargs)
    return paths


def saved_model(model, path):
    """A SavedModel whose `serve` endpoint runs `model(x, training=False)`; returns `path`.

    Plain `model.export(path)` serves `model(x)` with `training` unset, and Keras' random
    augmentation layers (RandomFlip, RandomZoom, ...) default to training=True: a model
    with augmentation inside would serve randomly augmented predictions. ExportArchive,
    the class `model.export` uses, lets us register the inference call explicitly.
    """
    import keras
    import tensorflow as tf

    archive = keras.export.ExportArchive()
    archive.track(model)
    spec = tf.TensorSpec((None, *model.input_shape[1:]), tf.float32)
    archive.add_endpoint("serve", lambda x: model(x, training=False), input_signature=[spec])
    archive.write_out(str(path), verbose=False)
    return Path(path)


def load(variant, path):
    """A predict function (images -> probabilities, NumPy) for one exported variant."""
    if variant not in VARIANTS:
        raise KeyError(f"Unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}.")
    if variant == "keras":
        import keras

        model = keras.saving.load_model(path)  # safe_mode=True: no arbitrary code is run
        return lambda images: model.predict_on_batch(np.asarray(images, "float32"))
    if variant == "saved_model":
        import tensorflow as tf

        loaded = tf.saved_model.load(str(path))  # keep it: `serve` needs its variables alive
        return lambda images: loaded.serve(tf.constant(images, tf.float32)).numpy()
    return TFLiteModel(path).predict


def interpreter_class():
    """(Interpreter class, runtime name): LiteRT's where installed, else TensorFlow's."""
    try:
        from ai_edge_litert.interpreter import Interpreter

        return Interpreter, "LiteRT (ai-edge-litert)"
    except ImportError:
        import tensorflow as tf

        return tf.lite.Interpreter, "tf.lite.Interpreter"


class TFLiteModel:
    """A .tflite file behind a NumPy `predict`, quantizing inputs and outputs where needed."""

    def __init__(self, path, threads=None):
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"{path} does not exist: export the model first.")
        interpreter, self.runtime = interpreter_class()
        self.interpreter = interpreter(model_path=str(path), num_threads=threads)
        self.interpreter.allocate_tensors()
        self.input = self.interpreter.get_input_details()[0]
        self.output = self.interpreter.get_output_details()[0]
        self.path, self._batch = path, int(self.input["shape"][0])

    @property
    def input_dtype(self):
        return np.dtype(self.input["dtype"]).name

    def _resize(self, batch):
        if batch != self._batch:
            shape = [batch, *self.input["shape"][1:]]
            self.interpreter.resize_tensor_input(self.input["index"], shape)
            self.interpreter.allocate_tensors()
            self.input = self.interpreter.get_input_details()[0]
            self.output = self.interpreter.get_output_details()[0]
            self._batch = batch

    def predict(self, images, raw=False):
        """Run a batch of images; returns the outputs as float32 (dequantized if needed).

        raw=True passes integer inputs as they are (the ImageNet classifiers take the
        camera's uint8 pixels); otherwise float inputs are quantized with the input's scale.
        """
        images = np.asarray(images)
        expected = tuple(self.input["shape"][1:])
        if images.ndim != 4 or tuple(images.shape[1:]) != expected:
            raise ValueError(f"{self.path.name} expects images of shape (N, "
                             f"{', '.join(map(str, expected))}), got {images.shape}.")
        self._resize(len(images))
        scale, zero = self.input["quantization"]
        if np.issubdtype(self.input["dtype"], np.integer) and not raw:
            info = np.iinfo(self.input["dtype"])
            images = np.clip(np.round(images / scale + zero), info.min, info.max)
        self.interpreter.set_tensor(self.input["index"], images.astype(self.input["dtype"]))
        self.interpreter.invoke()
        out = self.interpreter.get_tensor(self.output["index"])
        scale, zero = self.output["quantization"]
        if np.issubdtype(out.dtype, np.integer):
            return (out.astype("float32") - zero) * scale
        return out.astype("float32")


def latency(predict, images, repeats=20):
    """Seconds for one call of `predict(images)`: the first call and the median of `repeats`."""
    first, median = first_and_median(lambda: predict(images), repeats)
    return {"first_s": first, "median_s": median}


def accuracy(predict, images, labels, batch=1):
    """Share of images whose probability (> 0.5 means class 1) matches the label."""
    labels = np.asarray(labels).reshape(-1)
    predicted = np.concatenate([np.asarray(predict(images[i:i + batch])).reshape(-1)
                                for i in range(0, len(images), batch)])
    return float(np.mean((predicted > 0.5) == labels.astype(bool)))


# --- ImageNet classifiers from the TFLite model zoo ------------------------------------------

# The domestic-cat classes of ImageNet, as the labels file names them.
CAT_CLASSES = ("tabby, tabby cat", "tiger cat", "Persian cat", "Siamese cat, Siamese",
               "Egyptian cat")


def imagenet_labels(path=None):
    """The 1001 ImageNet labels of the TFLite classifiers (line 0 is "background")."""
    from . import sources

    path = path or sources.sample_path("pretrained/imagenet_labels.txt")
    labels = Path(path).read_text().splitlines()
    if len(labels) != 1001:
        raise ValueError(f"{path} has {len(labels)} labels; the classifiers need 1001.")
    return labels


def top5(classifier, path, labels):
    """[(label, probability)] of the five best classes, and the batch-1 latency in seconds."""
    if not np.issubdtype(classifier.input["dtype"], np.integer):
        raise ValueError(f"{classifier.path.name} takes {classifier.input_dtype} input; top5 "
                         "expects a quantized classifier that takes uint8 pixels.")
    from .predict import load_pictures

    size = int(classifier.input["shape"][1])
    image = np.round(load_pictures([path], size)).astype(classifier.input["dtype"])

    def run(x):
        return classifier.predict(x, raw=True)

    timing = latency(run, image, repeats=10)
    scores = run(image)[0]
    best = np.argsort(scores)[::-1][:5]
    return [(labels[i], float(scores[i])) for i in best], timing["median_s"]
