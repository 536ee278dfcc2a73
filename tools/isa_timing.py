"""Time one training step of a ladder step under settings that each need a process of their own,
in alternation (notebook 00's protocol): oneDNN reads ONEDNN_MAX_CPU_ISA once, when a process
starts, so float32, mixed_bfloat16 on AMX and mixed_bfloat16 with AMX capped off cannot share one.

    python -m tools.isa_timing --record          # the three settings, step 3, batch 32

Each setting runs in a worker process that builds the network, trains two warm-up steps on one
fixed batch and then trains one step each time the parent asks; only one worker works at a time,
so `timing.alternate` times them round after round as it times functions in one process. The
record (results/mixed_precision_timing/) holds every round's speed and each verdict against
float32; notebook 09 reads it for the machine it runs on.
"""

import argparse
import os
import re
import shlex
import subprocess
import sys

from helpers import config, results, timing

# name: (Keras dtype policy, ONEDNN_MAX_CPU_ISA or None for the CPU's widest)
SETTINGS = {
    "float32": ("float32", None),
    "mixed_bfloat16": ("mixed_bfloat16", None),
    "mixed_bfloat16, AMX off": ("mixed_bfloat16", "AVX512_CORE_BF16"),
}
FOLDER = config.RESULTS_DIR / "mixed_precision_timing"


def worker(step, dtype, batch):
    """Train `step` on one fixed batch: two steps now, then one per line read from stdin."""
    from helpers import benchmark, ladder

    import keras

    keras.config.set_dtype_policy(dtype)
    model = ladder.build(step, config.SEED)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    x, y = benchmark.synthetic_data(model, batch, 1)
    for _ in range(2):  # the first step traces the graph: never timed
        model.train_on_batch(x, y)
    print("ready", flush=True)
    for _ in sys.stdin:
        model.train_on_batch(x, y)
        print("done", flush=True)


class Worker:
    """A worker process for one setting; calling it trains one step there and waits for it."""

    def __init__(self, step, dtype, cap, batch):
        env = {k: v for k, v in os.environ.items() if k != "ONEDNN_MAX_CPU_ISA"}
        env.update(
            {
                "TF_CPP_MIN_LOG_LEVEL": "2",
                **({"ONEDNN_MAX_CPU_ISA": cap} if cap else {}),
            }
        )
        command = [
            sys.executable,
            "-m",
            "tools.isa_timing",
            "--worker",
            "--step",
            step,
            "--dtype",
            dtype,
            "--batch",
            str(batch),
        ]
        self.process = subprocess.Popen(
            command,
            cwd=config.ROOT,
            env=env,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._expect("ready")

    def _expect(self, word):
        line = self.process.stdout.readline().strip()
        if line != word:
            self.process.kill()
            raise RuntimeError(
                f"the worker {self.process.args} answered {line!r}, not {word!r}: "
                "its error is printed above"
            )

    def __call__(self):
        self.process.stdin.write("step\n")
        self.process.stdin.flush()
        self._expect("done")

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


def measure(settings=SETTINGS, step="3", batch=32, rounds=8, seconds=3.0):
    """Speeds (images/s per round) of each setting, timed in alternation, and each verdict
    against the first setting."""
    workers = {
        name: Worker(step, dtype, cap, batch) for name, (dtype, cap) in settings.items()
    }
    try:
        speeds = timing.alternate(workers, units=batch, rounds=rounds, seconds=seconds)
    finally:
        for w in workers.values():
            w.close()
    first, *others = settings
    verdicts = {
        name: timing.ratio(speeds[name], speeds[first], (name, first))
        for name in others
    }
    return speeds, verdicts


def record(speeds, verdicts, settings=SETTINGS, step="3", batch=32, command=None):
    """The record of one measurement, with its machine, versions, date and command."""
    machine = results.machine()
    return {
        "what": f"ladder step {step}, one training step on one fixed batch of {batch}, "
        "each setting in its own process, timed in alternation",
        "step": step,
        "batch": batch,
        "hardware": machine["hardware"],
        "cpu_simd": machine["details"]["cpu"]["simd"],
        "versions": machine["versions"],
        "date": results.now(),
        "command": command,
        "settings": {
            n: {"dtype": d, "onednn_max_cpu_isa": c} for n, (d, c) in settings.items()
        },
        "images_per_s": speeds,
        "verdicts": verdicts,
    }


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(
        prog="python -m tools.isa_timing",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--step", default="3")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument(
        "--record", action="store_true", help=f"write the record into {FOLDER}"
    )
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--dtype", default="float32", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker(args.step, args.dtype, args.batch)
    if "amx_bf16" not in results.machine()["details"]["cpu"]["simd"]:
        p.error(
            "this CPU has no AMX: its mixed_bfloat16 needs no process of its own, and "
            "notebook 09 times it against float32 in alternation itself"
        )
    speeds, verdicts = measure(
        step=args.step, batch=args.batch, rounds=args.rounds, seconds=args.seconds
    )
    for v in verdicts.values():
        print(v["text"])
    if args.record:
        command = shlex.join(["python", "-m", "tools.isa_timing", *argv])
        found = record(
            speeds, verdicts, step=args.step, batch=args.batch, command=command
        )
        slug = re.sub(r"[^a-z0-9]+", "-", found["hardware"].lower()).strip("-")
        name = f"{found['date'][:10]}_{slug}_step{args.step}.json"
        path = results.write_json(FOLDER / name, found)
        print(f"recorded in {path.relative_to(config.ROOT)}")


if __name__ == "__main__":
    main()
