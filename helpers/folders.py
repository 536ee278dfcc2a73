"""Folders of pictures: class folders read into paths and labels (one sub-folder per class,
duplicates and clashes reported, a seeded shuffle), the cat/dog splits in the tutorial's, the
course sample's and Kaggle's layouts, and a path as the course prints it (notebooks 04, 12)."""

import os
import random
import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from . import config, decoding
from .config import source
from .images import (
    ARCHIVE_SUFFIXES,
    check_images,
    is_hidden,
    plural,
    printable,
    unused_line,
)

__all__ = [
    "cats_dogs_files",
    "data_folder",
    "labelled_files",
    "picture_digests",
    "shown",
]

# Split folder names of a cat/dog folder: the tutorial's, or the course sample's.
CATS_DOGS_SPLITS = {
    "train": ("training_set", "train"),
    "validation": ("test_set", "validation"),
}
# The tutorial's sizes per class: 4,000 training and 1,000 validation pictures (`full`).
TUTORIAL_PER_CLASS = {"train": 4000, "validation": 1000}
# Words in a class folder's name that say which animal it holds (any case), in English, German,
# French, Italian, Spanish, Portuguese, Dutch, the Scandinavian languages, Polish, Czech, Turkish,
# Finnish and Hungarian: label 0 is the cats' folder, label 1 the dogs' (p(dog), notebook 04).
ANIMAL_WORDS = {
    "cat": {
        "cat",
        "cats",
        "kitten",
        "kittens",
        "katze",
        "katzen",
        "kater",
        "chat",
        "chats",
        "gatto",
        "gatti",
        "gato",
        "gatos",
        "kat",
        "katten",
        "katt",
        "katter",
        "katte",
        "kot",
        "koty",
        "kočka",
        "kočky",
        "kedi",
        "kediler",
        "kissa",
        "kissat",
        "macska",
        "macskák",
    },
    "dog": {
        "dog",
        "dogs",
        "puppy",
        "puppies",
        "hund",
        "hunde",
        "hunder",
        "chien",
        "chiens",
        "cane",
        "cani",
        "perro",
        "perros",
        "cão",
        "cães",
        "cachorro",
        "cachorros",
        "hond",
        "honden",
        "pies",
        "psy",
        "pes",
        "psi",
        "köpek",
        "köpekler",
        "koira",
        "koirat",
        "kutya",
        "kutyák",
    },
}


# A word of a folder's name that says it holds a split, not a class (train/, seg_test/,
# "Training Data/", val_set/, dev/); such a folder holding class folders is refused as a class.
SPLIT_WORDS = {
    "train",
    "training",
    "test",
    "testing",
    "val",
    "valid",
    "validation",
    "dev",
    "eval",
    "evaluation",
}


def _class_names(folder):
    """The sub-folders of `folder`, sorted; none where it cannot be listed (the permission
    check that follows names it)."""
    try:
        entries = list(Path(folder).iterdir())
    except OSError:
        return []
    return sorted(p.name for p in entries if p.is_dir() and not is_hidden(p.name))


def _split_like(name):
    words = re.findall(r"[^\W\d_]+", name.casefold())
    return bool(SPLIT_WORDS & set(words))


def _twin_key(name):
    """What two folder names share when they differ only in case, in how an accent is stored
    or in trailing spaces and dots (as zip tools and macOS leave them): `cat`, `Cat /`, `cat.`."""
    return unicodedata.normalize("NFC", name).casefold().rstrip(" .")


def _twins(names):
    """{twin key: [names]} of folder names, in their order."""
    groups = {}
    for name in names:
        groups.setdefault(_twin_key(name), []).append(name)
    return groups


def _twin_name(names):
    """The class name of twin folders: the first whose name ends in no space or dot."""
    return next((n for n in names if n == n.rstrip(" .")), names[0])


def shown(path):
    """A path relative to the course folder when inside it, printable (notebook 04)."""
    # the folder resolved, not the file: a link loop must not stop a report
    path = Path(path)
    try:
        path = (Path(os.path.realpath(path.parent)) / path.name).relative_to(
            config.ROOT
        )
    except ValueError:
        pass
    return printable(path.as_posix())


def _examples(groups, root, most=3):
    """Up to `most` groups of paths as 'a = b; c = d', relative to `root`."""
    text = "; ".join(
        " = ".join(printable(Path(p).relative_to(root)) for p in group)
        for group in groups[:most]
    )
    return text + ("; ..." if len(groups) > most else "")


def _checked(root, classes=None, animals=False):
    """(classes, their ImageReports, the Misplaced folders left out of them) of the class
    folders of `root`, in label order (sorted names unless `classes` is given); an error
    without two. `animals`: a folder named for another class's animal is misplaced too."""
    root = Path(root)
    classes = classes or _refuse_splits(root, _class_names(root))
    if len(classes) < 2:
        inner = root / classes[0] if classes else None
        lower = (
            f" If {', '.join(f'{c}/' for c in _class_names(inner)[:4])} are your classes, "
            f"they are one level down: use {shown(inner)}."
            if inner and len(_class_names(inner)) >= 2
            else ""
        )
        raise ValueError(
            f"{shown(root)} needs one sub-folder per class (e.g. cats/, dogs/); "
            f"found {classes or 'none'}.{lower}"
        )
    for name in classes:
        folder = Path(root) / name
        if folder.is_dir() and not os.access(folder, os.R_OK | os.X_OK):
            raise ValueError(
                f"Class folder {shown(folder)} cannot be read: permission denied. "
                f"Give yourself access (chmod u+rx '{shown(folder)}') or move it "
                "out of the data folder."
            )
    reports = [check_images(root / name, root) for name in classes]
    return classes, reports, _drop_misplaced(root, classes, reports, animals)


def _refuse_splits(root, names):
    """`names`, unless one of them is a split folder (train/, seg_test/, "Training Data/")
    holding class folders of its own: a loader would take it for one class and label all
    its pictures by its name, so it refuses."""
    splits = [n for n in names if _split_like(n) and len(_class_names(root / n)) >= 2]
    if not splits:
        return names
    inner = sorted({c for n in splits for c in _class_names(root / n)})
    train = next((n for n in splits if n.casefold().startswith("train")), splits[0])
    more = ", ..." if len(inner) > 4 else ""
    raise ValueError(
        f"{shown(root)} holds {', '.join(f'{n}/' for n in splits)}: a split, with class "
        f"folders of its own ({', '.join(f'{c}/' for c in inner[:4])}{more}), not a class. "
        f"This loader reads one folder of class folders and makes its own split: give it "
        f"one split (e.g. {shown(root / train)}), or move each class's pictures from every "
        "split into one folder per class."
    )


@dataclass
class Misplaced:
    """A folder inside class folder `outer`, named like the class folder `like`."""

    folder: Path
    outer: str
    like: str
    pictures: int = 0


def _stem(name):
    """A folder name without what copies and plurals add: 'Cats (2)', 'cats - Copy',
    'cats_old' and 'cat' all give 'cat'."""
    key = re.sub(r"[\s_-]*(\(\d+\)|copy( \d+)?|old|new|\d+)$", "", _twin_key(name))
    return key.removesuffix("s") or key


def _looks_like(name, other, animals=False):
    """Whether folder `name` is named like the class folder `other`: the same name but for
    case, accents, trailing spaces or dots, a copy's suffix or a plural; with `animals` (the
    cat/dog loaders), also a name with a word for the same animal (my kittens/ and cats/)."""
    if _stem(name) == _stem(other):
        return True
    return bool(animals and _animal(name) and _animal(name) == _animal(other))


def _drop_misplaced(root, classes, reports, animals=False):
    """Take out of `reports` the pictures inside a folder named like another class (cats/
    dragged into dogs/): they would be used under the outer folder's label. Returns a
    Misplaced for each such folder."""
    misplaced = {}
    for name, report in zip(classes, reports):
        others = [c for c in classes if not _looks_like(name, c, animals)]
        like_of = {}  # each folder name once, not each picture's
        dropped = set()
        for path in report.good:
            parts = path.relative_to(root / name).parts[:-1]
            for depth, part in enumerate(parts):
                if part not in like_of:
                    like_of[part] = next(
                        (c for c in others if _looks_like(part, c, animals)), None
                    )
                like = like_of[part]
                if like is not None:
                    inner = root / name / Path(*parts[: depth + 1])
                    misplaced.setdefault(
                        inner, Misplaced(inner, name, like)
                    ).pictures += 1
                    dropped.add(path)
                    break
        if dropped:
            report.good[:] = [p for p in report.good if p not in dropped]
            report.notes[:] = [(p, n) for p, n in report.notes if p not in dropped]
            for path in dropped:
                report.digests.pop(path, None)
    return list(misplaced.values())


def _one_class_per_name(root, folders):
    """(class names, {folder: label}): folders whose names differ only in case, in how an
    accent is stored or in trailing spaces and dots (Horse/, horse/, 'horse /') are one class,
    named by the first whose name ends in no space or dot; says so."""
    same = _twins(folders)
    for names in same.values():
        if len(names) > 1:
            print(
                f"{shown(root)}: {' and '.join(repr(printable(n) + '/') for n in names)} differ "
                "only in case, in how an accent is stored or in trailing spaces and dots: read as "
                "one class, "
                f"'{printable(_twin_name(names))}'. To keep them apart, rename them."
            )
    if len(same) < 2:
        raise ValueError(
            f"{shown(root)} needs one sub-folder per class (e.g. cats/, dogs/); found "
            f"{' and '.join(repr(printable(n) + '/') for n in folders)}, which are one class."
        )
    label_of = {
        name: label for label, names in enumerate(same.values()) for name in names
    }
    return [_twin_name(names) for names in same.values()], label_of


def _read_classes(root, classes=None, animals=False):
    """(paths, labels, classes, digests, what the check did) of the usable pictures in class
    folders; prints every file and folder not used, and why."""
    folders, reports, misplaced = _checked(root, classes, animals)
    classes, label_of = _one_class_per_name(root, folders)
    for m in misplaced:
        like = printable(classes[label_of[m.like]])
        print(
            f"Not used: {shown(m.folder)}/ ({plural(m.pictures, 'picture')}), a folder named "
            f"like the class {like}/ inside the class folder {printable(m.outer)}/: its "
            f"pictures would be labelled {printable(classes[label_of[m.outer]])}. Move them "
            f"into {like}/ (or rename the folder if they belong where they are)."
        )
    paths, labels, digests = [], [], {}
    for name, report in zip(folders, reports):
        label = label_of[name]
        for path, why in report.bad:
            print(f"Skipped {shown(path)}: {why}")
        if report.unused or report.hidden:
            print(f"{shown(root / name)}: {unused_line(report.unused, report.hidden)}")
        large = [
            (path, re.search(r"(\d+x\d+) pixels.*(1/\d+) scale", note).groups())
            for path, note in report.notes
            if "above the limit" in note
        ]
        if large:
            print(
                f"{shown(root / name)}: {plural(len(large), 'picture')} above the limit of "
                f"{decoding.MAX_PIXELS:,} pixels, decoded at a reduced scale to stay under it: "
                + ", ".join(
                    f"{printable(p.name)} ({size} at {scale})"
                    for p, (size, scale) in large[:3]
                )
                + ", ..." * (len(large) > 3)
            )
        other = [(p, n) for p, n in report.notes if "above the limit" not in n]
        if other:  # every note the check made on a kept picture, said where it is kept
            print(
                f"{shown(root / name)}: {plural(len(other), 'picture')} used with a note: "
                + "; ".join(f"{printable(p.name)} ({n})" for p, n in other[:3])
                + "; ..." * (len(other) > 3)
            )
        paths += [str(p) for p in report.good]
        labels += [label] * len(report.good)
        digests.update({str(p): d for p, d in report.digests.items()})
    for label, name in enumerate(classes):
        if label not in labels:
            mine = [r for f, r in zip(folders, reports) if label_of[f] == label]
            raise ValueError(
                f"Class folder {shown(root / name)} has no usable images: "
                f"{_why_empty(mine, [m for m in misplaced if label_of[m.outer] == label])}."
            )
    outside = sorted(
        p.name + "/" * p.is_dir() for p in root.iterdir() if p.name not in folders
    )
    if outside:
        print(
            f"{shown(root)}: not used: {', '.join(outside[:5])}{', ...' * (len(outside) > 5)} "
            "(outside the class folders, or hidden); a picture is read only inside its "
            "class folder"
        )
    skipped, decoded = sum(len(r.bad) for r in reports), sum(r.decoded for r in reports)
    checked = len(paths) + skipped + sum(m.pictures for m in misplaced)
    stats = (
        f"{skipped} skipped; checked {checked} files in {sum(r.seconds for r in reports):.1f}"
        f" s ({decoded} decoded, {checked - decoded} unchanged since their last check)"
    )
    return paths, labels, classes, digests, stats


def _why_empty(reports, misplaced):
    """Why class folders with these reports gave no picture, and what to do."""
    unused = [p for r in reports for p in r.unused]
    archives = [p for p in unused if p.suffix.lower() in ARCHIVE_SUFFIXES]
    if archives:
        a = archives[0]
        return (
            f"it holds {plural(len(archives), 'archive')} ({printable(a.name)}"
            f"{', ...' * (len(archives) > 1)}): extract {'them' if len(archives) > 1 else 'it'} "
            f'into the class folder (for a .zip: python -m zipfile -e "{printable(a.resolve())}" '
            f'"{printable(a.parent.resolve())}"), move the archive out, then run this again'
        )
    if misplaced:
        where = ", ".join(f"{shown(m.folder)}/" for m in misplaced)
        return f"its pictures are all in {where}, named like another class (the line above)"
    if any(r.bad for r in reports):
        return "every picture file in it was skipped (the lines above say why)"
    if unused or any(r.hidden for r in reports):
        hidden = [h for r in reports for h in r.hidden]
        return f"it holds no picture files ({unused_line(unused, hidden)})"
    return "it is empty; put the class's pictures into it"


def _name_duplicates(root, paths, labels, digests):
    """Print the pictures stored more than once (equal pixels, whatever the bytes): copies in
    one class are all used; a picture in two classes has one wrong label."""
    same = defaultdict(list)
    for path, label in zip(paths, labels):
        same[digests[path]].append((path, label))
    groups = [group for group in same.values() if len(group) > 1]
    clashing = [[p for p, _ in g] for g in groups if len({y for _, y in g}) > 1]
    copies = [[p for p, _ in g] for g in groups if len({y for _, y in g}) == 1]
    if copies:
        print(
            f"{shown(root)}: {plural(len(copies), 'picture')} stored more than once in one "
            f"class (the same pixels; each copy is used): {_examples(copies, root)}"
        )
    if clashing:
        print(
            f"{shown(root)}: {plural(len(clashing), 'picture')} in two classes at once, so "
            f"one copy has the wrong label (both are used; delete the wrong one): "
            f"{_examples(clashing, root)}"
        )


def _balanced(order, labels, limit):
    """The first pictures of `order`, at most `limit` in all, as evenly spread over the classes
    as their sizes allow (a small class gives its share to the others)."""
    mine = defaultdict(list)
    for i in order:
        mine[labels[i]].append(i)
    take, left = {}, limit
    for n, label in enumerate(sorted(mine, key=lambda y: len(mine[y]))):
        take[label] = min(len(mine[label]), left // (len(mine) - n))
        left -= take[label]
    kept = {i for label, ids in mine.items() for i in ids[: take[label]]}
    return [i for i in order if i in kept]


def _count_line(root, classes, labels, order, meanings, stats, limit=None, before=None):
    """'<root>: N images in K classes (label 0 = cats/ (cat): 50 of 700, ...), <stats>'."""
    counts, had = (
        Counter(labels[i] for i in order),
        Counter(labels[i] for i in before or order),
    )
    per_class = ", ".join(
        f"label {y} = {name}/{f' ({meanings[y]})' if meanings else ''}: {counts[y]}"
        + (f" of {had[y]}" if counts[y] < had[y] else "")
        for y, name in enumerate(classes)
    )
    kept = (
        f"limit={limit} kept up to an even share per class; " if before != order else ""
    )
    return (
        f"{shown(root)}: {len(order)} images in {len(classes)} classes ({per_class}), "
        f"{kept}{stats}"
    )


def labelled_files(
    root, limit=None, seed=config.SEED, training=None, classes=None, meanings=None
):
    """(paths, labels, class_names) of the usable images in class folders, shuffled by `seed`,
    at most `limit` (an even share per class where the folders allow); prints the label of each
    class folder, the counts and every file not used (notebook 04). `classes`: the folder names in
    label order (default: sorted), `meanings` beside them. `training`: {digest: path} of training
    pictures, left out here (they would flatter the accuracy)."""
    root = data_folder(root)
    # the cat/dog loaders name the animals: a kittens/ folder in dogs/ is misplaced too
    paths, labels, classes, digests, stats = _read_classes(
        root, classes, bool(meanings)
    )
    _name_duplicates(root, paths, labels, digests)
    both = [p for p in paths if digests[p] in (training or {})]
    if both:
        print(
            f"{shown(root)}: not used: {plural(len(both), 'picture')} also among the "
            "training pictures, which would flatter the accuracy measured here: "
            + "; ".join(
                f"{printable(Path(p).relative_to(root))} = "
                f"{shown(training[digests[p]])}"
                for p in both[:3]
            )
            + "; ..." * (len(both) > 3)
        )
    dropped = set(both)
    order = [i for i, p in enumerate(paths) if p not in dropped]
    _none_left(
        root, classes, labels, order, "are all copies of training pictures, left out"
    )
    random.Random(seed).shuffle(order)
    every, order = order, _balanced(order, labels, limit) if limit else order
    _none_left(
        root,
        classes,
        labels,
        order,
        f"were all left out by limit={limit}, fewer than "
        "the classes: give limit= at least one picture per class",
    )
    print(_count_line(root, classes, labels, order, meanings, stats, limit, every))
    return [paths[i] for i in order], [labels[i] for i in order], classes


def _none_left(root, classes, labels, order, why):
    """Refuse, naming the class folders, when a removal left a class without pictures."""
    empty = sorted(set(range(len(classes))) - {labels[i] for i in order})
    if empty:
        names = ", ".join(f"{shown(root / classes[y])}/" for y in empty)
        raise ValueError(
            f"No pictures left in {names}: its usable pictures {why}. A network "
            "cannot learn a class it never sees, nor be measured on one."
        )


def picture_digests(root):
    """{path: digest of what the picture shows (size, pixels, orientation)} of every usable
    picture in the class folders of `root`, from the check's cache (notebook 12): two files
    with one digest are copies of one picture, whatever their bytes."""
    return _digests(data_folder(root))


def _digests(root, classes=None, animals=False):
    """{path: digest} of the usable pictures of class folders (cached checks; says if it
    checked files now)."""
    _, reports, _ = _checked(root, classes, animals)
    decoded = sum(r.decoded for r in reports)
    if decoded:
        print(
            f"{shown(root)}: checked {decoded} files in {sum(r.seconds for r in reports):.1f} s "
            "to find copies of them among the validation pictures"
        )
    return {str(p): d for r in reports for p, d in r.digests.items()}


def data_folder(root):
    """`root` as a folder to read pictures from, `~` expanded; a clear error when it is none: a
    path that does not exist (with the nearest folder that does), a .zip not yet extracted, a
    file."""
    root = Path(os.path.expanduser(os.fspath(root)))
    if root.is_dir():
        return root
    if root.is_file():
        if root.suffix.lower() in ARCHIVE_SUFFIXES:
            raise NotADirectoryError(
                f"{shown(root)} is an archive, not a folder: extract it first (python -m "
                f"zipfile -e '{shown(root)}' '{shown(root.with_suffix(''))}' for a .zip), then "
                "give the extracted folder."
            )
        raise NotADirectoryError(f"{shown(root)} is a file, not a folder of pictures.")
    parent = next((p for p in root.parents if p.is_dir()), None)
    near = ""
    if parent is not None:
        names = sorted(
            p.name for p in parent.iterdir() if p.is_dir() and not is_hidden(p.name)
        )
        near = (
            f" The nearest folder that exists is {shown(parent)}"
            + (
                f", which holds {', '.join(n + '/' for n in names[:8])}"
                if names
                else ""
            )
            + "."
        )
    raise FileNotFoundError(f"{shown(root)} does not exist.{near} Check the spelling.")


def _split_folder(root, split):
    """The folder of one split in a cat/dog folder: training_set/test_set or train/validation."""
    root = data_folder(root)
    for name in CATS_DOGS_SPLITS[split]:
        if (root / name).is_dir():
            return root / name
    names = " or ".join(f"{name}/" for name in CATS_DOGS_SPLITS[split])
    classes = [n.casefold() for n in _class_names(root)]
    if {"cat", "dog"} <= set(classes) or {"cats", "dogs"} <= set(classes):
        hint = (
            " It holds the classes themselves, without a split (as Kaggle's PetImages/ "
            "does): use COURSE_PROFILE=full, whose reader splits PetImages/ as the tutorial "
            "did, or make the tutorial's split (README: 'Your own copy of the tutorial's "
            "cat/dog photos')."
        )
    else:
        below = [
            p
            for p in sorted(root.iterdir())
            if p.is_dir() and any((p / n).is_dir() for n in CATS_DOGS_SPLITS[split])
        ]
        hint = f" The split is one level down: use {shown(below[0])}." if below else ""
    raise FileNotFoundError(
        f"{shown(root)} has no {names} folder for the {split} pictures.{hint} A cat/dog folder "
        "holds training_set/ and test_set/ (the tutorial's layout) or train/ and validation/, "
        "each with one sub-folder per class (cats/, dogs/)."
    )


def _animal(name):
    """'cat' or 'dog' when a folder's name says so in one of ANIMAL_WORDS' languages, else None."""
    words = set(re.findall(r"[^\W\d_]+", unicodedata.normalize("NFC", name).casefold()))
    found = [animal for animal, known in ANIMAL_WORDS.items() if words & known]
    return found[0] if len(found) == 1 else None


def _cats_then_dogs(folders):
    """The two class folders of each split, the cats' first (label 0) and the dogs' (label 1),
    decided from their names; refuses, naming every folder, where it cannot tell. A cat/dog
    network has one output, p(dog), so the order is part of its meaning."""
    found = {folder: _class_names(folder) for folder in folders}
    groups = {folder: _twins(names) for folder, names in found.items()}
    sides = "; ".join(
        f"{shown(folder)} holds {', '.join(n) or 'no class folders'}"
        for folder, n in found.items()
    )
    if not all(len(g) == 2 for g in groups.values()):
        keys = [set(g) for g in groups.values()]
        only = sorted(
            {
                n
                for g in groups.values()
                for k in set().union(*keys) - set.intersection(*keys)
                for n in g.get(k, [])
            }
        )
        advice = (
            f"move {', '.join(f'{n}/' for n in only)} out"
            if only
            else "keep two class folders, move the others out"
        )
        raise ValueError(
            f"A cat/dog network has one output (p(dog)), so it needs two class "
            f"folders in every split, one of cats and one of dogs: {sides}. "
            f"To fix it, {advice}."
        )
    order = {}
    for folder, twins in groups.items():
        pair = [names[0] for names in twins.values()]
        animals = {_animal(name): names for name, names in zip(pair, twins.values())}
        if set(animals) != {"cat", "dog"}:
            raise ValueError(
                f"Cannot tell which class folder of {shown(folder)} holds the cats and which the "
                f"dogs: {pair[0]}/ and {pair[1]}/ (label 0 must be the cats, 1 the dogs, as "
                "p(dog) means). Rename them so that their names say it, e.g. cats/ and dogs/ "
                "(Katzen/Hunde, chats/chiens, gatti/cani and gatos/perros work too)."
            )
        order[folder] = animals["cat"] + animals["dog"]  # twins each: one class
    return order


def cats_dogs_files(split, root=None, limit=None, seed=config.SEED):
    """(paths, labels, classes) of one cat/dog split from `root`, COURSE_CATS_DOGS, the Kaggle
    set (`full`) or the sample, at most `limit` after a seeded shuffle (notebooks 04, 07);
    label 0 is the folder whose name says cats, 1 the dogs'."""
    root = root or os.environ.get("COURSE_CATS_DOGS")
    if not root:
        kind, folder = source("cats_dogs")
        if kind != "sample":
            return _kaggle_files(split, folder / "PetImages", limit, seed)
    folders = {}
    for (
        name
    ) in CATS_DOGS_SPLITS:  # a split missing is an error only when it is asked for
        try:
            folders[name] = _split_folder(root, name) if root else folder / name
        except FileNotFoundError:
            if name == split:
                raise
    order = _cats_then_dogs(folders.values())
    training = None
    if split == "validation" and "train" in folders:
        training = {
            d: p
            for p, d in _digests(
                folders["train"], order[folders["train"]], True
            ).items()
        }
    return labelled_files(
        folders[split],
        limit,
        seed,
        training=training,
        classes=order[folders[split]],
        meanings=("cat", "dog"),
    )


def _kaggle_files(split, folder, limit, seed):
    """Kaggle's PetImages has no split: per class the tutorial's 4,000 / 1,000 (fixed by
    seed), or 80 / 20 % of a class that has fewer than 5,000 usable pictures."""
    class_folders = _cats_then_dogs([folder])[folder]
    paths, labels, classes = labelled_files(
        folder, seed=seed, classes=class_folders, meanings=("cat", "dog")
    )
    chosen = {"train": [], "validation": []}
    for label in range(len(classes)):
        mine = [i for i, y in enumerate(labels) if y == label]
        n_val = min(TUTORIAL_PER_CLASS["validation"], round(len(mine) * 0.2))
        chosen["validation"] += mine[:n_val]
        chosen["train"] += mine[n_val : n_val + TUTORIAL_PER_CLASS["train"]]
    # the same picture twice in PetImages: keep it out of validation
    if split == "validation":
        digests = _digests(folder, class_folders, animals=True)
        trained = {digests[paths[i]] for i in chosen["train"]}
        kept = [i for i in chosen["validation"] if digests[paths[i]] not in trained]
        if len(kept) < len(chosen["validation"]):
            print(
                f"{shown(folder)}: not used for validation: "
                f"{plural(len(chosen['validation']) - len(kept), 'picture')} also chosen for "
                "training, which would flatter the accuracy measured here"
            )
        chosen["validation"] = kept
        _none_left(
            folder,
            classes,
            labels,
            kept,
            "chosen for validation are all copies of pictures chosen for training",
        )
    picked = sorted(chosen[split])
    picked = _balanced(picked, labels, limit) if limit else picked
    return [paths[i] for i in picked], [labels[i] for i in picked], classes
