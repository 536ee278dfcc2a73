"""Comparisons that hold on a busy machine (notebook 00, used by 02, 05 and 07-11): the
workloads timed in alternation, the ratio taken per round, and a verdict from the spread of
those ratios, which says "inconclusive" when the machine's speed changed more than the
difference."""

import math
import statistics
import time

import numpy as np

__all__ = ["SAME_WITHIN", "alternate", "ratio", "t_quantile"]

SAME_WITHIN = 0.10  # two speeds whose whole interval lies within 10 % either way are "the same"


def t_quantile(p, df):
    """The p-quantile of Student's t with `df` (maybe fractional) degrees of freedom, from its
    density summed on a fine grid: the standard library has no t distribution (notebook 05)."""
    t = np.linspace(0.0, 1000.0, 1_000_001)
    scale = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    density = scale * (1 + t ** 2 / df) ** (-(df + 1) / 2)
    cdf = 0.5 + np.concatenate([[0.0], np.cumsum((density[1:] + density[:-1]) / 2 * np.diff(t))])
    return float(np.interp(p, cdf, t))


def alternate(work, units=1, rounds=6, seconds=1.0, warmup=1):
    """Speeds (units/s) of each call in `work` ({name: call}, each call doing `units` of work,
    or {name: units}) per round: every round runs each call for about `seconds`, the order
    reversed every other round, so a change in the machine's load meets all alike (notebook 00)."""
    if rounds < 3 or seconds <= 0:
        raise ValueError(f"rounds must be 3 or more and seconds positive; got {rounds}, {seconds}.")
    units = units if isinstance(units, dict) else dict.fromkeys(work, units)
    for call in work.values():
        for _ in range(warmup):  # compiling, caches, the first batch: time none of it
            call()
    speeds = {name: [] for name in work}
    for r in range(rounds):
        for name in list(work)[:: 1 if r % 2 == 0 else -1]:
            calls, elapsed, start = 0, 0.0, time.perf_counter()
            while elapsed < seconds:  # at least one call
                work[name]()
                calls, elapsed = calls + 1, time.perf_counter() - start
            speeds[name].append(units[name] * calls / elapsed)
    return speeds


def ratio(a, b, names, unit="images/s", same=SAME_WITHIN, level=0.95):
    """How many times as fast `a` is as `b` (speeds from the same rounds of `alternate`), with a
    `level` t-interval over the per-round ratios, and the verdict (notebook 00)."""
    logs = [math.log(x / y) for x, y in zip(a, b, strict=True)]
    mean, spread = statistics.mean(logs), statistics.stdev(logs)
    half = t_quantile(0.5 + level / 2, len(logs) - 1) * spread / math.sqrt(len(logs))
    low, mid, high = (math.exp(mean + k * half) for k in (-1, 0, 1))
    head = (f"{names[0]} {statistics.median(a):,.0f} vs {names[1]} {statistics.median(b):,.0f} "
            f"{unit} ({len(logs)} rounds)")
    if 1 / (1 + same) <= low and high <= 1 + same:
        kind, text = "same", f"the same within {100 * same:.0f} % (interval {low:.2f}-{high:.2f}x)"
    elif low > 1 or high < 1:
        fast, k, lo, hi = (names[0], mid, low, high) if low > 1 else (names[1], 1 / mid,
                                                                       1 / high, 1 / low)
        kind, text = "faster" if low > 1 else "slower", (
            f"{fast} is {k:.2f}x as fast (interval {lo:.2f}-{hi:.2f}x)")
    else:
        kind, text = "inconclusive", (
            f"inconclusive: the machine's speed changed by more than the difference (spread "
            f"{100 * math.expm1(spread):.0f} %); rerun when it is quieter")
    return {"verdict": kind, "ratio": mid, "low": low, "high": high,
            "spread": math.expm1(spread), "text": f"{head}: {text}"}
