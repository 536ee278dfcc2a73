"""The site's "Try your classifier" page (try.html: tools/build_site.py, tools/templates/try.*)
in headless Chromium, served over http as `make serve` serves it (tools/serve.py).

A small model of notebook 12's kind (0..255 pictures in, one softmax probability per class out),
exported by `helpers.export` as the page does, runs through the page on pictures of notebook 12's
default folder and on a portrait photo stored sideways with EXIF orientation 6. For each picture
the page's input must be the course pipeline's pixels (`data.image_pipeline`: EXIF-upright,
bilinear resize without antialiasing, rounded to whole values) and its answer the Python LiteRT
interpreter's on the same file: the same class, every probability within 1e-4.
"""

import json
import os
import re
import threading
import time
import urllib.request

from helpers import config, decoding, export
from tools import build_site, serve

import browser as chromium
import keras
import numpy as np
import pytest
import tensorflow as tf
from PIL import Image
from test_pages_12 import on_page

SIZE = 40  # the model's input: the default folder's 32-pixel pictures are enlarged, the photo
CLASSES = ["cat", "dog", "horse"]  # shrunk, as the pipeline does both
TOLERANCE = 1e-4
JPEG_LEVELS = 8  # the most two JPEG decoders' pixels may differ by (0..255)


def small_model():
    """A convolution and a dense softmax on 0..255 pictures: every input pixel moves the
    probabilities, so a wrongly resized picture gives other answers."""
    config.set_seed()
    return keras.Sequential(
        [
            keras.Input((SIZE, SIZE, 3)),
            keras.layers.Rescaling(1 / 255),
            keras.layers.Conv2D(4, 3, strides=2, activation="relu"),
            keras.layers.Flatten(),
            keras.layers.Dense(
                len(CLASSES),
                activation="softmax",
                kernel_initializer=keras.initializers.RandomNormal(stddev=0.3),
            ),
        ]
    )


def sideways_portrait(path, subsampling):
    """A 48 x 72 portrait (red at the top, a gradient below), stored as a phone stores it held
    upright: turned on its side, EXIF orientation 6 saying how to show it (tests/test_images.py).
    `subsampling` 0 keeps colour at every pixel (4:4:4); 2 (4:2:0, phones' usual) keeps it at
    every other pixel each way, and decoders may fill in the rest differently."""
    rng = np.random.default_rng(1)
    y, x = np.mgrid[0:72, 0:48]
    upright = np.stack([x * 5, y * 3, 255 - y * 3], axis=-1) + rng.integers(
        0, 20, (72, 48, 3)
    )
    upright[:12] = [230, 20, 20]
    exif = Image.Exif()
    exif[0x0112] = 6  # "turn it 90 degrees clockwise to show it"
    picture = Image.fromarray(np.clip(upright, 0, 255).astype("uint8"))
    options = dict(quality=95, subsampling=subsampling) if path.suffix == ".jpg" else {}
    picture.rotate(90, expand=True).save(path, exif=exif, **options)
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(the page's address, the model file, the pictures): the page built with the model
    and class names as notebook 12 writes them, served on a free port of 127.0.0.1."""
    root = tmp_path_factory.mktemp("try")
    on_page("write_pictures")(root / "pictures", CLASSES, 2)
    pictures = sorted((root / "pictures").rglob("*.png"))[::2]  # one of each class
    pictures += [
        sideways_portrait(root / "portrait_exif6.png", None),
        sideways_portrait(root / "portrait_exif6_444.jpg", 0),
        sideways_portrait(root / "portrait_exif6_420.jpg", 2),
    ]
    # as 12 does
    export.saved_model(small_model(), root / "model" / "saved_model", batch=1)
    lite = root / "model" / "model.tflite"
    lite.write_bytes(export.to_tflite(root / "model" / "saved_model"))
    (root / "model" / "class_names.json").write_text(json.dumps(CLASSES))
    build_site.try_page(root / "site", root / "model")
    httpd = serve.server(root / "site", port=0, bind="127.0.0.1")
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/try.html", lite, pictures
    httpd.shutdown()
    httpd.server_close()


def interpret(lite, pixels):
    """The Python LiteRT interpreter's probabilities for one picture's `pixels`."""
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(lite))
    interpreter.allocate_tensors()
    given, answer = (
        interpreter.get_input_details()[0],
        interpreter.get_output_details()[0],
    )
    interpreter.set_tensor(given["index"], np.asarray(pixels, "float32")[None])
    interpreter.invoke()
    return interpreter.get_tensor(answer["index"])[0]


def python_answer(lite, picture):
    """(the pipeline's pixels of `picture`, the Python LiteRT interpreter's probabilities)."""
    pixels = tf.round(
        decoding.read_picture(str(picture), (SIZE, SIZE))
    ).numpy()  # the uint8 cache
    return pixels, interpret(lite, pixels)


def wait_for(browser, states, seconds=60):
    for _ in range(int(seconds / 0.1)):
        state = browser.execute_script("return window.tryPage && window.tryPage.state")
        if state in states:
            return state
        time.sleep(0.1)
    raise AssertionError(
        f"the page stayed {state!r}: {browser.find_element('id', 'status').text}"
    )


def classify(browser, picture):
    """The page's answer for the file `picture`, chosen in its file picker."""
    browser.find_element("id", "file").send_keys(str(picture))
    for _ in range(600):
        last = browser.execute_script(
            "return window.tryPage.state === 'done' || "
            "window.tryPage.state === 'error' ? window.tryPage.last "
            ": null"
        )
        if last and last["name"] == picture.name:
            pixels = browser.execute_script(
                "return Array.from(window.tryPage.lastInput)"
            )
            return last, np.array(pixels, "float32").reshape(SIZE, SIZE, 3)
        time.sleep(0.1)
    raise AssertionError(
        f"no answer for {picture.name}: {browser.find_element('id', 'status').text}"
    )


@chromium.needed
@pytest.mark.browser
def test_the_page_answers_as_python_litert_on_the_same_file(served, browser):
    url, lite, pictures = served
    browser.get_log("browser")
    browser.get(url)
    assert wait_for(browser, ("ready", "error")) == "ready", browser.find_element(
        "id", "status"
    ).text
    # class_names.json
    assert "cat, dog, horse" in browser.find_element("id", "status").text
    for picture in pictures:
        last, page_pixels = classify(browser, picture)
        pixels, expected = python_answer(lite, picture)
        got, same_input = np.array(last["probabilities"]), interpret(lite, page_pixels)
        print(
            f"{picture.name}: {last['width']} x {last['height']} px; the page's input differs "
            f"from the pipeline's by {np.abs(page_pixels - pixels).max():.0f} at most "
            f"(mean {np.abs(page_pixels - pixels).mean():.2f}); probabilities: page "
            f"{np.round(got, 5)}, Python {np.round(expected, 5)}, largest difference "
            f"{np.abs(got - expected).max():.1e}, on the page's own input "
            f"{np.abs(got - same_input).max():.1e}; {last['ms']:.2f} ms"
        )
        # shown upright: the browser applied EXIF orientation 6
        if "exif6" in picture.name:
            assert (last["width"], last["height"]) == (48, 72), picture.name
        # the runtime: LiteRT.js and Python's LiteRT on the same numbers agree within 1e-4
        np.testing.assert_allclose(
            got, same_input, atol=TOLERANCE, err_msg=picture.name
        )
        assert last["label"] == int(expected.argmax()), picture.name
        assert last["className"] == CLASSES[int(expected.argmax())]
        assert last["ms"] > 0
        differs = np.abs(page_pixels - pixels).max()
        if picture.suffix == ".png" and "exif6" not in picture.name:
            # stored upright, decoded exactly: the pipeline's pixels, the same probabilities
            assert differs == 0, picture.name
            np.testing.assert_allclose(
                got, expected, atol=TOLERANCE, err_msg=picture.name
            )
        elif picture.suffix == ".png":
            # stored on its side: the pipeline resizes it so and turns it after, the page turns
            # it first, and float32 rounds the two interpolation orders differently, which can
            # move a value by one level where it lies near a half
            assert differs <= 1, picture.name
        else:  # JPEG decoders may round the inverse DCT and fill in subsampled colour
            # differently (the standard fixes neither): a few levels, below the quantisation
            # noise the file has anyway
            assert differs <= JPEG_LEVELS, picture.name
            assert np.abs(page_pixels - pixels).mean() <= 1.5, picture.name
    bars = browser.find_elements("css selector", "#answers .bar")
    assert len(bars) == len(CLASSES) and all(bar.is_displayed() for bar in bars)
    timing = browser.find_element("id", "timing").text
    assert re.search(r"The model took \d+\.\d ms on this device", timing), timing
    # LiteRT's log lines
    errors = [
        e["message"]
        for e in browser.get_log("browser")
        if e["level"] == "SEVERE" and not re.search(r'"(INFO|WARNING): ', e["message"])
    ]
    assert not errors, errors


def test_a_wrong_resize_would_change_the_answer(served):
    """The 1e-4 check above can fail: the same picture resized otherwise (nearest neighbour,
    or bilinear with antialiasing as a canvas may shrink it) moves a probability by more."""
    _, lite, pictures = served
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(lite))
    interpreter.allocate_tensors()
    given, answer = (
        interpreter.get_input_details()[0],
        interpreter.get_output_details()[0],
    )
    for picture in pictures:
        pixels, right = python_answer(lite, picture)
        upright = decoding.decode_picture(tf.io.read_file(str(picture)))
        # antialiasing changes only a picture made smaller
        shrunk = "exif6" in picture.name
        for method, antialias in (("nearest", False), *[("bilinear", True)] * shrunk):
            other = tf.round(
                tf.image.resize(upright, (SIZE, SIZE), method, antialias=antialias)
            )
            interpreter.set_tensor(
                given["index"], other.numpy()[None].astype("float32")
            )
            interpreter.invoke()
            wrong = interpreter.get_tensor(answer["index"])[0]
            assert np.abs(wrong - right).max() > 10 * TOLERANCE, (picture.name, method)


@chromium.needed
@pytest.mark.browser
def test_the_page_is_usable_on_a_390_pixel_phone(served, browser, tmp_path):
    url, _, pictures = served
    browser.set_window_size(390, 844)
    try:
        browser.get(url)
        wait_for(browser, ("ready",))
        classify(browser, pictures[-1])
        layout = browser.execute_script("""
            const width = document.documentElement.clientWidth;
            const right = (id) => document.querySelector(id).getBoundingClientRect().right;
            return {width, scroll: document.documentElement.scrollWidth,
                    picker: right('#file'), answers: right('#answers'),
                    viewport: document.querySelector('meta[name=viewport]').content};""")
        png = browser.get_screenshot_as_png()
        (tmp_path / "try-390px.png").write_bytes(png)
        print(layout, "screenshot:", tmp_path / "try-390px.png")
        assert layout["scroll"] <= layout["width"], (
            f"the page scrolls sideways: {layout}"
        )
        assert (
            layout["picker"] <= layout["width"] and layout["answers"] <= layout["width"]
        )
        assert "width=device-width" in layout["viewport"]
        assert browser.find_element("id", "file").is_displayed()
        bars = browser.find_elements("css selector", "#answers .bar")
        assert bars and all(b.is_displayed() for b in bars)
        assert chromium.not_blank(png)
    finally:
        browser.set_window_size(1280, 900)


def test_without_litert_or_the_model_the_page_says_how_to_get_them(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(build_site, "LITERT", tmp_path / "no_node_modules")
    build_site.try_page(tmp_path / "site", tmp_path / "no_model")
    page = (tmp_path / "site" / "try.html").read_text()
    assert "npm ci" in page and "make site" in page and "make course" in page
    assert "<script" not in page.split("</style>")[1]  # nothing that would fail to load
    assert not (tmp_path / "site" / "_try" / "litert").exists()


@pytest.mark.skipif(
    not build_site.LITERT.is_dir() and not os.environ.get("CI"),
    reason="needs LiteRT.js from npm (npm ci)",
)
def test_the_built_page_loads_litert_from_its_own_folder(served):
    url, _, _ = served
    folder = url.rsplit("/", 1)[0]
    page = urllib.request.urlopen(url).read().decode()
    assert '<script type="module" src="_try/try.js">' in page
    core = urllib.request.urlopen(f"{folder}/_try/litert/index.js").read().decode()
    assert (
        '"./wasm-utils.js"' in core
        and "@litertjs/wasm-utils" not in core.split("//#")[0]
    )
    wasm = urllib.request.urlopen(f"{folder}/_try/litert/litert_wasm_internal.wasm")
    assert wasm.headers["Content-Type"] == "application/wasm"
    assert wasm.read(4) == b"\0asm"
    pinned = json.loads((build_site.ROOT / "package.json").read_text())["dependencies"]
    installed = json.loads((build_site.LITERT / "core" / "package.json").read_text())
    assert installed["version"] == pinned["@litertjs/core"]


def test_serve_prints_an_address_a_phone_can_open(monkeypatch):
    phone, here = serve.addresses(8000)
    assert re.fullmatch(r"http://\d{1,3}(\.\d{1,3}){3}:8000/try\.html", phone), phone
    assert (
        not phone.startswith("http://0.") and here == "http://localhost:8000/try.html"
    )

    class Offline:  # no network at all: every connect fails, the host name is loopback
        def __init__(self, *args):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *args):
            return False

        def connect(self, address):
            raise OSError("Network is unreachable")

    monkeypatch.setattr(serve.socket, "socket", Offline)
    monkeypatch.setattr(serve.socket, "gethostbyname", lambda name: "127.0.1.1")
    assert serve.lan_address() == "127.0.0.1"
