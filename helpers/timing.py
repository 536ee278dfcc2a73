"""Measuring time: a fair clock for one call (notebook 00), comparisons that hold on a busy
machine (the workloads timed in alternation, a verdict from the spread of the per-round ratios
that says "inconclusive" when the machine's speed changed more than the difference; notebook
00, used by 02, 05 and 07-11), the step times of training (notebooks 01, 08), the CPU and GPU
utilisation sampled while a cell runs, and what a TensorFlow profile says (notebook 07)."""

import collections
import math
import statistics
import threading
import time
import timeit
from pathlib import Path

import keras
import numpy as np
import psutil

from .hardware import nvidia_smi_gpus

__all__ = [
    "SAME_WITHIN",
    "Throughput",
    "Utilization",
    "alternate",
    "first_and_median",
    "interval",
    "ratio",
    "read_profile",
    "step_ops",
    "step_stats",
    "t_quantile",
    "time_fit",
    "timed_block",
    "wait_for",
]

# two speeds whose whole interval lies within 10 % either way are "the same"
SAME_WITHIN = 0.10


def t_quantile(p, df):
    """The p-quantile of Student's t with `df` (maybe fractional) degrees of freedom, from its
    density summed on a fine grid: the standard library has no t distribution (notebook 05)."""
    t = np.linspace(0.0, 1000.0, 1_000_001)
    scale = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(
        df * math.pi
    )
    density = scale * (1 + t**2 / df) ** (-(df + 1) / 2)
    cdf = 0.5 + np.concatenate(
        [[0.0], np.cumsum((density[1:] + density[:-1]) / 2 * np.diff(t))]
    )
    return float(np.interp(p, cdf, t))


# Written from notebooks/00b_inside_the_measurements.ipynb by `make pages`: change it there.
def timed_block(call, seconds):  # @save
    calls, elapsed, start = 0, 0.0, time.perf_counter()
    while elapsed < seconds:  # at least one call
        call()
        calls, elapsed = calls + 1, time.perf_counter() - start
    return calls, elapsed


# Written from notebooks/00b_inside_the_measurements.ipynb by `make pages`: change it there.
def alternate(work, units=1, rounds=6, seconds=1.0, warmup=1):  # @save
    if rounds < 3 or seconds <= 0:
        raise ValueError(
            f"rounds must be 3 or more and seconds positive: {rounds}, {seconds}."
        )
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


# Written from notebooks/00b_inside_the_measurements.ipynb by `make pages`: change it there.
def interval(a, b, level=0.95):  # @save
    if min(a) <= 0 or min(b) <= 0:
        raise ValueError(f"speeds must be positive; the lowest: {min(a)} and {min(b)}.")
    logs = [math.log(x / y) for x, y in zip(a, b, strict=True)]
    mean, spread = statistics.mean(logs), statistics.stdev(logs)
    half = t_quantile(0.5 + level / 2, len(logs) - 1) * spread / math.sqrt(len(logs))
    low, mid, high = (math.exp(mean + k * half) for k in (-1, 0, 1))
    return low, mid, high, math.expm1(spread)


# Written from notebooks/00b_inside_the_measurements.ipynb by `make pages`: change it there.
def verdict(low, mid, high, names, same=SAME_WITHIN):  # @save
    """(kind, what it says, the interval in its words) for the interval of a / b."""
    within = f"{names[0]} at {low:.2f}-{high:.2f}x the speed of {names[1]}"
    if 1 / (1 + same) <= low and high <= 1 + same:
        return "same", f"the same within {100 * same:.0f} %", within
    if round(low, 2) > 1:  # an interval printed as reaching 1.00 decides nothing
        return "faster", f"{names[0]} is {mid:.2f}x as fast", f"{low:.2f}-{high:.2f}x"
    if round(1 / high, 2) > 1:
        fast = f"{1 / high:.2f}-{1 / low:.2f}x"
        return "slower", f"{names[1]} is {1 / mid:.2f}x as fast", fast
    says = (
        "inconclusive: the machine's speed changed by more than the difference; "
        "rerun when it is quieter"
    )
    return "inconclusive", says, within


# Written from notebooks/00b_inside_the_measurements.ipynb by `make pages`: change it there.
def ratio(a, b, names, unit="images/s", same=SAME_WITHIN, level=0.95):  # @save
    low, mid, high, spread = interval(a, b, level)
    kind, says, span = verdict(low, mid, high, names, same)
    median_a, median_b = statistics.median(a), statistics.median(b)
    text = (
        f"{names[0]} {median_a:,.0f} vs {names[1]} {median_b:,.0f} {unit} (medians); "
        f"from {len(a)} rounds' own ratios: {says} ({span}, "
        f"{100 * level:.0f} % interval; "
        f"spread {100 * spread:.0f} %)"
    )
    return dict(verdict=kind, ratio=mid, low=low, high=high, spread=spread, text=text)


# graph nodes that hold a constant or an input: no work a step
NOT_RUN = ("Const", "Placeholder")


# Written from notebooks/00_setup_and_hardware.ipynb by `make pages`: change it there.
def first_and_median(call, repeats):  # @save
    if repeats < 1:
        raise ValueError(f"repeats must be 1 or more, got {repeats}.")
    first = timeit.timeit(call, number=1)  # rule 1: the warm-up, timed apart
    # rule 2: the median of the repeats
    return first, statistics.median(timeit.repeat(call, number=1, repeat=repeats))


# Written from notebooks/00_setup_and_hardware.ipynb by `make pages`: change it there.
def wait_for(x):  # @save
    # rule 3: reading one number of x back waits until x is computed
    return keras.ops.convert_to_numpy(keras.ops.cast(x[:1, :1], "float32"))


def step_stats(seconds):
    """Median, p10 and p90 of step times (s) and their spread (p90 - p10) / median (notebook 08)."""
    median = statistics.median(seconds)
    p10, p90 = (
        statistics.quantiles(seconds, n=10)[::8] if len(seconds) >= 3 else (median,) * 2
    )
    return {"median": median, "p10": p10, "p90": p90, "spread": (p90 - p10) / median}


def step_ops(model, x, y):
    """How many operations one training step of the compiled `model` on the batch (x, y) has:
    the nodes of TensorFlow's graph of `model.train_step` (forward, loss, gradients, the
    optimizer's update, the loss metric), constants and inputs left out; counted as traced,
    before TensorFlow's graph optimizer (Grappler) folds or fuses any (notebook 08)."""
    if keras.backend.backend() != "tensorflow":
        raise ValueError(
            "step_ops counts TensorFlow's graph; the Keras backend is "
            f"{keras.backend.backend()}."
        )
    import tensorflow as tf

    if not model.optimizer.built:  # Adam's moments exist before the step is traced
        model.optimizer.build(model.trainable_variables)
    spec = tuple(tf.TensorSpec(np.shape(a), np.asarray(a).dtype) for a in (x, y))
    graph = tf.function(model.train_step).get_concrete_function(spec).graph
    return sum(op.type not in NOT_RUN for op in graph.get_operations())


class StepTimer:
    """The clock of one epoch: `start()` when it begins, `step()` after each step (notebook 10)."""

    def start(self):
        self.steps, self.started = [], time.perf_counter()
        self._last = self.started

    def step(self):
        now = time.perf_counter()
        self.steps.append(now - self._last)
        self._last = now

    def images_per_s(self, batch_size):
        """`batch_size` over the median step, the first (tracing, start-up) left out."""
        if not self.steps:
            return math.nan
        return batch_size / statistics.median(self.steps[1:] or self.steps)

    def wall_s(self):
        return time.perf_counter() - self.started


class Throughput(keras.callbacks.Callback):
    """Per epoch: images/s (first step left out), wall time, step times (notebook 01); with
    `to_logs` also `images_per_s` and `epoch_s` in the logs, for CSVLogger (notebook 05)."""

    def __init__(self, batch_size, to_logs=False):
        super().__init__()
        if batch_size < 1:
            raise ValueError(f"batch_size must be 1 or more, got {batch_size}.")
        self.batch_size, self.to_logs = batch_size, to_logs
        self.clock, self.epochs = StepTimer(), []

    def on_epoch_begin(self, epoch, logs=None):
        self.clock.start()

    def on_train_batch_end(self, batch, logs=None):
        self.clock.step()

    def on_epoch_end(self, epoch, logs=None):
        wall, steps = self.clock.wall_s(), self.clock.steps
        rate = self.clock.images_per_s(self.batch_size)
        self.epochs.append(
            {
                "epoch": epoch + 1,
                "wall_s": wall,
                "steps": len(steps),
                "images_per_s": rate,
                "first_step_s": steps[0] if steps else None,
                "step_s": list(steps),
            }
        )
        if self.to_logs and logs is not None:
            logs.update(images_per_s=rate, epoch_s=wall)

    @property
    def images_per_second(self):
        return self.epochs[-1]["images_per_s"] if self.epochs else None


def time_fit(model, data, batch_size, steps, warmup):
    """Step times (s) of `steps` training steps after `warmup` on (x, y) arrays or a repeating
    dataset or PyDataset (notebook 07)."""
    clock, needed = Throughput(batch_size), warmup + steps
    if isinstance(data, tuple):  # whole epochs, each one's first step left out below
        epochs = math.ceil(needed / (len(data[0]) // batch_size - 1))
        given = {"x": data[0], "y": data[1], "batch_size": batch_size, "epochs": epochs}
    else:
        given = {"x": data, "steps_per_epoch": needed + 1}
    model.fit(**given, shuffle=False, verbose=0, callbacks=[clock])
    # no start-up step
    intervals = [t for epoch in clock.epochs for t in epoch["step_s"][1:]]
    return intervals[warmup:needed]


class Utilization:
    """Context manager sampling CPU %, the whole machine's ('cpu_pct', every program) and this
    process's share of it ('process_pct'), and each GPU's load, memory and power (notebook 07)."""

    def __init__(self, interval=0.5, gpus=None):
        if interval <= 0:
            raise ValueError(f"interval must be positive, got {interval}.")
        self.interval, self.samples, self.marks = interval, [], []
        self._with_gpus = gpus if gpus is not None else bool(nvidia_smi_gpus())
        self._stop = threading.Event()

    def _sample(self):
        # A sample a few ms after the one before (the last one, at the end) can read above the
        # whole machine: the OS counts CPU time in ticks of about 10 ms. Capped at 100 %.
        share = self._process.cpu_percent() / (psutil.cpu_count() or 1)
        entry = {
            "t": time.perf_counter() - self.start,
            "cpu_pct": psutil.cpu_percent(),
            "process_pct": min(share, 100.0),
        }
        if self._with_gpus:
            for i, g in enumerate(nvidia_smi_gpus()):
                entry[f"gpu{i}_memory_mb"] = g["memory_used_mb"]
                for key, column in (
                    ("utilization_pct", "pct"),
                    ("power_w", "power_w"),
                    ("temperature_c", "temperature_c"),
                ):
                    # "[N/A]": a MIG slice reports no utilisation
                    if g[key] is not None:
                        entry[f"gpu{i}_{column}"] = g[key]
        self.samples.append(entry)

    def _run(self):
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self):
        self.start, self._process = time.perf_counter(), psutil.Process()
        psutil.cpu_percent()  # the first readings only set a reference
        self._process.cpu_percent()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample()
        return False

    def mark(self, label):
        """Record a labelled moment (an epoch boundary, a phase change)."""
        self.marks.append((time.perf_counter() - self.start, label))

    def series(self, key):
        """(times, values) of one sampled quantity, e.g. 'cpu_pct', 'gpu0_pct', 'gpu0_power_w'."""
        rows = [s for s in self.samples if key in s]
        return [s["t"] for s in rows], [s[key] for s in rows]

    def mean(self, key):
        values = self.series(key)[1]
        return sum(values) / len(values) if values else float("nan")


def _busy_ms(spans):
    """Wall time covered by at least one of `spans` (start, stop in ps), in milliseconds."""
    busy, end = 0, 0
    for start, stop in sorted(spans):
        busy, end = busy + max(0, stop - max(start, end)), max(end, stop)
    return busy / 1e9


def read_profile(logdir):
    """The newest profile under `logdir`, in ms: steps and their time, the share spent waiting
    for the next batch (IteratorGetNext), input threads at work, top ops and every op type's
    time summed over the compute threads (notebooks 07, 09)."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    found = sorted(Path(logdir).glob("**/plugins/profile/*/*.xplane.pb"))
    if not found:
        raise FileNotFoundError(
            f"No profile under {logdir}: train with keras.callbacks."
            "TensorBoard(log_dir, profile_batch=(first, last)) first."
        )
    space = xplane_pb2.XSpace.FromString(found[-1].read_bytes())
    host = next(p for p in space.planes if p.name.startswith("/host:CPU"))
    names = {key: meta.name for key, meta in host.event_metadata.items()}
    steps, step_ms, wait_ms, input_spans, ops = 0, 0.0, 0.0, [], collections.Counter()
    for line in host.lines:
        for event in line.events:
            name, ms = names.get(event.metadata_id, "?"), event.duration_ps / 1e9
            if line.name.startswith("tf_data"):  # an input pipeline thread
                start = line.timestamp_ns * 1000 + event.offset_ps
                input_spans.append((start, start + event.duration_ps))
            if line.name == "python" and name == "multi_step_on_iterator":
                steps, step_ms = steps + 1, step_ms + ms
            elif name == "IteratorGetNextOp::DoCompute":
                wait_ms += ms
            elif (
                line.name.startswith("tf_Compute") and ":" in name and "::" not in name
            ):
                ops[name.rsplit(":", 1)[-1]] += ms  # "scope/op:OpType" -> OpType
    return {
        "steps": steps,
        "step_ms": step_ms,
        "waiting_share": wait_ms / step_ms if step_ms else math.nan,
        "input_busy_ms": _busy_ms(input_spans),
        "top_ops_ms": dict(ops.most_common(8)),
        "ops_ms": dict(ops),
    }
