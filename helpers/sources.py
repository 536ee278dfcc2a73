"""Where the course's data comes from: the embedded sample in data/, or, in the `full` profile,
the public sets, downloaded once into the cache (checksums pinned), the sample when offline."""

import hashlib
import shutil
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import keras

from . import config

__all__ = ["DATASETS", "Remote", "download", "safe_extract", "sample_path", "sha256", "source"]


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
        Remote("https://download.microsoft.com/download/3/E/1/3E1C3F21-ECDB-4869-8368-"
               "6DEBA77B919F/kagglecatsanddogs_3367a.zip",
               "f9553e426bd725354ed3a27e3c6920caadb55c835d1ebd880d2e56d3f1fbb22b", True)],
    "mnist": [  # idx files: 60,000 training and 10,000 test digits
        _mnist("train-images-idx3-ubyte.gz",
               "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"),
        _mnist("train-labels-idx1-ubyte.gz",
               "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"),
        _mnist("t10k-images-idx3-ubyte.gz",
               "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"),
        _mnist("t10k-labels-idx1-ubyte.gz",
               "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6")],
    "imdb": [  # aclImdb/{train,test}/{pos,neg}/*.txt: 25,000 reviews per split
        Remote("https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz",
               "c40f74a18d3b61f90feba1e17730e0d38e8b97c05fde7008942e91923d1658fe", True)],
    "cifar10": [  # cifar-10-batches-bin/*.bin: 1 label byte + 3072 pixel bytes per image
        Remote("https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",
               "c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd", True)],
    "tinyshakespeare": [  # input.txt: 1,115,394 characters (the sample is the whole file)
        Remote("https://raw.githubusercontent.com/karpathy/char-rnn/master/data/"
               "tinyshakespeare/input.txt",
               "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed")],
}

# Files of the sample that code pins: a changed file is an error, not a surprise.
PINNED = {
    "pretrained/mobilenet_2_5_224_tf_no_top.h5":
        "dbdb03ee2a22fd895301636cd328b234bb3a9952358f436d82f46b81e0d5b0bf",
    "tinyshakespeare/input.txt": DATASETS["tinyshakespeare"][0].sha256,
}


def sha256(path):
    """The sha256 of a file as hex (the sample's pins; notebook 11's downloads)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def sample_path(relative):
    """A file or folder of the embedded sample, pinned files checked (notebooks 01, 06, 11)."""
    path = config.DATA_DIR / relative
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; rebuild the sample with "
                                "`python -m tools.build_sample`.")
    expected = PINNED.get(Path(relative).as_posix())
    if expected and sha256(path) != expected:
        raise ValueError(f"{path} does not match its pinned sha256 {expected}; "
                         "rebuild the sample with `python -m tools.build_sample`.")
    return path


def download(remote, cache_dir=None, retries=3, wait=2.0):
    """A Remote fetched once into the cache, sha256 checked, archives extracted; its local path
    (the `full` profile, notebook 11). A failed or corrupt transfer is deleted and retried."""
    cache_dir = Path(cache_dir or config.CACHE_DIR)
    fname = remote.url.rsplit("/", 1)[-1]
    for attempt in range(1, retries + 1):
        try:
            path = Path(keras.utils.get_file(fname, remote.url, file_hash=remote.sha256,
                                             cache_dir=str(cache_dir), cache_subdir="datasets"))
            break
        except Exception as e:  # Keras deletes a partial file; we delete a corrupt one
            (cache_dir / "datasets" / fname).unlink(missing_ok=True)
            if attempt < retries:
                print(f"Download of {fname} failed ({str(e)[:100]}); retry {attempt}/{retries - 1}")
                time.sleep(wait * attempt)
            elif isinstance(e, ValueError):
                raise ValueError(f"Download of {remote.url} is corrupt (sha256 differs from "
                                 f"{remote.sha256}); the file was deleted, try again.") from e
            else:
                raise ConnectionError(f"Could not download {remote.url} after {retries} tries "
                                      f"({e}).") from e
    return safe_extract(path, path.with_name(fname.split(".")[0])) if remote.extract else path


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
            with tarfile.open(archive) as t:  # refuses entries and links that lead outside
                t.extractall(partial, filter="data")
        else:
            raise ValueError(f"{archive} is neither a zip nor a tar archive.")
        partial.rename(dest)
    except BaseException as e:
        shutil.rmtree(partial, ignore_errors=True)
        if isinstance(e, tarfile.FilterError):
            raise ValueError(f"{archive} contains an unsafe entry ({e}); nothing was extracted. "
                             "Delete the archive and download it again from its source.") from e
        raise
    return dest


def source(name):
    """('sample' or 'full', path) of dataset `name` in this profile (every loader of `data`)."""
    if name not in DATASETS:
        raise KeyError(f"Unknown dataset {name!r}; choose one of {', '.join(sorted(DATASETS))}.")
    if config.profile() == "full":
        try:
            paths = [download(r) for r in DATASETS[name]]
            return "full", paths[0] if len(paths) == 1 else paths[0].parent
        except Exception as e:  # no network, proxy, server down: keep the course running
            print(f"Notice: could not download the full {name} dataset ({str(e)[:120]}); "
                  "using the embedded sample instead.")
    return "sample", sample_path(name)
