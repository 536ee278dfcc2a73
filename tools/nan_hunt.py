"""Hunt a sporadic NaN in training step by step, then replay the failing step (issue 46).

    COURSE_PROFILE=sample python -m tools.nan_hunt hunt --step 3 --seed 7 --steps 1200
    python -m tools.nan_hunt replay build/nan_hunt/step-3_seed-7_mixed_bfloat16_at-903.npz \
        --times 20
    ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 python -m tools.nan_hunt replay ...   # without AMX

`hunt` builds a ladder step as `helpers.ladder.train` does (`ladder.build`, its compile, the
profile's pictures from `ladder.datasets`) under a dtype policy (default mixed_bfloat16) and
trains it with `train_on_batch`, one batch at a time. Before each step it copies every variable
the step reads or writes: the weights, the seed generators' states (augmentation, dropout) and
the optimizer's (Adam's moments, its iteration count). After each step it counts the NaN and
infinite values of every trainable weight. At the first one it saves the state from before the
step and the step's batch (.npz, in build/nan_hunt/ unless --save says where) and names the
variables, their counts and shapes.

`replay` restores that state and runs the same step --times times, each from the restored
state, and reports how many replays went non-finite and how many distinct results they gave (a
hash of every variable after the step). A step that went non-finite in the hunt but replays
finite and bit-identical is not determined by its weights, optimizer state and batch.

Every report starts with the CPU's AMX flags, ONEDNN_MAX_CPU_ISA, TF_ENABLE_ONEDNN_OPTS and the
Keras and TensorFlow versions. oneDNN reads ONEDNN_MAX_CPU_ISA when it starts: set it in the
command line (AVX512_CORE_BF16 keeps bfloat16 off AMX).
"""

import argparse
import contextlib
import hashlib
import json
import os
import platform
import sys
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

from helpers import config, folders, ladder, results

import keras
import numpy as np

# How helpers.ladder.train compiles a step (a test holds the two equal).
COMPILE = dict(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
INJECTED = (
    64  # values a test's injected fault sets to NaN: a block, as the AMX fault writes
)
DTYPES = ["mixed_bfloat16", "float32", "mixed_float16"]


class StateError(ValueError):
    """A file that is no saved state, or one that does not fit the network it names."""


def amx_flags(cpuinfo="/proc/cpuinfo", system=None):
    """The CPU's AMX flags ("amx_bf16 amx_int8 amx_tile"), "none", or "unknown (why)"."""
    system = system or platform.system()
    if system != "Linux":
        return f"unknown ({system} has no /proc/cpuinfo)"
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        return f"unknown ({cpuinfo} unreadable)"
    flags = {
        flag
        for line in text.splitlines()
        if line.partition(":")[0].strip() == "flags"
        for flag in line.partition(":")[2].split()
        if flag.startswith("amx")
    }
    return " ".join(sorted(flags)) or "none"


def environment():
    """The lines every report starts with: AMX flags, oneDNN's settings, the versions."""
    import tensorflow as tf

    isa = os.environ.get("ONEDNN_MAX_CPU_ISA") or "default"
    opts = os.environ.get("TF_ENABLE_ONEDNN_OPTS") or "default"
    return [
        f"CPU AMX flags: {amx_flags()}",
        f"ONEDNN_MAX_CPU_ISA={isa}, TF_ENABLE_ONEDNN_OPTS={opts}",
        f"Keras {keras.__version__}, TensorFlow {tf.__version__}, "
        f"Python {platform.python_version()}",
    ]


@contextlib.contextmanager
def policy(dtype):
    """Keras' global dtype policy set to `dtype` inside the block, the old one back after."""
    before = keras.config.dtype_policy()
    keras.config.set_dtype_policy(dtype)
    try:
        yield
    finally:
        keras.config.set_dtype_policy(before)


def network(step, seed):
    """Ladder step `step` as helpers.ladder.train builds and compiles it, Adam's variables built
    (so that they exist before the first step is copied)."""
    config.set_seed(seed)
    model = ladder.build(step, seed)
    model.compile(**COMPILE)
    model.optimizer.build(model.trainable_variables)
    return model


def _layers(layer):
    """`layer` and every layer inside it, depth first."""
    yield layer
    for inner in getattr(layer, "layers", ()):
        yield from _layers(inner)


def state_variables(model):
    """Every variable a training step reads or writes, in a fixed order: the model's (weights
    and its layers' seed-generator states), any seed generator it does not list, the
    optimizer's (moments, iteration count, learning rate)."""
    seeds = [
        found.state
        for layer in _layers(model)
        for found in vars(layer).values()
        if isinstance(found, keras.random.SeedGenerator)
    ]
    unique = {}
    for variable in [*model.variables, *seeds, *model.optimizer.variables]:
        unique.setdefault(id(variable), variable)
    return list(unique.values())


def snapshot(variables):
    """Copies of the variables' values, as NumPy arrays."""
    return [np.array(v.numpy(), copy=True) for v in variables]


def restore(variables, arrays):
    """Assign saved values back to the variables."""
    for variable, value in zip(variables, arrays, strict=True):
        variable.assign(value)


def digest(arrays):
    """A short hash of the arrays' bytes: equal hashes, bit-identical values."""
    h = hashlib.sha256()
    for array in arrays:
        h.update(np.ascontiguousarray(array).tobytes())
    return h.hexdigest()[:16]


def labels(model):
    """Variable id -> "path (Conv2D 2 of 4)": where a weight sits, whatever the layer names."""
    leaves = [
        ly for ly in _layers(model) if not getattr(ly, "layers", None) and ly.weights
    ]
    kinds = [type(ly).__name__ for ly in leaves]
    names = {}
    for i, layer in enumerate(leaves):
        place = (
            f"{kinds[i]} {kinds[: i + 1].count(kinds[i])} of {kinds.count(kinds[i])}"
        )
        names.update({id(v): f"{v.path} ({place})" for v in layer.weights})
    return names


def nonfinite(model):
    """(label, non-finite count, shape) of each trainable weight holding NaN or infinity."""
    names = labels(model)
    found = []
    for v in model.trainable_weights:
        count = int(np.count_nonzero(~np.isfinite(v.numpy())))
        if count:
            found.append((names.get(id(v), v.path), count, tuple(v.shape)))
    return found


def optimizer_nonfinite(model):
    """(path, non-finite count) of each optimizer variable holding NaN or infinity: a weight's
    moments turn non-finite with it when its gradient was non-finite, not when the weight was
    overwritten after the update."""
    counts = [(v.path, np.asarray(v.numpy())) for v in model.optimizer.variables]
    counts = [
        (path, int(np.count_nonzero(~np.isfinite(a))))
        for path, a in counts
        if a.dtype.kind == "f"
    ]
    return [(path, count) for path, count in counts if count]


def inject_fault(model):
    """A stand-in for the AMX fault (tests): NaN into the first INJECTED values of the second
    convolution's kernel; returns that variable."""
    convs = [ly for ly in _layers(model) if isinstance(ly, keras.layers.Conv2D)]
    kernel = convs[1].kernel
    value = np.array(kernel.numpy(), copy=True)
    value.reshape(-1)[:INJECTED] = np.nan
    kernel.assign(value)
    return kernel


def _batches(dataset):
    """The dataset's batches, epoch after epoch, without end."""
    while True:
        yield from dataset


def _settings(batch):
    """The profile's ladder pictures (config's cats_dogs_ladder), at batch size `batch`."""
    s = config.settings("cats_dogs_ladder")
    return SimpleNamespace(train=s.train, val=s.val, batch=batch or s.batch)


def hunt(
    step="3",
    seed=1,
    steps=2000,
    dtype="mixed_bfloat16",
    save=None,
    batch=None,
    root=None,
    every=200,
    inject=None,
):
    """Train step by step until a trainable weight turns non-finite or `steps` steps are done;
    save the state before that step and its batch to `save` (default build/nan_hunt/) and print
    where. `inject`: a step number after which a fault is written once (tests only). Returns
    a namespace: step, found [(label, count, shape)], before, after, batch, meta, path."""
    print(*environment(), sep="\n")
    with policy(dtype):
        model = network(step, seed)
        s = _settings(batch)
        train, _ = ladder.datasets(model.input_shape[1], s, root)
        print(
            f"Hunting: ladder step {step}, seed {seed}, {dtype}, up to {steps} steps "
            f"({config.profile()} profile, {train.num_examples} pictures, batch {s.batch})"
        )
        done = _steps(model, train, steps, every, inject)
    done.meta = {
        "ladder_step": step,
        "seed": seed,
        "dtype": dtype,
        "step": done.step,
        "batch_size": s.batch,
        "profile": config.profile(),
        "date": results.now(),
        "environment": environment(),
        "hunt_result": digest(done.after),
        "variables": [[v.path, list(v.shape), str(v.dtype)] for v in done.variables],
    }
    if done.found:
        default = f"step-{step}_seed-{seed}_{dtype}_at-{done.step}.npz"
        done.path = Path(save) if save else config.BUILD_DIR / "nan_hunt" / default
        save_state(done.path, done.before, done.batch, done.meta)
        _report_found(done, model)
    return done


def _steps(model, train, steps, every, inject):
    """The hunt's loop; stops after the first step that leaves a trainable weight non-finite."""
    variables, start = state_variables(model), time.perf_counter()
    for number, (x, y) in zip(range(1, steps + 1), _batches(train)):
        before = snapshot(variables)
        model.reset_metrics()  # the logs are this step's alone
        logs = model.train_on_batch(x, y, return_dict=True)
        if number == inject:
            inject_fault(model)
        found = nonfinite(model)
        if found or number == steps:
            break
        if number % every == 0:
            print(
                f"step {number} finite, {time.perf_counter() - start:.0f} s", flush=True
            )
    took = time.perf_counter() - start
    if not found:
        print(
            f"No non-finite weight in {number} steps ({took:.0f} s, "
            f"{took / number:.2f} s a step, the checks included)"
        )
    return SimpleNamespace(
        step=number,
        found=found,
        before=before,
        after=snapshot(variables),
        batch=(np.asarray(x), np.asarray(y)),
        logs=logs,
        took=took,
        variables=variables,
        path=None,
    )


def _report_found(done, model):
    """Print which weights turned non-finite, and how to replay the step."""
    total = sum(count for _, count, _ in done.found)
    moments = optimizer_nonfinite(model)
    print(
        f"Non-finite weights after step {done.step} ({done.took:.0f} s): {total:,} values "
        f"(loss {float(done.logs['loss']):.4g} on its batch; "
        f"{sum(count for _, count in moments):,} optimizer values non-finite)"
    )
    for label, count, shape in done.found:
        print(f"  {label}: {count:,} of {int(np.prod(shape)):,} values, shape {shape}")
    for path, count in moments:
        print(f"  optimizer {path}: {count:,} values")
    shown = folders.shown(done.path)
    print(f"The state before step {done.step} and its batch: saved to {shown}")
    print(f"Replay it: python -m tools.nan_hunt replay {shown} --times 20")


def save_state(path, arrays, batch, meta):
    """Write a state (one array per variable), its batch (x, y) and what it is to an .npz."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    named = {f"v{i:04d}": a for i, a in enumerate(arrays)}
    with open(path, "wb") as f:
        np.savez(f, x=batch[0], y=batch[1], meta=np.array(json.dumps(meta)), **named)
    return path


def load_state(path):
    """(arrays, batch, meta) of a state `hunt` saved; a StateError for anything else."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} does not exist. `python -m tools.nan_hunt hunt` saves a state when it "
            "finds a non-finite weight and prints the file's name: replay that file."
        )
    try:
        with np.load(path, allow_pickle=False) as f:
            meta = json.loads(str(f["meta"]))
            arrays = [f[f"v{i:04d}"] for i in range(len(meta["variables"]))]
            batch = f["x"], f["y"]
        if meta["ladder_step"] not in ladder.CHANGES or meta["dtype"] not in DTYPES:
            raise ValueError(f"ladder step {meta['ladder_step']!r}, {meta['dtype']!r}")
        return (
            arrays,
            batch,
            {"seed": int(meta["seed"]), "step": int(meta["step"]), **meta},
        )
    except (
        KeyError,
        ValueError,
        TypeError,
        AttributeError,
        OSError,
        zipfile.BadZipFile,
    ) as e:
        raise StateError(
            f"{path} is not a state saved by `python -m tools.nan_hunt hunt` ({e}). Replay "
            "the .npz file a hunt printed, or hunt again to save one."
        ) from e


def _check_fits(arrays, variables, meta, path):
    """Raise a StateError that says what differs when the saved arrays do not fit the network."""
    saved = [(tuple(a.shape), np.dtype(a.dtype).name) for a in arrays]
    here = [(tuple(v.shape), np.dtype(v.dtype).name) for v in variables]
    if saved == here:
        return
    where = next(
        (i for i, (a, b) in enumerate(zip(saved, here)) if a != b),
        min(map(len, (saved, here))),
    )
    first = (
        f"variable {where + 1} is {saved[where] if where < len(saved) else 'missing'} "
        f"there, {here[where] if where < len(here) else 'missing'} here"
    )
    raise StateError(
        f"{path} does not fit ladder step {meta['ladder_step']} under {meta['dtype']} as this "
        f"course builds it: {len(saved)} variables saved, {len(here)} in the network; {first}. "
        "It comes from another network or another version of the course: hunt again with this "
        "one to save a state that fits."
    )


def replay(path, times=20):
    """Restore a saved state and run its step `times` times, each from that state; print and
    return how many replays went non-finite and how many distinct results they gave."""
    arrays, (x, y), meta = load_state(path)
    print(*environment(), sep="\n")
    with policy(meta["dtype"]):
        model = network(meta["ladder_step"], meta["seed"])
        variables = state_variables(model)
        _check_fits(arrays, variables, meta, path)
        found, hashes = [], []
        for _ in range(times):
            restore(variables, arrays)
            model.reset_metrics()
            model.train_on_batch(x, y)
            found.append(nonfinite(model))
            hashes.append(digest(snapshot(variables)))
    counts = [sum(count for _, count, _ in where) for where in found]
    done = SimpleNamespace(
        found=found,
        counts=counts,
        hashes=hashes,
        times=times,
        nonfinite=sum(c > 0 for c in counts),
        distinct=len(set(hashes)),
        as_hunted=hashes.count(meta.get("hunt_result")),
    )
    _report_replay(done, meta, path)
    return done


def _report_replay(done, meta, path):
    """Print a replay's summary."""
    print(
        f"Replay of step {meta['step']} (ladder step {meta['ladder_step']}, seed "
        f"{meta['seed']}, {meta['dtype']}) from {folders.shown(path)}: {done.nonfinite} of "
        f"{done.times} replays non-finite; {done.distinct} distinct "
        f"result{'s' * (done.distinct != 1)} (hash of every variable after the step); "
        f"{done.as_hunted} of {done.times} the same as the hunt's own result"
    )
    print(f"non-finite weights per replay: {done.counts}")
    for number, where in enumerate(done.found, 1):
        if where:
            print(
                f"  replay {number}: "
                + "; ".join(f"{label}: {n:,}" for label, n, _ in where)
            )


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m tools.nan_hunt",
        description="Find the first training step that leaves a weight NaN or infinite, save "
        "the state before it, and replay that step from the saved state.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    hunting = commands.add_parser(
        "hunt",
        help="train step by step until a weight turns non-finite; save the state before that step",
    )
    hunting.add_argument("--step", default="3", choices=list(ladder.CHANGES))
    hunting.add_argument("--seed", type=int, default=1)
    hunting.add_argument(
        "--steps", type=int, default=2000, help="at most this many steps"
    )
    hunting.add_argument("--dtype", default="mixed_bfloat16", choices=DTYPES)
    hunting.add_argument("--batch", type=int, help="default: the profile's (32)")
    hunting.add_argument(
        "--data", help="a cat/dog folder; default: the profile's pictures"
    )
    hunting.add_argument("--save", help="the .npz file; default: build/nan_hunt/...")
    hunting.add_argument(
        "--every", type=int, default=200, help="print progress every N steps"
    )
    replaying = commands.add_parser("replay", help="replay a saved step N times")
    replaying.add_argument("state", help="the .npz file a hunt saved")
    replaying.add_argument("--times", type=int, default=20)
    return parser


def main(argv=None):
    """Hunt or replay, as the command line says."""
    parser = _parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    numbers = [
        getattr(args, name, None) for name in ("steps", "times", "every", "batch")
    ]
    if any(n is not None and n < 1 for n in numbers):
        parser.error("--steps, --times, --every and --batch must be 1 or more")
    if getattr(args, "data", None) and not Path(args.data).is_dir():
        parser.error(f"--data {args.data} is not a folder")
    try:
        if args.command == "hunt":
            return hunt(
                args.step,
                args.seed,
                args.steps,
                args.dtype,
                args.save,
                args.batch,
                args.data,
                args.every,
            )
        return replay(args.state, args.times)
    except (FileNotFoundError, StateError) as e:
        parser.error(str(e))


if __name__ == "__main__":
    main()
