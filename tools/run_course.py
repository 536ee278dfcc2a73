"""Run every notebook in one profile and write the executed copies to build/.

    python -m tools.run_course                  # profile `sample`, all notebooks
    python -m tools.run_course --profile smoke 00 03

Writes build/<name>.ipynb and build/<name>.html, prints each notebook's wall time and how much
of the CPU other programs took meanwhile (a busy machine takes longer), and records both in
build/run.json after every notebook; build/index.html links everything.
A notebook already built in this profile (its executed copy newer than the notebook and
every helpers/ file) is reused, so a run cut short goes on where it stopped; --force
(make course FORCE=1) runs every notebook again.
"""

import argparse
import html
import json
import os
import sys
import time

from helpers.results import write_json
from tools import BUILD, NOTEBOOKS, ROOT, is_deep_dive, notebooks

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter
from tqdm import tqdm


def execute(path, profile, timeout=3600, nb=None):
    """Execute a notebook in `profile` (in notebooks/, as a learner would); returns it.

    Pass `nb` to keep the partly executed notebook when a cell fails.
    """
    os.environ["COURSE_PROFILE"] = profile
    nb = nb if nb is not None else nbformat.read(path, as_version=4)
    cells = sum(c.cell_type == "code" for c in nb.cells)
    # one bar per notebook on stderr: which cell (n of m) runs, time so far and time left
    with tqdm(
        total=cells, desc=f"{path.stem} ({profile})", unit="cell", leave=False
    ) as bar:
        NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(NOTEBOOKS)}},
            on_cell_executed=lambda **_: bar.update(1),
        ).execute()
    return nb


def cpu_seconds():
    """CPU seconds the whole machine has been busy (Linux's /proc/stat; None elsewhere), and
    those of this process and its finished children (the notebook's kernel and its workers)."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None, 0.0
    import resource  # Unix only; Windows stopped above, having no /proc/stat

    # not idle/iowait
    busy = (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")
    mine = sum(
        getattr(resource.getrusage(who), t)
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        for t in ("ru_utime", "ru_stime")
    )
    return busy, mine


def others_share(before, after, seconds):
    """The share of all cores that other programs kept busy between two `cpu_seconds()`."""
    if before[0] is None or after[0] is None or seconds <= 0:
        return None
    others = (after[0] - before[0]) - (after[1] - before[1])
    return max(0.0, min(1.0, others / (seconds * (os.cpu_count() or 1))))


def deck_link(name):
    """A link to the notebook's slide deck (tools/export_slides.py), if one was exported."""
    deck = f"slides/{name}.slides.html"
    return (
        f"<a href='{html.escape(deck)}'>slides</a>" if (BUILD / deck).exists() else "-"
    )


def write_index(runs):
    rows = "\n".join(
        f"<tr><td><a href='{html.escape(r['name'])}.html'>"
        f"{html.escape(r.get('title', r['name']))}</a></td>"
        f"<td>{deck_link(r['name'])}</td>"
        f"<td>{r['profile']}</td><td>{r['seconds']:.0f} s</td><td>{r['status']}</td></tr>"
        for r in runs
    )
    (BUILD / "index.html").write_text(
        "<!doctype html><meta charset='utf-8'><title>Course build</title>"
        "<h1>Deep learning and GPUs: executed notebooks</h1>"
        "<p>The course website: <a href='site/index.html'>site/index.html</a> (make site).</p>"
        f"<table border='1' cellpadding='4'><tr><th>notebook</th><th>deck</th><th>profile</th>"
        f"<th>run time</th><th>status</th></tr>{rows}</table>"
    )


def is_built(path, profile, runs):
    """True when build/ holds an executed copy of `path` from a successful run in `profile`
    that is newer than the notebook and than every file of helpers/."""
    copy = BUILD / path.name
    run = next((r for r in runs if r["name"] == path.stem), None)
    if (
        not copy.exists()
        or not run
        or (run["profile"], run["status"]) != (profile, "ok")
    ):
        return False
    sources = [path, *(ROOT / "helpers").glob("*.py")]
    return copy.stat().st_mtime > max(p.stat().st_mtime for p in sources)


def merge_runs(path, runs):
    """Earlier runs from `path` that are still notebooks, replaced by this call's `runs`."""
    earlier = json.loads(path.read_text()) if path.exists() else []
    names = {p.stem for p in notebooks()}
    merged = {r["name"]: r for r in earlier if r["name"] in names}
    merged.update({r["name"]: r for r in runs})
    return [merged[name] for name in sorted(merged)]


def path_and_dives(runs):
    """One line: the path's notebooks and the deep dives, each with their seconds as run."""
    parts = []
    for label, dive in (("the path", False), ("deep dives", True)):
        mine = [r for r in runs if is_deep_dive(r["name"]) == dive]
        seconds = sum(r["seconds"] for r in mine)
        n = f"{len(mine)} notebook{'' if len(mine) == 1 else 's'}"
        parts.append(f"{label}: {n}, {seconds:.0f} s ({seconds / 60:.1f} min)")
    return "; ".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default=os.environ.get("COURSE_PROFILE", "sample"))
    parser.add_argument("only", nargs="*", help="notebook number prefixes, e.g. 00 05")
    parser.add_argument(
        "--force", action="store_true", help="run notebooks already built too"
    )
    args = parser.parse_args()
    BUILD.mkdir(exist_ok=True)
    earlier = merge_runs(BUILD / "run.json", [])
    runs, failed = [], 0
    for path in notebooks(args.only):
        if not args.force and is_built(path, args.profile, earlier):
            runs.append(next(r for r in earlier if r["name"] == path.stem))
            print(
                f"{path.stem:<40} {args.profile:<7} reused: built after its last change "
                "(--force or FORCE=1 runs it again)",
                flush=True,
            )
            continue
        start, status, cpu = time.perf_counter(), "ok", cpu_seconds()
        nb = nbformat.read(path, as_version=4)
        try:
            execute(path, args.profile, nb=nb)
        except (
            Exception
        ) as e:  # keep going: one broken notebook should not hide the others
            status, failed = "failed", failed + 1
            print(f"{path.name}: FAILED\n{str(e)[-2000:]}", file=sys.stderr)
        seconds = time.perf_counter() - start
        others = others_share(cpu, cpu_seconds(), seconds)
        nbformat.write(nb, BUILD / path.name)
        body, _ = HTMLExporter().from_notebook_node(nb)
        (BUILD / f"{path.stem}.html").write_text(body)
        titles = [
            c.source.splitlines()[0][2:]
            for c in nb.cells
            if c.cell_type == "markdown" and c.source.startswith("# ")
        ]
        runs.append(
            {
                "name": path.stem,
                "title": (titles or [path.stem])[0],
                "profile": args.profile,
                "seconds": seconds,
                "status": status,
                "others_cpu_share": others,
            }
        )
        busy = ": a busy machine takes longer" if others and others > 0.1 else ""
        load = (
            ""
            if others is None
            else f"  (other programs used {100 * others:.0f} % of the {os.cpu_count()} cores{busy})"
        )
        print(
            f"{path.stem:<40} {args.profile:<7} {seconds:7.1f} s  {status}{load}",
            flush=True,
        )
        # saved after every notebook: a run cut short keeps what it finished
        write_json(BUILD / "run.json", merge_runs(BUILD / "run.json", runs))
    ran = [r for r in runs if r not in earlier]
    print(
        f"ran {len(ran)} notebooks in {sum(r['seconds'] for r in ran):.0f} s, reused "
        f"{len(runs) - len(ran)}; open {BUILD / 'index.html'}"
    )
    print(path_and_dives(runs))
    # keep the notebooks this call did not run
    runs = merge_runs(BUILD / "run.json", runs)
    write_json(BUILD / "run.json", runs)
    write_index(runs)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
