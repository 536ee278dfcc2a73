"""helpers.data: the loaders, the cat/dog splits and folders of one's own, the check cache,
and clear errors for folders and arguments a loader cannot use; the Keras 2 style PyDataset."""

import math
import subprocess
import sys

from helpers import config, data, folders, models

import numpy as np
import pytest
from conftest import write_jpeg
from PIL import Image

SHARED = config.ROOT.parent / "shared" / "data"


@pytest.mark.processes
@pytest.mark.skipif(not SHARED.exists(), reason="needs ../shared/data")
def test_sample_rebuilds_identically():
    result = subprocess.run(
        [sys.executable, "-m", "tools.build_sample", "--check"],
        cwd=config.ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "matches" in result.stdout


def test_sample_size_stays_small():
    total = sum(p.stat().st_size for p in config.DATA_DIR.rglob("*") if p.is_file())
    assert total < 32e6


def test_unknown_names_list_the_choices():
    with pytest.raises(KeyError, match="cats_dogs"):
        config.source("imagenet")
    with pytest.raises(KeyError, match="mobilenet_0.25"):
        config.pretrained_weights("vgg16")


def test_mnist_sample_split_is_fixed_and_disjoint(profile):
    profile("sample")
    x_train, y_train = data.mnist_arrays("train")
    x_val, y_val = data.mnist_arrays("validation")
    assert x_train.shape == (8000, 28, 28) and x_val.shape == (2000, 28, 28)
    assert set(np.unique(y_train)) == set(range(10))
    train_rows = {row.tobytes() for row in x_train}
    # MNIST has a few duplicates
    assert sum(row.tobytes() in train_rows for row in x_val) < 5
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
    header = (
        bytes([0, 0, 8, 3]) + (100).to_bytes(4, "big") + (28).to_bytes(4, "big") * 2
    )
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


def test_bad_image_is_reported_and_skipped(tmp_path, capsys):
    for i in range(3):
        write_jpeg(tmp_path / "cats" / f"c{i}.jpg", seed=i)
        write_jpeg(tmp_path / "dogs" / f"d{i}.jpg", seed=10 + i)
    (tmp_path / "dogs" / "broken.jpg").write_bytes(b"")
    paths, labels, classes = folders.labelled_files(tmp_path)
    out = capsys.readouterr().out
    assert len(paths) == 6 and "1 skipped" in out
    assert "broken.jpg" in out and "empty" in out
    ds = data.image_pipeline(paths, labels, 32, batch_size=6)
    assert next(iter(ds))[0].shape == (6, 32, 32, 3)


def test_batch_size_zero_is_refused_before_any_file_is_read():
    import tensorflow as tf

    with pytest.raises(
        tf.errors.InvalidArgumentError, match="must be greater than zero"
    ):
        data.image_pipeline(["no such file.jpg"], [0], 32, batch_size=0)


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


@pytest.mark.processes
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


def test_a_picture_cache_larger_than_free_memory_is_refused_before_any_work(
    monkeypatch,
):
    import psutil

    free = type("Memory", (), {"available": 10_000_000})()  # 10 MB free
    monkeypatch.setattr(psutil, "virtual_memory", lambda: free)
    paths = [f"picture_{i}.jpg" for i in range(1000)]  # 1000 x 128 x 128 x 3 = 49 MB
    need = "caching 1,000 pictures of 128 px needs 49 MB of memory and 10 MB"
    with pytest.raises(MemoryError, match=need):
        data.image_pipeline(paths, [0] * 1000, 128, batch_size=32)
    data.image_pipeline(paths[:100], [0] * 100, 32, batch_size=32)  # 0.3 MB fits


def test_the_pipeline_switches_change_the_speed_not_the_pictures():
    # notebook 07 times the pipeline with parallel, cache and prefetch switched on and off
    paths, labels, _ = folders.cats_dogs_files("train", limit=8)
    batches = [
        list(data.image_pipeline(paths, labels, 64, 4, **options))
        for options in (
            {},
            dict(parallel=False, cache=False, prefetch=False),
            dict(cache=False),
        )
    ]
    x, y = batches[0][0]
    assert tuple(x.shape) == (4, 64, 64, 3) and tuple(y.shape) == (4,)
    assert (
        x.dtype == "float32"
        and 0 <= float(x.numpy().min()) < float(x.numpy().max()) <= 255
    )
    for other in batches[1:]:
        assert all(
            np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
            for a, b in zip(batches[0], other, strict=True)
        )
    endless = data.image_pipeline(paths[:6], labels[:6], 32, 4, repeat=True)
    # whole batches only, forever
    assert [len(y) for _, y in endless.take(3)] == [4, 4, 4]


def test_wrong_arguments_name_the_valid_choices():
    with pytest.raises(
        KeyError, match="cats_dogs, cifar10, imdb, mnist, tinyshakespeare"
    ):
        config.source("coco")
    with pytest.raises(KeyError, match="0, 1, 2, 2b, 3"):
        models.cats_dogs_net("4")
    with pytest.raises(TypeError, match="unknown settings.*'imagesize'.*image_size"):
        models.cats_dogs_net("2", imagesize=128)
    with pytest.raises(ValueError, match="too small for ladder step 3.*46 px"):
        models.cats_dogs_net("3", image_size=32)
    with pytest.raises(ValueError, match="split must be 'train' or 'validation'"):
        data.cats_dogs("test")


SIZE = 401  # odd: the centre is a pixel row and column


def centre(profile):
    """Sub-pixel position of a bright line across one row or column of a picture."""
    weights = np.clip(profile, 0, None)
    return float((weights * np.arange(len(profile))).sum() / weights.sum())


def tilt(picture):
    """How far the bright middle row moved at its right end against its left end, as a share
    of the distance between the two columns measured."""
    return (centre(picture[:, -6, 0]) - centre(picture[:, 5, 0])) / (SIZE - 11)


def drawn(tmp_path, picture, draws=200):
    """`draws` pictures as PillowBatches augments `picture` (saved as a PNG), one per batch."""
    path = tmp_path / "picture.png"
    Image.fromarray(picture.astype("uint8")).save(path)
    loader = data.PillowBatches([str(path)], [0], picture.shape[0], 1, repeat=draws)
    return [loader[i][0][0] for i in range(draws)]


def test_a_shear_of_0_2_degrees_moves_a_corner_by_0_35_percent_of_the_width():
    lines = np.zeros((SIZE, SIZE, 3), "float32")
    lines[SIZE // 2] = 255
    # 0.0035: Keras 2 read shear_range in degrees
    expected = math.sin(math.radians(0.2))
    assert tilt(data.keras2_transform(lines, shear_degrees=0.2)) == pytest.approx(
        expected, rel=0.05
    )
    assert tilt(data.keras2_transform(lines, shear_degrees=-0.2)) == pytest.approx(
        -expected, rel=0.05
    )
    assert tilt(data.keras2_transform(lines)) == pytest.approx(0, abs=1e-6)


@pytest.mark.processes
def test_the_loader_draws_keras_2s_shear_zoom_and_flip(tmp_path):
    lines = np.zeros((SIZE, SIZE, 3), "float32")
    lines[SIZE // 2] = 255
    tilts = np.abs([tilt(p) for p in drawn(tmp_path, lines)])
    most = math.sin(math.radians(models.SHEAR_DEGREES))
    # a zoom stretches the tilt by (width zoom / height zoom), at most 1.2 / 0.8
    assert tilts.max() <= most * 1.5 * 1.05 and tilts.max() >= most * 0.7
    # a fraction of 0.2 (Keras 3's unit) would tilt it up to 20 %
    assert tilts.max() < 0.01

    square = np.zeros((SIZE, SIZE, 3), "float32")
    square[150:251, 150:251] = 255
    # (width, height) / before
    sides = np.array(
        [
            (
                (p[SIZE // 2, :, 0] > 127).sum() / 101,
                (p[:, SIZE // 2, 0] > 127).sum() / 101,
            )
            for p in drawn(tmp_path, square)
        ]
    )
    assert sides.min() > 1 / 1.2 - 0.03 and sides.max() < 1 / 0.8 + 0.03
    # the whole range 0.8..1.2 is drawn
    assert sides.min() < 0.87 and sides.max() > 1.18
    aspect = sides[:, 0] / sides[:, 1]
    assert aspect.min() < 0.8 and aspect.max() > 1.25  # width and height zoomed apart
    assert abs(np.corrcoef(sides[:, 0], sides[:, 1])[0, 1]) < 0.3

    left = np.zeros((8, 8, 3), "float32")
    left[:, :2] = 255  # bright on the left
    mirrored = [p[0, -1, 0] > 127 for p in drawn(tmp_path, left)]
    assert 0.35 < np.mean(mirrored) < 0.65 and all(
        p[0, 0, 0] > 127 or p[0, -1, 0] > 127 for p in drawn(tmp_path, left, 20)
    )


def test_pillow_batches_are_real_augmented_pictures():
    paths, labels, _ = folders.cats_dogs_files("train", limit=8)
    plain = data.PillowBatches(paths, labels, 64, 4, augment=False)
    augmented = data.PillowBatches(paths, labels, 64, 4, augment=True, repeat=3)
    x, y = plain[0]
    assert (
        x.shape == (4, 64, 64, 3)
        and x.dtype == np.float32
        and 0 <= x.min() < x.max() <= 255
    )
    assert len(plain) == 2 and len(augmented) == 6
    assert not np.array_equal(augmented[0][0], x) and np.array_equal(augmented[0][1], y)
    with pytest.raises(ValueError, match="batch_size"):
        data.PillowBatches(paths, labels, 64, 100)


def test_a_batch_is_the_same_whichever_worker_makes_it_and_each_pass_draws_anew():
    # workers (threads or processes) ask for batches by index: its augmentation is fixed
    paths, labels, _ = folders.cats_dogs_files("train", limit=8)
    loader = data.PillowBatches(paths, labels, 64, 4, repeat=2)
    assert np.array_equal(loader[1][0], loader[1][0])
    assert not np.array_equal(loader[0][0], loader[2][0]) and np.array_equal(
        loader[0][1], loader[2][1]
    )


def test_the_python_loader_makes_whole_labelled_batches_and_refuses_a_bad_batch_size():
    # notebook 07's PillowBatches: batch `index` holds pictures index * batch_size, ...
    paths, labels, _ = folders.cats_dogs_files("train", limit=6)
    loader = data.PillowBatches(paths, labels, 32, 4, augment=False, repeat=2)
    assert len(loader) == 3  # 12 pictures: three whole batches of 4
    x, y = loader[1]
    assert x.shape == (4, 32, 32, 3) and x.dtype == "float32"
    assert y.dtype == "float32" and list(y) == (list(labels) * 2)[4:8]
    for wrong in (0, 7):
        with pytest.raises(ValueError, match=f"batch_size must be 1..6, not {wrong}"):
            data.PillowBatches(paths, labels, 32, wrong)
