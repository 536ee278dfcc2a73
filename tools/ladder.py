"""Record notebook 05's cat/dog ladder, resumably: one JSON file per finished run.

    python -m tools.ladder --data /path/to/cats_vs_dogs_tutorial --seeds 3 \
        --epochs 25 --out results/cats_dogs_ladder_tutorial

Run it again after an interruption and it goes on where it stopped: finished runs are kept,
and a killed run resumes from its last finished epoch (its epochs so far are logged to a CSV
file in <out>/in_progress/, its model backed up in build/backup/).
"""

import argparse
import csv
import hashlib
import os
import shlex
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from helpers import folders, hardware, ladder, results

import keras
from tqdm import tqdm

# What the AMX Xeon's records show (results/nan_check/, notebook 09), said before a run starts.
AMX_WARNING = (
    "This CPU has AMX, and oneDNN will run mixed_bfloat16 on it: on an AMX Xeon the course "
    "recorded weights turning NaN at random in about 1 of 1,000 training steps of step 3 "
    "(results/nan_check/). The NaN check stops such a run and records it as stopped. To train "
    "in bfloat16 without AMX, start Python with ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16; or use "
    "--dtype float32."
)


def run_path(folder, step, seed):
    """The record of one finished run."""
    return Path(folder) / f"step-{step}_seed-{seed}.json"


def progress_log(folder, step, seed):
    """The per-epoch CSV log of a run that has not finished yet (gitignored)."""
    return Path(folder) / "in_progress" / f"{run_path(folder, step, seed).stem}.csv"


def epoch_log(path):
    """The rows a CSVLogger wrote, as floats, the last of each epoch kept (a resumed run may
    have logged an epoch twice)."""
    if not path.exists():
        return []
    with open(path, newline="") as f:
        rows = {
            int(row["epoch"]): {k: float(v) for k, v in row.items() if v != ""}
            for row in csv.DictReader(f)
        }
    return [rows[e] for e in sorted(rows)]


def record_run(step, seed, s, out, root=None, command=None, callbacks=()):
    """Train one run, resumable, and write its record to `out` once it has finished; the
    record is made from the whole CSV log, so a resumed run keeps its earlier epochs."""
    target, log = run_path(out, step, seed), progress_log(out, step, seed)
    log.parent.mkdir(parents=True, exist_ok=True)
    resumed = bool(epoch_log(log))
    folder_key = hashlib.sha1(str(Path(out).resolve()).encode()).hexdigest()[:8]
    logger = keras.callbacks.CSVLogger(str(log), append=True)
    # a run whose weights turn NaN stops there and is recorded as such (its per-epoch counts)
    model, _ = ladder.train(
        step,
        seed,
        s,
        root,
        name=f"ladder_{folder_key}_{target.stem}",
        verbose=2,
        callbacks=[logger, *callbacks],
        on_nonfinite="stop",
    )
    # cached: not decoded again
    pipelines = ladder.datasets(model.input_shape[1], s, root)
    record = ladder.record(step, seed, model, epoch_log(log), pipelines)
    record.update(
        resumed=resumed, data=folders.shown(root) if root else None, command=command
    )
    results.write_json(target, record)
    log.unlink()
    return record


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m tools.ladder",
        description="Run the cat/dog ladder and record every run in --out; run it again "
        "after an interruption and it goes on where it stopped.",
    )
    parser.add_argument(
        "--data",
        help="a cat/dog folder (training_set/ + test_set/, or "
        "train/ + validation/); default: the profile's pictures",
    )
    parser.add_argument(
        "--steps", nargs="+", default=list(ladder.CHANGES), choices=list(ladder.CHANGES)
    )
    parser.add_argument("--seeds", type=int, default=3, help="seeds 1..N per step")
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "mixed_bfloat16", "mixed_float16"],
        help="Keras dtype policy (notebook 09); record each in its own --out",
    )
    parser.add_argument("--out", required=True, help="folder for the run records")
    return parser


def main(argv=None):
    """Train the ladder's runs that are not recorded yet, one by one, then show the summary."""
    argv = sys.argv[1:] if argv is None else argv
    parser = _parser()
    args = parser.parse_args(argv)
    other = {r.get("dtype", "float32") for r in ladder.load_runs(args.out)} - {
        args.dtype
    }
    if other:
        parser.error(
            f"{args.out} holds runs in {', '.join(sorted(other))}: record --dtype "
            f"{args.dtype} in a folder of its own"
        )
    if args.seeds < 1 or args.epochs < 1 or args.batch < 1:
        parser.error("--seeds, --epochs and --batch must be 1 or more")
    if args.data and not Path(args.data).is_dir():
        parser.error(f"--data {args.data} is not a folder")
    if args.dtype == "mixed_bfloat16" and hardware.amx_bfloat16():
        print(AMX_WARNING, file=sys.stderr)
    keras.config.set_dtype_policy(args.dtype)
    s = SimpleNamespace(train=None, val=None, epochs=args.epochs, batch=args.batch)
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA")  # the record says how oneDNN was capped
    command = shlex.join(
        [
            *([f"ONEDNN_MAX_CPU_ISA={cap}"] if cap else []),
            "python",
            "-m",
            "tools.ladder",
            *argv,
        ]
    )
    runs = [(step, seed) for step in args.steps for seed in range(1, args.seeds + 1)]
    start = time.perf_counter()
    # every epoch of every run on one bar (stderr); the epochs done before count as its start,
    # so the time left comes from the pace of this session's epochs only
    done_before = sum(
        args.epochs
        if run_path(args.out, step, seed).exists()
        else len(epoch_log(progress_log(args.out, step, seed)))
        for step, seed in runs
    )
    bar = tqdm(
        total=len(runs) * args.epochs,
        initial=done_before,
        unit="epoch",
        desc="ladder",
        smoothing=0.05,
    )
    tick = keras.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: bar.update(1)
    )
    for i, (step, seed) in enumerate(runs, 1):
        run = f"[{i}/{len(runs)}] step {step}, seed {seed}"
        if run_path(args.out, step, seed).exists():
            bar.write(
                f"{run}: recorded in {folders.shown(run_path(args.out, step, seed))}"
            )
            continue
        bar.write(
            f"{run}: training ({ladder.CHANGES[step]}); "
            f"{(time.perf_counter() - start) / 60:.1f} min so far"
        )
        r = record_run(step, seed, s, args.out, args.data, command, callbacks=[tick])
        bar.write(
            f"{run}: validation accuracy {r['val_accuracy']:.1%}, "
            f"{r['images_per_s']:,.0f} pictures/s, {r['wall_s'] / 60:.1f} min"
        )
    bar.close()
    rows = ladder.summary(ladder.load_runs(args.out))
    print(ladder.table(rows).to_string(index=False))


if __name__ == "__main__":
    main()
