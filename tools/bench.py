"""Record benchmark runs (helpers.benchmark, notebooks 07 and 08) into results/.

    python -m tools.bench --model cats_dogs_128px --batch 64 --steps 20
    python -m tools.bench --model cats_dogs_original --source python --workers 4
    python -m tools.bench --all --record                # every network on every device
    python -m tools.bench --all --device gpu --record   # every GPU only (make bench-gpu)
    python -m tools.bench --rules --device gpu          # the three GPU rules only
    KERAS_BACKEND=jax python -m tools.bench --all --device gpu --record   # no TensorFlow

`--all` runs every network in every number format the device supports (CPUs: float32), the
batch sweep, a utilisation and power timeline per run, and the training-memory peaks
(helpers.benchmark); on a GPU also each network with augmentation moved out of it, XLA both ways
(Keras' default jit_compile and jit_compile=True), and the three GPU rules (helpers.benchmark:
Tensor Core shapes, NHWC against NCHW, uint8 against float32 batches over PCIe), each a
prediction printed beside its measurement and verdict. `--record` writes the records into
results/ (helpers.results).
"""

import argparse
import math
import os
import shlex
import sys
import time

from helpers import benchmark, config, hardware, models, results, roofs, timing

import keras

SOURCES = {
    "synthetic": "random pictures held in memory: no input work at all (any Keras backend)",
    "jpeg": "the course's tf.data pipeline (TensorFlow only): JPEGs decoded in parallel, "
    "cached, prefetched; timed after one full pass, as in every epoch after the first",
    "python": "Keras 2 style: a PyDataset decodes and augments each batch in Python (PIL)",
}
# What `--all` adds on the CPU with TensorFlow: the input pipelines against in-memory data.
ALL_PIPELINE_RUNS = [
    ("cats_dogs_original", "jpeg", 1, False),
    ("cats_dogs_128px", "jpeg", 1, False),
    ("cats_dogs_original", "python", 1, False),
    ("cats_dogs_original", "python", 4, True),
]
# `--all` also runs these at 2x, 4x and 8x the batch
SWEEP = ("cifar10_net", "cats_dogs_128px")


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m tools.bench",
        description="Train a course model for a few steps and report images/s, input-wait "
        "share, FLOP/s and the share of the measured matrix-multiply peak.",
    )
    p.add_argument(
        "--model",
        action="append",
        choices=list(models.MODELS),
        help="model to run (repeatable; with --all: only these)",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="every model in every dtype of each device (CPUs: float32), the "
        f"{' and '.join(SWEEP)} also at 2, 4 and 8x the batch, utilisation "
        "timelines and training memory; on the CPU with TensorFlow also the "
        "input-pipeline runs",
    )
    p.add_argument(
        "--device",
        action="append",
        help="e.g. cpu:0, gpu:0, or gpu for every GPU "
        "(default: cpu:0; with --all every device present)",
    )
    p.add_argument("--batch", type=int, action="append", help="batch size (repeatable)")
    p.add_argument(
        "--source",
        choices=list(SOURCES),
        default="synthetic",
        help="; ".join(f"{k}: {v}" for k, v in SOURCES.items()),
    )
    p.add_argument(
        "--workers", type=int, default=1, help="PyDataset workers (source python)"
    )
    p.add_argument(
        "--multiprocessing",
        action="store_true",
        help="PyDataset workers are processes, not threads (source python)",
    )
    p.add_argument(
        "--dtype",
        action="append",
        choices=["float32", "bfloat16", "float16"],
        help="compute dtype, repeatable (bfloat16/float16: Keras mixed precision; "
        "default float32, with --all every one the device supports)",
    )
    p.add_argument("--steps", type=int, help="timed steps (default: the profile's)")
    p.add_argument("--warmup", type=int, help="warm-up steps (default: the profile's)")
    p.add_argument(
        "--threads",
        type=int,
        help="TensorFlow intra-op threads: cores one operation may use (default: all)",
    )
    p.add_argument(
        "--inter-threads",
        type=int,
        help="TensorFlow inter-op threads: operations "
        "run side by side (default: chosen by TensorFlow)",
    )
    p.add_argument(
        "--xla",
        choices=["auto", "both"],
        help="auto: Keras' default jit_compile only; both: also each network without "
        "its augmentation layers (they refuse XLA) with the default and with "
        "jit_compile=True (default: both on a GPU with --all, else auto)",
    )
    p.add_argument(
        "--rules",
        action="store_true",
        help="the GPU rules (Tensor Core shapes, NHWC/NCHW, uint8/float32 over PCIe) "
        "on each device, each predicted, then measured (--all: on every GPU)",
    )
    p.add_argument("--record", action="store_true", help="save each record in results/")
    p.add_argument("--out", help="folder --record writes into (default: results/)")
    p.add_argument(
        "--list", action="store_true", help="list models and devices, then stop"
    )
    return p


def _devices(names):
    """The devices named (`gpu` or `cpu` alone: every one of that kind), or every one present."""
    present = hardware.devices()
    found = [
        d
        for name in names or present
        for d in present
        if d == name or (":" not in name and d.startswith(name + ":"))
    ]
    found += [name for name in names or [] if ":" in name and name not in found]
    if not found:
        raise SystemExit(
            f"python -m tools.bench: no {' or '.join(names)} device here; Keras "
            f"({keras.backend.backend()}) sees {', '.join(present)}. Does nvidia-smi list a GPU? "
            "TensorFlow needs tensorflow[and-cuda], JAX its CUDA wheel (jax[cuda12])."
        )
    return found


def _xla_pair(args, device):
    """Whether `device` gets the XLA pair: each network without augmentation, jit both ways."""
    return args.xla == "both" or (
        args.xla is None and args.all and not device.startswith("cpu")
    )


def _plan(args):
    """(model, device, batch, source, workers, multiprocessing, jit, dtype) of every run asked
    for; jit None: as the network comes (Keras' default), else "auto" or True on the network
    without its augmentation layers (the XLA pair)."""
    names, dtypes = args.model or list(models.MODELS), args.dtype
    if not args.all:
        if not args.model:
            if args.rules:
                return []
            raise SystemExit(
                "Name a model with --model (one of: "
                + ", ".join(models.MODELS)
                + ") or use --all; --help explains every option."
            )
        return [
            (m, d, b, args.source, args.workers, args.multiprocessing, j, t)
            for m in names
            for d in _devices(args.device or ["cpu:0"])
            for b in args.batch or [None]
            for j in ([None, "auto", True] if _xla_pair(args, d) else [None])
            for t in dtypes or ["float32"]
        ]
    plan = []
    for device in _devices(args.device):
        for dtype in dtypes or (
            ["float32"] if device.startswith("cpu") else roofs.supported_dtypes(device)
        ):
            for m in names:
                batches = args.batch or [models.MODELS[m][2]]
                if m in SWEEP:  # the batch sweep
                    batches = sorted({b * k for b in batches for k in (1, 2, 4, 8)})
                plan += [
                    (m, device, b, "synthetic", 1, False, None, dtype) for b in batches
                ]
                if _xla_pair(args, device):  # at the network's own batch
                    plan += [
                        (m, device, batches[0], "synthetic", 1, False, jit, dtype)
                        for jit in ("auto", True)
                    ]
    if any(job[1] == "cpu:0" for job in plan) and args.model is None:
        if keras.backend.backend() == "tensorflow":
            plan += [
                (m, "cpu:0", None, s, w, mp, None, "float32")
                for m, s, w, mp in ALL_PIPELINE_RUNS
            ]
        else:
            print(
                f"Left out on {keras.backend.backend()}: the input-pipeline runs (tf.data "
                "against the Python loader) need TensorFlow."
            )
    return plan


def _source(model, batch_size, source, workers, multiprocessing, steps, warmup):
    """(the repeating real source, warm-up steps, augment in the network) for one run."""
    if source == "synthetic":
        return None, warmup, True
    from helpers import config, data, folders

    if model == "mnist_cnn":
        raise ValueError(
            "mnist_cnn has no JPEG source in the course; use --source synthetic."
        )
    if source == "jpeg" and keras.backend.backend() != "tensorflow":
        raise ValueError(
            f"source 'jpeg' is a tf.data pipeline and needs TensorFlow, not the "
            f"{keras.backend.backend()} backend; use source 'python' or 'synthetic'."
        )
    size = models.build(model).input_shape[1]
    if model == "cifar10_net":
        paths, labels, _ = folders.labelled_files(config.source("cifar10")[1])
    else:
        paths, labels, _ = folders.cats_dogs_files("train")
    per_pass = len(paths) // batch_size
    # timed in the steady state, after one full pass has filled the cache
    if source == "jpeg":
        pipeline = data.image_pipeline(paths, labels, size, batch_size, shuffle=True)
        return pipeline.repeat(), max(warmup, per_pass + 1), True
    loader = data.PillowBatches(
        paths,
        labels,
        size,
        batch_size,
        repeat=math.ceil((steps + warmup + 10) / per_pass),
        workers=workers,
        use_multiprocessing=multiprocessing,
    )
    return loader, warmup, False  # the loader augments, the network does not


def device_name(device):
    """What `device` is: the CPU's model, or the GPU's name as the backend reports it."""
    kind, _, index = device.partition(":")
    if kind == "cpu":
        return hardware.cpu_info()["model"]
    if keras.backend.backend() == "jax":
        import jax

        return jax.devices(kind)[int(index or 0)].device_kind
    found = [
        d.get("gpu_name") for d in hardware.tensorflow_devices() if d["type"] == "GPU"
    ]
    return found[int(index or 0)] if found else None


def _memory(device, jobs, command, folder):
    """Training-memory peaks of (model, dtype) `jobs` on `device` (helpers.benchmark, notebook 08),
    shown, and written as one record into `folder` unless it is None."""
    from helpers import benchmark

    try:
        found = benchmark.measure_memory(
            jobs, device, config.settings("memory").span_mb
        )
    except RuntimeError as e:
        lines = str(e).strip().splitlines()
        print(f"Training memory on {device} not measured: {lines[0]} {lines[-1]}")
        return
    print(benchmark.check_memory(found).to_string(index=False))
    record = {
        "kind": "recorded",
        "what": "training memory",
        "device": device,
        "runs": found,
        "backend": keras.backend.backend(),
        "device_name": device_name(device),
        "hardware": hardware.describe(),
        "date": results.now(),
        "command": command,
    }
    if folder:
        print("  ->", results.save(record, folder, "memory_" + device.replace(":", "")))


def _save(record, folder, jit):
    """results.save's file; the XLA pair's gets `_xla-auto` or `_xla-on` after its name, so
    that it never replaces the run of the network as it comes."""
    return results.save(
        record,
        folder,
        suffix="" if jit is None else f"_xla-{'on' if jit is True else 'auto'}",
    )


def _rules(device, command, folder):
    """The GPU rules on `device` (helpers.benchmark), printed, and written as one record into
    `folder` unless it is None; on a CPU each says why it is skipped."""
    found = benchmark.gpu_rules(device, device_name(device))
    for rule in found:
        print("\n".join(benchmark.rule_lines(rule)))
    if folder and not device.startswith("cpu"):
        record = {
            "kind": "recorded",
            "what": "GPU rules",
            "device": device,
            "rules": found,
            "backend": keras.backend.backend(),
            "device_name": device_name(device),
            "hardware": hardware.describe(),
            "date": results.now(),
            "command": command,
        }
        print(
            "  ->", results.save(record, folder, "gpu_rules_" + device.replace(":", ""))
        )


def main(argv=None):
    from tqdm import tqdm

    # JAX takes GPU memory as needed (as helpers does for TensorFlow), not 75 % of it at start:
    # the memory measurement's processes share the GPU with this one.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    if args.list:
        print(
            "models: "
            + ", ".join(models.MODELS)
            + "\ndevices: "
            + ", ".join(hardware.devices())
        )
        return 0
    if args.threads or args.inter_threads:
        if keras.backend.backend() != "tensorflow":
            raise SystemExit(
                "--threads and --inter-threads set TensorFlow's thread pools; "
                f"drop them on the {keras.backend.backend()} backend."
            )
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(args.threads or 0)
        tf.config.threading.set_inter_op_parallelism_threads(args.inter_threads or 0)
    env = " ".join(
        f"{k}={os.environ[k]}"
        for k in ("KERAS_BACKEND", "COURSE_PROFILE", "TF_ENABLE_ONEDNN_OPTS")
        if k in os.environ
    )
    command = f"{env + ' ' if env else ''}python -m tools.bench {shlex.join(argv)}"
    folder = (args.out or config.RESULTS_DIR) if args.record else None
    default = config.settings("bench")
    steps = args.steps or default.steps
    warmup = default.warmup if args.warmup is None else args.warmup
    done, started, plan = [], time.perf_counter(), _plan(args)
    # time left, on stderr
    bar = tqdm(plan, desc="bench", unit="run", disable=len(plan) < 2)
    for model, device, batch, source, workers, mp, jit, dtype in bar:
        batch = batch or models.MODELS[model][2]
        try:
            real, used, augment = _source(
                model, batch, source, workers, mp, steps, warmup
            )
            with timing.Utilization(interval=0.25) as usage:
                record = benchmark.run(
                    model,
                    device,
                    batch,
                    real,
                    steps,
                    used,
                    dtype,
                    usage=usage,
                    command=command,
                    label=source,
                    augment=augment and jit is None,
                    jit_compile="auto" if jit is None else jit,
                )
        except (
            ValueError
        ) as e:  # a bad combination of options: say which, without a traceback
            raise SystemExit(f"python -m tools.bench: {e}") from e
        # which of the machine's devices ran it
        record["device_name"] = device_name(device)
        done.append(record)
        saved = f"  -> {_save(record, folder, jit)}" if folder else ""
        pair = "" if jit is None else f", no augmentation layers, jit_compile={jit!r}"
        bar.write(
            f"{model} {device} {dtype} b{batch} {source}{pair} (XLA "
            f"{'on' if record['xla'] else 'off'}): "
            f"{record['images_per_s']:,.0f} img/s, peak share {record['peak_share']:.0%}"
            f"{saved}"
        )
    if args.all:
        for device in dict.fromkeys(job[1] for job in plan):
            jobs = dict.fromkeys(
                (m, t) for m, d, _, s, *_, t in plan if d == device and s == "synthetic"
            )
            _memory(device, list(jobs), command, folder)
    if args.rules or args.all:  # on a CPU each rule says why it is skipped
        for device in dict.fromkeys(
            [job[1] for job in plan] if args.all and plan else _devices(args.device)
        ):
            _rules(device, command, folder)
    print()
    if done:
        print(results.table(done).to_string(index=False))
    print(f"{len(done)} runs in {time.perf_counter() - started:,.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
