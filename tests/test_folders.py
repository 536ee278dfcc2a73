"""helpers.folders: class folders read into paths and labels (the check cache, duplicates,
clashes, permissions, names in any script), the cat/dog splits in every layout the course
accepts, and clear errors for folders a loader cannot use."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from helpers import config, data, folders

import numpy as np
import pytest
from conftest import write_jpeg
from PIL import Image


def test_cats_dogs_sample_counts(profile):
    profile("sample")
    paths, labels, classes = folders.labelled_files(
        config.DATA_DIR / "cats_dogs" / "validation"
    )
    assert len(paths) == 800 and sum(labels) == 400 and classes == ["cats", "dogs"]


def test_folder_without_classes_is_a_clear_error(tmp_path):
    write_jpeg(tmp_path / "only.jpg")
    with pytest.raises(ValueError, match="one sub-folder per class"):
        folders.labelled_files(tmp_path)


def tutorial_folder(root, train=6, test=2, layout=("training_set", "test_set")):
    """A small folder laid out like the tutorial's: <split>/{cats,dogs}/cat.N.jpg."""
    for split, n in zip(layout, (train, test)):
        for label, name in enumerate(("cats", "dogs")):
            for i in range(n):
                write_jpeg(
                    root / split / name / f"{name[:-1]}.{i}.jpg",
                    size=(50, 40),
                    seed=100 * label + i + (1000 if split == layout[1] else 0),
                )
    return root


@pytest.mark.parametrize(
    "layout", [("training_set", "test_set"), ("train", "validation")]
)
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
    paths, labels, _ = folders.cats_dogs_files("validation")
    # every label is the folder the picture is in
    for path, label in zip(paths, labels):
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
    folders.labelled_files(root / "training_set")
    assert "12 decoded" in capsys.readouterr().out
    folders.labelled_files(root / "training_set")
    assert "0 decoded, 12 unchanged" in capsys.readouterr().out
    assert {
        p: p.stat().st_mtime_ns for p in root.rglob("*")
    } == before  # never written to


def test_a_changed_or_new_file_is_checked_again(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    root = tutorial_folder(tmp_path / "mine")
    folders.labelled_files(root / "training_set")
    capsys.readouterr()
    broken = root / "training_set" / "cats" / "cat.0.jpg"
    broken.write_bytes(broken.read_bytes()[:200])  # cut off: size and time change
    write_jpeg(root / "training_set" / "dogs" / "dog.99.jpg", seed=99)
    paths, _, _ = folders.labelled_files(root / "training_set")
    out = capsys.readouterr().out
    assert "2 decoded, 11 unchanged" in out
    assert "cat.0.jpg" in out and "truncated" in out and len(paths) == 12


def test_one_class_is_refused_with_the_classes_found(tmp_path):
    write_jpeg(tmp_path / "cats" / "a.jpg")
    with pytest.raises(ValueError, match=r"one sub-folder per class.*\['cats'\]"):
        folders.labelled_files(tmp_path)


def test_empty_class_is_named(tmp_path):
    write_jpeg(tmp_path / "cats" / "a.jpg")
    (tmp_path / "dogs").mkdir()
    (tmp_path / "dogs" / "broken.jpg").write_bytes(b"")
    with pytest.raises(ValueError, match="dogs has no usable images"):
        folders.labelled_files(tmp_path)


def test_class_folders_equal_but_for_case_or_accent_form_are_one_class(
    tmp_path, capsys
):
    for i, name in enumerate(["Horse", "horse", "cow", "Cafe\u0301", "Caf\u00e9"]):
        write_jpeg(tmp_path / name / f"{i}.jpg", seed=i)
    paths, labels, classes = folders.labelled_files(tmp_path)
    out = capsys.readouterr().out
    assert classes == ["Cafe\u0301", "Horse", "cow"]
    assert "'Horse/' and 'horse/'" in out
    assert "read as one class, 'Horse'" in out
    folder_of = {Path(p).parent.name: y for p, y in zip(paths, labels, strict=True)}
    assert folder_of["Horse"] == folder_of["horse"] == 1
    assert (
        folder_of["Cafe\u0301"] == folder_of["Caf\u00e9"] == 0 and folder_of["cow"] == 2
    )
    for name in ["horse", "Caf\u00e9"]:  # apart again: nothing said, the same labels
        shutil.rmtree(tmp_path / name)
    assert folders.labelled_files(tmp_path)[2] == ["Cafe\u0301", "Horse", "cow"]
    assert "differ only" not in capsys.readouterr().out


def test_two_folders_of_one_name_are_one_class_and_refused(tmp_path):
    write_jpeg(tmp_path / "Horse" / "a.jpg")
    write_jpeg(tmp_path / "horse" / "b.jpg", seed=1)
    with pytest.raises(ValueError, match=r"one sub-folder per class.*one class"):
        folders.labelled_files(tmp_path)


def test_picture_digests_find_copies_whatever_their_bytes(tmp_path):
    write_jpeg(tmp_path / "cats" / "a.jpg")
    write_jpeg(tmp_path / "dogs" / "b.jpg", seed=1)
    with Image.open(tmp_path / "cats" / "a.jpg") as im:
        im.save(tmp_path / "cats" / "a_again.png")  # the same pixels, other bytes
    digest = folders.picture_digests(tmp_path)
    a, again = (str(tmp_path / "cats" / name) for name in ("a.jpg", "a_again.png"))
    assert digest[a] == digest[again]
    assert digest[a] != digest[str(tmp_path / "dogs" / "b.jpg")]


def test_a_folder_that_cannot_be_listed_is_named_not_skipped_silently(
    tmp_path, monkeypatch, capsys
):
    """As a user without read permission meets it (root reads every folder, so the refusal is
    made by os.scandir here, as the system would make it)."""
    for i in range(2):
        write_jpeg(tmp_path / "cats" / f"c{i}.jpg", seed=i)
        write_jpeg(tmp_path / "dogs" / f"d{i}.jpg", seed=10 + i)
    write_jpeg(tmp_path / "dogs" / "private" / "d9.jpg", seed=19)
    scandir, locked = os.scandir, str(tmp_path / "dogs" / "private")

    def refusing(path="."):
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    paths, _, _ = folders.labelled_files(tmp_path)
    out = capsys.readouterr().out
    assert len(paths) == 4 and "1 skipped" in out
    assert (
        "dogs/private: cannot be read (Permission denied); its pictures are not used"
        in out
    )


def without_root(code, folder):
    """Run `code` (which reads sys.argv[1]) in a Python that cannot pass permissions: as this
    user when it is not root, else as `nobody` (root reads every folder whatever its mode)."""
    if os.geteuid() != 0:
        return subprocess.run(
            [sys.executable, "-c", code, str(folder)],
            capture_output=True,
            text=True,
            timeout=600,
        )
    home = folder.parent / "home"  # for its cache: a fresh check, as the user's first
    home.mkdir(exist_ok=True)
    home.chmod(0o777)
    folder.parent.chmod(0o755)  # the folders below keep the modes the test gives them
    env = dict(
        os.environ, HOME=str(home), MPLCONFIGDIR=str(home), COURSE_CACHE=str(home)
    )
    if not shutil.which("setpriv"):
        pytest.skip(
            "root reads every folder, and there is no setpriv to run as another user"
        )
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    return subprocess.run(
        [*nobody, sys.executable, "-c", code, str(folder)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.processes
def test_folders_without_permission_are_named_by_a_user_who_cannot_read_them():
    """chmod 000 on a class folder, then on a subfolder, read by a user without root's
    override: the class folder is refused by name, the subfolder named and skipped."""
    with tempfile.TemporaryDirectory() as top:
        folder = Path(top) / "pets"
        write_jpeg(folder / "cats" / "a.jpg")
        write_jpeg(folder / "dogs" / "b.jpg", seed=1)
        write_jpeg(folder / "dogs" / "private" / "c.jpg", seed=2)
        read = (
            "import sys\nfrom helpers import folders\ntry:\n    print(len(folders.labelled_files("
            "sys.argv[1])[0]))\nexcept ValueError as e:\n    print('refused:', e)"
        )
        (folder / "dogs").chmod(0)
        refused = without_root(read, folder)
        (folder / "dogs").chmod(0o755)
        (folder / "dogs" / "private").chmod(0)
        skipped = without_root(read, folder)
        (folder / "dogs" / "private").chmod(0o755)
    assert "refused: Class folder" in refused.stdout, refused.stderr[-2000:]
    assert "dogs cannot be read: permission denied" in refused.stdout
    assert (
        "dogs/private: cannot be read (Permission denied); its pictures are not used"
        in (skipped.stdout)
    ), skipped.stderr[-2000:]
    assert skipped.stdout.strip().endswith("2")  # a.jpg and b.jpg, nothing lost unsaid


def test_nested_folders_and_non_ascii_names_are_used(tmp_path):
    write_jpeg(tmp_path / "cats" / "garden" / "chat_été_猫.jpg")
    write_jpeg(tmp_path / "cats" / "a.jpg", seed=1)
    write_jpeg(tmp_path / "dogs" / "Hündchen.jpg", seed=2)
    paths, labels, _ = folders.labelled_files(tmp_path)
    assert sorted(labels) == [0, 0, 1]
    batch = next(iter(data.image_pipeline(paths, labels, 24, batch_size=3)))
    assert batch[0].shape == (3, 24, 24, 3)


def test_a_third_class_folder_is_refused_naming_both_splits(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    root = tutorial_folder(tmp_path / "mine", train=2, test=1)
    write_jpeg(root / "training_set" / "birds" / "robin.jpg")
    # either split: the folder as a whole is wrong
    for split in ("train", "validation"):
        with pytest.raises(ValueError) as error:
            folders.cats_dogs_files(split, root=root)
        message = str(error.value)
        assert "training_set holds birds, cats, dogs" in message
        assert "test_set holds cats, dogs" in message and "move birds/ out" in message
        assert "one of cats and one of dogs" in message


@pytest.mark.parametrize(
    "cats, dogs",
    [
        ("cats", "Dogs"),
        ("Katzen", "Hunde"),
        ("gatti", "cani"),
        ("my cats", "Perros"),
        ("Cat", "dog_photos"),
    ],
)
def test_labels_follow_what_a_folder_name_means_not_how_it_sorts(
    tmp_path, monkeypatch, capsys, cats, dogs
):
    # sorted, Dogs/ Hunde/ cani/ Perros/ come first: they would become label 0 and invert p(dog)
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    for split, name, n in (
        ("train", cats, 3),
        ("train", dogs, 2),
        ("validation", cats, 1),
        ("validation", dogs, 1),
    ):
        for i in range(n):
            write_jpeg(
                tmp_path / split / name / f"{i}.jpg", seed=hash((split, name, i)) % 999
            )
    paths, labels, classes = folders.cats_dogs_files("train", root=tmp_path)
    assert classes == [cats, dogs]
    assert sorted(labels) == [0, 0, 0, 1, 1]
    assert all(Path(p).parent.name == classes[y] for p, y in zip(paths, labels))
    out = capsys.readouterr().out
    assert f"(label 0 = {cats}/ (cat): 3, label 1 = {dogs}/ (dog): 2)" in out


def test_class_folders_whose_names_say_no_animal_are_refused_naming_both(tmp_path):
    for name in ("foo", "bar"):
        write_jpeg(tmp_path / "train" / name / "a.jpg")
    with pytest.raises(
        ValueError, match=r"which the dogs: bar/ and foo/ .*Rename them"
    ):
        folders.cats_dogs_files("train", root=tmp_path)
    # one name says both: it cannot decide either
    for name in ("cats", "cats_and_dogs"):
        write_jpeg(tmp_path / "mixed" / "train" / name / "a.jpg")
    with pytest.raises(ValueError, match=r"cats/ and cats_and_dogs/"):
        folders.cats_dogs_files("train", root=tmp_path / "mixed")


def test_splits_may_name_their_folders_differently(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    root = tutorial_folder(tmp_path / "mine", train=2, test=0)
    # paired by sorted position, labels swap
    for i, name in enumerate(("Hund", "Katze")):
        write_jpeg(root / "test_set" / name / f"{name}.1.jpg", seed=50 + i)
    paths, labels, classes = folders.cats_dogs_files("validation", root=root)
    assert classes == ["Katze", "Hund"]
    assert {Path(p).parent.name: y for p, y in zip(paths, labels)} == {
        "Katze": 0,
        "Hund": 1,
    }


def test_a_general_class_folder_reports_its_classes_and_counts(tmp_path, capsys):
    for name, n in (("apples", 2), ("bananas", 3), ("cherries", 1)):
        for i in range(n):
            write_jpeg(tmp_path / name / f"{i}.jpg", seed=10 * len(name) + i)
    paths, labels, classes = folders.labelled_files(tmp_path)
    assert classes == ["apples", "bananas", "cherries"] and sorted(labels) == [
        0,
        0,
        1,
        1,
        1,
        2,
    ]
    assert (
        "6 images in 3 classes (label 0 = apples/: 2, label 1 = bananas/: 3, "
        "label 2 = cherries/: 1)"
    ) in capsys.readouterr().out
    folders.labelled_files(tmp_path, limit=5)
    # the counts are of the pictures used
    line = capsys.readouterr().out.splitlines()[-1]
    assert (
        "5 images in 3 classes (label 0 = apples/: 2, label 1 = bananas/: 2 of 3, "
        "label 2 = cherries/: 1), limit=5 kept up to an even share per class"
    ) in line


def test_a_validation_picture_that_is_also_a_training_picture_is_left_out(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    root = tutorial_folder(tmp_path / "mine", train=3, test=2)
    copied = root / "test_set" / "cats" / "also_in_training.jpg"
    copied.write_bytes((root / "training_set" / "cats" / "cat.1.jpg").read_bytes())
    paths, labels, _ = folders.cats_dogs_files("validation", root=root)
    out = capsys.readouterr().out
    assert len(paths) == 4 and str(copied) not in paths
    assert (
        "not used: 1 picture also among the training pictures, which would flatter the "
        "accuracy measured here: cats/also_in_training.jpg = "
    ) in out
    assert "cat.1.jpg" in out
    train, _, _ = folders.cats_dogs_files("train", root=root)
    assert len(train) == 6  # the training split keeps its pictures


def test_files_and_folders_outside_the_class_folders_are_named(tmp_path, capsys):
    write_jpeg(tmp_path / "cats" / "a.jpg")
    write_jpeg(tmp_path / "dogs" / "b.jpg", seed=1)
    # next to the class folders, not inside
    write_jpeg(tmp_path / "forgotten.jpg", seed=2)
    (tmp_path / "__MACOSX" / "cats").mkdir(parents=True)  # from a Mac's zip: no class
    (tmp_path / "__MACOSX" / "cats" / "._a.jpg").write_bytes(b"\x00\x05\x16\x07")
    (tmp_path / "cats" / ".ipynb_checkpoints").mkdir()
    write_jpeg(tmp_path / "cats" / ".ipynb_checkpoints" / "a-checkpoint.jpg", seed=3)
    paths, labels, classes = folders.labelled_files(tmp_path)
    out = capsys.readouterr().out
    assert classes == ["cats", "dogs"] and len(paths) == 2
    assert (
        "not used: __MACOSX/, forgotten.jpg (outside the class folders, or hidden)"
        in out
    )
    assert "not used: 1 file in hidden folders (.ipynb_checkpoints/ 1)" in out


def test_kaggles_unsplit_folder_keeps_a_picture_chosen_for_training_out_of_validation(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.setattr(folders, "source", lambda name: ("full", tmp_path))
    same = write_jpeg(tmp_path / "PetImages" / "Cat" / "0.jpg")
    for i in range(1, 5):  # five copies of one cat: a copy is chosen for each split
        (tmp_path / "PetImages" / "Cat" / f"{i}.jpg").write_bytes(same.read_bytes())
        write_jpeg(tmp_path / "PetImages" / "Dog" / f"{i}.jpg", seed=i)
    write_jpeg(tmp_path / "PetImages" / "Dog" / "0.jpg", seed=9)
    with pytest.raises(
        ValueError,
        match=r"No pictures left in .*PetImages/Cat/: its usable "
        r"pictures chosen for validation are all copies",
    ):
        # the cat held out would leave no cat to measure
        folders.cats_dogs_files("validation")
    assert (
        "not used for validation: 1 picture also chosen for training"
        in capsys.readouterr().out
    )
    train, labels, classes = folders.cats_dogs_files("train")
    assert classes == ["Cat", "Dog"] and sorted(labels) == [0] * 4 + [1] * 4


def two_classes(folder, names=("cats", "dogs")):
    for i, name in enumerate(names):
        write_jpeg(folder / name / f"{i}.jpg", seed=i)
    return folder


def test_a_root_that_is_no_folder_says_what_it_is(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    two_classes(tmp_path / "pets")
    # %env leaves ~ as it is
    assert folders.labelled_files("~/pets")[2] == ["cats", "dogs"]
    with pytest.raises(
        FileNotFoundError,
        match=r"petz does not exist\. The nearest folder that "
        r"exists is .*, which holds pets/\. Check the spelling",
    ):
        folders.labelled_files(tmp_path / "petz")
    archive = shutil.make_archive(str(tmp_path / "pictures"), "zip", tmp_path / "pets")
    with pytest.raises(
        NotADirectoryError, match=r"pictures\.zip is an archive.*extract it first"
    ):
        folders.labelled_files(archive)
    with pytest.raises(NotADirectoryError, match="0.jpg is a file, not a folder"):
        folders.labelled_files(tmp_path / "pets" / "cats" / "0.jpg")


def test_a_cat_dog_root_without_its_split_says_what_it_holds(tmp_path):
    two_classes(tmp_path / "PetImages", ("Cat", "Dog"))  # Kaggle's, not split
    with pytest.raises(
        FileNotFoundError, match="without a split.*PetImages.*COURSE_PROFILE=full"
    ):
        folders.cats_dogs_files("train", tmp_path / "PetImages")
    # keras.utils.get_file(extract=True): one level down
    for split in ("train", "validation"):
        two_classes(tmp_path / "download" / "cats_and_dogs_filtered" / split)
    with pytest.raises(
        FileNotFoundError, match=r"one level down: use .*cats_and_dogs_filtered"
    ):
        folders.cats_dogs_files("train", tmp_path / "download")
    paths, _, _ = folders.cats_dogs_files(
        "train", tmp_path / "download" / "cats_and_dogs_filtered"
    )
    assert len(paths) == 2


def test_two_splits_with_the_same_three_classes_are_refused_for_a_one_output_network(
    tmp_path,
):
    root = tutorial_folder(tmp_path / "mine", train=1, test=1)
    for split in ("training_set", "test_set"):
        write_jpeg(root / split / "birds" / "robin.jpg")
    with pytest.raises(ValueError, match="one output.*keep two class folders"):
        folders.cats_dogs_files("train", root=root)


def test_copies_in_one_folder_are_used_and_named_and_a_picture_in_two_classes_is_flagged(
    tmp_path, capsys
):
    a = write_jpeg(tmp_path / "cats" / "a.jpg")
    # a browser's second download
    (tmp_path / "cats" / "a (1).jpg").write_bytes(a.read_bytes())
    b = write_jpeg(tmp_path / "cats" / "b.jpg", seed=1)
    (tmp_path / "dogs" / "b.jpg").parent.mkdir()
    (tmp_path / "dogs" / "b.jpg").write_bytes(b.read_bytes())
    write_jpeg(tmp_path / "dogs" / "d.jpg", seed=2)
    paths, _, _ = folders.labelled_files(tmp_path)
    out = capsys.readouterr().out
    assert len(paths) == 5
    assert (
        "1 picture stored more than once in one class (the same pixels; each copy is used): "
        "cats/a (1).jpg = cats/a.jpg" in out
    )
    assert "1 picture in two classes at once, so one copy has the wrong label" in out
    assert "cats/b.jpg = dogs/b.jpg" in out


# --- issue 66: look-alike names, a class inside another, odd JPEG names, the loaders' errors --


def test_class_folders_equal_but_for_a_trailing_space_or_dot_are_one_class(
    tmp_path, capsys
):
    """As zip tools and macOS leave them: cat/, 'cat /', dog./ and dog/ are two classes."""
    for i, name in enumerate(["cat", "cat ", "dog.", "dog"]):
        write_jpeg(tmp_path / name / f"{i}.jpg", seed=i)
    paths, labels, classes = folders.labelled_files(tmp_path)
    assert classes == ["cat", "dog"]
    label_of = {Path(p).parent.name: y for p, y in zip(paths, labels, strict=True)}
    assert label_of == {"cat": 0, "cat ": 0, "dog": 1, "dog.": 1}
    out = capsys.readouterr().out
    assert "'cat /'" in out and "'dog./'" in out  # each twin named, quoted


def test_the_cat_dog_loader_reads_look_alike_class_folders_as_one_class(
    tmp_path, capsys
):
    root = tutorial_folder(tmp_path / "mine", train=3, test=2)
    write_jpeg(root / "training_set" / "Cats " / "extra.jpg", seed=77)
    paths, labels, classes = folders.cats_dogs_files("train", root=root)
    assert classes == ["cats", "dogs"] and len(paths) == 7
    assert (
        dict(zip(paths, labels))[str(root / "training_set" / "Cats " / "extra.jpg")]
        == 0
    )


def test_a_class_folder_inside_another_is_named_and_not_used(tmp_path, capsys):
    for i in range(2):
        write_jpeg(tmp_path / "cats" / f"c{i}.jpg", seed=i)
        write_jpeg(tmp_path / "dogs" / f"d{i}.jpg", seed=10 + i)
        write_jpeg(tmp_path / "dogs" / "cats" / f"x{i}.jpg", seed=20 + i)
        write_jpeg(tmp_path / "dogs" / "beach" / f"b{i}.jpg", seed=30 + i)
    paths, labels, _ = folders.labelled_files(tmp_path)
    used = {Path(p).relative_to(tmp_path).as_posix(): y for p, y in zip(paths, labels)}
    assert not [p for p in used if p.startswith("dogs/cats/")]  # never labelled dogs
    assert used["dogs/beach/b0.jpg"] == 1  # any other sub-folder is still the class's
    assert len(used) == 6
    out = capsys.readouterr().out
    assert f"{tmp_path / 'dogs' / 'cats'}/ (2 pictures)" in out


def test_the_cat_dog_loader_leaves_out_kittens_dragged_into_dogs(tmp_path, capsys):
    root = tutorial_folder(tmp_path / "mine", train=3, test=2)
    write_jpeg(root / "test_set" / "dogs" / "kittens" / "k.jpg", seed=99)
    paths, labels, _ = folders.cats_dogs_files("validation", root=root)
    assert len(paths) == 4 and not [p for p in paths if "kittens" in p]
    assert str(root / "test_set" / "dogs" / "kittens") in capsys.readouterr().out


def test_jpegs_with_unusual_names_are_used_with_a_note(tmp_path, capsys):
    names = ["a.jpe", "b.pjp", "c.jpg_large", "d.jpg ", "e.", "f"]
    for i, name in enumerate(names):
        write_jpeg(tmp_path / "cats" / name, seed=i)
    write_jpeg(tmp_path / "dogs" / "d.jpg", seed=50)
    (tmp_path / "dogs" / "notes.txt").write_text("not a picture")
    paths, labels, _ = folders.labelled_files(tmp_path)
    assert sorted(Path(p).name for p in paths) == sorted(names + ["d.jpg"])
    out = capsys.readouterr().out
    assert "6 pictures used with a note" in out and "1 .txt" in out


def test_split_folders_are_refused_not_taken_for_classes(tmp_path):
    for split in ("train", "val"):
        for i, name in enumerate(("cats", "dogs")):
            write_jpeg(tmp_path / split / name / "a.jpg", seed=i + 5 * len(split))
    with pytest.raises(ValueError, match="train/, val/") as error:
        folders.labelled_files(tmp_path)
    assert str(tmp_path / "train") in str(error.value)  # the folder to give instead
    assert folders.labelled_files(tmp_path / "train")[2] == ["cats", "dogs"]


def test_classes_named_like_splits_without_class_folders_are_classes(tmp_path):
    """Pictures of trains and of tests: two classes, no split inside."""
    write_jpeg(tmp_path / "train" / "a.jpg")
    write_jpeg(tmp_path / "test" / "b.jpg", seed=1)
    assert folders.labelled_files(tmp_path)[2] == ["test", "train"]


def test_a_zip_in_a_class_folder_says_extract_it(tmp_path):
    write_jpeg(tmp_path / "cats" / "a.jpg")
    (tmp_path / "dogs").mkdir()
    (tmp_path / "dogs" / "dogs.zip").write_bytes(b"PK\x03\x04")
    with pytest.raises(ValueError, match="extract") as error:
        folders.labelled_files(tmp_path)
    assert str(tmp_path / "dogs" / "dogs.zip") in str(error.value)


def test_a_class_folder_without_pictures_says_why(tmp_path):
    write_jpeg(tmp_path / "cats" / "a.jpg")
    (tmp_path / "dogs").mkdir()
    with pytest.raises(ValueError, match="empty") as error:
        folders.labelled_files(tmp_path)
    assert str(tmp_path / "dogs") in str(error.value)


def test_one_folder_too_high_points_one_level_down(tmp_path):
    inner = tmp_path / "my_classes" / "my_classes"
    write_jpeg(inner / "mugs" / "a.jpg")
    write_jpeg(inner / "shoes" / "b.jpg", seed=1)
    with pytest.raises(ValueError, match="one level down") as error:
        folders.labelled_files(tmp_path / "my_classes")
    assert str(error.value).rstrip(".").endswith(str(inner))
    # one class folder that holds no classes: no such pointer
    write_jpeg(tmp_path / "only" / "cats" / "a.jpg")
    with pytest.raises(ValueError) as error:
        folders.labelled_files(tmp_path / "only")
    assert "level down" not in str(error.value)


def test_a_damaged_jpeg_is_named_once_and_not_used(tmp_path, capfd):
    """Data cut short and closed with an end marker: Pillow decodes it, libjpeg warns on
    stderr each time it decodes it; the check names it instead, once, and skips it."""
    write_jpeg(tmp_path / "cats" / "a.jpg", size=(300, 200))
    whole = write_jpeg(tmp_path / "dogs" / "b.jpg", size=(300, 200), seed=1)
    damaged = tmp_path / "dogs" / "damaged.jpg"
    damaged.write_bytes(whole.read_bytes()[:-3000] + b"\xff\xd9")
    paths, _, _ = folders.labelled_files(tmp_path)
    assert str(damaged) not in paths and len(paths) == 2
    out, err = capfd.readouterr()
    assert f"Skipped {damaged}" in out and "Corrupt JPEG" not in err


def test_split_folders_beside_an_unlabelled_test_folder_are_refused(tmp_path):
    """The usual layout: train/ and val/ with class folders, test/ with pictures only."""
    for split in ("train", "val"):
        for i, name in enumerate(("cats", "dogs")):
            write_jpeg(tmp_path / split / name / "a.jpg", seed=i + 5 * len(split))
    write_jpeg(tmp_path / "test" / "x.jpg", seed=99)
    with pytest.raises(ValueError, match="train/, val/") as error:
        folders.labelled_files(tmp_path)
    assert f"e.g. {tmp_path / 'train'}" in str(error.value)  # the training split


def test_a_general_class_may_hold_folders_named_for_an_animal(tmp_path):
    """Only the cat/dog loaders read animal words: pet_food/cat food/ stays pet food."""
    for i, name in enumerate(("cats", "dogs")):
        write_jpeg(tmp_path / name / "a.jpg", seed=i)
    write_jpeg(tmp_path / "pet_food" / "cat food" / "b.jpg", seed=7)
    write_jpeg(tmp_path / "pet_food" / "kittens" / "c.jpg", seed=8)
    paths, labels, classes = folders.labelled_files(tmp_path)
    assert classes == ["cats", "dogs", "pet_food"] and labels.count(2) == 2


def test_a_class_whose_pictures_all_lie_in_a_misplaced_twin_names_that_folder(tmp_path):
    (tmp_path / "Dogs").mkdir()
    write_jpeg(tmp_path / "dogs" / "cats" / "b.jpg")
    write_jpeg(tmp_path / "cats" / "c.jpg", seed=1)
    with pytest.raises(ValueError) as error:
        folders.labelled_files(tmp_path)
    assert str(tmp_path / "dogs" / "cats") in str(error.value)


def test_a_fifo_in_a_class_folder_is_named_not_read(tmp_path, capsys):
    for i, name in enumerate(("cats", "dogs")):
        write_jpeg(tmp_path / name / "a.jpg", seed=i)
    os.mkfifo(tmp_path / "dogs" / "pipe")
    assert len(folders.labelled_files(tmp_path)[0]) == 2
    assert "1 no suffix" in capsys.readouterr().out


@pytest.mark.parametrize(
    "splits",
    [("seg_train", "seg_test"), ("Training Data", "Testing Data"), ("train", "dev")],
)
def test_split_folders_of_any_common_name_are_refused(tmp_path, splits):
    for split in splits:
        for i, name in enumerate(("cats", "dogs")):
            write_jpeg(tmp_path / split / name / "a.jpg", seed=i + 7 * len(split))
    with pytest.raises(ValueError, match="split"):
        folders.labelled_files(tmp_path)


def test_a_training_split_beside_an_empty_validation_folder_is_refused(tmp_path):
    for i, name in enumerate(("cats", "dogs")):
        write_jpeg(tmp_path / "train" / name / "a.jpg", seed=i)
    (tmp_path / "validation").mkdir()
    with pytest.raises(ValueError, match="split"):
        folders.labelled_files(tmp_path)


def test_a_class_named_trains_may_hold_sub_folders(tmp_path):
    write_jpeg(tmp_path / "trains" / "steam" / "a.jpg")
    write_jpeg(tmp_path / "trains" / "electric" / "b.jpg", seed=1)
    write_jpeg(tmp_path / "boats" / "c.jpg", seed=2)
    assert folders.labelled_files(tmp_path)[2] == ["boats", "trains"]


@pytest.mark.parametrize("inner", ["cats (2)", "cats - Copy", "cat", "Cats_old"])
def test_a_copy_or_singular_of_a_class_inside_another_is_left_out(tmp_path, inner):
    for i, name in enumerate(("cats", "dogs")):
        write_jpeg(tmp_path / name / "a.jpg", seed=i)
    write_jpeg(tmp_path / "dogs" / inner / "x.jpg", seed=9)
    paths, _, _ = folders.labelled_files(tmp_path)
    assert len(paths) == 2 and not [p for p in paths if f"/dogs/{inner}/" in p]


def test_the_cat_dog_loader_leaves_out_any_folder_named_for_cats_in_dogs(tmp_path):
    root = tutorial_folder(tmp_path / "mine", train=3, test=2)
    write_jpeg(root / "test_set" / "dogs" / "my cats" / "k.jpg", seed=99)
    paths, _, _ = folders.cats_dogs_files("validation", root=root)
    assert len(paths) == 4 and not [p for p in paths if "my cats" in p]


def test_a_jpeg_with_much_undecodable_data_is_not_used(tmp_path, capsys):
    write_jpeg(tmp_path / "cats" / "a.jpg", size=(300, 200))
    whole = write_jpeg(tmp_path / "dogs" / "b.jpg", size=(300, 200), seed=1)
    data = bytearray(whole.read_bytes())
    noise = np.random.default_rng(0).integers(0, 255, 1498, dtype="uint8")
    data[-1500:-2] = noise.tobytes()
    garbled = tmp_path / "dogs" / "garbled.jpg"
    garbled.write_bytes(bytes(data))
    paths, _, _ = folders.labelled_files(tmp_path)
    assert str(garbled) not in paths and f"Skipped {garbled}" in capsys.readouterr().out


def test_webp_data_under_another_name_is_used(tmp_path):
    write_jpeg(tmp_path / "cats" / "a.jpg")
    Image.fromarray(np.full((20, 20, 3), 90, "uint8")).save(
        tmp_path / "dogs" / "w.jpe" if (tmp_path / "dogs").mkdir() is None else "",
        "WEBP",
    )
    assert len(folders.labelled_files(tmp_path)[0]) == 2


def test_one_level_down_names_the_folders_it_would_take_for_classes(tmp_path):
    write_jpeg(tmp_path / "cats" / "2019" / "a.jpg")
    write_jpeg(tmp_path / "cats" / "2020" / "b.jpg", seed=1)
    with pytest.raises(ValueError, match="If 2019/, 2020/ are your classes"):
        folders.labelled_files(tmp_path)
