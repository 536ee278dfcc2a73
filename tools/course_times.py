"""Each notebook's "Time:" from `make course`'s own run times: recorded, then written.

`python -m tools.course_times --record` keeps build/run.json (the last `make course`, every
notebook run in `sample`) in results/course_times.json with the machine, versions, date and
command; `--write` puts each notebook's recorded time into its header and the README's course
map. tests/test_course_times.py holds headers and map to the record.
"""

import argparse
import json
import re

from tools import BUILD, ROOT, notebooks

import nbformat

RECORD = ROOT / "results" / "course_times.json"
COMMAND = "make course (python -m tools.run_course --profile sample), in a fresh clone"
TIME_LINE = re.compile(r"^\*\*Time:\*\*.*$", re.M)


def about(seconds):
    """A run time as a learner reads it: to 5 s under 100 s, else to half a minute."""
    if seconds < 97.5:
        return f"about {max(5, 5 * round(seconds / 5))} s"
    return f"about {round(seconds / 30) / 2:g} minutes"


def machine(hardware):
    """The record's hardware line, short: "Intel(R) Xeon(R) Processor (2 cores usable, AMX),
    no GPU" -> "Intel Xeon Processor, 2 cores"."""
    name = re.sub(r"\((?:R|TM)\)", "", hardware.split(" (")[0])
    cores = re.search(r"(\d+) cores", hardware)
    return f"{name}, {cores.group(1)} cores" if cores else name


def time_line(seconds, hardware):
    return f"**Time:** runs in {about(seconds)} (`make course`, quiet {machine(hardware)})."


def record(run_json=BUILD / "run.json", out=RECORD):
    """The last `make course`'s run times, with this machine, into `out`."""
    from helpers import results  # the machine's description imports the helpers

    runs = json.loads(run_json.read_text())
    names = {p.stem for p in notebooks()}
    bad = [r["name"] for r in runs if (r["profile"], r["status"]) != ("sample", "ok")]
    missing = sorted(names - {r["name"] for r in runs})
    if bad or missing:
        raise SystemExit(f"not every notebook ran ok in sample: {bad or missing}")
    machine = results.machine()
    keep = ("name", "seconds", "others_cpu_share")
    return results.write_json(
        out,
        {
            "recorded": results.now(),
            "hardware": machine["hardware"],
            "versions": machine["versions"],
            "command": COMMAND,
            "runs": [{k: r[k] for k in keep} for r in runs if r["name"] in names],
        },
    )


def write(rec=RECORD):
    """Each notebook's Time line and the README map's time column, from the record."""
    data = json.loads(rec.read_text())
    seconds = {r["name"]: r["seconds"] for r in data["runs"]}
    for path in notebooks():
        nb = nbformat.read(path, as_version=4)
        cell = next(c for c in nb.cells if c.source.startswith("# "))
        cell.source = TIME_LINE.sub(
            time_line(seconds[path.stem], data["hardware"]), cell.source, count=1
        )
        nbformat.write(nb, path)
    readme = ROOT / "README.md"
    lines = readme.read_text().splitlines()
    for i, line in enumerate(lines):
        m = re.search(r"\(notebooks/(\w+)\.ipynb\)", line)
        if line.startswith("| ") and m and m.group(1) in seconds:
            cells = line.split(" | ")
            cells[-1] = f"{about(seconds[m.group(1)])} |"
            lines[i] = " | ".join(cells)
    readme.write_text("\n".join(lines) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--record", action="store_true", help="build/run.json → results/"
    )
    parser.add_argument("--write", action="store_true", help="record → headers, README")
    args = parser.parse_args(argv)
    if args.record:
        print(f"recorded {record()}")
    if args.write:
        write()


if __name__ == "__main__":
    main()
