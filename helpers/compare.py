"""Comparisons that hold on a busy machine (notebook 00, used by 02, 05 and 07-11): the
workloads timed in alternation, the ratio taken per round, and a verdict from the spread of
those ratios, which says "inconclusive" when the machine's speed changed more than the
difference."""

import math
import statistics
import time

import numpy as np

__all__ = ["SAME_WITHIN", "alternate", "interval", "ratio", "t_quantile", "timed_block"]

SAME_WITHIN = 0.10  # two speeds whose whole interval lies within 10 % either way are "the same"


def t_quantile(p, df):
    """The p-quantile of Student's t with `df` (maybe fractional) degrees of freedom, from its
    density summed on a fine grid: the standard library has no t distribution (notebook 05)."""
    t = np.linspace(0.0, 1000.0, 1_000_001)
    scale = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    density = scale * (1 + t ** 2 / df) ** (-(df + 1) / 2)
    cdf = 0.5 + np.concatenate([[0.0], np.cumsum((density[1:] + density[:-1]) / 2 * np.diff(t))])
    return float(np.interp(p, cdf, t))


# Written from notebooks/00_setup_and_hardware.ipynb by `make pages`: change it there.
def timed_block(call, seconds):  #@save
    calls, elapsed, start = 0, 0.0, time.perf_counter()
    while elapsed < seconds:  # at least one call
        call()
        calls, elapsed = calls + 1, time.perf_counter() - start
    return calls, elapsed


# Written from notebooks/00_setup_and_hardware.ipynb by `make pages`: change it there.
def alternate(work, units=1, rounds=6, seconds=1.0, warmup=1):  #@save
    if rounds < 3 or seconds <= 0:
        raise ValueError(f"rounds must be 3 or more and seconds positive: {rounds}, {seconds}.")
    units = units if isinstance(units, dict) else dict.fromkeys(work, units)
    for call in work.values():
        for _ in range(warmup):  # rule 1
            call()
    speeds = {name: [] for name in work}
    for r in range(rounds):
        for name in list(work)[:: 1 if r % 2 == 0 else -1]:  # A B, then B A, ...
            calls, taken = timed_block(work[name], seconds)
            speeds[name].append(units[name] * calls / taken)
    return speeds


# Written from notebooks/00_setup_and_hardware.ipynb by `make pages`: change it there.
def interval(a, b, level=0.95):  #@save
    if min(a) <= 0 or min(b) <= 0:
        raise ValueError(f"speeds must be positive; the lowest are {min(a)} and {min(b)}.")
    logs = [math.log(x / y) for x, y in zip(a, b, strict=True)]
    mean, spread = statistics.mean(logs), statistics.stdev(logs)
    half = t_quantile(0.5 + level / 2, len(logs) - 1) * spread / math.sqrt(len(logs))
    return math.exp(mean - half), math.exp(mean), math.exp(mean + half), math.expm1(spread)


# Written from notebooks/00_setup_and_hardware.ipynb by `make pages`: change it there.
def ratio(a, b, names, unit="images/s", same=SAME_WITHIN, level=0.95):  #@save
    low, mid, high, spread = interval(a, b, level)
    within = f"{names[0]} at {low:.2f}-{high:.2f}x the speed of {names[1]}"
    kind, says = "inconclusive", ("inconclusive: the machine's speed changed by more than the "
                                  f"difference; rerun when it is quieter ({within}")
    if 1 / (1 + same) <= low and high <= 1 + same:
        kind, says = "same", f"the same within {100 * same:.0f} % ({within}"
    elif round(low, 2) > 1:  # an interval printed as reaching 1.00 decides nothing
        kind, says = "faster", f"{names[0]} is {mid:.2f}x as fast ({low:.2f}-{high:.2f}x"
    elif round(1 / high, 2) > 1:
        kind, says = "slower", f"{names[1]} is {1 / mid:.2f}x as fast ({1/high:.2f}-{1/low:.2f}x"
    text = (f"{names[0]} {statistics.median(a):,.0f} vs {names[1]} {statistics.median(b):,.0f} "
            f"{unit}, {len(a)} rounds: {says}, {100 * level:.0f} % interval; spread "
            f"{100 * spread:.0f} %)")
    return {"verdict": kind, "ratio": mid, "low": low, "high": high, "spread": spread, "text": text}
