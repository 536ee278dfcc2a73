"""Notebook 11's export, run as the page writes it: the files load again and predict what the
Keras model predicts, int8 keeps the float32 answers, the interpreter scales uint8 inputs; the
ImageNet classifier sees a cat. Its deep dive 11b's latency tools: the line through a batch
sweep, the percentiles' intervals, the open loop."""

import json
import math
import subprocess
import sys
import time
from functools import partial
from types import SimpleNamespace

from helpers import config, data, ladder, models, timing

import keras
import numpy as np
import page_source
import pytest
import tensorflow as tf
from keras import layers

NOTEBOOK = "11_inference_and_edge"
DEEP_DIVE = "11b_latency_in_detail"
ON_THE_PAGE = {  # each function, and the notebook that writes it out
    "saved_model": NOTEBOOK,
    "to_tflite": NOTEBOOK,
    "load_tflite": NOTEBOOK,
    "run_tflite": NOTEBOOK,
    "top5": NOTEBOOK,
    "linear_range": DEEP_DIVE,
    "quantile_interval": DEEP_DIVE,
    "open_loop": DEEP_DIVE,
}
# ImageNet's domestic cats, as its labels file names them
CAT_CLASSES = (
    "tabby, tabby cat",
    "tiger cat",
    "Persian cat",
    "Siamese cat, Siamese",
    "Egyptian cat",
)


def page_functions():
    """The functions notebooks 11 and 11b write out (they live on their pages alone)."""
    namespace = {
        "keras": keras,
        "np": np,
        "tf": tf,
        "partial": partial,
        "data": data,
        "timing": timing,
        "config": config,
        "time": time,
    }
    for name, notebook in ON_THE_PAGE.items():
        exec(page_source.defined_on_page(notebook, name), namespace)
    return SimpleNamespace(**{name: namespace[name] for name in ON_THE_PAGE})


page = page_functions()


BATCHES = [1, 4, 16, 64, 256]


def on_a_line(fixed, per_picture, batches=BATCHES):
    return [fixed + per_picture * b for b in batches]


def test_linear_range_fits_the_small_batches_and_finds_the_knee():
    fixed, per_picture, knee = page.linear_range(BATCHES, on_a_line(0.5, 0.2))
    assert (fixed, per_picture, knee) == (pytest.approx(0.5), pytest.approx(0.2), None)
    noisy = [
        t * (1 + e)
        for t, e in zip(on_a_line(0.5, 0.2), (0.03, -0.03, 0.03, -0.03, 0.03))
    ]
    assert page.linear_range(BATCHES, noisy)[2] is None  # within 10 %: no knee
    # 256 pays 50 % more a picture
    outgrown = on_a_line(0.5, 0.2)[:4] + [0.5 + 0.3 * 256]
    fixed, per_picture, knee = page.linear_range(BATCHES, outgrown)
    assert knee == 256 and per_picture == pytest.approx(0.2)  # fitted without the knee
    early = on_a_line(0.5, 0.2)[:3] + [0.5 + 0.25 * 64, 0.5 + 0.25 * 256]
    # the first batch to leave the line
    assert page.linear_range(BATCHES, early)[2] == 64
    order = [3, 0, 4, 2, 1]
    assert (
        page.linear_range([BATCHES[i] for i in order], [outgrown[i] for i in order])[2]
        == 256
    )
    # two batches: the line is exact
    assert page.linear_range([1, 8], [1.0, 2.0])[2] is None


def test_linear_ranges_ceiling_is_not_beaten_where_a_fit_over_all_batches_is():
    """The expert's case: throughput falls at 256, and a line through every batch sets a
    ceiling that batch 64 beats; over the linear range it does not."""
    # 3,000 images/s at 256, 4,900 at 64
    ms = on_a_line(0.5, 0.2)[:4] + [256 / 3000 * 1000]
    every = np.polyfit(BATCHES, ms, 1, w=1 / np.array(ms))[0]
    assert 64 / ms[3] * 1000 > 1000 / every  # the line through all: beaten at 64
    fixed, per_picture, knee = page.linear_range(BATCHES, ms)
    assert (
        knee == 256
        and max(b / t for b, t in zip(BATCHES, ms)) * 1000 < 1000 / per_picture
    )


def binomial_ranks(n, q, level=0.95):
    """Order-statistic ranks (from 1) of the distribution-free interval, from exact binomial
    sums: the largest l with P(K < l) <= tail, the smallest u with P(K < u) >= 1 - tail."""
    cdf = np.cumsum([math.comb(n, k) * q**k * (1 - q) ** (n - k) for k in range(n + 1)])
    tail = (1 - level) / 2
    low = max((k + 1 for k in range(n + 1) if cdf[k] <= tail), default=0)
    high = min((k + 1 for k in range(n + 1) if cdf[k] >= 1 - tail), default=n + 1)
    return low, high


@pytest.mark.parametrize("n, q", [(100, 0.5), (200, 0.95), (400, 0.99), (1000, 0.99)])
def test_quantile_interval_is_bounded_by_the_exact_binomial_order_statistics(n, q):
    # rank = value
    samples = np.random.default_rng(n).permutation(np.arange(1.0, n + 1))
    found = page.quantile_interval(samples, q)
    low, high = binomial_ranks(n, q)
    assert (found["low"], found["high"]) == (
        low or -np.inf,
        high if high <= n else np.inf,
    )
    assert found["value"] == pytest.approx(np.percentile(samples, 100 * q))
    assert found["above"] == int(np.sum(samples > found["value"]))
    if (n, q) == (100, 0.5):
        assert (low, high) == (40, 61)  # the textbook interval for a median of 100


def test_quantile_interval_of_too_few_samples_is_unbounded_above_and_covers_95_percent():
    assert page.quantile_interval(np.arange(50.0), 0.99)["high"] == np.inf
    # exponential's p99
    rng, truth, covered = (np.random.default_rng(0), -np.log(0.01), 0)
    for _ in range(1000):
        found = page.quantile_interval(rng.exponential(size=500), 0.99)
        covered += found["low"] <= truth <= found["high"]
    assert 0.94 <= covered / 1000 < 1  # at least 95 % by construction, less than always


def test_open_loop_times_each_request_from_when_it_was_due():
    """Requests due every 1 ms to a call that takes 2 ms: each waits behind the last, so the
    latency grows by about 1 ms a request (a closed loop would time 2 ms each)."""
    latencies = page.open_loop(lambda: time.sleep(0.002), 1000, 0.05)
    assert len(latencies) == 50 and min(latencies) >= 0.002
    assert latencies[-1] - latencies[0] > 0.03
    assert len(page.open_loop(lambda: None, 100, 0.2)) == 20


def pictures(size, count=32):
    """`count` real validation pictures of the sample, 0..255 float32."""
    batches = data.cats_dogs("validation", size, count, limit=count)
    return np.concatenate([x.numpy() for x, _ in batches])


def one_at_a_time(interpreter, images):
    """The page's way: every picture on its own through the interpreter."""
    return np.concatenate(
        [page.run_tflite(interpreter, image[None]) for image in images]
    )


def export_all(model, folder, calibration):
    """The five files of notebook 11's section 3, made with the page's functions."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"keras": folder / "model.keras", "saved_model": folder / "saved_model"}
    model.save(paths["keras"])
    page.saved_model(model, paths["saved_model"])
    for variant, quantize in [
        ("tflite_float32", None),
        ("tflite_dynamic", "dynamic"),
        ("tflite_int8", "int8"),
    ]:
        paths[variant] = folder / f"{variant}.tflite"
        paths[variant].write_bytes(
            page.to_tflite(paths["saved_model"], quantize, calibration)
        )
    return paths


@pytest.fixture(scope="module")
def course_net(tmp_path_factory):
    """The course's network (augmentation inside, dense weights large enough to quantize) and
    its five files, calibrated on real pictures."""
    model = models.cats_dogs_net("2", image_size=32, seed=1)
    images = pictures(32)
    return (
        model,
        images,
        export_all(model, tmp_path_factory.mktemp("course_net"), images),
    )


def test_float_exports_predict_like_the_keras_model_not_its_augmentation(course_net):
    model, images, paths = course_net
    reference = model.predict(images, verbose=0)
    served = tf.saved_model.load(str(paths["saved_model"]))
    answers = {
        "keras": keras.saving.load_model(paths["keras"]).predict(images, verbose=0),
        "saved_model": served.serve(images).numpy(),
        "tflite_float32": one_at_a_time(
            page.load_tflite(paths["tflite_float32"]), images
        ),
    }
    for variant, answer in answers.items():
        assert np.abs(answer - reference).max() < 1e-4, variant


def test_quantized_files_are_over_3x_smaller_and_answer_close_to_float32(course_net):
    model, images, paths = course_net
    reference = model.predict(images, verbose=0)
    float32 = paths["tflite_float32"].stat().st_size
    for variant in ("tflite_dynamic", "tflite_int8"):
        assert paths[variant].stat().st_size < float32 / 3, variant
        answer = one_at_a_time(page.load_tflite(paths[variant]), images)
        assert np.abs(answer - reference).max() < 0.05, variant


def test_the_int8_input_takes_float_pixels_in_its_own_scale_and_zero_point(tmp_path):
    """A network fed 0..1 pixels: its int8 input step is 1/255, and the page must divide by it."""
    model = keras.Sequential(
        [
            keras.Input((16, 16, 3)),
            layers.GlobalAveragePooling2D(),
            layers.Dense(1, activation="sigmoid"),
        ]
    )
    # brightness
    model.layers[-1].set_weights([np.full((3, 1), 10.0), np.array([-15.0])])
    images = pictures(16) / 255
    reference = model.predict(images, verbose=0)
    assert np.ptp(reference) > 0.3  # the answers differ between pictures: scaling shows
    page.saved_model(model, tmp_path / "saved_model")
    (tmp_path / "int8.tflite").write_bytes(
        page.to_tflite(tmp_path / "saved_model", "int8", images)
    )
    interpreter = page.load_tflite(tmp_path / "int8.tflite")
    scale, zero = interpreter.get_input_details()[0]["quantization"]
    assert zero == 0 and scale == pytest.approx(images.max() / 255, rel=1e-3)
    answer = one_at_a_time(interpreter, images)
    assert np.abs(answer - reference).max() < 0.05
    by_hand = np.round(images / scale).astype("uint8")  # uint8 goes in as it is
    assert np.array_equal(one_at_a_time(interpreter, by_hand), answer)


@pytest.mark.slow
def test_int8_classifies_the_validation_pictures_within_2_points_of_float32(tmp_path):
    model = ladder.trained_cats_dogs()  # notebook 04's network, as notebook 11 takes it
    size = model.input_shape[1]
    val = data.cats_dogs("validation", size, 64)
    images = np.concatenate([x.numpy() for x, _ in val])
    labels = np.concatenate([y.numpy() for _, y in val]).astype(bool)
    paths = export_all(model, tmp_path, pictures(size, 200))
    accuracy = {
        variant: np.mean(
            (one_at_a_time(page.load_tflite(paths[variant]), images)[:, 0] > 0.5)
            == labels
        )
        for variant in ("tflite_float32", "tflite_int8")
    }
    assert accuracy["tflite_float32"] - accuracy["tflite_int8"] <= 0.02, accuracy


def test_tflites_own_kernels_answer_as_xnnpack_does(course_net):
    images, paths = course_net[1][:8], course_net[2]
    for variant in ("tflite_float32", "tflite_dynamic", "tflite_int8"):
        fast, own = (
            one_at_a_time(page.load_tflite(paths[variant], xnnpack), images)
            for xnnpack in (True, False)
        )
        np.testing.assert_allclose(own, fast, atol=0.02, err_msg=variant)


def test_bad_inputs_get_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="quantize must be None, 'dynamic' or 'int8'"):
        page.to_tflite(tmp_path, "int4")
    with pytest.raises(ValueError, match="int8 with calibration pictures"):
        page.to_tflite(tmp_path, "int8")


def imagenet_labels():
    return config.sample_path("pretrained/imagenet_labels.txt").read_text().splitlines()


def cat_picture():
    return next(p for p in data.sample_pictures() if p.name == "cat.png")


def test_embedded_imagenet_classifier_sees_a_cat_in_the_cat_picture():
    classifier = page.load_tflite(
        config.sample_path("pretrained/mobilenet_v1_0.25_128_quant.tflite")
    )
    best, seconds = page.top5(classifier, cat_picture(), imagenet_labels())
    assert best[0][0] in CAT_CLASSES and seconds > 0
    assert [p for _, p in best] == sorted((p for _, p in best), reverse=True)


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


@pytest.mark.processes
def test_the_course_network_exports_load_anywhere_without_the_course(course_net):
    model, images, paths = course_net
    folder = paths["keras"].parent
    np.save(folder / "images.npy", images[:8])
    done = subprocess.run(
        [sys.executable, "-c", LOAD_WITHOUT_THE_COURSE],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    expected = model.predict(images[:8], verbose=0)[:, 0]
    for variant, predicted in json.loads(done.stdout.strip().splitlines()[-1]).items():
        np.testing.assert_allclose(predicted, expected, atol=1e-4, err_msg=variant)


RELEASE_AS_ON_COLAB = """
import gc, sys
sys.modules["ai_edge_litert"] = None  # TensorFlow's interpreter, as on Colab
import numpy as np
import tensorflow as tf
exec(sys.stdin.read())  # notebook 11's load_tflite and run_tflite
interpreter = load_tflite(sys.argv[1])
pictures = np.zeros((16, 32, 32, 3), "float32")
answers = np.concatenate([run_tflite(interpreter, p[None]) for p in pictures])
print(type(interpreter).__module__, answers.shape)
del interpreter
gc.collect()
print("released")
"""


@pytest.mark.processes
def test_a_dynamic_range_model_is_released_without_a_crash_on_tensorflows_interpreter(
    course_net,
):
    # TensorFlow 2.19's interpreter crashed freeing one
    path = course_net[2]["tflite_dynamic"]
    source = "\n\n".join(
        page_source.defined_on_page(NOTEBOOK, name)
        for name in ("load_tflite", "run_tflite")
    )
    done = subprocess.run(
        [sys.executable, "-c", RELEASE_AS_ON_COLAB, str(path)],
        input=source,
        cwd=config.ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"exit code {done.returncode}: {done.stderr[-2000:]}"
    assert "tensorflow.lite.python.interpreter (16, 1)" in done.stdout
    assert "released" in done.stdout
