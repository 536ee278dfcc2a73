"""The site's "Try your classifier" page (try.html: tools/build_site.py, tools/templates/try.*)
in headless Chromium, served over http as `make serve` serves it (tools/serve.py).

A small model of notebook 12's kind (0..255 pictures in, one softmax probability per class out),
exported by `helpers.export` as the page does, runs through the page on pictures of notebook 12's
default folder and on a portrait photo stored sideways with EXIF orientation 6. For each picture
the page's input must be the course pipeline's pixels (`data.image_pipeline`: EXIF-upright,
bilinear resize without antialiasing, rounded to whole values) and its answer the Python LiteRT
interpreter's on the same file: the same class, every probability within 1e-4.

Issue 69: a picture larger than the course's MAX_PIXELS is shrunk while it is decoded, one the
browser cannot draw (it reads back all zeros) is refused, as is a file that is no picture, and
neither leaves the last answer on screen; an optional band.json gives the page notebook 06's
"not sure" band; the picker does not force the camera.
"""

import contextlib
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


@contextlib.contextmanager
def serving(site):
    """The address of `site`'s try.html, served on a free port of 127.0.0.1 while in use."""
    httpd = serve.server(site, port=0, bind="127.0.0.1")
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/try.html"
    finally:
        httpd.shutdown()
        httpd.server_close()


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
    with serving(root / "site") as url:
        yield url, lite, pictures


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


def choose(browser, picture):
    """What the page says of the file `picture`, chosen in its file picker: its tryPage.last,
    {name, problem} for a picture it refused."""
    browser.find_element("id", "file").send_keys(str(picture))
    for _ in range(600):
        last = browser.execute_script(
            "return window.tryPage.state === 'done' || "
            "window.tryPage.state === 'error' ? window.tryPage.last "
            ": null"
        )
        if last and last["name"] == picture.name:
            return last
        time.sleep(0.1)
    raise AssertionError(
        f"no answer for {picture.name}: {browser.find_element('id', 'status').text}"
    )


def classify(browser, picture):
    """The page's answer for the file `picture` and the model's input it made of it."""
    last = choose(browser, picture)
    assert "problem" not in last, last
    pixels = browser.execute_script("return Array.from(window.tryPage.lastInput)")
    return last, np.array(pixels, "float32").reshape(SIZE, SIZE, 3)


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


def big_photo(path):
    """A 48-megapixel phone photo held upright (6000 x 8000 upright, stored 8000 x 6000 on its
    side with EXIF orientation 6, as a phone stores it), smooth, so that it compresses to little
    and two decoders shrinking it agree within a few levels."""
    x, y = np.arange(8000)[None, :], np.arange(6000)[:, None]
    stored = np.empty((6000, 8000, 3), "uint8")
    stored[..., 0] = x * 255 // 7999
    stored[..., 1] = y * 255 // 5999
    stored[..., 2] = 128 + 100 * np.sin(x / 300) * np.cos(y / 400)
    exif = Image.Exif()
    exif[0x0112] = 6
    Image.fromarray(stored).save(path, exif=exif, quality=90)
    return path


def shown(browser):
    """What the page shows besides its status: the bars, the timing, the canvas's size."""
    return browser.execute_script("""
        const canvas = document.getElementById('picture');
        return {bars: document.querySelectorAll('#answers > *').length,
                timing: document.getElementById('timing').textContent,
                canvas: [canvas.width, canvas.height]};""")


@chromium.needed
@pytest.mark.browser
def test_a_large_picture_is_shrunk_one_the_browser_cannot_draw_refused(
    served, browser, tmp_path
):
    """Issue 69: a 300-megapixel photo was drawn on a canvas larger than the browser can
    allocate, read back as zeros and classified; the canvas stayed broken for the next photo.
    Chromium's canvas holds at most 2^28 pixels and 65,535 a side (measured: a larger one reads
    back all zeros, and keeps doing so when made small again)."""
    url, lite, pictures = served
    browser.get(url)
    wait_for(browser, ("ready",))
    # more than MAX_PIXELS: shrunk while decoding by the pipeline's JPEG scale, 1/2
    photo = big_photo(tmp_path / "photo_48mp.jpg")
    last, page_pixels = classify(browser, photo)
    pixels, expected = python_answer(lite, photo)
    upright = decoding.decode_picture(tf.io.read_file(str(photo)))  # at 1/2, turned
    assert upright.shape[:2] == (4000, 3000)
    assert (last["width"], last["height"]) == (3000, 4000)
    assert last["shrunk"] and last["original"] == {"width": 6000, "height": 8000}
    status = browser.find_element("id", "status").text
    assert "6000 × 8000 pixels" in status and "shrunk to 3000 × 4000" in status, status
    differs = np.abs(page_pixels - pixels)
    print(
        f"{photo.name}: the page's input differs from the pipeline's by "
        f"{differs.max():.0f} at most (mean {differs.mean():.2f}); {last['ms']:.2f} ms"
    )
    assert differs.max() <= JPEG_LEVELS and differs.mean() <= 1.5
    assert last["label"] == int(expected.argmax())
    # under MAX_PIXELS but wider than a canvas may be: the browser draws nothing, and the page
    # says so rather than classify zeros
    wide = tmp_path / "panorama_65536x2.png"
    Image.new("RGB", (65536, 2), (10, 200, 30)).save(wide)
    refused = choose(browser, wide)
    assert "could not draw" in refused.get("problem", ""), refused
    assert "65536 × 2" in refused["problem"]
    assert browser.execute_script("return window.tryPage.state") == "error"
    assert browser.find_element("id", "status").text == refused["problem"]
    assert shown(browser) == {"bars": 0, "timing": "", "canvas": [0, 0]}
    # and the next ordinary picture is read as before, not from a broken canvas
    last, page_pixels = classify(browser, pictures[0])
    pixels, expected = python_answer(lite, pictures[0])
    assert np.abs(page_pixels - pixels).max() == 0
    np.testing.assert_allclose(last["probabilities"], expected, atol=TOLERANCE)


def test_the_page_s_pixel_limit_is_the_course_s():
    script = (build_site.TEMPLATES / "try.js").read_text()
    limit = re.search(r"const MAX_PIXELS = ([\d_]+);", script)
    assert limit and int(limit[1].replace("_", "")) == decoding.MAX_PIXELS
    page = " ".join((build_site.TEMPLATES / "try.html").read_text().split())
    assert f"more than {decoding.MAX_PIXELS / 1e6:g} million pixels" in page


@chromium.needed
@pytest.mark.browser
def test_a_file_that_is_no_picture_clears_the_last_answer(served, browser, tmp_path):
    """Issue 69: the browser's "The source image could not be decoded." under the last photo
    and its bars looked like an answer for the bad file."""
    url, _, pictures = served
    browser.get(url)
    wait_for(browser, ("ready",))
    classify(browser, pictures[0])
    assert shown(browser)["bars"] == len(CLASSES)
    notes = tmp_path / "notes.jpg"
    notes.write_text("milk, eggs, bread\n")
    refused = choose(browser, notes)
    assert "notes.jpg could not be read as a picture" in refused.get("problem", "")
    status = browser.find_element("id", "status")
    assert status.text == refused["problem"]
    assert "problem" in status.get_attribute("class")
    assert shown(browser) == {"bars": 0, "timing": "", "canvas": [0, 0]}
    last, _ = classify(browser, pictures[1])  # and the next picture is answered
    assert shown(browser)["bars"] == len(CLASSES) and last["name"] == pictures[1].name


@chromium.needed
@pytest.mark.browser
def test_band_json_makes_the_page_say_not_sure(served, browser, tmp_path):
    """Notebook 06's "not sure" band, from an optional band.json beside the model:
    {"answer_above": p} names the likeliest class only when its probability is above p."""
    url, lite, pictures = served
    # without band.json the page names the likeliest class, as before, and asks for no band
    browser.get(url)
    wait_for(browser, ("ready",))
    assert not browser.find_elements("id", "band")
    last, _ = classify(browser, pictures[0])
    assert last["verdict"] == last["className"]
    assert browser.find_element("id", "status").text == (
        f"{pictures[0].name}: {last['className']}."
    )
    # a band between two pictures' top probabilities
    upright = pictures[:3]  # stored upright: the page's probabilities are Python's
    tops = {p: float(python_answer(lite, p)[1].max()) for p in upright}
    unsure, sure = min(tops, key=tops.get), max(tops, key=tops.get)
    assert tops[sure] - tops[unsure] > 100 * TOLERANCE, tops
    above = round((tops[sure] + tops[unsure]) / 2, 4)
    model = tmp_path / "model"
    model.mkdir()
    for name in ("model.tflite", "class_names.json"):
        (model / name).write_bytes((lite.parent / name).read_bytes())
    (model / "band.json").write_text(json.dumps({"answer_above": above}))
    build_site.try_page(tmp_path / "site", model)
    page = (tmp_path / "site" / "try.html").read_text()
    assert '<code id="band">_try/band.json</code>' in page
    with serving(tmp_path / "site") as band_url:
        browser.get(band_url)
        assert wait_for(browser, ("ready", "error")) == "ready"
        status = browser.find_element("id", "status").text
        assert f"above {100 * above:.1f} %" in status and '"not sure"' in status, status
        last, _ = classify(browser, unsure)
        top = CLASSES[int(np.argmax(last["probabilities"]))]
        assert last["verdict"] == "not sure" and last["className"] == top
        status = browser.find_element("id", "status").text
        said = f"{unsure.name}: not sure ({top} is the likeliest at"
        assert status.startswith(said), status
        bars = browser.find_elements("css selector", "#answers .bar")
        assert len(bars) == len(CLASSES) and all(bar.is_displayed() for bar in bars)
        last, _ = classify(browser, sure)
        top = CLASSES[int(np.argmax(last["probabilities"]))]
        assert last["verdict"] == last["className"] == top
        assert browser.find_element("id", "status").text == (
            f"{sure.name}: {last['className']}."
        )
    # a band the page cannot use is an error, as in notebook 06
    (model / "band.json").write_text(json.dumps({"answer_above": 70}))
    build_site.try_page(tmp_path / "wrong", model)
    with serving(tmp_path / "wrong") as wrong_url:
        browser.get(wrong_url)
        assert wait_for(browser, ("ready", "error")) == "error"
        status = browser.find_element("id", "status").text
        assert 'band.json must be {"answer_above": p} with 0 <= p <= 1' in status
    # rebuilt without one, the site keeps no band.json
    (model / "band.json").unlink()
    build_site.try_page(tmp_path / "site", model)
    assert not (tmp_path / "site" / "_try" / "band.json").exists()
    assert 'id="band"' not in (tmp_path / "site" / "try.html").read_text()


def test_the_picker_offers_the_camera_and_files_alike(served):
    """No `capture`: on a phone it may open the camera at once, with no way to choose a file;
    accept="image/*" offers the camera among the choices."""
    url, _, _ = served
    page = urllib.request.urlopen(url).read().decode()
    picker = re.search(r'<input id="file"[^>]*>', page)[0]
    assert 'accept="image/*"' in picker and "capture" not in picker, picker


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
