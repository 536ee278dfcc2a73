"""Records in results/, each with its machine, versions, date and command: written whole, read
back, shown (notebooks 05, 07-09). `save`/`load`/`table`/`plot` serve tools.bench's records."""

import functools
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from . import config, hardware

__all__ = [
    "BENCH_KEYS",
    "load",
    "machine",
    "machine_name",
    "now",
    "plot",
    "save",
    "table",
    "write_json",
]


def now():
    """The current UTC time in ISO 8601, to the second: every record's date (notebook 05)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


@functools.cache
def machine():
    """This machine, described once per process (notebook 05's records): `hardware` (one line),
    `versions` (Python, TensorFlow, Keras) and `details` (all of hardware.describe())."""
    info = hardware.describe()
    return {
        "hardware": hardware.summary(info),
        "versions": {
            k: v
            for k, v in info["versions"].items()
            if k in ("python", "tensorflow", "keras")
        },
        "details": info,
    }


def write_json(path, payload):
    """Write `payload` as JSON to `path` whole: a killed process leaves the old file or the new
    one, never half of one (notebook 05). Returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")
    os.replace(partial, path)
    return path


BENCH_KEYS = {
    "model",
    "device",
    "source",
    "images_per_s",
    "hardware",
    "date",
    "command",
}


def machine_name(record):
    """The machine a bench record was made on (notebook 08): its first GPU if the run used one,
    else its CPU with its cores and widest SIMD unit (two EPYCs may differ in that)."""
    hw = record["hardware"]
    if not record["device"].startswith("cpu") and hw["gpus"]:
        return hw["gpus"][0]["name"]
    cpu = hw["cpu"]
    return f"{cpu['model']} ({cpu['usable_cores']} cores, {hardware.cpu_kind(cpu['simd'])})"


def _source(record):
    """The input source, with the Python loader's workers (t: threads, p: processes)."""
    if record["source"] != "python":
        return record["source"]
    return f"python w{record['workers']}{'p' if record['use_multiprocessing'] else 't'}"


def save(record, folder, what=None, suffix=""):
    """Write a record into `folder`, named by date, machine and `what` it holds: for a bench run
    (notebook 08) its network, device, source, batch and dtype, then `suffix` (tools/bench.py)."""
    slug = re.sub(r"[^a-z0-9]+", "-", machine_name(record).lower()).strip("-")
    what = what or (
        f"{record['model']}_{record['device'].replace(':', '')}_"
        f"{_source(record).replace(' ', '_')}_b{record['batch_size']}_"
        f"{record['dtype']}"
    )
    return write_json(
        Path(folder) / f"{record['date'][:10]}_{slug}_{what}{suffix}.json", record
    )


def load(folder=None):
    """Every bench record in results/ (or `folder`), oldest first; other JSON files are left
    alone (notebooks 08, 09)."""
    found = [
        json.loads(p.read_text())
        for p in sorted(Path(folder or config.RESULTS_DIR).glob("*.json"))
    ]
    found = [r for r in found if isinstance(r, dict) and BENCH_KEYS <= r.keys()]
    return sorted(found, key=lambda r: (r["date"], r["model"]))


def table(records, title=None):
    """Bench records as a DataFrame; with a `title`, a captioned Styler (notebooks 07-09)."""
    import pandas as pd

    frame = pd.DataFrame(
        [
            {
                "model": r["model"],
                "machine": machine_name(r),
                "source": _source(r),
                "batch": r["batch_size"],
                "dtype": r["dtype"],
                "img/s": f"{r['images_per_s']:,.0f}",
                "slowdown": f"{r['input_wait_share']:.0%}",
                "GFLOP/s": f"{r['achieved_flops_per_s'] / 1e9:,.1f}",
                "peak": f"{r['peak_share']:.0%}",
                "date": r["date"][:10],
            }
            for r in records
        ]
    )
    return frame.style.set_caption(title).hide(axis="index") if title else frame


def plot(records):
    """Bar chart of images/s per bench record, labelled by model, machine, batch (notebook 08)."""
    from . import plots

    values = {
        f"{r['model']}\n{machine_name(r)[:22]}\nb{r['batch_size']} {r['source']}": r[
            "images_per_s"
        ]
        for r in records
    }
    return plots.bars(
        values, "images/s", title="Recorded runs (images/s, log scale)", log=True
    )
