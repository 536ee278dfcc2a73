"""The cat/dog improvement ladder as a measured experiment (notebook 05); helpers.ladder_stats
reads its records, `python -m tools.ladder` records the long runs in results/."""

import functools
import json
import statistics
from datetime import datetime
from pathlib import Path

from . import config, data, ladder_stats, models, results, training
from .ladder_stats import CHANGES, PAIRS  # the ladder's steps, defined beside their statistics

__all__ = ["CHANGES", "PAIRS", "RECORDED", "RECORDED_LONG", "build", "datasets", "epoch_rows",
           "load_runs", "record", "results_file", "save", "train"]

# The tutorial's 8,000 / 2,000 photos: 3 seeds per step, 25 one-pass epochs (1/32 of the blog's
# training); and steps 1, 2, 2b with one seed for 100 epochs (1/8).
RECORDED = config.RESULTS_DIR / "cats_dogs_ladder_tutorial"
RECORDED_LONG = config.RESULTS_DIR / "cats_dogs_ladder_long"


def build(step, seed=None):
    """The network of one ladder step (notebook 05); under a mixed-precision policy its sigmoid
    output stays in float32 (notebook 09 shows why)."""
    if step == "transfer":
        return models.cats_dogs_transfer(seed=seed)
    import keras

    mixed = keras.config.dtype_policy().name.startswith("mixed")
    return models.cats_dogs_net(step, seed=seed, output_dtype="float32" if mixed else None)


def datasets(image_size, s, root=None):
    """(train, validation) pipelines for settings `s`, decoded once per image size (notebook
    05); `root`: a cat/dog folder instead of the profile's pictures."""
    return _pipelines(config.profile(), image_size, s.batch, s.train, s.val, root)


@functools.cache
def _pipelines(profile, image_size, batch, train, val, root):
    return tuple(data.cats_dogs(split, image_size, batch, limit=limit, root=root)
                 for split, limit in (("train", train), ("validation", val)))


def train(step, seed, s, root=None, **fit_args):
    """Train one step with one seed under settings `s`, as notebook 05's `train` does on its
    page; `fit_args` go to training.fit (`name=` makes it resumable). Returns (model, record)."""
    config.set_seed(seed)
    model = build(step, seed)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    pipelines = datasets(model.input_shape[1], s, root)
    history, _ = training.fit(model, *pipelines, epochs=s.epochs, **{"verbose": 0, **fit_args})
    return model, record(step, seed, model, epoch_rows(history), pipelines)


def epoch_rows(history):
    """One dict of metrics per epoch of a Keras History (notebook 05)."""
    logs = history.history
    return [dict(zip(logs, values)) for values in zip(*logs.values())]


def record(step, seed, model, epochs, pipelines):
    """The record of one run trained on `pipelines` (train, validation) from its `epochs` rows,
    which hold `images_per_s` and `epoch_s` from a Throughput timer (notebook 05)."""
    import keras

    rates = [e["images_per_s"] for e in epochs]
    train_ds, val_ds = pipelines
    machine = results.machine()
    return {
        "step": step, "change": CHANGES[step], "seed": seed,
        "val_accuracy": epochs[-1]["val_accuracy"] if epochs else None,
        "train_accuracy": epochs[-1]["accuracy"] if epochs else None,
        "val_accuracy_per_epoch": [e["val_accuracy"] for e in epochs],
        "train_accuracy_per_epoch": [e["accuracy"] for e in epochs],
        "loss_per_epoch": [e["loss"] for e in epochs],
        "nonfinite_weights_per_epoch": [e.get("nonfinite_weights") for e in epochs],
        "params": model.count_params(),
        "images_per_s": statistics.median(rates[1:] or rates) if rates else None,
        "images_per_s_per_epoch": rates, "epochs": len(epochs),
        "wall_s": sum(e["epoch_s"] for e in epochs),
        "batch": training.batch_size_of(train_ds), "image_size": model.input_shape[1],
        "train_images": train_ds.num_examples, "val_images": val_ds.num_examples,
        "dtype": keras.config.dtype_policy().name, "profile": config.profile(),
        "date": results.now(), "hardware": machine["hardware"], "versions": machine["versions"],
        "cpu_simd": machine["details"]["cpu"]["simd"],
    }


def results_file(name="cats_dogs_ladder"):
    """A new file for this run: results/, or build/results/ in smoke (notebook 05)."""
    folder = config.BUILD_DIR / "results" if config.profile() == "smoke" else config.RESULTS_DIR
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return folder / f"{name}_{config.profile()}_{stamp}.json"


def save(runs, path, command="notebooks/05_cats_dogs_improvements.ipynb"):
    """Write the records with their summary, the machine, date and command (notebook 05)."""

    return results.write_json(path, {
        "command": command, "profile": config.profile(), "date": results.now(),
        "machine": results.machine()["details"], "summary": ladder_stats.summary(runs),
        "records": runs})


def load_runs(folder):
    """Every finished run recorded in `folder`, in ladder order, then by seed (notebook 05)."""
    order = list(CHANGES)
    runs = [json.loads(p.read_text()) for p in sorted(Path(folder).glob("step-*_seed-*.json"))]
    return sorted(runs, key=lambda r: (order.index(r["step"]), r["seed"]))
