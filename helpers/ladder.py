"""The cat/dog improvement ladder as a measured experiment (notebook 05).

    s = config.settings("cats_dogs_ladder")
    runs = [ladder.train(step, seed, s)[1] for seed in range(1, s.seeds + 1)]
    ladder.save(runs, path)             # results/ (sample, full) or build/results/ (smoke)
    ladder_stats.summary(runs)          # per step: mean and spread (helpers.ladder_stats)

The long recorded run, resumable, one JSON file per finished run (see `main`):

    python -m helpers.ladder --data /path/to/cats_vs_dogs_tutorial --seeds 3 \
        --epochs 25 --out results/cats_dogs_ladder_tutorial
"""

import argparse
import csv
import functools
import hashlib
import json
import shlex
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

from . import config, data, models, results, training

__all__ = ["CHANGES", "PAIRS", "RECORDED", "RECORDED_LONG", "build", "datasets", "describe",
           "epoch_rows", "load_runs", "main", "progress_log", "record", "record_run",
           "results_file", "run_path", "save", "train"]

# What each step changes, in the order the notebook climbs the ladder.
CHANGES = {
    "0": "original (2 x Conv32+pool, Dense 128)",
    "1": "+ Conv2D(64) + MaxPool",
    "2": "+ Dropout(0.5)",
    "2b": "step 2 without shear/zoom/flip",
    "3": "128 px, + conv/pool pair, 64 filters each",
    "transfer": "MobileNet 0.25 (ImageNet, frozen) + sigmoid",
}

# Each step against the one it builds on (or is compared with), as notebook 05 reads them.
PAIRS = [("0", "1"), ("1", "2"), ("2", "2b"), ("2", "3"), ("3", "transfer")]
# The recorded ladder on the tutorial's data (8,000 / 2,000 photos, 3 seeds per step), 25 epochs
# of one pass each: 1/32 of the blog's training (published.LADDER_PICTURES_PER_RUN).
RECORDED = config.RESULTS_DIR / "cats_dogs_ladder_tutorial"
# The same data trained longer: steps 1, 2 and 2b, one seed, 100 one-pass epochs (1/8 of it).
RECORDED_LONG = config.RESULTS_DIR / "cats_dogs_ladder_long"


def build(step, seed=None):
    """The model of one step: a LADDER step of models.cats_dogs_net, or 'transfer'. Under a
    mixed-precision policy the sigmoid output stays in float32 (notebook 09 shows why)."""
    if step == "transfer":
        return models.cats_dogs_transfer(seed=seed)
    import keras

    mixed = keras.config.dtype_policy().name.startswith("mixed")
    return models.cats_dogs_net(step, seed=seed, output_dtype="float32" if mixed else None)


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


def datasets(image_size, s, root=None):
    """(train, validation) pipelines for settings `s`, decoded once per image size."""
    return _pipelines(config.profile(), image_size, s.batch, s.train, s.val, root)


@functools.cache
def _pipelines(profile, image_size, batch, train, val, root):
    return tuple(data.cats_dogs(split, image_size, batch, limit=limit, root=root)
                 for split, limit in (("train", train), ("validation", val)))


def train(step, seed, s, verbose=0, root=None, name=None, callbacks=(), log=None):
    """Train one step with one seed under settings `s` (epochs, batch, train, val), as notebook
    05's `train` does on the page; returns (model, record).

    Pictures come from `root` (a cat/dog folder) or the profile's data. With a `name` the
    training resumes from its last finished epoch after an interruption (training.fit); with
    a `log` (a CSV file) every epoch is logged there too and the record is made from the whole
    log, so a resumed run's record keeps the epochs before the interruption.
    """
    import keras

    config.set_seed(seed)
    model = build(step, seed)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    pipelines = datasets(model.input_shape[1], s, root)
    logger = [keras.callbacks.CSVLogger(str(log), append=True)] if log else []
    history, _ = training.fit(model, *pipelines, epochs=s.epochs, name=name, resume=bool(name),
                              verbose=verbose, callbacks=[*logger, *callbacks])
    epochs = _epoch_log(log) if log else epoch_rows(history)
    return model, record(step, seed, model, epochs, pipelines)


def epoch_rows(history):
    """One dict per epoch of a Keras History: its metrics, with `images_per_s` and `epoch_s`
    where a Throughput timer put them into the logs (training.fit does)."""
    logs = history.history
    return [dict(zip(logs, values)) for values in zip(*logs.values())]


def record(step, seed, model, epochs, pipelines):
    """The record of one trained run from its rows per epoch (`epoch_rows`, or a resumed run's
    CSV log): validation and training accuracy (last epoch, and per epoch), training images/s
    (median over the epochs after the first), sizes, number format, machine. `pipelines` are
    the (train, validation) datasets it trained on."""
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
    """A new file for this run: results/ in sample and full, build/results/ in smoke."""
    folder = config.BUILD_DIR / "results" if config.profile() == "smoke" else config.RESULTS_DIR
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return folder / f"{name}_{config.profile()}_{stamp}.json"


def save(runs, path, command="notebooks/05_cats_dogs_improvements.ipynb"):
    """Write the records with the full hardware description, date and command as JSON."""
    from . import ladder_stats  # it reads CHANGES and PAIRS from here
    return results.write_json(path, {
        "command": command, "profile": config.profile(), "date": results.now(),
        "machine": results.machine()["details"], "summary": ladder_stats.summary(runs),
        "records": runs})


# --- the recorded ladder: one command, resumable, one file per finished run ------------------


def run_path(folder, step, seed):
    """The record of one finished run in a recorded-ladder folder."""
    return Path(folder) / f"step-{step}_seed-{seed}.json"


def progress_log(folder, step, seed):
    """The per-epoch CSV log of a run that has not finished yet (gitignored)."""
    return Path(folder) / "in_progress" / f"{run_path(folder, step, seed).stem}.csv"


def load_runs(folder):
    """Every finished run recorded in `folder`, in ladder order, then by seed."""
    order = list(CHANGES)
    runs = [json.loads(p.read_text()) for p in sorted(Path(folder).glob("step-*_seed-*.json"))]
    return sorted(runs, key=lambda r: (order.index(r["step"]), r["seed"]))


def _epoch_log(path):
    """The per-epoch rows a CSVLogger wrote, the last row of each epoch kept (a resumed
    run may have logged an epoch twice); values as floats."""
    if not path.exists():
        return []
    with open(path, newline="") as f:
        rows = {int(row["epoch"]): {k: float(v) for k, v in row.items() if v != ""}
                for row in csv.DictReader(f)}
    return [rows[e] for e in sorted(rows)]


def record_run(step, seed, s, out, root=None, command=None, callbacks=()):
    """Train one run (resumable) and write its record to `out` once it has finished.

    The epochs done so far are logged to a CSV file beside the records, and the model is
    backed up every epoch (build/backup/), so a killed run resumes from its last epoch.
    """
    out = Path(out)
    target = run_path(out, step, seed)
    log = progress_log(out, step, seed)
    log.parent.mkdir(parents=True, exist_ok=True)
    resumed = bool(_epoch_log(log))
    folder_key = hashlib.sha1(str(out.resolve()).encode()).hexdigest()[:8]
    name = f"ladder_{folder_key}_{target.stem}"
    _, record = train(step, seed, s, verbose=2, root=root, name=name, callbacks=callbacks, log=log)
    record.update(resumed=resumed, data=data.shown(root) if root else None, command=command)
    results.write_json(target, record)
    log.unlink()
    return record


def main(argv=None):
    """The command line: train the ladder's runs that are not recorded yet, one by one."""
    import keras
    from tqdm import tqdm

    from . import ladder_stats

    parser = argparse.ArgumentParser(
        prog="python -m helpers.ladder",
        description="Run the cat/dog ladder and record every run in --out; run it again "
                    "after an interruption and it goes on where it stopped.")
    parser.add_argument("--data", help="a cat/dog folder (training_set/ + test_set/, or "
                        "train/ + validation/); default: the profile's pictures")
    parser.add_argument("--steps", nargs="+", default=list(CHANGES), choices=list(CHANGES))
    parser.add_argument("--seeds", type=int, default=3, help="seeds 1..N per step")
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--dtype", default="float32",
                        choices=["float32", "mixed_bfloat16", "mixed_float16"],
                        help="Keras dtype policy (notebook 09); record each in its own --out")
    parser.add_argument("--out", required=True, help="folder for the run records")
    args = parser.parse_args(argv)
    other = {r.get("dtype", "float32") for r in load_runs(args.out)} - {args.dtype}
    if other:
        parser.error(f"{args.out} holds runs in {', '.join(sorted(other))}: record --dtype "
                     f"{args.dtype} in a folder of its own")
    keras.config.set_dtype_policy(args.dtype)
    if args.seeds < 1 or args.epochs < 1 or args.batch < 1:
        parser.error("--seeds, --epochs and --batch must be 1 or more")
    if args.data and not Path(args.data).is_dir():
        parser.error(f"--data {args.data} is not a folder")
    s = SimpleNamespace(train=None, val=None, epochs=args.epochs, batch=args.batch)
    command = shlex.join(["python", "-m", "helpers.ladder", *(argv or sys.argv[1:])])
    runs = [(step, seed) for step in args.steps for seed in range(1, args.seeds + 1)]
    start = time.perf_counter()
    # every epoch of every run on one bar (stderr); epochs already done count as its start,
    # so the time left comes from the pace of this session's epochs only
    done_before = sum(args.epochs if run_path(args.out, step, seed).exists()
                      else len(_epoch_log(progress_log(args.out, step, seed)))
                      for step, seed in runs)
    bar = tqdm(total=len(runs) * args.epochs, initial=done_before, unit="epoch", desc="ladder",
               smoothing=0.05)
    for i, (step, seed) in enumerate(runs, 1):
        done = run_path(args.out, step, seed)
        if done.exists():
            bar.write(f"[{i}/{len(runs)}] step {step}, seed {seed}: recorded in "
                      f"{data.shown(done)}")
            continue
        bar.write(f"[{i}/{len(runs)}] step {step}, seed {seed}: training ({CHANGES[step]}); "
                  f"{(time.perf_counter() - start) / 60:.1f} min so far")
        r = record_run(step, seed, s, args.out, root=args.data, command=command,
                       callbacks=[keras.callbacks.LambdaCallback(
                           on_epoch_end=lambda epoch, logs: bar.update(1))])
        bar.write(f"[{i}/{len(runs)}] step {step}, seed {seed}: validation accuracy "
                  f"{r['val_accuracy']:.1%}, {r['images_per_s']:,.0f} pictures/s, "
                  f"{r['wall_s'] / 60:.1f} min")
    bar.close()
    rows = ladder_stats.summary(load_runs(args.out))
    print(ladder_stats.table(rows).to_string(index=False))


if __name__ == "__main__":
    main()
