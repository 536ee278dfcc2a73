"""Build the embedded sample in data/ from ../shared/data, identically every time.

    python -m tools.build_sample            # (re)build data/ and data/MANIFEST.sha256
    python -m tools.build_sample --check    # rebuild into a temporary folder and compare

Every source file is checked against the source's own MANIFEST.sha256 first.
Cat/dog pictures are re-encoded at 160 px on the longer side (JPEG quality 90) to keep
the sample small; everything else is copied byte for byte.
"""

import argparse
import hashlib
import io
import re
import shutil
import sys
import tempfile
from pathlib import Path

from tools import ROOT

from PIL import Image

SOURCE = ROOT.parent / "shared" / "data"
CATS_DOGS = {"train": range(1, 701), "validation": range(4001, 4401)}  # per class
IMDB = {"train": 1000, "test": 500}  # reviews per class, lowest ids
CIFAR_PER_CLASS = 200
CAT_DOG_SIDE = 160


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def load_manifest(path):
    entries = {}
    for line in path.read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        entries[name.removeprefix("./")] = digest
    return entries


class Builder:
    def __init__(self, source, target):
        self.source, self.target = Path(source), Path(target)
        self.source_manifest = load_manifest(self.source / "MANIFEST.sha256")

    def read(self, relative):
        data = (self.source / relative).read_bytes()
        if self.source_manifest.get(relative) != sha256_bytes(data):
            sys.exit(
                f"{self.source / relative} does not match the source MANIFEST; stopping."
            )
        return data

    def write(self, relative, data):
        path = self.target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def copy(self, relative, target_relative=None):
        self.write(target_relative or relative, self.read(relative))

    def shrink_jpeg(self, relative, target_relative):
        image = Image.open(io.BytesIO(self.read(relative))).convert("RGB")
        image.thumbnail((CAT_DOG_SIDE, CAT_DOG_SIDE), Image.Resampling.LANCZOS)
        out = io.BytesIO()
        image.save(out, "JPEG", quality=90)
        self.write(target_relative, out.getvalue())

    def build(self):
        for split, numbers in CATS_DOGS.items():
            for cls in ("cats", "dogs"):
                for n in numbers:
                    name = f"{cls[:-1]}.{n}.jpg"
                    self.shrink_jpeg(
                        f"cats_vs_dogs/{split}/{cls}/{name}",
                        f"cats_dogs/{split}/{cls}/{name}",
                    )
        for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
            self.copy(f"mnist/{name}")
        self.copy("tinyshakespeare/input.txt")
        for split, count in IMDB.items():
            for cls in ("neg", "pos"):
                names = [
                    p.name for p in (self.source / "imdb" / split / cls).glob("*.txt")
                ]
                names.sort(key=lambda n: int(re.match(r"\d+", n).group()))
                for name in names[:count]:
                    self.copy(f"imdb/{split}/{cls}/{name}")
        for folder in sorted((self.source / "cifar10" / "test_jpg").iterdir()):
            for path in sorted(folder.glob("*.jpg"))[:CIFAR_PER_CLASS]:
                self.copy(
                    f"cifar10/test_jpg/{folder.name}/{path.name}",
                    f"cifar10/{folder.name}/{path.name}",
                )
        self.copy(
            "pretrained/keras/mobilenet_2_5_224_tf_no_top.h5",
            "pretrained/mobilenet_2_5_224_tf_no_top.h5",
        )
        for name in ("mobilenet_v1_0.25_128_quant.tflite", "imagenet_labels.txt"):
            self.copy(f"pretrained/tflite/{name}", f"pretrained/{name}")
        self.copy("pretrained/tflite/LICENSE", "pretrained/LICENSE.tflite")
        for path in sorted((self.source / "sample_images").iterdir()):
            self.copy(f"sample_images/{path.name}")
        return self.write_manifest()

    def write_manifest(self):
        lines = []
        for path in sorted(self.target.rglob("*")):
            rel = path.relative_to(self.target).as_posix()
            if path.is_file() and rel not in ("MANIFEST.sha256", "README.md"):
                lines.append(f"{sha256_bytes(path.read_bytes())}  {rel}")
        text = "\n".join(lines) + "\n"
        (self.target / "MANIFEST.sha256").write_text(text)
        return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=SOURCE, type=Path)
    parser.add_argument(
        "--check", action="store_true", help="rebuild elsewhere and compare"
    )
    args = parser.parse_args()
    if not (args.source / "MANIFEST.sha256").exists():
        sys.exit(
            f"No source data at {args.source} (expected ../shared/data); use --source."
        )
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            rebuilt = Builder(args.source, tmp).build()
        same = rebuilt == (ROOT / "data" / "MANIFEST.sha256").read_text()
        print(
            "data/ matches a fresh rebuild"
            if same
            else "data/ differs from a fresh rebuild"
        )
        return 0 if same else 1
    target = ROOT / "data"
    for child in target.iterdir() if target.exists() else []:
        if child.is_dir():
            shutil.rmtree(child)
    manifest = Builder(args.source, target).build()
    size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    print(f"data/: {len(manifest.splitlines())} files, {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
