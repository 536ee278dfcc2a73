"""helpers.config: the profiles and their one table of sizes; the embedded sample's pins, downloads
(checked, retried, cached), safe extraction, and the fall-back to the sample without a network."""

import functools
import hashlib
import http.server
import io
import os
import re
import tarfile
import threading
import zipfile
from pathlib import Path

from helpers import config, data

import pytest
from PIL import Image


def test_default_profile_is_sample(monkeypatch):
    monkeypatch.delenv("COURSE_PROFILE", raising=False)
    assert config.profile() == "sample"


def test_unknown_profile_names_the_valid_ones(profile):
    profile("fast")
    with pytest.raises(ValueError, match="smoke, sample, full"):
        config.profile()


def test_profile_is_case_and_space_tolerant(profile):
    profile(" Smoke ")
    assert config.profile() == "smoke"


def test_settings_follow_the_profile(profile):
    profile("smoke")
    smoke = config.settings("mnist")
    profile("sample")
    sample = config.settings("mnist")
    assert smoke.epochs < sample.epochs and smoke.train < sample.train
    assert sample.profile == "sample"


def test_every_setting_exists_in_every_profile():
    for name, per_profile in config.SETTINGS.items():
        assert set(per_profile) == set(config.PROFILES), name
        keys = [set(v) for v in per_profile.values()]
        assert all(k == keys[0] for k in keys), f"{name}: profiles have different keys"


def test_unknown_settings_name_lists_known_ones():
    with pytest.raises(KeyError, match="mnist"):
        config.settings("imagenet")


def test_root_holds_the_course():
    assert (config.ROOT / "notebooks").is_dir()
    assert (config.DATA_DIR / "MANIFEST.sha256").exists()


def test_seed_makes_keras_random_repeatable():
    import keras

    config.set_seed(3)
    a = keras.ops.convert_to_numpy(keras.random.uniform((4,)))
    config.set_seed(3)
    b = keras.ops.convert_to_numpy(keras.random.uniform((4,)))
    assert (a == b).all()


def test_a_build_folder_that_cannot_be_written_is_one_clear_message(
    tmp_path, monkeypatch
):
    import os
    import subprocess
    import sys

    from helpers import models, training

    blocked = tmp_path / "file"
    blocked.write_text("a file where the build folder should be")
    problem = config.build_problem(blocked / "build")
    assert "cannot write into" in problem and "COURSE_BUILD" in problem
    assert config.build_problem(tmp_path / "fine") is None
    with pytest.raises(PermissionError, match="COURSE_BUILD"):
        training.save_model(models.mnist_cnn(), blocked / "models" / "m.keras")
    env = {**os.environ, "COURSE_BUILD": str(blocked / "build")}
    script = (
        "from helpers import config; config.settings('mnist'); config.settings('mnist')"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        out.returncode == 0 and out.stdout.count("Notice: The course cannot write") == 1
    )


# --- the embedded sample's pins, downloads, safe extraction, the fall-back to the sample

SHARED = config.ROOT.parent / "shared" / "data"


def test_sample_files_match_their_manifest():
    lines = (config.DATA_DIR / "MANIFEST.sha256").read_text().splitlines()
    assert len(lines) > 7000
    for line in lines[::50] + lines[-20:]:  # a spread of files, quickly
        digest, name = line.split(maxsplit=1)
        assert config.sha256(config.DATA_DIR / name) == digest, name


def test_changed_pinned_file_is_refused(tmp_path, monkeypatch):
    (tmp_path / "pretrained").mkdir()
    (tmp_path / "pretrained" / "mobilenet_2_5_224_tf_no_top.h5").write_bytes(
        b"tampered"
    )
    monkeypatch.setattr(config, "DATA_DIR", tmp_path)
    with pytest.raises(ValueError, match="pinned sha256"):
        config.pretrained_weights()


@pytest.fixture
def server(tmp_path):
    """A local HTTP server over tmp_path/www; yields its base URL and a request log."""
    root = tmp_path / "www"
    root.mkdir()
    requests = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            requests.append(self.path)

    handler = functools.partial(Handler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", root, requests
    httpd.shutdown()


def test_download_checks_hash_and_uses_cache(server, tmp_path):
    url, root, requests = server
    payload = (config.DATA_DIR / "tinyshakespeare" / "input.txt").read_bytes()
    (root / "input.txt").write_bytes(payload)
    remote = config.Remote(f"{url}/input.txt", hashlib.sha256(payload).hexdigest())
    path = config.download(remote, cache_dir=tmp_path / "cache")
    assert path.read_bytes() == payload and len(requests) == 1
    config.download(remote, cache_dir=tmp_path / "cache")
    assert len(requests) == 1  # second call: served from the cache


@pytest.mark.processes
def test_download_with_wrong_hash_leaves_no_file(server, tmp_path):
    url, root, _ = server
    (root / "evil.bin").write_bytes(b"not what was published")
    remote = config.Remote(f"{url}/evil.bin", "0" * 64)
    with pytest.raises(ValueError, match="deleted"):
        config.download(remote, cache_dir=tmp_path / "cache")
    assert not list((tmp_path / "cache").rglob("evil.bin"))


@pytest.mark.processes
def test_full_profile_without_network_falls_back(
    profile, monkeypatch, capsys, tmp_path
):
    profile("full")
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    dead = config.Remote("http://127.0.0.1:9/input.txt", "0" * 64)
    monkeypatch.setitem(config.DATASETS, "tinyshakespeare", [dead])
    kind, path = config.source("tinyshakespeare")
    assert kind == "sample" and path == config.DATA_DIR / "tinyshakespeare"
    assert "using the embedded sample" in capsys.readouterr().out
    assert not list((tmp_path / "cache").rglob("input.txt"))


def test_full_download_is_used_when_it_works(profile, monkeypatch, server, tmp_path):
    url, root, _ = server
    profile("full")
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    (root / "input.txt").write_text("To be, or not to be\n")
    remote = config.Remote(
        f"{url}/input.txt", hashlib.sha256(b"To be, or not to be\n").hexdigest()
    )
    monkeypatch.setitem(config.DATASETS, "tinyshakespeare", [remote])
    assert data.shakespeare() == "To be, or not to be\n"


def test_registry_pins_a_sha256_for_every_download():
    for name, remotes in config.DATASETS.items():
        assert (config.DATA_DIR / name).exists(), name  # the sample of it
        for remote in remotes:
            assert remote.url.startswith("https://"), remote.url
            assert re.fullmatch(r"[0-9a-f]{64}", remote.sha256), remote.sha256


def test_tinyshakespeare_pin_matches_the_sample():
    remote = config.DATASETS["tinyshakespeare"][0]
    assert (
        config.sha256(config.DATA_DIR / "tinyshakespeare" / "input.txt")
        == remote.sha256
    )
    assert Path(remote.url).name == "input.txt"


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
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(root))
    )
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", root, handler
    httpd.shutdown()


def cats_dogs_archive(path, bad_file=True):
    """A small Kaggle-layout zip (PetImages/Cat, PetImages/Dog) from the real source pictures."""
    with zipfile.ZipFile(path, "w") as z:
        for cls, prefix in (("Cat", "cat"), ("Dog", "dog")):
            for n in range(1, 11):
                source = (
                    SHARED
                    / "cats_vs_dogs"
                    / "train"
                    / f"{prefix}s"
                    / f"{prefix}.{n}.jpg"
                )
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
    remote = config.Remote(f"{url}/pets.zip", config.sha256(archive), extract=True)
    folder = config.download(remote, cache_dir=tmp_path / "cache", wait=0.01)
    assert len(handler.log) == 2
    assert len(list((folder / "PetImages" / "Dog").iterdir())) == 10
    assert not list((tmp_path / "cache").rglob("*.partial"))


def test_connection_that_keeps_dropping_fails_cleanly(flaky, tmp_path):
    url, root, handler = flaky
    (root / "big.bin").write_bytes(os.urandom(50_000))
    handler.drops = 10
    remote = config.Remote(f"{url}/big.bin", config.sha256(root / "big.bin"))
    with pytest.raises(ConnectionError, match="after 3 tries"):
        config.download(remote, cache_dir=tmp_path / "cache", wait=0.01)
    assert len(handler.log) == 3
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]


def test_full_profile_uses_the_downloaded_kaggle_layout(
    flaky, tmp_path, profile, monkeypatch, capsys
):
    url, root, _ = flaky
    archive = cats_dogs_archive(root / "kaggle.zip")
    profile("full")
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    remote = config.Remote(f"{url}/kaggle.zip", config.sha256(archive), extract=True)
    monkeypatch.setitem(config.DATASETS, "cats_dogs", [remote])
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
            info = tarfile.TarInfo(
                "/tmp/evil.txt" if kind == "absolute" else "a/../../evil.txt"
            )
            info.size = 4
            t.addfile(info, io.BytesIO(b"evil"))
        else:
            info = tarfile.TarInfo("link")
            info.type = tarfile.SYMTYPE
            info.linkname = "/etc/passwd" if kind == "symlink" else "../../outside"
            t.addfile(info)
    return path


@pytest.mark.parametrize("kind", ["dotdot", "symlink", "relative_link"])
def test_tar_entries_leading_outside_are_refused(tmp_path, kind):
    archive = unsafe_tar(tmp_path / f"{kind}.tar.gz", kind)
    with pytest.raises(ValueError, match="unsafe entry"):
        config.safe_extract(archive, tmp_path / "a" / "out")
    assert not list((tmp_path / "a").iterdir())  # neither out/ nor out.partial/ is left
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "outside").exists()


@pytest.mark.parametrize("name", ["../evil.txt", "/abs/evil.txt", "C:/evil.txt"])
def test_no_zip_or_tar_entry_lands_outside_the_folder(tmp_path, name):
    (tmp_path / "a").mkdir()
    with zipfile.ZipFile(tmp_path / "a" / "bad.zip", "w") as z:
        z.writestr("fine.txt", "fine")
        z.writestr(name, "evil")
    out = config.safe_extract(tmp_path / "a" / "bad.zip", tmp_path / "a" / "out")
    assert (out / "fine.txt").read_text() == "fine"
    assert (
        not (tmp_path / "evil.txt").exists()
        and not (tmp_path / "a" / "evil.txt").exists()
    )
    tar = config.safe_extract(
        unsafe_tar(tmp_path / "a" / "abs.tar.gz", "absolute"), tmp_path / "a" / "tar"
    )
    # an absolute name is read as one inside the folder
    assert sorted(p.relative_to(tar).as_posix() for p in tar.rglob("*.txt")) == [
        "ok.txt",
        "tmp/evil.txt",
    ]


def test_safe_archive_is_extracted_whole(tmp_path):
    archive = cats_dogs_archive(tmp_path / "pets.zip", bad_file=False)
    out = config.safe_extract(archive, tmp_path / "out")
    assert len(list(out.rglob("*.jpg"))) == 20
