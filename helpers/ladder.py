"""The cat/dog improvement ladder as a measured experiment (notebook 05).

    s = config.settings("cats_dogs_ladder")
    records = [ladder.train(step, seed, s) for seed in range(1, s.seeds + 1)]
    ladder.save(records, path)          # results/ (sample, full) or build/results/ (smoke)
    ladder.summary(records)             # per step: mean and spread of validation accuracy
"""

import json
import statistics
import time
from datetime import datetime, timezone

from . import config, data, hardware, models, training

# What each step changes, in the order the notebook climbs the ladder.
CHANGES = {
    "0": "original (2 x Conv32+pool, Dense 128)",
    "1": "+ Conv2D(64) + MaxPool",
    "2": "+ Dropout(0.5)",
    "2b": "step 2 without shear/zoom/flip",
    "3": "128 px, + conv/pool pair, 64 filters each",
    "transfer": "MobileNet 0.25 (ImageNet, frozen) + sigmoid",
}

# The source's published figures (blog 000, Tesla V100): validation accuracy in %, and
# training images/s (None where the source gives no figure). Shown labelled as the source's.
SOURCE = {"0": (80, None), "1": (84, None), "2": (90, 425), "2b": (85, 533), "3": (94, 333)}

_datasets = {}
_machine = {}


def build(step, seed=None):
    """The model of one step: a LADDER step of models.cats_dogs_net, or 'transfer'."""
    if step == "transfer":
        return models.cats_dogs_transfer(seed=seed)
    return models.cats_dogs_net(step, seed=seed)


def describe(model):
    """One line on a cat/dog model: input size, augmentation, conv filters, dropout, weights."""
    import keras

    convs = [lay.filters for lay in model.layers if isinstance(lay, keras.layers.Conv2D)]
    drops = [lay.rate for lay in model.layers if isinstance(lay, keras.layers.Dropout)]
    trainable = sum(int(w.numpy().size) for w in model.trainable_weights)
    augmented = any(lay.name == "augmentation" for lay in model.layers)
    return (f"input {model.input_shape[1]} px · augmentation {'on' if augmented else 'off'} · "
            f"conv filters {convs or 'none (pretrained base)'} · dropout {drops or 'none'} · "
            f"{model.count_params():,} weights ({trainable:,} trained)")


def datasets(image_size, s):
    """(train, validation) pipelines for settings `s`, decoded once per image size."""
    key = (config.profile(), image_size, s.batch, s.train, s.val)
    if key not in _datasets:
        _datasets[key] = (data.cats_dogs("train", image_size, s.batch, limit=s.train),
                          data.cats_dogs("validation", image_size, s.batch, limit=s.val))
    return _datasets[key]


def machine():
    """A short description of this machine and the library versions, for every record."""
    if not _machine:
        info = hardware.describe()
        gpus = ", ".join(g["name"] for g in info["gpus"]) or "no GPU"
        cpu = info["cpu"]
        _machine.update(hardware=f"{cpu['model']} ({cpu['usable_cores']} cores usable), {gpus}",
                        versions={k: v for k, v in info["versions"].items()
                                  if k in ("python", "tensorflow", "keras")},
                        details=info)
    return _machine


def train(step, seed, s, verbose=0):
    """Train one step with one seed under settings `s` (epochs, batch, train, val).

    Returns its record: validation accuracy (last epoch, and per epoch), parameters,
    training images/s (median over epochs after the first), images, hardware, date.
    """
    config.set_seed(seed)
    model = build(step, seed)
    size = model.input_shape[1]
    train_ds, val_ds = datasets(size, s)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    start = time.perf_counter()
    history, timer = training.fit(model, train_ds, val_ds, epochs=s.epochs, resume=False,
                                  verbose=verbose)
    rates = [e["images_per_s"] for e in timer.epochs]
    logs = history.history
    return {
        "step": step, "change": CHANGES[step], "seed": seed,
        "val_accuracy": logs["val_accuracy"][-1],
        "val_accuracy_per_epoch": logs["val_accuracy"],
        "train_accuracy": logs["accuracy"][-1],
        "params": model.count_params(),
        "images_per_s": statistics.median(rates[1:] or rates),
        "epochs": len(logs["loss"]), "batch": s.batch, "image_size": size,
        "train_images": train_ds.num_examples, "val_images": val_ds.num_examples,
        "wall_s": time.perf_counter() - start,
        "profile": config.profile(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "hardware": machine()["hardware"], "versions": machine()["versions"],
    }


def results_file(name="cats_dogs_ladder"):
    """A new file for this run: results/ in sample and full, build/results/ in smoke."""
    folder = config.BUILD_DIR / "results" if config.profile() == "smoke" else config.RESULTS_DIR
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return folder / f"{name}_{config.profile()}_{stamp}.json"


def save(records, path, command="notebooks/05_cats_dogs_improvements.ipynb"):
    """Write the records with the full hardware description, date and command as JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"command": command, "profile": config.profile(),
               "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "machine": machine()["details"], "summary": summary(records),
               "records": records}
    path.write_text(json.dumps(payload, indent=1))
    return path


def summary(records):
    """Per step, in order of first appearance: runs, mean, spread (standard deviation),
    min and max of validation accuracy; parameters; median training images/s."""
    if not records:
        raise ValueError("No ladder records to summarise: train at least one step first.")
    rows = {}
    for step in dict.fromkeys(r["step"] for r in records):
        runs = [r for r in records if r["step"] == step]
        acc = [r["val_accuracy"] for r in runs]
        rows[step] = {"runs": len(runs), "mean": statistics.mean(acc),
                      "spread": statistics.stdev(acc) if len(acc) > 1 else 0.0,
                      "min": min(acc), "max": max(acc), "params": runs[0]["params"],
                      "images_per_s": statistics.median(r["images_per_s"] for r in runs)}
    return rows


def table(rows):
    """The summary beside the source's figures, as readable text."""
    lines = [f"{'step':<9}{'change':<46}{'val. acc. here':>17}{'source':>8}"
             f"{'params':>10}{'img/s here':>12}{'source V100':>13}"]
    for step, row in rows.items():
        acc, speed = SOURCE.get(step, (None, None))
        lines.append(f"{step:<9}{CHANGES[step]:<46}"
                     f"{100 * row['mean']:>8.1f} ± {100 * row['spread']:>4.1f} %"
                     f"{f'{acc} %' if acc else '—':>8}{row['params']:>10,}"
                     f"{row['images_per_s']:>12,.0f}{speed or '—':>13}")
    return "\n".join(lines)
