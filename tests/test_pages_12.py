"""The functions notebook 12 writes out on its page (they live there alone), run as the page
writes them: the default folder, the split per class."""

import hashlib
from pathlib import Path

from helpers import config, data, folders

import keras
import numpy as np
import page_source
import pytest
import tensorflow as tf
from conftest import write_jpeg
from PIL import Image

NOTEBOOK = "12_your_own_classifier"


def on_page(name):
    """Notebook 12's `def name`, with the names its page imports."""
    namespace = {
        "keras": keras,
        "np": np,
        "tf": tf,
        "data": data,
        "config": config,
        "Path": Path,
    }
    exec(page_source.defined_on_page(NOTEBOOK, name), namespace)
    return namespace[name]


def files(folder, labels, contents=None):
    """One small file per label (its bytes `contents[i]`, else its own number)."""
    paths = []
    for i, y in enumerate(labels):
        path = folder / f"{y}_{i}.png"
        path.write_bytes(str(contents[i] if contents else i).encode())
        paths.append(str(path))
    return paths


def split(paths, labels, share):
    """Notebook 12's split, the pictures' digests standing in for the check's (equal bytes:
    the same digest)."""
    digests = {p: hashlib.blake2b(Path(p).read_bytes()).digest() for p in paths}
    classes = [f"class_{y}" for y in range(max(labels) + 1)]
    return on_page("split")(paths, labels, share, digests, classes)


def test_split_keeps_a_share_of_every_class_in_each_part(tmp_path):
    labels = [0] * 10 + [1] * 5 + [2] * 3
    paths = files(tmp_path, labels)
    (train_paths, train_labels), (val_paths, val_labels) = split(paths, labels, 0.2)
    assert np.bincount(val_labels).tolist() == [2, 1, 1]  # at least one per class
    assert np.bincount(train_labels).tolist() == [8, 4, 2]
    # each picture in one part only
    assert sorted(train_paths + val_paths) == sorted(paths)
    for part, part_labels in [(train_paths, train_labels), (val_paths, val_labels)]:
        assert all(
            Path(p).name.startswith(f"{y}_")
            for p, y in zip(part, part_labels, strict=True)
        )


def test_split_keeps_copies_of_a_picture_on_one_side(tmp_path):
    """An album exported twice: 8 pictures, 4 of them stored twice, shuffled by the loader."""
    contents = [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3]
    order = [8, 0, 5, 1, 9, 2, 10, 6, 3, 11, 4, 7]
    labels = [0] * 12
    paths = [p for _, p in sorted(zip(order, files(tmp_path, labels, contents)))]
    (train, _), (validation, _) = split(paths, labels, 0.25)
    assert sorted(train + validation) == sorted(paths)
    bytes_of = {p: Path(p).read_bytes() for p in paths}
    assert not {bytes_of[p] for p in validation} & {bytes_of[p] for p in train}
    # a quarter of 8 different pictures
    assert len({bytes_of[p] for p in validation}) == 2


def test_split_refuses_a_class_with_one_picture(tmp_path):
    """The error names the class folder (not its label) and the count."""
    with pytest.raises(ValueError, match=r"class_1/ .*\b1\b"):
        split(files(tmp_path, [0, 0, 1]), [0, 0, 1], 0.2)
    # class 1: one picture, twice
    copies = files(tmp_path, [0, 0, 1, 1], contents=[0, 1, 2, 2])
    with pytest.raises(ValueError, match=r"class_1/ .*\b1\b"):
        split(copies, [0, 0, 1, 1], 0.2)


def test_a_folder_with_copies_and_a_class_named_twice_is_read_as_the_page_reads_it(
    tmp_path, capsys
):
    """Notebook 12's first steps on real pictures: horse/ beside Horse/, an album exported
    twice (the same files under other names) and a picture saved again as PNG."""
    for i in range(6):
        for name, seed in [("cat", i), ("Horse" if i % 2 else "horse", 10 + i)]:
            write_jpeg(tmp_path / name / f"{name}_{i}.jpg", seed=seed)
    for i in range(3):  # the album's second export: byte copies
        (tmp_path / "cat" / f"copy_{i}.jpg").write_bytes(
            (tmp_path / "cat" / f"cat_{i}.jpg").read_bytes()
        )
    with Image.open(tmp_path / "horse" / "horse_0.jpg") as im:
        # the same pixels, other bytes
        im.save(tmp_path / "horse" / "horse_0_again.png")
    paths, labels, classes = folders.labelled_files(tmp_path)
    out = capsys.readouterr().out
    assert classes == ["Horse", "cat"] and np.bincount(labels).tolist() == [7, 9]
    assert "'Horse/' and 'horse/'" in out  # named, read as one class
    assert "4 pictures stored more than once in one class" in out
    digests = folders.picture_digests(tmp_path)
    (train, _), (validation, _) = on_page("split")(paths, labels, 0.4, digests, classes)
    assert sorted(train + validation) == sorted(paths)
    assert not {digests[p] for p in validation} & {digests[p] for p in train}


def test_write_pictures_writes_each_class_once(tmp_path):
    write_pictures = on_page("write_pictures")
    write_pictures(tmp_path, ["cat", "horse"], 3)
    files = sorted(tmp_path.rglob("*.png"))
    assert [f.relative_to(tmp_path).as_posix() for f in files] == [
        f"{name}/{name}_{i:04d}.png" for name in ("cat", "horse") for i in range(3)
    ]
    assert Image.open(files[0]).size == (32, 32)
    written = {f: f.stat().st_mtime_ns for f in files}
    # again, one more each: the others are kept
    write_pictures(tmp_path, ["cat", "horse"], 4)
    assert {f: f.stat().st_mtime_ns for f in files} == written
    assert len(list(tmp_path.rglob("*.png"))) == 8
    paths, labels, classes = folders.labelled_files(tmp_path)
    assert classes == ["cat", "horse"] and np.bincount(labels).tolist() == [4, 4]
