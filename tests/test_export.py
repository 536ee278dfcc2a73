"""Exports must load again and predict what the Keras model predicts; edge models must classify."""

from helpers import config, data, export, sources

import keras
import numpy as np
import pytest
from keras import layers


@pytest.fixture(scope="module", params=["model.export", "converter"])
def exported(request, tmp_path_factory):
    """The files of both TFLite routes: Keras 3.13+'s `model.export(format="litert")`, and
    TensorFlow's converter on the SavedModel, which older Keras (Colab's 3.10) gets."""
    if request.param == "model.export" and not export.keras_exports_litert():
        pytest.skip(f"Keras {keras.version()} has no model.export(format='litert')")
    if request.param == "converter":
        patch = pytest.MonkeyPatch()
        patch.setattr(export, "keras_exports_litert", lambda: False)
        request.addfinalizer(patch.undo)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input((16, 16, 3)), layers.RandomFlip("horizontal"), layers.RandomZoom(0.2),
        layers.Rescaling(1 / 255), layers.Conv2D(4, 3, activation="relu"),
        layers.GlobalAveragePooling2D(), layers.Dense(1, activation="sigmoid")])
    images = np.random.default_rng(0).uniform(0, 255, (32, 16, 16, 3)).astype("float32")
    paths = export.export_all(model, tmp_path_factory.mktemp("exports"), images)
    return model, images, paths


def test_float_exports_predict_like_the_keras_model(exported):
    model, images, paths = exported
    reference = model.predict(images, verbose=0)
    for variant in ("keras", "saved_model", "tflite_float32"):
        predicted = export.load(variant, paths[variant])(images)
        assert np.abs(predicted - reference).max() < 1e-4, variant


def test_quantized_exports_stay_close_and_are_smaller(exported):
    model, images, paths = exported
    reference = model.predict(images, verbose=0)
    int8 = export.TFLiteModel(paths["tflite_int8"])
    assert int8.input_dtype == "uint8"
    for variant in ("tflite_dynamic", "tflite_int8"):
        assert np.abs(export.load(variant, paths[variant])(images) - reference).max() < 0.05
    assert export.size_bytes(paths["saved_model"]) > 0


def test_bad_inputs_get_clear_errors(exported, tmp_path):
    model, images, paths = exported
    with pytest.raises(ValueError, match=r"expects images of shape \(N, 16, 16, 3\)"):
        export.TFLiteModel(paths["tflite_float32"]).predict(images[:, :8])
    with pytest.raises(FileNotFoundError, match="export the model first"):
        export.TFLiteModel(tmp_path / "missing.tflite")
    with pytest.raises(ValueError, match="calibration must be"):
        export.export_all(model, tmp_path / "x", np.zeros((0, 16, 16, 3)))
    with pytest.raises(KeyError, match="Unknown variant"):
        export.load("onnx", tmp_path)
    with pytest.raises(ValueError, match="repeats"):
        export.latency(len, images, repeats=0)
    (tmp_path / "labels.txt").write_text("a\nb\n")
    with pytest.raises(ValueError, match="1001"):
        export.imagenet_labels(tmp_path / "labels.txt")


def test_embedded_imagenet_classifier_sees_a_cat_in_the_cat_picture():
    classifier = export.TFLiteModel(
        sources.sample_path("pretrained/mobilenet_v1_0.25_128_quant.tflite"))
    cat = next(p for p in data.sample_pictures() if p.name == "cat.png")
    best, seconds = export.top5(classifier, cat, export.imagenet_labels())
    assert best[0][0] in export.CAT_CLASSES and seconds > 0
    assert [p for _, p in best] == sorted((p for _, p in best), reverse=True)


SHARED_ZOO = config.ROOT.parent / "shared" / "data" / "pretrained" / "tflite"


def test_larger_classifiers_are_fetched_only_in_full_and_offline_say_so(profile, monkeypatch,
                                                                         capsys):
    asked = []

    def offline(remote):
        asked.append(remote)
        raise ConnectionError("no network")

    monkeypatch.setattr(sources, "download", offline)
    profile("sample")
    assert export.zoo_classifiers() == [] and asked == []
    profile("full")
    assert export.zoo_classifiers() == []
    assert asked[0].url.startswith(export.ZOO_URL) and "could not be downloaded" in (
        capsys.readouterr().out)


@pytest.mark.skipif(not SHARED_ZOO.is_dir(), reason="needs the build machines' ../shared/data "
                    "(a copy of the pinned classifiers); a clone without it downloads them")
def test_each_larger_classifier_matches_its_pin_and_sees_a_cat(profile, monkeypatch):
    def download(remote):  # the checked download, from the build machines' copy
        path = SHARED_ZOO / remote.url.rsplit("/", 1)[-1]
        assert sources.sha256(path) == remote.sha256, path.name
        return path

    monkeypatch.setattr(sources, "download", download)
    profile("full")
    cat = next(p for p in data.sample_pictures() if p.name == "cat.png")
    paths = export.zoo_classifiers()
    assert [p.name for p in paths] == list(export.ZOO)
    for path in paths:
        best, _ = export.top5(export.TFLiteModel(path), cat, export.imagenet_labels())
        assert best[0][0] in export.CAT_CLASSES, (path.name, best[0])


LOAD_WITHOUT_THE_COURSE = """
import sys
sys.modules["helpers"] = None  # the course is not importable here
import json, keras, numpy as np, tensorflow as tf
try:
    from ai_edge_litert.interpreter import Interpreter
except ImportError:  # Colab has no LiteRT: TensorFlow's own interpreter
    Interpreter = tf.lite.Interpreter
x = np.load("images.npy")
served = tf.saved_model.load("saved_model")  # keep it: its variables live as long as it does
out = {"keras": keras.saving.load_model("model.keras").predict(x, verbose=0)[:, 0].tolist(),
       "saved_model": served.serve(x).numpy()[:, 0].tolist()}
lite = Interpreter(model_path="tflite_float32.tflite")
lite.resize_tensor_input(lite.get_input_details()[0]["index"], x.shape)
lite.allocate_tensors()
lite.set_tensor(lite.get_input_details()[0]["index"], x)
lite.invoke()
out["tflite_float32"] = lite.get_tensor(lite.get_output_details()[0]["index"])[:, 0].tolist()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def course_net(tmp_path_factory):
    """The course's network (augmentation inside, dense weights large enough to quantize),
    exported the way this Keras exports it."""
    from helpers import models

    model = models.cats_dogs_net("2", image_size=32, seed=1)
    images = np.random.default_rng(1).uniform(0, 255, (8, 32, 32, 3)).astype("float32")
    out = tmp_path_factory.mktemp("course_net")
    return model, images, export.export_all(model, out, images)


def test_the_course_network_exports_load_anywhere_without_the_course(course_net):
    import json
    import subprocess
    import sys

    model, images, paths = course_net
    folder = paths["keras"].parent
    np.save(folder / "images.npy", images)
    done = subprocess.run([sys.executable, "-c", LOAD_WITHOUT_THE_COURSE], cwd=folder,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    expected = model.predict(images, verbose=0)[:, 0]
    for variant, predicted in json.loads(done.stdout.strip().splitlines()[-1]).items():
        assert paths[variant].exists()
        np.testing.assert_allclose(predicted, expected, atol=1e-4, err_msg=variant)


RELEASE_AFTER_A_BATCH = """
import gc, sys
sys.modules["ai_edge_litert"] = None  # TensorFlow's interpreter, as on Colab
import numpy as np
from helpers import export
export.TFLiteModel(sys.argv[1])  # its deprecation is said once, not at every model built
model = export.TFLiteModel(sys.argv[1])
print(model.runtime, model.predict(np.zeros((16, 32, 32, 3), "float32")).shape)
del model
gc.collect()
print("released")
"""


def test_a_dynamic_range_model_run_at_batch_16_is_released_without_a_crash(course_net):
    import subprocess
    import sys

    from helpers import config

    path = course_net[2]["tflite_dynamic"]  # TensorFlow 2.19's interpreter crashed here
    done = subprocess.run([sys.executable, "-c", RELEASE_AFTER_A_BATCH, str(path)],
                          cwd=config.ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"exit code {done.returncode}: {done.stderr[-2000:]}"
    assert "tf.lite.Interpreter (16, 1)" in done.stdout and "released" in done.stdout
    assert done.stdout.count("Notice: LiteRT (ai-edge-litert) is not installed") == 1
    assert "is deprecated" not in done.stderr  # the kernel's stderr would fail checked cells

