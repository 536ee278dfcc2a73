import functools
import hashlib
import http.server
import re
import subprocess
import sys
import threading
from pathlib import Path

from helpers import config, data

import numpy as np
import pytest
from conftest import write_jpeg

SHARED = config.ROOT.parent / "shared" / "data"


def test_sample_files_match_their_manifest():
    lines = (config.DATA_DIR / "MANIFEST.sha256").read_text().splitlines()
    assert len(lines) > 7000
    for line in lines[::50] + lines[-20:]:  # a spread of files, quickly
        digest, name = line.split(maxsplit=1)
        assert data.sha256(config.DATA_DIR / name) == digest, name


@pytest.mark.skipif(not SHARED.exists(), reason="needs ../shared/data")
def test_sample_rebuilds_identically():
    result = subprocess.run([sys.executable, "tools/build_sample.py", "--check"],
                            cwd=config.ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "matches" in result.stdout


def test_sample_size_stays_small():
    total = sum(p.stat().st_size for p in config.DATA_DIR.rglob("*") if p.is_file())
    assert total < 32e6


def test_changed_pinned_file_is_refused(tmp_path, monkeypatch):
    (tmp_path / "pretrained").mkdir()
    (tmp_path / "pretrained" / "mobilenet_2_5_224_tf_no_top.h5").write_bytes(b"tampered")
    monkeypatch.setattr(config, "DATA_DIR", tmp_path)
    with pytest.raises(ValueError, match="pinned sha256"):
        data.pretrained_weights()


def test_unknown_names_list_the_choices():
    with pytest.raises(KeyError, match="cats_dogs"):
        data.source("imagenet")
    with pytest.raises(KeyError, match="mobilenet_0.25"):
        data.pretrained_weights("vgg16")


def test_mnist_sample_split_is_fixed_and_disjoint(profile):
    profile("sample")
    x_train, y_train = data.mnist_arrays("train")
    x_val, y_val = data.mnist_arrays("validation")
    assert x_train.shape == (8000, 28, 28) and x_val.shape == (2000, 28, 28)
    assert set(np.unique(y_train)) == set(range(10))
    train_rows = {row.tobytes() for row in x_train}
    assert sum(row.tobytes() in train_rows for row in x_val) < 5  # MNIST has a few duplicates
    again, _ = data.mnist_arrays("train")
    assert (again == x_train).all()


def test_mnist_pipeline_shapes_and_one_hot():
    x, y = next(iter(data.mnist("train", batch_size=16, one_hot=True)))
    assert x.shape == (16, 28, 28, 1) and y.shape == (16, 10)
    assert 0.0 <= float(x.numpy().min()) and float(x.numpy().max()) <= 1.0
    assert (y.numpy().sum(axis=1) == 1).all()


def test_truncated_idx_file_is_reported(tmp_path):
    import gzip

    path = tmp_path / "bad-idx3-ubyte.gz"
    header = bytes([0, 0, 8, 3]) + (100).to_bytes(4, "big") + (28).to_bytes(4, "big") * 2
    path.write_bytes(gzip.compress(header + b"\x00" * 500))
    with pytest.raises(ValueError, match="truncated"):
        data.read_idx(path)


def test_cats_dogs_pipeline(profile):
    profile("smoke")
    ds = data.cats_dogs("train", image_size=64, batch_size=8)
    images, labels = next(iter(ds))
    assert images.shape == (8, 64, 64, 3)
    assert ds.class_names == ["cats", "dogs"] and ds.num_examples == 64
    assert set(labels.numpy()) <= {0, 1}
    assert 0 <= float(images.numpy().min()) and float(images.numpy().max()) <= 255


def test_cats_dogs_sample_counts(profile):
    profile("sample")
    paths, labels, classes = data.labelled_files(config.DATA_DIR / "cats_dogs" / "validation")
    assert len(paths) == 800 and sum(labels) == 400 and classes == ["cats", "dogs"]


def test_bad_image_is_reported_and_skipped(tmp_path, capsys):
    for i in range(3):
        write_jpeg(tmp_path / "cats" / f"c{i}.jpg", seed=i)
        write_jpeg(tmp_path / "dogs" / f"d{i}.jpg", seed=10 + i)
    (tmp_path / "dogs" / "broken.jpg").write_bytes(b"")
    paths, labels, classes = data.labelled_files(tmp_path)
    out = capsys.readouterr().out
    assert len(paths) == 6 and "1 skipped" in out
    assert "broken.jpg" in out and "empty" in out
    ds = data.image_pipeline(paths, labels, 32, batch_size=6)
    assert next(iter(ds))[0].shape == (6, 32, 32, 3)


def test_folder_without_classes_is_a_clear_error(tmp_path):
    write_jpeg(tmp_path / "only.jpg")
    with pytest.raises(ValueError, match="one sub-folder per class"):
        data.labelled_files(tmp_path)


def test_batch_size_zero_is_refused():
    with pytest.raises(ValueError, match="batch_size"):
        data.image_pipeline(["x.jpg"], [0], 32, batch_size=0)


def test_text_loaders():
    text = data.shakespeare()
    assert len(text) == 1_115_394 and text.startswith("First Citizen")
    texts, labels = next(iter(data.imdb("test", batch_size=4)))
    assert texts.shape == (4,) and set(labels.numpy()) <= {0, 1}


def test_bad_text_is_a_clear_error(tmp_path):
    (tmp_path / "empty.txt").write_text("  \n")
    (tmp_path / "latin1.txt").write_bytes("Gr\xfc\xdfe".encode("latin-1"))
    with pytest.raises(ValueError, match="empty"):
        data.read_text(tmp_path / "empty.txt")
    with pytest.raises(ValueError, match="not UTF-8"):
        data.read_text(tmp_path / "latin1.txt")


def test_cifar10_sample():
    ds = data.cifar10("validation", batch_size=10)
    x, y = next(iter(ds))
    assert x.shape == (10, 32, 32, 3) and len(ds.class_names) == 10


def test_cifar_binary_reader(tmp_path):
    rows = np.zeros((2, 3073), dtype=np.uint8)
    rows[:, 0] = [3, 7]
    rows[1, 1:1025] = 255  # red channel of the second image
    rows.tofile(tmp_path / "batch.bin")
    x, y = data.read_cifar_bin([tmp_path / "batch.bin"])
    assert x.shape == (2, 32, 32, 3) and list(y) == [3, 7]
    assert x[1, :, :, 0].min() == 255 and x[1, :, :, 1].max() == 0


# --- downloads, against a server on 127.0.0.1 ----------------------------------------------


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
    remote = data.Remote(f"{url}/input.txt", hashlib.sha256(payload).hexdigest())
    path = data.download(remote, cache_dir=tmp_path / "cache")
    assert path.read_bytes() == payload and len(requests) == 1
    data.download(remote, cache_dir=tmp_path / "cache")
    assert len(requests) == 1  # second call: served from the cache


def test_download_with_wrong_hash_leaves_no_file(server, tmp_path):
    url, root, _ = server
    (root / "evil.bin").write_bytes(b"not what was published")
    remote = data.Remote(f"{url}/evil.bin", "0" * 64)
    with pytest.raises(ValueError, match="deleted"):
        data.download(remote, cache_dir=tmp_path / "cache")
    assert not list((tmp_path / "cache").rglob("evil.bin"))


def test_full_profile_without_network_falls_back(profile, monkeypatch, capsys, tmp_path):
    profile("full")
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    dead = data.Remote("http://127.0.0.1:9/input.txt", "0" * 64)
    monkeypatch.setitem(data.DATASETS["tinyshakespeare"], "remotes", [dead])
    kind, path = data.source("tinyshakespeare")
    assert kind == "sample" and path == config.DATA_DIR / "tinyshakespeare"
    assert "using the embedded sample" in capsys.readouterr().out
    assert not list((tmp_path / "cache").rglob("input.txt"))


def test_full_download_is_used_when_it_works(profile, monkeypatch, server, tmp_path):
    url, root, _ = server
    profile("full")
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    (root / "input.txt").write_text("To be, or not to be\n")
    remote = data.Remote(f"{url}/input.txt",
                         hashlib.sha256(b"To be, or not to be\n").hexdigest())
    monkeypatch.setitem(data.DATASETS["tinyshakespeare"], "remotes", [remote])
    assert data.shakespeare() == "To be, or not to be\n"


def test_registry_pins_a_sha256_for_every_download():
    for name, info in data.DATASETS.items():
        assert (config.DATA_DIR / info["sample"]).exists(), name
        for remote in info["remotes"]:
            assert remote.url.startswith("https://"), remote.url
            assert re.fullmatch(r"[0-9a-f]{64}", remote.sha256), remote.sha256


def test_tinyshakespeare_pin_matches_the_sample():
    remote = data.DATASETS["tinyshakespeare"]["remotes"][0]
    assert data.sha256(config.DATA_DIR / "tinyshakespeare" / "input.txt") == remote.sha256
    assert Path(remote.url).name == "input.txt"


# --- a cat/dog folder of one's own (the tutorial's layout), and the cached checks -------------


def tutorial_folder(root, train=6, test=2, layout=("training_set", "test_set")):
    """A small folder laid out like the tutorial's: <split>/{cats,dogs}/cat.N.jpg."""
    for split, n in zip(layout, (train, test)):
        for label, name in enumerate(("cats", "dogs")):
            for i in range(n):
                write_jpeg(root / split / name / f"{name[:-1]}.{i}.jpg", size=(50, 40),
                           seed=100 * label + i + (1000 if split == layout[1] else 0))
    return root


@pytest.mark.parametrize("layout", [("training_set", "test_set"), ("train", "validation")])
def test_cats_dogs_reads_a_folder_of_ones_own(tmp_path, monkeypatch, layout):
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    root = tutorial_folder(tmp_path / "mine", layout=layout)
    monkeypatch.setenv("COURSE_CATS_DOGS", str(root))
    train = data.cats_dogs("train", image_size=32, batch_size=4, limit=100)
    val = data.cats_dogs("validation", image_size=32, batch_size=4, limit=100)
    assert train.class_names == val.class_names == ["cats", "dogs"]
    assert (train.num_examples, val.num_examples) == (12, 4)
    labels = np.concatenate([y.numpy() for _, y in val])
    assert sorted(labels) == [0, 0, 1, 1]
    paths, labels, _ = data.cats_dogs_files("validation")
    for path, label in zip(paths, labels):  # every label is the folder the picture is in
        assert Path(path).parent.name == ("cats", "dogs")[label]
        assert Path(path).parts[-3] == layout[1]


def test_a_folder_without_the_split_folders_says_what_it_needs(tmp_path, monkeypatch):
    write_jpeg(tmp_path / "pictures" / "cats" / "a.jpg")
    monkeypatch.setenv("COURSE_CATS_DOGS", str(tmp_path / "pictures"))
    with pytest.raises(FileNotFoundError, match="training_set/ or train/"):
        data.cats_dogs("train")


def test_an_unchanged_folder_is_checked_once(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    root = tutorial_folder(tmp_path / "mine")
    before = {p: p.stat().st_mtime_ns for p in root.rglob("*")}
    data.labelled_files(root / "training_set")
    assert "12 decoded" in capsys.readouterr().out
    data.labelled_files(root / "training_set")
    assert "0 decoded, 12 unchanged" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*")} == before  # never written to


def test_a_changed_or_new_file_is_checked_again(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    root = tutorial_folder(tmp_path / "mine")
    data.labelled_files(root / "training_set")
    capsys.readouterr()
    broken = root / "training_set" / "cats" / "cat.0.jpg"
    broken.write_bytes(broken.read_bytes()[:200])  # cut off: size and time change
    write_jpeg(root / "training_set" / "dogs" / "dog.99.jpg", seed=99)
    paths, _, _ = data.labelled_files(root / "training_set")
    out = capsys.readouterr().out
    assert "2 decoded, 11 unchanged" in out
    assert "cat.0.jpg" in out and "truncated" in out and len(paths) == 12


def test_a_picture_cache_larger_than_free_memory_is_refused_before_any_work(monkeypatch):
    import psutil

    free = type("Memory", (), {"available": 10_000_000})()  # 10 MB free
    monkeypatch.setattr(psutil, "virtual_memory", lambda: free)
    paths = [f"picture_{i}.jpg" for i in range(1000)]  # 1000 x 128 x 128 x 3 = 49 MB
    need = "caching 1,000 pictures at 128x128 pixels needs 49 MB of memory and 10 MB"
    with pytest.raises(MemoryError, match=need):
        data.image_pipeline(paths, [0] * 1000, 128, batch_size=32)
    data.image_pipeline(paths[:100], [0] * 100, 32, batch_size=32)  # 0.3 MB fits
