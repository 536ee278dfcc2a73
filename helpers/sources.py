"""Where the course's data comes from: the embedded sample in data/, or the public sets.

`profile() == "full"` downloads the public dataset once into the cache (checksum pinned),
extracting archives safely; without a network it falls back to the sample with a one-line
notice. Pinned files of the sample are checked on every use.
"""

import hashlib
import posixpath
import re
import shutil
import stat
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from . import config

__all__ = ["DATASETS", "PINNED", "Remote", "download", "safe_extract", "sample_path", "sha256",
           "source"]


@dataclass(frozen=True)
class Remote:
    """One published file: where it is, its sha256, and whether it is an archive."""

    url: str
    sha256: str
    extract: bool = False


# Checksums are the ones the projects themselves publish (TensorFlow Datasets' url_checksums,
# Keras' dataset loaders) or, for Tiny Shakespeare, that of char-rnn's input.txt (commit 6f9487a),
# which the sample embeds whole.
DATASETS = {
    "cats_dogs": dict(
        # PetImages/Cat, PetImages/Dog: 12,500 JPEGs each, some corrupt; no split
        sample="cats_dogs",
        remotes=[Remote("https://download.microsoft.com/download/3/E/1/3E1C3F21-ECDB-4869-"
                        "8368-6DEBA77B919F/kagglecatsanddogs_3367a.zip",
                        "f9553e426bd725354ed3a27e3c6920caadb55c835d1ebd880d2e56d3f1fbb22b", True)],
    ),
    "mnist": dict(
        # idx files: 60,000 training and 10,000 test digits
        sample="mnist",
        remotes=[Remote(f"https://storage.googleapis.com/cvdf-datasets/mnist/{name}", sha)
                 for name, sha in [
                     ("train-images-idx3-ubyte.gz",
                      "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"),
                     ("train-labels-idx1-ubyte.gz",
                      "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"),
                     ("t10k-images-idx3-ubyte.gz",
                      "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"),
                     ("t10k-labels-idx1-ubyte.gz",
                      "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6")]],
    ),
    "imdb": dict(
        # aclImdb/{train,test}/{pos,neg}/*.txt: 25,000 reviews per split
        sample="imdb",
        remotes=[Remote("https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz",
                        "c40f74a18d3b61f90feba1e17730e0d38e8b97c05fde7008942e91923d1658fe", True)],
    ),
    "cifar10": dict(
        # cifar-10-batches-bin/*.bin: 1 label byte + 3072 pixel bytes per image
        sample="cifar10",
        remotes=[Remote("https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",
                        "c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd", True)],
    ),
    "tinyshakespeare": dict(
        # input.txt: 1,115,394 characters (the sample is the whole file)
        sample="tinyshakespeare",
        remotes=[Remote("https://raw.githubusercontent.com/karpathy/char-rnn/master/data/"
                        "tinyshakespeare/input.txt",
                        "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed")],
    ),
}

# Files of the sample that code pins: a changed file is an error, not a surprise.
PINNED = {
    "pretrained/mobilenet_2_5_224_tf_no_top.h5":
        "dbdb03ee2a22fd895301636cd328b234bb3a9952358f436d82f46b81e0d5b0bf",
    "tinyshakespeare/input.txt":
        "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
}


def _dataset(name):
    if name not in DATASETS:
        raise KeyError(f"Unknown dataset {name!r}; choose one of {', '.join(sorted(DATASETS))}.")
    return DATASETS[name]


def sha256(path):
    """The sha256 of a file, as a hex string."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def sample_path(relative):
    """A file or folder of the embedded sample; pinned files are checked."""
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
    """Fetch one Remote into the cache once, checking its sha256; returns the local path.

    A failed or corrupt transfer is deleted and retried `retries` times; archives are
    extracted safely (see `safe_extract`). A second call uses the cache, no network.
    """
    import keras

    cache_dir = Path(cache_dir or config.CACHE_DIR)
    fname = remote.url.rsplit("/", 1)[-1]
    target = cache_dir / "datasets" / fname
    for attempt in range(1, retries + 1):
        try:
            path = Path(keras.utils.get_file(fname, remote.url, file_hash=remote.sha256,
                                             cache_dir=str(cache_dir), cache_subdir="datasets"))
            break
        except Exception as e:  # Keras deletes a partial file; we delete a corrupt one
            target.unlink(missing_ok=True)
            corrupt = isinstance(e, ValueError)
            if attempt == retries:
                if corrupt:
                    raise ValueError(f"Download of {remote.url} is corrupt (sha256 differs from "
                                     f"{remote.sha256}); the file was deleted, try again.") from e
                raise ConnectionError(f"Could not download {remote.url} after {retries} tries "
                                      f"({e}).") from e
            print(f"Download of {fname} failed ({str(e)[:100]}); retry {attempt}/{retries - 1}")
            time.sleep(wait * attempt)
    if remote.extract:
        return safe_extract(path, path.with_name(fname.split(".")[0]))
    return path


def _refuse(archive, name, why):
    raise ValueError(f"{archive} contains an unsafe entry {name!r} ({why}); nothing was "
                     "extracted. Delete the archive and download it again from its source.")


def _check_entry(archive, name, link_target=None):
    """Refuse absolute paths, '..' and links that point outside the extraction folder."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or re.match(r"^[A-Za-z]:", name) or ".." in path.parts:
        _refuse(archive, name, "absolute path or '..'")
    if link_target is not None:
        target = PurePosixPath(link_target)
        resolved = posixpath.normpath(str(path.parent / target))
        if target.is_absolute() or resolved.startswith(".."):
            _refuse(archive, name, f"link to {link_target!r} outside the folder")


def safe_extract(archive, dest):
    """Extract a zip or tar archive into `dest`, refusing unsafe entries; returns `dest`.

    Extraction goes to a temporary sibling folder first and is renamed into place at the
    end, so an interrupted or refused extraction leaves no half folder behind.
    """
    archive, dest = Path(archive), Path(dest)
    if dest.exists():
        return dest
    partial = dest.with_name(dest.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                for info in z.infolist():
                    _check_entry(archive, info.filename)
                    if stat.S_ISLNK(info.external_attr >> 16):
                        _refuse(archive, info.filename, "symbolic link")
                z.extractall(partial)
        elif tarfile.is_tarfile(archive):
            with tarfile.open(archive) as t:
                for m in t.getmembers():
                    link = m.linkname if m.issym() else None
                    _check_entry(archive, m.name, link)
                    if m.islnk():
                        _check_entry(archive, m.linkname)
                t.extractall(partial, filter="data")
        else:
            raise ValueError(f"{archive} is neither a zip nor a tar archive.")
        partial.rename(dest)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return dest


def source(name):
    """Where dataset `name` comes from under the active profile: ('sample'|'full', path)."""
    info = _dataset(name)
    if config.profile() == "full":
        try:
            paths = [download(r) for r in info["remotes"]]
            return "full", paths[0] if len(paths) == 1 else paths[0].parent
        except Exception as e:  # no network, proxy, server down: keep the course running
            print(f"Notice: could not download the full {name} dataset ({str(e)[:120]}); "
                  "using the embedded sample instead.")
    return "sample", sample_path(info["sample"])
