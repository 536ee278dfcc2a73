"""The course's profile, folders, seeds and per-notebook sizes (notebook 00), and where its data
comes from: the embedded sample in data/, or, in the `full` profile, the public sets downloaded
once into the cache (checksums pinned), the sample when offline.

COURSE_PROFILE is `smoke` (CI: a few batches), `sample` (default: the embedded sample) or
`full` (the public datasets, the sources' epochs); notebooks read sizes from `settings(name)`.
Importing it imports no TensorFlow."""

import functools
import hashlib
import os
import shutil
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

__all__ = [
    "BUILD_DIR",
    "CACHE_DIR",
    "DATASETS",
    "DATA_DIR",
    "PROFILES",
    "RESULTS_DIR",
    "ROOT",
    "Remote",
    "SEED",
    "SETTINGS",
    "build_problem",
    "download",
    "pretrained_weights",
    "profile",
    "safe_extract",
    "sample_path",
    "set_seed",
    "settings",
    "sha256",
    "source",
]

PROFILES = ("smoke", "sample", "full")


def profile():
    """The active profile, from COURSE_PROFILE (default `sample`) (notebook 00)."""
    name = os.environ.get("COURSE_PROFILE", "sample").strip().lower()
    if name not in PROFILES:
        raise ValueError(
            f"COURSE_PROFILE={name!r} is not a profile; use one of "
            f"{', '.join(PROFILES)}."
        )
    return name


def _find_root():
    """COURSE_ROOT, else the folder above this package."""
    if os.environ.get("COURSE_ROOT"):
        return Path(os.environ["COURSE_ROOT"]).resolve()
    here = Path(__file__).resolve().parent.parent
    for candidate in (here, Path.cwd(), *Path.cwd().parents):
        if (candidate / "data" / "README.md").exists() and (
            candidate / "notebooks"
        ).is_dir():
            return candidate
    return here


ROOT = _find_root()
DATA_DIR = ROOT / "data"
RESULTS_DIR = ROOT / "results"
# Everything the course writes while it runs; COURSE_BUILD moves it (a read-only course folder)
BUILD_DIR = Path(os.environ.get("COURSE_BUILD") or ROOT / "build")
CACHE_DIR = Path(os.environ.get("COURSE_CACHE", Path.home() / ".cache" / "dl-course"))
SEED = 42

# What each notebook trains on, per profile. One table, so the profiles stay comparable.
# Keys: train/val = examples per split (None = all there are), epochs, batch.
SETTINGS = {
    "mnist": {
        "smoke": dict(train=256, val=256, epochs=1, batch=64),
        "sample": dict(train=8000, val=2000, epochs=5, batch=64),
        "full": dict(train=None, val=None, epochs=10, batch=64),
    },
    # notebook 02: next-word LSTM on Tiny Shakespeare (train/val = 20-word windows)
    "text_lstm": {
        "smoke": dict(train=1024, val=256, epochs=1, batch=128),
        "sample": dict(train=70_000, val=20_000, epochs=2, batch=128),
        "full": dict(train=None, val=None, epochs=10, batch=128),
    },
    # notebook 02: IMDB sentiment (train_batches/test_batches: -1 = all there are)
    "imdb": {
        "smoke": dict(train_batches=4, test_batches=4, epochs=1, batch=32),
        "sample": dict(train_batches=-1, test_batches=-1, epochs=5, batch=32),
        "full": dict(train_batches=-1, test_batches=-1, epochs=5, batch=32),
    },
    # notebook 03: ImageNet base + new head on cats/dogs and CIFAR-10 (full: the primer's VGG16)
    "transfer": {
        "smoke": dict(
            base="mobilenet_0.25",
            image_size=160,
            train=64,
            val=64,
            batch=32,
            head_epochs=1,
            finetune_epochs=1,
            scratch_epochs=1,
            cifar_size=96,
            cifar_train=64,
            cifar_val=64,
        ),
        "sample": dict(
            base="mobilenet_0.25",
            image_size=160,
            train=None,
            val=None,
            batch=32,
            head_epochs=5,
            finetune_epochs=2,
            scratch_epochs=6,
            cifar_size=96,
            cifar_train=None,
            cifar_val=None,
        ),
        "full": dict(
            base="vgg16",
            image_size=224,
            train=8000,
            val=2000,
            batch=32,
            head_epochs=10,
            finetune_epochs=5,
            scratch_epochs=25,
            cifar_size=96,
            cifar_train=10_000,
            cifar_val=2000,
        ),
    },
    "cats_dogs": {
        "smoke": dict(train=64, val=64, epochs=1, batch=32),
        "sample": dict(train=None, val=None, epochs=15, batch=32),
        "full": dict(train=None, val=None, epochs=25, batch=32),
    },
    # notebook 05's live part: these ladder steps, each with seeds 1..seeds (sample: about a
    # minute on 2 cores); the whole ladder on the tutorial's photos is recorded
    # (python -m tools.ladder)
    "cats_dogs_ladder": {
        "smoke": dict(train=64, val=64, epochs=1, batch=32, seeds=1, steps=("2", "2b")),
        "sample": dict(
            train=None, val=None, epochs=5, batch=32, seeds=3, steps=("2", "2b")
        ),
        "full": dict(
            train=None,
            val=None,
            epochs=25,
            batch=32,
            seeds=3,
            steps=("0", "1", "2", "2b", "3", "transfer"),
        ),
    },
    # notebook 00: the multiply sizes timed in alternation (rounds of `seconds`), the copy;
    # `repeats`: single calls per size where 00 has not run (roofs.limits)
    "matmul": {
        "smoke": dict(sizes=(256, 512), rounds=3, seconds=0.02, repeats=2, copy_mb=64),
        "sample": dict(
            sizes=(256, 1024, 2048), rounds=5, seconds=0.3, repeats=5, copy_mb=512
        ),
        "full": dict(
            sizes=(256, 1024, 2048, 4096),
            rounds=6,
            seconds=1.0,
            repeats=10,
            copy_mb=2048,
        ),
    },
    # notebook 09: float32 vs mixed precision (step 3, 128 px); notebook 10: multi-worker runs
    # (batch = per worker; every worker process gets `threads` CPU threads)
    "mixed_precision": {
        "smoke": dict(train=64, val=64, epochs=1, batch=32),
        "sample": dict(train=320, val=320, epochs=1, batch=32),
        "full": dict(train=None, val=None, epochs=25, batch=32),
    },
    "distributed": {
        "smoke": dict(train=64, epochs=3, batch=8, threads=1),
        "sample": dict(train=320, epochs=3, batch=16, threads=1),
        "full": dict(train=8000, epochs=5, batch=32, threads=1),
    },
    # notebook 11: batch sizes for latency/throughput, timed repeats, calibration pictures
    "inference": {
        "smoke": dict(batches=(1, 8), repeats=3, val=64, calibration=16),
        "sample": dict(
            batches=(1, 4, 16, 64, 256), repeats=20, val=None, calibration=200
        ),
        "full": dict(
            batches=(1, 4, 16, 64, 256), repeats=50, val=2000, calibration=500
        ),
    },
    # notebook 12: a folder of class folders (default: per_class CIFAR-10 pictures of three
    # classes written as PNG files), at most `limit` read, `validation` of each class held out
    "own_classifier": {
        "smoke": dict(
            per_class=30,
            limit=90,
            validation=0.2,
            base="mobilenet_0.25",
            image_size=160,
            batch=32,
            head_epochs=1,
            finetune_epochs=1,
        ),
        "sample": dict(
            per_class=150,
            limit=None,
            validation=0.2,
            base="mobilenet_0.25",
            image_size=160,
            batch=32,
            head_epochs=10,
            finetune_epochs=5,
        ),
        "full": dict(
            per_class=1000,
            limit=None,
            validation=0.2,
            base="mobilenet_0.25",
            image_size=160,
            batch=32,
            head_epochs=10,
            finetune_epochs=5,
        ),
    },
    # helpers.timing.alternate: rounds of A and B in alternation, each call timed this long (s)
    "compare": {
        "smoke": dict(rounds=3, seconds=0.02),
        "sample": dict(rounds=6, seconds=1.0),
        "full": dict(rounds=8, seconds=2.0),
    },
    # benchmark.run (the benchmark), notebooks 07-08: warm-up and timed training steps a measurement
    "bench": {
        "smoke": dict(warmup=1, steps=3, peak_sizes=(512,)),
        # None: the device's default
        "sample": dict(warmup=3, steps=15, peak_sizes=None),
        "full": dict(warmup=5, steps=50, peak_sizes=None),
    },
    # notebook 07: how many pictures its three pipelines read (None: all of the sample)
    "pipeline": {
        "smoke": dict(images=96),
        "sample": dict(images=None),
        "full": dict(images=None),
    },
    # notebook 08: timed and warm-up steps of each cat/dog run (None: settings "bench")
    "cpu_vs_gpu": {
        "smoke": dict(steps=3, warmup=1),
        "sample": dict(steps=5, warmup=1),
        "full": dict(steps=None, warmup=None),
    },
    # notebook 08: training memory measured at batch sizes whose activations grow by span_mb
    "memory": {
        "smoke": dict(span_mb=30),
        "sample": dict(span_mb=300),
        "full": dict(span_mb=300),
    },
}


def build_problem(folder=None):
    """Why the course cannot write into its build folder, or None (notebook 00)."""
    import tempfile

    folder = Path(folder or BUILD_DIR)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder):
            pass
    except OSError as e:
        return (
            f"The course cannot write into {folder} ({e.strerror or e}): it keeps trained "
            "models, backups and results there. Set COURSE_BUILD to a folder you can "
            "write (e.g. export COURSE_BUILD=~/dl-course-build) and start again."
        )
    return None


@functools.cache
def _say_build_problem():
    """Print, once, why the build folder cannot be written (a shared, read-only course folder)."""
    if build_problem():
        print("Notice:", build_problem())


def settings(name):
    """Sizes and epochs for `name` under the active profile, as attributes (notebook 01); the
    first call says if the build folder cannot be written."""
    if name not in SETTINGS:
        raise KeyError(
            f"No settings named {name!r}; known: {', '.join(sorted(SETTINGS))}."
        )
    _say_build_problem()
    return SimpleNamespace(name=name, profile=profile(), **SETTINGS[name][profile()])


def set_seed(seed=SEED, deterministic=False):
    """Seed Python, NumPy and Keras; optionally make TensorFlow deterministic (notebook 01)."""
    import keras

    keras.utils.set_random_seed(seed)
    if deterministic:
        import tensorflow as tf

        tf.config.experimental.enable_op_determinism()


@dataclass(frozen=True)
class Remote:
    """One published file, its sha256, whether it is an archive (`full`; notebook 11's models)."""

    url: str
    sha256: str
    extract: bool = False


def _mnist(name, sha):
    return Remote(f"https://storage.googleapis.com/cvdf-datasets/mnist/{name}", sha)


# Each dataset's files as published (the sample of it is data/<name>). Checksums are the ones
# the projects publish (TensorFlow Datasets' url_checksums, Keras' loaders); Tiny Shakespeare's
# is that of char-rnn's input.txt (commit 6f9487a), which the sample embeds whole.
DATASETS = {
    "cats_dogs": [  # PetImages/Cat, PetImages/Dog: 12,500 JPEGs each, some corrupt; no split
        Remote(
            "https://download.microsoft.com/download/3/E/1/3E1C3F21-ECDB-4869-8368-"
            "6DEBA77B919F/kagglecatsanddogs_3367a.zip",
            "f9553e426bd725354ed3a27e3c6920caadb55c835d1ebd880d2e56d3f1fbb22b",
            True,
        )
    ],
    "mnist": [  # idx files: 60,000 training and 10,000 test digits
        _mnist(
            "train-images-idx3-ubyte.gz",
            "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
        ),
        _mnist(
            "train-labels-idx1-ubyte.gz",
            "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
        ),
        _mnist(
            "t10k-images-idx3-ubyte.gz",
            "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
        ),
        _mnist(
            "t10k-labels-idx1-ubyte.gz",
            "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
        ),
    ],
    "imdb": [  # aclImdb/{train,test}/{pos,neg}/*.txt: 25,000 reviews per split
        Remote(
            "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz",
            "c40f74a18d3b61f90feba1e17730e0d38e8b97c05fde7008942e91923d1658fe",
            True,
        )
    ],
    "cifar10": [  # cifar-10-batches-bin/*.bin: 1 label byte + 3072 pixel bytes per image
        Remote(
            "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",
            "c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd",
            True,
        )
    ],
    "tinyshakespeare": [  # input.txt: 1,115,394 characters (the sample is the whole file)
        Remote(
            "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/"
            "tinyshakespeare/input.txt",
            "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
        )
    ],
}

# Files of the sample that code pins: a changed file is an error, not a surprise.
PINNED = {
    "pretrained/mobilenet_2_5_224_tf_no_top.h5": (
        "dbdb03ee2a22fd895301636cd328b234bb3a9952358f436d82f46b81e0d5b0bf"
    ),
    "tinyshakespeare/input.txt": DATASETS["tinyshakespeare"][0].sha256,
}


def sha256(path):
    """The sha256 of a file as hex (the sample's pins; notebook 11's downloads)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def sample_path(relative):
    """A file or folder of the embedded sample, pinned files checked (notebooks 01, 06, 11)."""
    path = DATA_DIR / relative
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing; rebuild the sample with "
            "`python -m tools.build_sample`."
        )
    expected = PINNED.get(Path(relative).as_posix())
    if expected and sha256(path) != expected:
        raise ValueError(
            f"{path} does not match its pinned sha256 {expected}; "
            "rebuild the sample with `python -m tools.build_sample`."
        )
    return path


def download(remote, cache_dir=None, retries=3, wait=2.0):
    """A Remote fetched once into the cache, sha256 checked, archives extracted; its local path
    (the `full` profile, notebook 11). A failed or corrupt transfer is deleted and retried."""
    import keras

    cache_dir = Path(cache_dir or CACHE_DIR)
    fname = remote.url.rsplit("/", 1)[-1]
    for attempt in range(1, retries + 1):
        try:
            path = Path(
                keras.utils.get_file(
                    fname,
                    remote.url,
                    file_hash=remote.sha256,
                    cache_dir=str(cache_dir),
                    cache_subdir="datasets",
                )
            )
            break
        except Exception as e:  # Keras deletes a partial file; we delete a corrupt one
            (cache_dir / "datasets" / fname).unlink(missing_ok=True)
            if attempt < retries:
                print(
                    f"Download of {fname} failed ({str(e)[:100]}); retry {attempt}/{retries - 1}"
                )
                time.sleep(wait * attempt)
            elif isinstance(e, ValueError):
                raise ValueError(
                    f"Download of {remote.url} is corrupt (sha256 differs from "
                    f"{remote.sha256}); the file was deleted, try again."
                ) from e
            else:
                raise ConnectionError(
                    f"Could not download {remote.url} after {retries} tries ({e})."
                ) from e
    return (
        safe_extract(path, path.with_name(fname.split(".")[0]))
        if remote.extract
        else path
    )


def safe_extract(archive, dest):
    """A zip or tar archive extracted into `dest` (the `full` profile) through a temporary
    sibling folder, so an interrupted one leaves none; no entry lands outside. Returns `dest`."""
    archive, dest = Path(archive), Path(dest)
    if dest.exists():
        return dest
    partial = dest.with_name(dest.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:  # names lose '..' and a leading '/'
                z.extractall(partial)
        elif tarfile.is_tarfile(archive):
            with tarfile.open(
                archive
            ) as t:  # refuses entries and links that lead outside
                t.extractall(partial, filter="data")
        else:
            raise ValueError(f"{archive} is neither a zip nor a tar archive.")
        partial.rename(dest)
    except BaseException as e:
        shutil.rmtree(partial, ignore_errors=True)
        if isinstance(e, tarfile.FilterError):
            raise ValueError(
                f"{archive} contains an unsafe entry ({e}); nothing was extracted. "
                "Delete the archive and download it again from its source."
            ) from e
        raise
    return dest


def source(name):
    """('sample' or 'full', path) of dataset `name` in this profile (every loader of `data`)."""
    if name not in DATASETS:
        raise KeyError(
            f"Unknown dataset {name!r}; choose one of {', '.join(sorted(DATASETS))}."
        )
    if profile() == "full":
        try:
            paths = [download(r) for r in DATASETS[name]]
            return "full", paths[0] if len(paths) == 1 else paths[0].parent
        except (
            Exception
        ) as e:  # no network, proxy, server down: keep the course running
            print(
                f"Notice: could not download the full {name} dataset ({str(e)[:120]}); "
                "using the embedded sample instead."
            )
    return "sample", sample_path(name)


def pretrained_weights(name="mobilenet_0.25"):
    """Path of the embedded ImageNet weights, sha256 checked (notebook 03)."""
    files = {"mobilenet_0.25": "pretrained/mobilenet_2_5_224_tf_no_top.h5"}
    if name not in files:
        raise KeyError(f"No embedded weights {name!r}; available: {', '.join(files)}.")
    return sample_path(files[name])
