"""What a phone photo held upright costs the course's pipeline, against the same photo stored
upright: peak memory and time of one batch through `data.image_pipeline` (issue 50's benchmark;
it prints figures, it asserts nothing).

    python -m tools.photo_cost                 # eight 12 MP photos at notebook 12's 160 px
    python -m tools.photo_cost --photos 4 --megapixels 48

The photos are made from the course's real parrot photo (data/sample_images/parrot.jpg), scaled
up to a phone's 4:3 portrait size and saved as JPEGs twice: stored upright, and stored as a phone
stores a portrait photo (on its side, EXIF orientation 6). Each kind runs in a fresh process of
its own, so one cannot inherit the other's memory: peak memory is the process's peak resident size
above what it used before the first batch, time the median of three passes (the first traces).
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from helpers import config

KINDS = ("upright", "portrait (EXIF 6)")


def write_photos(folder, photos, megapixels):
    """`photos` JPEGs of each kind in `folder`; returns {kind: [paths]}."""
    from PIL import Image

    # portrait 3:4, as a phone held upright
    height = int((megapixels * 1e6 * 4 / 3) ** 0.5)
    width = height * 3 // 4
    parrot = Image.open(config.DATA_DIR / "sample_images" / "parrot.jpg").convert("RGB")
    shown = parrot.resize((width, height), Image.Resampling.BICUBIC)
    exif = Image.Exif()
    exif[0x0112] = 6  # "turn it 90 degrees clockwise to show it"
    paths = {kind: [] for kind in KINDS}
    for i in range(photos):
        # two contents, so no file repeats the last
        picture = shown.rotate(0 if i % 2 else 180)
        upright, side = folder / f"upright_{i}.jpg", folder / f"side_{i}.jpg"
        picture.save(upright, "JPEG", quality=90)
        picture.rotate(90, expand=True).save(side, "JPEG", quality=90, exif=exif)
        paths[KINDS[0]].append(str(upright))
        paths[KINDS[1]].append(str(side))
    return paths


def measure(paths, size):
    """In this process: one batch of all `paths` three times; peak MB above the start, seconds."""
    import resource

    from helpers import data

    import tensorflow as tf

    batches = data.image_pipeline(
        paths, [0] * len(paths), size, len(paths), cache=False
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    seconds = []
    for _ in range(3):
        start = time.perf_counter()
        x, _ = next(iter(batches))
        tf.debugging.assert_all_finite(x, "a decoded batch")
        seconds.append(time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "peak_mb": (peak - before) / 1024,
        "seconds": statistics.median(seconds[1:]),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--photos", type=int, default=8)
    parser.add_argument("--megapixels", type=float, default=12)
    parser.add_argument("--size", type=int, default=160, help="pixels (notebook 12's)")
    # a JSON list of paths: one kind
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(json.loads(args.measure), args.size)))
        return 0
    with tempfile.TemporaryDirectory() as folder:
        paths = write_photos(Path(folder), args.photos, args.megapixels)
        found = {}
        for kind, files in paths.items():
            run = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "tools.photo_cost",
                    "--size",
                    str(args.size),
                    "--measure",
                    json.dumps(files),
                ],
                capture_output=True,
                text=True,
                check=True,
                cwd=config.ROOT,
            )
            found[kind] = json.loads(run.stdout.strip().splitlines()[-1])
    print(
        f"{args.photos} photos of {args.megapixels:g} MP through data.image_pipeline at "
        f"{args.size} px, one batch (peak memory above the start; median of 2 passes):"
    )
    for kind, got in found.items():
        print(f"  {kind:18s} +{got['peak_mb']:6.0f} MB  {got['seconds']:6.2f} s")
    up, side = found[KINDS[0]], found[KINDS[1]]
    print(
        f"  portrait / upright: memory {side['peak_mb'] / max(up['peak_mb'], 1):.2f}x, "
        f"time {side['seconds'] / up['seconds']:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
