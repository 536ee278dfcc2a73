"""The cat/dog improvement ladder as a measured experiment (notebooks 05, 09): its steps and
the pairs it compares, one run trained and recorded, and the records read (mean and spread per
step, changes with their 95 % interval and verdict, longer training, tables beside the source's
figures); and the course's saved networks, notebook 04's and 03's, trained when missing
(notebooks 06, 11). `python -m tools.ladder` records the long runs in results/. Importing it
imports no TensorFlow: the functions that train load what they need when called."""

import functools
import json
import math
import os
import statistics
from datetime import datetime
from pathlib import Path

from . import config, published, results

__all__ = [
    "CHANGES",
    "PAIRS",
    "RECORDED",
    "RECORDED_LONG",
    "TRANSFER",
    "build",
    "by_setting",
    "collapsed",
    "compare_settings",
    "datasets",
    "difference",
    "epoch_rows",
    "fisher_exact",
    "setting",
    "epochs_table",
    "load_runs",
    "longer_training",
    "model_path",
    "record",
    "results_file",
    "save",
    "share_of_blog",
    "summary",
    "table",
    "train",
    "train_transfer",
    "trained_cats_dogs",
    "trained_transfer",
    "verdicts",
    "window_means",
]

# The steps in the order the notebook climbs the ladder: the blog's, then the course's own.
CHANGES = {
    **{step: about["change"] for step, about in published.LADDER.items()},
    "transfer": "MobileNet 0.25 (ImageNet, frozen) + sigmoid",
}

# Each step against the one it builds on (or is compared with), as notebook 05 reads them.
PAIRS = [("0", "1"), ("1", "2"), ("2", "2b"), ("2", "3"), ("3", "transfer")]


def summary(runs):
    """Per step, in order of first appearance: runs, mean, spread (standard deviation), min and
    max of validation accuracy, weights, median training images/s (notebook 05)."""
    if not runs:
        raise ValueError(
            "No ladder records to summarise: train at least one step first."
        )
    rows = {}
    for step in dict.fromkeys(r["step"] for r in runs):
        mine = [r for r in runs if r["step"] == step]
        acc = [r["val_accuracy"] for r in mine]
        rows[step] = {
            "runs": len(mine),
            "mean": statistics.mean(acc),
            "spread": statistics.stdev(acc) if len(acc) > 1 else 0.0,
            "min": min(acc),
            "max": max(acc),
            "params": mine[0]["params"],
            "images_per_s": statistics.median(r["images_per_s"] for r in mine),
            "of_blog": (
                statistics.median(map(share_of_blog, mine))
                if all("epochs" in r for r in mine)
                else None
            ),
        }
    return rows


def difference(a, b, level=0.95):
    """The change in mean accuracy from summary row `a` to `b` in points, with its Welch
    t-interval (None with a single run) (notebooks 05, 09)."""
    # Student's t; importing it here keeps this module free of TensorFlow
    from . import timing

    gain = 100 * (b["mean"] - a["mean"])
    if min(a["runs"], b["runs"]) < 2:
        return gain, None
    va, vb = ((100 * r["spread"]) ** 2 / r["runs"] for r in (a, b))
    if va + vb == 0:
        return gain, (gain, gain)
    df = (va + vb) ** 2 / (va**2 / (a["runs"] - 1) + vb**2 / (b["runs"] - 1))
    half = timing.t_quantile(0.5 + level / 2, df) * math.sqrt(va + vb)
    return gain, (gain - half, gain + half)


def setting(run):
    """How a run computed: its dtype policy, and for bfloat16 on an AMX CPU whether oneDNN
    used AMX or was capped below it by ONEDNN_MAX_CPU_ISA (notebook 09)."""
    cap, policy = run.get("onednn_max_cpu_isa"), run.get("dtype", "float32")
    if "bfloat16" not in policy or "amx_bf16" not in run.get("cpu_simd", []):
        return policy
    if cap and "AMX" not in cap.upper() and cap.upper() not in ("ALL", "DEFAULT"):
        return f"{policy}, AMX off (ONEDNN_MAX_CPU_ISA={cap})"
    return f"{policy} on AMX"


def collapsed(run):
    """A run whose weights turned non-finite, or that ended answering one class for every
    picture (validation accuracy within one point of 50 %) (notebook 09)."""
    nonfinite = any(n for n in run.get("nonfinite_weights_per_epoch") or [] if n)
    return nonfinite or abs(run["val_accuracy"] - 0.5) <= 0.01


def fisher_exact(a, n, b, m):
    """Two-sided p-value of Fisher's exact test for `a` of `n` runs against `b` of `m`: the
    chance of a split at least as uneven if both came from one setting (notebook 09)."""
    if not (0 <= a <= n and 0 <= b <= m and n and m):
        raise ValueError(f"counts must lie within their runs: {a} of {n}, {b} of {m}.")
    both = a + b

    def chance(k):  # k of the `both` events among the first n runs (hypergeometric)
        return math.comb(n, k) * math.comb(m, both - k) / math.comb(n + m, both)

    seen = chance(a)
    return min(
        1.0,
        sum(
            chance(k)
            for k in range(max(0, both - m), min(n, both) + 1)
            if chance(k) <= seen * (1 + 1e-9)
        ),
    )


def by_setting(runs):
    """One row per machine and setting: runs, how many collapsed, and the mean validation
    accuracy of the others (notebook 09)."""
    import pandas as pd

    groups = {}
    for r in runs:
        groups.setdefault((r["hardware"], setting(r)), []).append(r)
    rows = []
    for (machine, how), mine in groups.items():
        kept = [r["val_accuracy"] for r in mine if not collapsed(r)]
        rows.append(
            {
                "machine": machine,
                "setting": how,
                "runs": len(mine),
                "collapsed": sum(map(collapsed, mine)),
                "mean of the others": statistics.mean(kept) if kept else None,
            }
        )
    return pd.DataFrame(rows)


def compare_settings(base, other, level=0.05):
    """Two lines comparing runs of one machine: `other`'s collapses against `base`'s, counted,
    with Fisher's exact test; then the accuracy of the runs that did not collapse, with its Welch
    interval (notebook 09)."""
    if len({r["hardware"] for r in [*base, *other]}) != 1:
        raise ValueError(
            "compare runs of one machine only: a CPU's kernels differ between machines."
        )
    (a, n), (b, m) = ((sum(map(collapsed, rs)), len(rs)) for rs in (other, base))
    p = fisher_exact(a, n, b, m)
    told = (
        "more often than"
        if p < level and a / n > b / m
        else ("less often than" if p < level else "not told apart from")
    )
    lines = [
        f"{setting(other[0])}: collapsed in {a} of {n} runs, {setting(base[0])} in {b} of "
        f"{m} (Fisher's exact test p = {p:.2f}): {told} {setting(base[0])}"
    ]
    kept = [[r for r in rs if not collapsed(r)] for rs in (base, other)]
    if min(map(len, kept)) < 2:
        return lines + [
            "accuracy not compared: fewer than 2 runs that did not collapse on a side"
        ]
    rows = [summary(rs)[rs[0]["step"]] for rs in kept]
    gain, (low, high) = difference(*rows)
    held = "holds" if low <= 0 <= high else "does not hold"
    return lines + [
        f"accuracy of the runs that did not collapse: {gain:+.1f} points (95 % "
        f"interval {low:+.1f} to {high:+.1f}): the accuracy {held}"
    ]


def verdicts(rows):
    """Per pair of steps of a summary: the change in points, its 95 % interval, "real" when the
    interval excludes zero, else "not told apart from seed luck" (no verdict with one seed),
    the source's change; then one line that sums the verdicts up (notebook 05)."""
    lines, real, unclear = [], [], []
    for before, after in PAIRS:
        if before not in rows or after not in rows:
            continue
        gain, interval = difference(rows[before], rows[after])
        verdict = "one seed: no interval"
        if interval is not None:
            is_real = interval[0] > 0 or interval[1] < 0
            (real if is_real else unclear).append(
                f"{before} -> {after} ({gain:+.1f} points)"
            )
            told = "real" if is_real else "not told apart from seed luck"
            verdict = f"95 % interval {interval[0]:+.1f} to {interval[1]:+.1f}: {told}"
        ours = published.LADDER_ACCURACY.get(before)
        theirs = published.LADDER_ACCURACY.get(after)
        source = (
            f"source {theirs - ours:+d} points"
            if ours and theirs
            else "not in the source"
        )
        lines.append(
            f"{before:>2} -> {after:<9} here {gain:+5.1f} points ({verdict}); {source}"
        )
    if not real and not unclear:
        return [*lines, "No pair of steps with two or more seeds each: no finding."]
    return [
        *lines,
        f"Real: {', '.join(real) or 'none'}. "
        f"Not told apart from seed luck: {', '.join(unclear) or 'none'}.",
    ]


def window_means(run, ends=(25, 50, 75, 100), width=5):
    """Training and validation accuracy (%) of one record at given epochs, each the mean of the
    `width` epochs that end there: one epoch's figure jumps by a point or two (notebook 05)."""
    found = {}
    for end in ends:
        if end <= len(run["val_accuracy_per_epoch"]):
            part = slice(max(end - width, 0), end)
            found[end] = tuple(
                100 * statistics.mean(run[key][part])
                for key in ("train_accuracy_per_epoch", "val_accuracy_per_epoch")
            )
    return found


def longer_training(long_runs, short_rows, start=25):
    """What training longer did to each single-seed record (notebook 05): validation accuracy
    at `start` and at the end, risen, fallen or held against that step's seed spread in
    `short_rows` (at least 1 point), the best epoch, the training-validation gap."""
    lines = []
    for run in long_runs:
        means = window_means(run, (start, run["epochs"]))
        if len(means) < 2:
            continue
        (train0, val0), (train1, val1) = means[start], means[run["epochs"]]
        tolerance = max(1.0, 100 * short_rows.get(run["step"], {}).get("spread", 0.0))
        change = val1 - val0
        verdict = (
            "rose" if change > tolerance else "fell" if change < -tolerance else "held"
        )
        best = max(range(run["epochs"]), key=run["val_accuracy_per_epoch"].__getitem__)
        lines.append(
            f"step {run['step']:<2}: validation {val0:.1f} % at {start} epochs, {val1:.1f} % at "
            f"{run['epochs']} ({change:+.1f} points: {verdict}, tolerance ±{tolerance:.1f}); "
            f"best {100 * run['val_accuracy_per_epoch'][best]:.1f} % at epoch {best + 1}; "
            f"gap to training {train0 - val0:+.1f} -> {train1 - val1:+.1f} points"
        )
    return lines


def epochs_table(runs, ends=(25, 50, 75, 100)):
    """Validation and training accuracy of each record around `ends` (window_means), with the
    share of the blog's training it had, as a DataFrame (notebook 05)."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "step": r["step"],
                "seed": r["seed"],
                "training": f"1/{1 / share_of_blog(r):.0f} of the blog's",
                **{
                    f"epoch {end}": f"{val:.1f} % (train {train:.1f} %)"
                    for end, (train, val) in window_means(r, ends).items()
                },
            }
            for r in runs
        ]
    )


def share_of_blog(run):
    """The share of one blog run's pictures a record trained on (notebook 05): the blog's
    Keras 2 "epoch" was 8,000 batches of 32, so 25 one-pass epochs on 8,000 photos are 1/32."""
    return run["epochs"] * run["train_images"] / published.LADDER_PICTURES_PER_RUN


def table(rows, where="here"):
    """A summary beside the source's figures as a DataFrame (notebook 05); `where` ("here",
    "recorded") names the machine of the runs in the column names."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "step": step,
                "change": CHANGES[step],
                f"val. acc. {where}": f"{100 * row['mean']:.1f} ± {100 * row['spread']:.1f} %",
                "runs": row["runs"],
                "source": f"{published.LADDER_ACCURACY[step]} %"
                if step in published.LADDER_ACCURACY
                else "—",
                "training": f"1/{1 / row['of_blog']:.0f} of the blog's"
                if row.get("of_blog")
                else "—",
                "params": f"{row['params']:,}",
                f"img/s {where}": f"{row['images_per_s']:,.0f}",
                "source V100": f"{published.LADDER_V100_SPEED[step]:,}"
                if step in published.LADDER_V100_SPEED
                else "—",
            }
            for step, row in rows.items()
        ]
    )


# The tutorial's 8,000 / 2,000 photos: 3 seeds per step, 25 one-pass epochs (1/32 of the blog's
# training); and steps 1, 2, 2b with one seed for 100 epochs (1/8).
RECORDED = config.RESULTS_DIR / "cats_dogs_ladder_tutorial"
RECORDED_LONG = config.RESULTS_DIR / "cats_dogs_ladder_long"


def build(step, seed=None):
    """The network of one ladder step (notebook 05); under a mixed-precision policy its sigmoid
    output stays in float32 (notebook 09 shows why)."""
    import keras

    from . import models

    if step == "transfer":
        return models.cats_dogs_transfer(seed=seed)

    mixed = keras.config.dtype_policy().name.startswith("mixed")
    return models.cats_dogs_net(
        step, seed=seed, output_dtype="float32" if mixed else None
    )


def datasets(image_size, s, root=None):
    """(train, validation) pipelines for settings `s`, decoded once per image size (notebook
    05); `root`: a cat/dog folder instead of the profile's pictures."""
    return _pipelines(config.profile(), image_size, s.batch, s.train, s.val, root)


@functools.cache
def _pipelines(profile, image_size, batch, train, val, root):
    from . import data

    return tuple(
        data.cats_dogs(split, image_size, batch, limit=limit, root=root)
        for split, limit in (("train", train), ("validation", val))
    )


# Written from notebooks/05_cats_dogs_improvements.ipynb by `make pages`: change it there.
def train(step, seed, s, root=None, **fit_args):  # @save
    """Train ladder step `step` with one seed under settings `s` (pictures from `root`,
    else the profile's); `fit_args` go to training.fit (`name=` makes the run
    resumable). Returns (model, record) (notebook 05)."""
    from helpers import training  # notebook 04's model.fit, timed; loads TensorFlow

    config.set_seed(seed)
    model = build(step, seed)  # float32 output under mixed precision
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    pipelines = datasets(model.input_shape[1], s, root)  # decoded once per size, cached
    fit_args = {"verbose": 0, **fit_args}
    history, _ = training.fit(model, *pipelines, epochs=s.epochs, **fit_args)
    return model, record(step, seed, model, epoch_rows(history), pipelines)


def epoch_rows(history):
    """One dict of metrics per epoch of a Keras History (notebook 05)."""
    logs = history.history
    return [dict(zip(logs, values)) for values in zip(*logs.values())]


def record(step, seed, model, epochs, pipelines):
    """The record of one run trained on `pipelines` (train, validation) from its `epochs` rows,
    which hold `images_per_s` and `epoch_s` from a Throughput timer (notebook 05)."""
    import keras

    from . import training

    rates = [e["images_per_s"] for e in epochs]
    train_ds, val_ds = pipelines
    machine = results.machine()
    return {
        "step": step,
        "change": CHANGES[step],
        "seed": seed,
        "val_accuracy": epochs[-1]["val_accuracy"] if epochs else None,
        "train_accuracy": epochs[-1]["accuracy"] if epochs else None,
        "val_accuracy_per_epoch": [e["val_accuracy"] for e in epochs],
        "train_accuracy_per_epoch": [e["accuracy"] for e in epochs],
        "loss_per_epoch": [e["loss"] for e in epochs],
        "nonfinite_weights_per_epoch": [e.get("nonfinite_weights") for e in epochs],
        "params": model.count_params(),
        "images_per_s": statistics.median(rates[1:] or rates) if rates else None,
        "images_per_s_per_epoch": rates,
        "epochs": len(epochs),
        "wall_s": sum(e["epoch_s"] for e in epochs),
        "batch": training.batch_size_of(train_ds),
        "image_size": model.input_shape[1],
        "train_images": train_ds.num_examples,
        "val_images": val_ds.num_examples,
        "dtype": keras.config.dtype_policy().name,
        "profile": config.profile(),
        "date": results.now(),
        "hardware": machine["hardware"],
        "versions": machine["versions"],
        "cpu_simd": machine["details"]["cpu"]["simd"],
        # None: the CPU's widest
        "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA"),
    }


def results_file(name="cats_dogs_ladder"):
    """A new file for this run: results/, or build/results/ in smoke (notebook 05)."""
    folder = (
        config.BUILD_DIR / "results"
        if config.profile() == "smoke"
        else config.RESULTS_DIR
    )
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return folder / f"{name}_{config.profile()}_{stamp}.json"


def save(runs, path, command="notebooks/05_cats_dogs_improvements.ipynb"):
    """Write the records with their summary, the machine, date and command (notebook 05)."""

    return results.write_json(
        path,
        {
            "command": command,
            "profile": config.profile(),
            "date": results.now(),
            "machine": results.machine()["details"],
            "summary": summary(runs),
            "records": runs,
        },
    )


def load_runs(folder):
    """Every finished run recorded in `folder`, in ladder order, then by seed (notebook 05)."""
    order = list(CHANGES)
    runs = [
        json.loads(p.read_text())
        for p in sorted(Path(folder).glob("step-*_seed-*.json"))
    ]
    return sorted(runs, key=lambda r: (order.index(r["step"]), r["seed"]))


TRANSFER = "cats_dogs_transfer"  # the name notebook 03 saves its fine-tuned transfer model under


def model_path(name="cats_dogs_original"):
    """Where notebook 04 (03: `name=TRANSFER`) saves its model for this profile (notebook 04)."""
    return config.BUILD_DIR / "models" / f"{name}_{config.profile()}.keras"


def trained_cats_dogs():
    """Notebook 04's saved model for this profile, else step 0 trained now, saved (notebook 06)."""
    s = config.settings("cats_dogs")
    return _saved_or_trained(
        model_path(),
        "04",
        f"the original net for {s.epochs} epochs",
        lambda: train("0", config.SEED, s)[0],
    )


def _saved_or_trained(path, notebook, what, train):
    """The model saved at `path`, else `train()`'s, saved there, saying so."""
    import keras

    from . import folders, training

    if path.exists():
        print(f"Loaded {folders.shown(path)}")
        return keras.saving.load_model(path)
    print(
        f"{folders.shown(path)} is missing (run notebook {notebook} for it); training {what} "
        "instead."
    )
    model = train()
    training.save_model(model, path)
    return model


def train_transfer(s):
    """Notebook 03's (p(cat), p(dog)) model, trained as 03 does with settings `s` (notebook 06)."""
    import keras

    from . import data, models

    config.set_seed()
    base = models.imagenet_base(s.base, s.image_size)
    train = data.cats_dogs(
        "train", image_size=s.image_size, batch_size=s.batch, limit=s.train
    )
    features, labels = models.extract_features(base, train)
    head = models.classifier_head(features.shape[1:], len(train.class_names))
    head.compile(
        optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"]
    )
    head.fit(features, labels, epochs=s.head_epochs, batch_size=s.batch, verbose=0)
    models.unfreeze_top_third(base)
    model = keras.Sequential([base, head], name="fine_tuned")
    model.compile(
        optimizer=keras.optimizers.Adam(1e-4),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    model.fit(train, epochs=s.finetune_epochs, shuffle=False, verbose=0)
    return model


def trained_transfer():
    """Notebook 03's saved transfer model, else `train_transfer` now, saved (notebook 06)."""
    s = config.settings("transfer")
    return _saved_or_trained(
        model_path(TRANSFER),
        "03",
        f"notebook 03's transfer model (epochs: head "
        f"{s.head_epochs}, fine-tuning {s.finetune_epochs})",
        lambda: train_transfer(s),
    )
