"""A learner's messy folder, a flaky network or a killed kernel must not cost data or hours."""

import functools
import http.server
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import textwrap
import threading
import zipfile

from helpers import config, data, images, models, training

import numpy as np
import pytest
from conftest import write_jpeg
from PIL import Image

SHARED = config.ROOT.parent / "shared" / "data"


# --- bad image folders -----------------------------------------------------------------------


def test_one_class_is_refused_with_the_classes_found(tmp_path):
    write_jpeg(tmp_path / "cats" / "a.jpg")
    with pytest.raises(ValueError, match=r"one sub-folder per class.*\['cats'\]"):
        data.labelled_files(tmp_path)


def test_empty_class_is_named(tmp_path):
    write_jpeg(tmp_path / "cats" / "a.jpg")
    (tmp_path / "dogs").mkdir()
    (tmp_path / "dogs" / "broken.jpg").write_bytes(b"")
    with pytest.raises(ValueError, match="dogs has no usable images"):
        data.labelled_files(tmp_path)


def test_nested_folders_and_non_ascii_names_are_used(tmp_path):
    write_jpeg(tmp_path / "cats" / "garden" / "chat_été_猫.jpg")
    write_jpeg(tmp_path / "cats" / "a.jpg", seed=1)
    write_jpeg(tmp_path / "dogs" / "Hündchen.jpg", seed=2)
    paths, labels, _ = data.labelled_files(tmp_path)
    assert sorted(labels) == [0, 0, 1]
    batch = next(iter(data.image_pipeline(paths, labels, 24, batch_size=3)))
    assert batch[0].shape == (3, 24, 24, 3)


def test_unusual_formats_are_kept_noted_and_decoded(tmp_path):
    rgb = np.random.default_rng(0).integers(0, 255, (20, 20, 3), dtype=np.uint8)
    Image.fromarray(rgb).save(tmp_path / "webp.jpg", "WEBP")
    Image.fromarray(rgb).convert("P").save(tmp_path / "palette.png", transparency=0)
    frames = [Image.fromarray(rgb), Image.fromarray(255 - rgb)]
    frames[0].save(tmp_path / "anim.gif", save_all=True, append_images=frames[1:])
    report = images.check_images(tmp_path)
    notes = {p.name: n for p, n in report.notes}
    assert len(report.good) == 3 and not report.bad
    assert "WEBP data in a .jpg file" in notes["webp.jpg"]
    assert "mode P" in notes["palette.png"]
    assert "animated (2 frames)" in notes["anim.gif"]
    paths = [str(p) for p in report.good]
    batch = next(iter(data.image_pipeline(paths, [0, 1, 0], 16, batch_size=3)))
    assert batch[0].shape == (3, 16, 16, 3)


def test_pillow_decompression_bomb_limit_is_reported(tmp_path, monkeypatch):
    Image.new("RGB", (300, 300)).save(tmp_path / "bomb.png")
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 10_000)
    ok, why = images.check_image(tmp_path / "bomb.png")
    assert not ok and "decompression bomb" in why


def test_training_goes_on_with_the_good_files(tmp_path, capsys):
    for i in range(4):
        write_jpeg(tmp_path / "cats" / f"c{i}.jpg", seed=i)
        write_jpeg(tmp_path / "dogs" / f"d{i}.jpg", seed=9 + i)
    (tmp_path / "dogs" / "page.jpg").write_text("<html>moved</html>")
    paths, labels, _ = data.labelled_files(tmp_path)
    assert "page.jpg" in capsys.readouterr().out
    model = models.cats_dogs_net("0", image_size=32)
    model.compile("adam", "binary_crossentropy")
    history, _ = training.fit(model, data.image_pipeline(paths, labels, 32, 4), epochs=1,
                              verbose=0)
    assert np.isfinite(history.history["loss"][0])


def test_wrong_arguments_name_the_valid_choices():
    with pytest.raises(KeyError, match="cats_dogs, cifar10, imdb, mnist, tinyshakespeare"):
        data.source("coco")
    with pytest.raises(KeyError, match="0, 1, 2, 2b, 3"):
        models.cats_dogs_net("4")
    with pytest.raises(TypeError, match="unknown settings.*'imagesize'.*image_size"):
        models.cats_dogs_net("2", imagesize=128)
    with pytest.raises(ValueError, match="too small for ladder step 3.*46 px"):
        models.cats_dogs_net("3", image_size=32)
    with pytest.raises(ValueError, match="split must be 'train' or 'validation'"):
        data.cats_dogs("test")


# --- downloads ------------------------------------------------------------------------------


class FlakyHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files; the first `drops` requests get half the bytes, then the line drops."""

    drops = 0
    log = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        type(self).log.append(self.path)
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            return self.send_error(404)
        body = open(path, "rb").read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if type(self).drops > 0:
            type(self).drops -= 1
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.connection.shutdown(2)
            return
        self.wfile.write(body)


@pytest.fixture
def flaky(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    handler = type("Handler", (FlakyHandler,), {"drops": 0, "log": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                            functools.partial(handler, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", root, handler
    httpd.shutdown()


def cats_dogs_archive(path, bad_file=True):
    """A small Kaggle-layout zip (PetImages/Cat, PetImages/Dog) from the real source pictures."""
    with zipfile.ZipFile(path, "w") as z:
        for cls, prefix in (("Cat", "cat"), ("Dog", "dog")):
            for n in range(1, 11):
                source = SHARED / "cats_vs_dogs" / "train" / f"{prefix}s" / f"{prefix}.{n}.jpg"
                if source.exists():
                    payload = source.read_bytes()
                else:  # no ../shared: generate a picture instead
                    buffer = io.BytesIO()
                    Image.new("RGB", (40, 30), (n * 20, 0, 0)).save(buffer, "JPEG")
                    payload = buffer.getvalue()
                z.writestr(f"PetImages/{cls}/{n}.jpg", payload)
        if bad_file:
            z.writestr("PetImages/Cat/666.jpg", b"")  # the real archive has such files
    return path


def test_dropped_connection_is_retried_and_leaves_no_partial_file(flaky, tmp_path):
    url, root, handler = flaky
    archive = cats_dogs_archive(root / "pets.zip")
    handler.drops = 1
    remote = data.Remote(f"{url}/pets.zip", data.sha256(archive), extract=True)
    folder = data.download(remote, cache_dir=tmp_path / "cache", wait=0.01)
    assert len(handler.log) == 2
    assert len(list((folder / "PetImages" / "Dog").iterdir())) == 10
    assert not list((tmp_path / "cache").rglob("*.partial"))


def test_connection_that_keeps_dropping_fails_cleanly(flaky, tmp_path):
    url, root, handler = flaky
    (root / "big.bin").write_bytes(os.urandom(50_000))
    handler.drops = 10
    remote = data.Remote(f"{url}/big.bin", data.sha256(root / "big.bin"))
    with pytest.raises(ConnectionError, match="after 3 tries"):
        data.download(remote, cache_dir=tmp_path / "cache", wait=0.01)
    assert len(handler.log) == 3
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]


def test_full_profile_uses_the_downloaded_kaggle_layout(flaky, tmp_path, profile, monkeypatch,
                                                         capsys):
    url, root, _ = flaky
    archive = cats_dogs_archive(root / "kaggle.zip")
    profile("full")
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    remote = data.Remote(f"{url}/kaggle.zip", data.sha256(archive), extract=True)
    monkeypatch.setitem(data.DATASETS["cats_dogs"], "remotes", [remote])
    ds = data.cats_dogs("train", image_size=32, batch_size=4)
    out = capsys.readouterr().out
    assert "666.jpg" in out and "1 skipped" in out
    assert ds.class_names == ["Cat", "Dog"] and ds.num_examples == 16  # 80 % of 20


def unsafe_tar(path, kind):
    with tarfile.open(path, "w:gz") as t:
        info = tarfile.TarInfo("ok.txt")
        info.size = 2
        t.addfile(info, io.BytesIO(b"ok"))
        if kind in ("absolute", "dotdot"):
            info = tarfile.TarInfo("/tmp/evil.txt" if kind == "absolute" else "a/../../evil.txt")
            info.size = 4
            t.addfile(info, io.BytesIO(b"evil"))
        else:
            info = tarfile.TarInfo("link")
            info.type = tarfile.SYMTYPE
            info.linkname = "/etc/passwd" if kind == "symlink" else "../../outside"
            t.addfile(info)
    return path


@pytest.mark.parametrize("kind", ["absolute", "dotdot", "symlink", "relative_link"])
def test_unsafe_tar_entries_are_refused(tmp_path, kind):
    archive = unsafe_tar(tmp_path / f"{kind}.tar.gz", kind)
    with pytest.raises(ValueError, match="unsafe entry"):
        data.safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()


@pytest.mark.parametrize("name", ["../evil.txt", "/abs/evil.txt", "C:/evil.txt"])
def test_unsafe_zip_entries_are_refused(tmp_path, name):
    with zipfile.ZipFile(tmp_path / "bad.zip", "w") as z:
        z.writestr("fine.txt", "fine")
        z.writestr(name, "evil")
    with pytest.raises(ValueError, match="unsafe entry"):
        data.safe_extract(tmp_path / "bad.zip", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_safe_archive_is_extracted_whole(tmp_path):
    archive = cats_dogs_archive(tmp_path / "pets.zip", bad_file=False)
    out = data.safe_extract(archive, tmp_path / "out")
    assert len(list(out.rglob("*.jpg"))) == 20


# --- training that survives ------------------------------------------------------------------

TRAIN_SCRIPT = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from helpers import config, training
    import keras, numpy as np, tensorflow as tf

    config.BUILD_DIR = Path(sys.argv[1])
    class Log(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            print("begin", epoch + 1, flush=True)
        def on_epoch_end(self, epoch, logs=None):
            print("end", epoch + 1, flush=True)

    def slow(x, y):
        time.sleep(0.04)
        return x, y

    x = np.random.default_rng(0).random((160, 4), dtype=np.float32)
    ds = tf.data.Dataset.from_tensor_slices((x, x[:, :1])).batch(8)
    ds = ds.map(lambda a, b: tf.numpy_function(slow, [a, b], [tf.float32, tf.float32]))
    ds = ds.map(lambda a, b: (tf.ensure_shape(a, (None, 4)), tf.ensure_shape(b, (None, 1))))
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    training.fit(model, ds, epochs=5, name="killed", verbose=0, callbacks=[Log()])
    training.save_model(model, config.BUILD_DIR / "model.keras")
    print("done", flush=True)
""")


def test_killed_training_resumes_from_its_last_finished_epoch(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TRAIN_SCRIPT)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, str(script), str(tmp_path / "build")]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    seen = []
    for line in first.stdout:
        seen.append(line.strip())
        if line.strip() == "begin 3":
            threading.Event().wait(0.3)  # a few steps into epoch 3
            first.send_signal(signal.SIGKILL)
            break
    first.wait(timeout=30)
    assert first.returncode == -signal.SIGKILL and "end 2" in seen and "end 3" not in seen
    second = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    lines = second.stdout.split("\n")
    assert second.returncode == 0, second.stderr[-2000:]
    assert [line for line in lines if line.startswith("begin")][0] == "begin 3"
    assert "end 5" in lines and "done" in lines
    import keras

    model = keras.models.load_model(tmp_path / "build" / "model.keras")
    assert model.output_shape == (None, 1)
    assert not (tmp_path / "build" / "backup" / "killed").exists()


def test_out_of_memory_suggests_a_smaller_batch(monkeypatch):
    import tensorflow as tf

    model = models.cats_dogs_net("0", image_size=32)
    model.compile("adam", "binary_crossentropy")

    def explode(*args, **kwargs):
        raise tf.errors.ResourceExhaustedError(None, None, "OOM when allocating tensor")

    monkeypatch.setattr(model, "fit", explode)
    x = tf.data.Dataset.from_tensors((tf.zeros((32, 32, 32, 3)), tf.zeros((32,))))
    with pytest.raises(MemoryError, match="batch size 32.*Try batch size 16"):
        training.fit(model, x, epochs=1)


DETERMINISM_SCRIPT = textwrap.dedent("""
    import json
    from helpers import config, data, models, training
    config.set_seed(7, deterministic=True)
    results = []
    for run in range(2):
        config.set_seed(7)
        model = models.mnist_cnn()
        model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
        history, _ = training.fit(model, data.mnist("train"), data.mnist("validation"),
                                  epochs=2, verbose=0)
        results.append(history.history)
    print(json.dumps(results))
""")


def test_same_seed_gives_identical_smoke_training_on_cpu(tmp_path):
    script = tmp_path / "det.py"
    script.write_text(DETERMINISM_SCRIPT)
    env = {**os.environ, "COURSE_PROFILE": "smoke"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    first, second = json.loads(out.stdout.strip().splitlines()[-1])
    assert first == second and len(first["loss"]) == 2


# --- security ---------------------------------------------------------------------------------

FORBIDDEN = {
    "safe_mode" + "=False": "loads code from a model file",
    "allow_pickle" + "=True": "unpickles downloaded data",
    "shell" + "=True": "runs a composed string through the shell",
}


def test_no_unsafe_calls_in_the_course_code():
    roots = ["helpers", "tools", "tests", "notebooks"]
    offenders = []
    for root in roots:
        for path in (config.ROOT / root).rglob("*"):
            if path.suffix not in (".py", ".ipynb") or ".ipynb_checkpoints" in path.parts:
                continue
            text = path.read_text(errors="replace").replace(" ", "")
            for pattern, why in FORBIDDEN.items():
                if pattern in text:
                    offenders.append(f"{path.relative_to(config.ROOT)}: {pattern} ({why})")
    assert not offenders, offenders
