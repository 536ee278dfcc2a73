"""Export a trained model and time it: .keras, SavedModel, TFLite (float32, dynamic-range, int8).

    paths = export.export_all(model, export.folder(), calibration_images)
    tflite = export.TFLiteModel(paths["tflite_int8"])   # LiteRT if installed, else TensorFlow's
    probabilities = tflite.predict(images)              # 0..255 float pixels in, floats out
    export.latency(tflite.predict, images[:1])          # {"first_s": ..., "median_s": ...}

The TFLite files run with LiteRT (`ai-edge-litert`, the interpreter TensorFlow's own
`tf.lite.Interpreter` is being replaced by); where that package is missing, with TensorFlow's.
"""

import shutil
import warnings
from pathlib import Path

import numpy as np

from . import config
from .timing import first_and_median

__all__ = ["CAT_CLASSES", "VARIANTS", "accuracy", "export_all", "folder", "imagenet_labels",
           "interpreter_class", "keras_exports_litert", "latency", "load", "saved_model",
           "size_bytes", "TFLiteModel", "tflite_route", "top5", "ZOO", "zoo_classifiers"]

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
        if keras_exports_litert():
            model.export(str(paths[variant]), format="litert", verbose=False, **kwargs)
        else:
            paths[variant].write_bytes(_convert(paths["saved_model"], kwargs))
    return paths


def keras_exports_litert():
    """True where `model.export(format="litert")` exists (Keras 3.13 and later)."""
    import keras

    return tuple(int(n) for n in keras.version().split(".")[:2]) >= (3, 13)


def tflite_route():
    """What `export_all` calls for the TFLite files with this Keras, in words (notebook 11)."""
    import keras

    if keras_exports_litert():
        return f'model.export(format="litert") (Keras {keras.version()})'
    return (f"tf.lite.TFLiteConverter.from_saved_model on the SavedModel (Keras "
            f'{keras.version()} has no format="litert"; Keras 3.13 added it)')


def _convert(saved_model_path, options):
    """TensorFlow's converter on a SavedModel with `model.export(format="litert")`'s options,
    as Keras 3.13+ does inside that export: older Keras lacks it (Colab's 3.10)."""
    import tensorflow as tf

    converter = tf.lite.TFLiteConverter.from_saved_model(str(saved_model_path))
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS,
                                           tf.lite.OpsSet.SELECT_TF_OPS]
    converter.experimental_enable_resource_variables = True
    for key, value in options.items():
        if key == "target_spec":
            for spec_key, spec_value in value.items():
                setattr(converter.target_spec, spec_key, spec_value)
        else:
            setattr(converter, key, value)
    return converter.convert()


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


_told = []  # the notice on TensorFlow's interpreter, printed once per process


class TFLiteModel:
    """A .tflite file behind a NumPy `predict`, quantizing inputs and outputs where needed."""

    def __init__(self, path, threads=None):
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"{path} does not exist: export the model first.")
        interpreter, self.runtime = interpreter_class()
        with warnings.catch_warnings():  # TensorFlow's warns at every build: said once below
            warnings.filterwarnings("ignore", r"\s*Warning: tf\.lite\.Interpreter is deprecated")
            self.interpreter = interpreter(model_path=str(path), num_threads=threads)
        if self.runtime == "tf.lite.Interpreter" and not _told:
            _told.append(self.runtime)
            print("Notice: LiteRT (ai-edge-litert) is not installed, so TensorFlow's deprecated "
                  "tf.lite.Interpreter runs the .tflite files; `pip install ai-edge-litert` "
                  "replaces it.")
        self.interpreter.allocate_tensors()
        self.input = self.interpreter.get_input_details()[0]
        self.output = self.interpreter.get_output_details()[0]
        self.path, self._batch = path, int(self.input["shape"][0])
        self._first_batch = self._batch

    def __del__(self):
        # TensorFlow 2.19's interpreter (Colab's, without LiteRT) crashes the process when it
        # frees a dynamic-range model last run at batch 4 or more; back at its first batch it
        # frees cleanly (tests/test_export.py checks it in a process of its own).
        try:
            self._resize(self._first_batch)
        except Exception:  # half-built (a missing file) or already torn down at exit
            pass

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


# Four larger uint8 ImageNet classifiers from the repository the embedded MobileNet v1 0.25 comes
# from (Google's Coral test data, Apache-2.0), pinned to one commit and to each file's sha256.
ZOO_URL = ("https://raw.githubusercontent.com/google-coral/test_data/"
           "104342d2d3480b3e66203073dac24f4e2dbb4c41/")
ZOO = {
    "mobilenet_v1_0.5_160_quant.tflite":
        "3cc6d2ca460abd2e0f699a6d0d2550c6b61c6e3b0e27a3616e384ea74cb86f43",
    "mobilenet_v1_0.75_192_quant.tflite":
        "41daeb22fdcf947e0e5ec32373aa9df7c31f3ef45dbd0ef7b5940fbce3c20f6a",
    "mobilenet_v2_1.0_224_quant.tflite":
        "7aad0c74c5e3c06e5eb3c827e13304fdd68a83da6087d92ee169c24ff9fd4776",
    "tf2_mobilenet_v2_1.0_224_ptq.tflite":
        "5d3137241276e79c86d14a74fe43581398ae0e815191d3dba45495b810840e8c",
}


def zoo_classifiers():
    """Paths of the ZOO classifiers (notebook 11): downloaded once in `full` (12 MB, checksums
    checked); [] in `smoke` and `sample`, and offline, with a one-line notice."""
    from . import sources

    if config.profile() != "full":
        return []
    try:
        return [sources.download(sources.Remote(ZOO_URL + name, sha))
                for name, sha in ZOO.items()]
    except (ConnectionError, ValueError) as e:
        print(f"Notice: the larger classifiers could not be downloaded ({str(e)[:120]}); "
              "only the embedded one is compared.")
        return []


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
