"""Reading the ladder's records (notebooks 04 and 05): per step the mean and spread of
validation accuracy, the change between two steps with its 95 % interval (Welch), the verdict
"real" or "not told apart from seed luck", what training longer did, and the tables that set
it all beside the source's figures. helpers.ladder trains and records the runs."""

import math
import statistics

from . import published
from .ladder import CHANGES, PAIRS

__all__ = ["difference", "epochs_table", "findings", "longer_training", "share_of_blog",
           "summary", "t_quantile", "table", "verdicts", "window_means"]


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
