"""The cat/dog improvement ladder as a measured experiment (notebook 05).

    s = config.settings("cats_dogs_ladder")
    runs = [ladder.train(step, seed, s) for seed in range(1, s.seeds + 1)]
    ladder.save(runs, path)             # results/ (sample, full) or build/results/ (smoke)
    ladder.summary(runs)                # per step: mean and spread of validation accuracy

The long recorded run, resumable, one JSON file per finished run (see `main`):

    python -m helpers.ladder --data ../shared/data/cats_vs_dogs_tutorial --seeds 3 \
        --epochs 25 --out results/cats_dogs_ladder_tutorial
"""

import argparse
import csv
import functools
import hashlib
import json
import math
import shlex
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

from . import config, data, models, published, results, training
from .timing import Throughput

__all__ = ["CHANGES", "PAIRS", "RECORDED", "RECORDED_LONG", "build", "datasets", "describe",
           "difference", "epochs_table", "findings", "load_runs", "longer_training", "main",
           "progress_log", "record", "record_run", "results_file", "run_path", "save",
           "share_of_blog", "summary", "t_quantile", "table", "train", "verdicts",
           "window_means"]

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


def datasets(image_size, s, root=None):
    """(train, validation) pipelines for settings `s`, decoded once per image size."""
    return _pipelines(config.profile(), image_size, s.batch, s.train, s.val, root)


@functools.cache
def _pipelines(profile, image_size, batch, train, val, root):
    return tuple(data.cats_dogs(split, image_size, batch, limit=limit, root=root)
                 for split, limit in (("train", train), ("validation", val)))


def train(step, seed, s, verbose=0, root=None, name=None, callbacks=()):
    """Train one step with one seed under settings `s` (epochs, batch, train, val).

    Pictures come from `root` (a cat/dog folder) or the profile's data. With a `name` the
    training resumes from its last finished epoch after an interruption (training.fit).
    Returns its record: validation accuracy (last epoch, and per epoch), parameters,
    training images/s (median over epochs after the first), images, hardware, date.
    """
    config.set_seed(seed)
    model = build(step, seed)
    train_ds, val_ds = datasets(model.input_shape[1], s, root)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    start = time.perf_counter()
    history, timer = training.fit(model, train_ds, val_ds, epochs=s.epochs, name=name,
                                  resume=bool(name), verbose=verbose, callbacks=callbacks)
    return record(step, seed, model, history, timer, (train_ds, val_ds),
                  time.perf_counter() - start)


def record(step, seed, model, history, timer, pipelines, wall_s):
    """The record of one trained run: validation accuracy (last epoch, and per epoch),
    parameters, training images/s (median over epochs after the first), sizes, machine.
    `pipelines` are the (train, validation) datasets it trained on; `timer` its Throughput."""
    rates = [e["images_per_s"] for e in timer.epochs]
    logs = history.history  # empty when a resumed run had already finished its last epoch
    train_ds, val_ds = pipelines
    return {
        "step": step, "change": CHANGES[step], "seed": seed,
        "val_accuracy": (logs.get("val_accuracy") or [None])[-1],
        "val_accuracy_per_epoch": logs.get("val_accuracy", []),
        "train_accuracy": (logs.get("accuracy") or [None])[-1],
        "params": model.count_params(),
        "images_per_s": statistics.median(rates[1:] or rates) if rates else None,
        "epochs": len(logs.get("loss", [])), "batch": timer.batch_size,
        "image_size": model.input_shape[1],
        "train_images": train_ds.num_examples, "val_images": val_ds.num_examples,
        "wall_s": wall_s, "profile": config.profile(),
        "date": results.now(),
        "hardware": results.machine()["hardware"], "versions": results.machine()["versions"],
    }


def results_file(name="cats_dogs_ladder"):
    """A new file for this run: results/ in sample and full, build/results/ in smoke."""
    folder = config.BUILD_DIR / "results" if config.profile() == "smoke" else config.RESULTS_DIR
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return folder / f"{name}_{config.profile()}_{stamp}.json"


def save(runs, path, command="notebooks/05_cats_dogs_improvements.ipynb"):
    """Write the records with the full hardware description, date and command as JSON."""
    return results.write_json(path, {
        "command": command, "profile": config.profile(), "date": results.now(),
        "machine": results.machine()["details"], "summary": summary(runs), "records": runs})


def summary(runs):
    """Per step, in order of first appearance: runs, mean, spread (standard deviation),
    min and max of validation accuracy; parameters; median training images/s."""
    if not runs:
        raise ValueError("No ladder records to summarise: train at least one step first.")
    rows = {}
    for step in dict.fromkeys(r["step"] for r in runs):
        mine = [r for r in runs if r["step"] == step]
        acc = [r["val_accuracy"] for r in mine]
        rows[step] = {"runs": len(mine), "mean": statistics.mean(acc),
                      "spread": statistics.stdev(acc) if len(acc) > 1 else 0.0,
                      "min": min(acc), "max": max(acc), "params": mine[0]["params"],
                      "images_per_s": statistics.median(r["images_per_s"] for r in mine),
                      "of_blog": (statistics.median(map(share_of_blog, mine))
                                  if all("epochs" in r for r in mine) else None)}
    return rows


def t_quantile(p, df):
    """The p-quantile of Student's t distribution with `df` degrees of freedom (df may be a
    fraction), by integrating its density: the standard library has no t distribution."""
    density = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)

    def cdf(t, n=2000):  # Simpson's rule from 0 to t, plus the lower half
        h = t / n
        f = [density * (1 + (i * h) ** 2 / df) ** (-(df + 1) / 2) for i in range(n + 1)]
        return 0.5 + h / 3 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))

    low, high = 0.0, 1000.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if cdf(mid) < p else (low, mid)
    return (low + high) / 2


def difference(a, b, level=0.95):
    """The change in mean accuracy from summary row `a` to `b`, in points, with its `level`
    confidence interval (Welch's t-interval: each step keeps its own spread); None for the
    interval when a step has a single run."""
    gain = 100 * (b["mean"] - a["mean"])
    if min(a["runs"], b["runs"]) < 2:
        return gain, None
    va, vb = ((100 * r["spread"]) ** 2 / r["runs"] for r in (a, b))
    if va + vb == 0:
        return gain, (gain, gain)
    df = (va + vb) ** 2 / (va ** 2 / (a["runs"] - 1) + vb ** 2 / (b["runs"] - 1))
    half = t_quantile(0.5 + level / 2, df) * math.sqrt(va + vb)
    return gain, (gain - half, gain + half)


def _real(interval):
    """A change is real when its interval excludes zero."""
    return interval[0] > 0 or interval[1] < 0


def verdicts(rows):
    """Per pair of steps in PAIRS that `rows` (a summary) both hold: the change in mean
    validation accuracy in points, its 95 % interval, the verdict, and the source's change.

    A change is "real" when its interval excludes zero, "not told apart" when it holds zero;
    with one seed a step has no spread, and no verdict is given."""
    lines = []
    for before, after in PAIRS:
        if before not in rows or after not in rows:
            continue
        gain, interval = difference(rows[before], rows[after])
        if interval is None:
            verdict = "one seed: no interval"
        else:
            low, high = interval
            told = "real" if _real(interval) else "not told apart from seed luck"
            verdict = f"95 % interval {low:+.1f} to {high:+.1f}: {told}"
        ours = published.LADDER_ACCURACY.get(before)
        theirs = published.LADDER_ACCURACY.get(after)
        source = f"source {theirs - ours:+d} points" if ours and theirs else "not in the source"
        lines.append(f"{before:>2} -> {after:<9} here {gain:+5.1f} points ({verdict}); {source}")
    return lines


def findings(rows):
    """The verdicts of `rows` (a summary) as one sentence: which changes are real (their 95 %
    interval excludes zero) and which the seeds cannot tell apart."""
    real, unclear = [], []
    for before, after in PAIRS:
        if before in rows and after in rows:
            gain, interval = difference(rows[before], rows[after])
            if interval is not None:
                named = f"{before} -> {after} ({gain:+.1f} points)"
                (real if _real(interval) else unclear).append(named)
    if not real and not unclear:
        return "No pair of steps with two or more seeds each: no finding."
    return (f"Real: {', '.join(real) or 'none'}. "
            f"Not told apart from seed luck: {', '.join(unclear) or 'none'}.")


def window_means(run, ends=(25, 50, 75, 100), width=5):
    """Training and validation accuracy of one record around given epochs, in %: the mean of
    the `width` epochs that end there (one epoch's figure jumps by a point or two)."""
    found = {}
    for end in ends:
        if end <= len(run["val_accuracy_per_epoch"]):
            part = slice(max(end - width, 0), end)
            found[end] = tuple(100 * statistics.mean(run[key][part]) for key in
                               ("train_accuracy_per_epoch", "val_accuracy_per_epoch"))
    return found


def longer_training(long_runs, short_rows, start=25):
    """What training longer did, one line per step of `long_runs` (single-seed records):
    validation accuracy at `start` epochs and at the last, called risen, fallen or held
    against the seed spread of that step in `short_rows` (a summary of the 3-seed records,
    at least 1 point); the best epoch; and the training-validation gap at both ends."""
    lines = []
    for run in long_runs:
        means = window_means(run, (start, run["epochs"]))
        if len(means) < 2:
            continue
        (train0, val0), (train1, val1) = means[start], means[run["epochs"]]
        row = short_rows.get(run["step"], {})
        tolerance = max(1.0, 100 * row.get("spread", 0.0))
        change = val1 - val0
        verdict = ("rose" if change > tolerance else "fell" if change < -tolerance
                   else "held")
        best = max(range(run["epochs"]), key=run["val_accuracy_per_epoch"].__getitem__)
        lines.append(
            f"step {run['step']:<2}: validation {val0:.1f} % at {start} epochs, {val1:.1f} % at "
            f"{run['epochs']} ({change:+.1f} points: {verdict}, tolerance ±{tolerance:.1f}); "
            f"best {100 * run['val_accuracy_per_epoch'][best]:.1f} % at epoch {best + 1}; "
            f"gap to training {train0 - val0:+.1f} -> {train1 - val1:+.1f} points")
    return lines


def epochs_table(runs, ends=(25, 50, 75, 100)):
    """Validation and training accuracy of each record around `ends` (window_means) as a
    DataFrame, with the share of the blog's training each record trained."""
    import pandas as pd

    return pd.DataFrame([{
        "step": r["step"], "seed": r["seed"],
        "training": f"1/{1 / share_of_blog(r):.0f} of the blog's",
        **{f"epoch {end}": f"{val:.1f} % (train {train:.1f} %)"
           for end, (train, val) in window_means(r, ends).items()},
    } for r in runs])


def share_of_blog(run):
    """How much of one of the blog's runs a record trained, as pictures seen: the blog's
    Keras 2 "epoch" was 8,000 batches of 32, so 25 one-pass epochs on 8,000 photos are 1/32."""
    return run["epochs"] * run["train_images"] / published.LADDER_PICTURES_PER_RUN


def table(rows, where="here"):
    """The summary beside the source's figures as a pandas DataFrame (a table in Jupyter, on
    the site and on slides); `where` names the machine the runs come from ("here",
    "recorded") in the column names."""
    import pandas as pd

    return pd.DataFrame([{
        "step": step, "change": CHANGES[step],
        f"val. acc. {where}": f"{100 * row['mean']:.1f} ± {100 * row['spread']:.1f} %",
        "runs": row["runs"],
        "source": f"{published.LADDER_ACCURACY[step]} %"
        if step in published.LADDER_ACCURACY else "—",
        "training": f"1/{1 / row['of_blog']:.0f} of the blog's" if row.get("of_blog") else "—",
        "params": f"{row['params']:,}", f"img/s {where}": f"{row['images_per_s']:,.0f}",
        "source V100": f"{published.LADDER_V100_SPEED[step]:,}"
        if step in published.LADDER_V100_SPEED else "—",
    } for step, row in rows.items()])


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
    import keras

    out = Path(out)
    target = run_path(out, step, seed)
    log = progress_log(out, step, seed)
    log.parent.mkdir(parents=True, exist_ok=True)
    resumed = bool(_epoch_log(log))
    folder_key = hashlib.sha1(str(out.resolve()).encode()).hexdigest()[:8]
    name = f"ladder_{folder_key}_{target.stem}"
    speed = Throughput(s.batch, to_logs=True)  # puts images/s and epoch time into the log
    record = train(step, seed, s, verbose=2, root=root, name=name,
                   callbacks=[speed, keras.callbacks.CSVLogger(str(log), append=True),
                              *callbacks])
    epochs = _epoch_log(log)
    rates = [e["images_per_s"] for e in epochs]
    record.update(
        val_accuracy=epochs[-1]["val_accuracy"], train_accuracy=epochs[-1]["accuracy"],
        val_accuracy_per_epoch=[e["val_accuracy"] for e in epochs],
        train_accuracy_per_epoch=[e["accuracy"] for e in epochs],
        images_per_s_per_epoch=rates, images_per_s=statistics.median(rates[1:] or rates),
        epochs=len(epochs), wall_s=sum(e["epoch_s"] for e in epochs), resumed=resumed,
        dtype=keras.config.dtype_policy().name, data=data.shown(root) if root else None,
        command=command, cpu_simd=results.machine()["details"]["cpu"]["simd"])
    results.write_json(target, record)
    log.unlink()
    return record


def main(argv=None):
    """The command line: train the ladder's runs that are not recorded yet, one by one."""
    import keras
    from tqdm import tqdm

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
    parser.add_argument("--out", required=True, help="folder for the run records")
    args = parser.parse_args(argv)
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
    print(table(summary(load_runs(args.out))).to_string(index=False))


if __name__ == "__main__":
    main()
