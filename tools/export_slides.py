"""Export every notebook to a reveal.js deck that works offline, plus an index page.

    python -m tools.export_slides                   # all notebooks into build/slides/
    python -m tools.export_slides --profile smoke 00 --out /tmp/decks

A deck is made from the notebook's last run in build/ (`make course`) when that run has the
same cells; otherwise the notebook is executed now in --profile (default `sample`).
reveal.js, require.js, jQuery and MathJax come from the pinned npm packages in
node_modules/ (`npm ci`) and are copied next to the decks: nothing is loaded from the web.
"""

import copy
import html
import json
import shutil
import sys

from tools import BUILD, ROOT, notebook_parser, notebooks, run_course
from tools.slide_types import speaker_notes

import nbformat
from nbconvert import SlidesExporter

NODE_MODULES = ROOT / "node_modules"
# What each deck loads: node_modules/<source> is copied to <deck folder>/<target>.
ASSETS = {
    "reveal.js/dist": "reveal.js/dist",
    "reveal.js/plugin/notes": "reveal.js/plugin/notes",
    "requirejs/require.js": "require.js",
    "jquery/dist/jquery.min.js": "jquery.min.js",
    "mathjax": "mathjax",
}


def copy_assets(out):
    """Copy the pinned browser files next to the decks (again only when the pins changed)."""
    lock = (ROOT / "package-lock.json").read_text()
    stamp = out / "assets.lock"
    if stamp.exists() and stamp.read_text() == lock:
        return
    if not (NODE_MODULES / "reveal.js").is_dir():
        raise SystemExit("node_modules/ is missing: run `npm ci` (make slides does).")
    for source, target in ASSETS.items():
        source, target = NODE_MODULES / source, out / target
        if source.is_dir():
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(
                source, target, ignore=shutil.ignore_patterns("unpacked", "test")
            )
        else:
            shutil.copy2(source, target)
    stamp.write_text(lock)


def slide_types(nb):
    return [c.metadata.get("slideshow", {}).get("slide_type", "-") for c in nb.cells]


def expected_slides(nb):
    """How many slides the metadata makes: the first shown cell, then each slide/subslide."""
    shown = [t for t in slide_types(nb) if t not in ("skip", "notes")]
    return 1 + sum(t in ("slide", "subslide") for t in shown[1:])


def title(nb):
    """The notebook's title: its first `# ` heading, without the number."""
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.source.startswith("# "):
            return cell.source.splitlines()[0][2:].split("·", 1)[-1].strip()
    return ""


def last_run(path):
    """The notebook's executed copy in build/ and its profile, if it has the same cells."""
    built = BUILD / path.name
    if not built.exists():
        return None, None
    source, nb = nbformat.read(path, as_version=4), nbformat.read(built, as_version=4)
    if [c.source for c in nb.cells] != [c.source for c in source.cells]:
        return None, None
    for cell, original in zip(nb.cells, source.cells):
        cell.metadata = original.metadata  # slide types may have changed since the run
    runs = (
        json.loads((BUILD / "run.json").read_text())
        if (BUILD / "run.json").exists()
        else []
    )
    run = next(
        (r for r in runs if r["name"] == path.stem),
        {"profile": "build/", "status": "ok"},
    )
    return (nb, run["profile"]) if run["status"] == "ok" else (None, None)


def last_run_or_execute(path, profile):
    """(the notebook's last run in build/, its profile), else executed now in `profile` and
    kept in build/ for the next tool."""
    nb, made_in = last_run(path)
    if nb is None:
        print(
            f"{path.name}: no executed copy in {BUILD}; running it in {profile}",
            flush=True,
        )
        nb, made_in = run_course.execute(path, profile), profile
        BUILD.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, BUILD / path.name)
    return nb, made_in


def export(nb, deck, notes=None):
    """Write `nb` as a reveal.js deck to the file `deck`, `notes` (the instructors' guide's
    section) as the speaker notes of its title slide; its links to the glossary lead to the
    site's page (build/site/ beside build/slides/). `nb` itself is left as it was."""
    nb = copy.deepcopy(nb)
    if notes:
        header = next(i for i, c in enumerate(nb.cells) if c.source.startswith("# "))
        cell = nbformat.v4.new_markdown_cell(notes)
        cell.metadata["slideshow"] = {"slide_type": "notes"}
        nb.cells.insert(header + 1, cell)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = cell.source.replace(
                "](glossary.md#", "](../site/glossary.html#"
            )
    exporter = SlidesExporter(
        template_name="reveal_offline",
        extra_template_basedirs=[str(ROOT / "tools" / "templates")],
    )
    exporter.reveal_url_prefix = "reveal.js"
    exporter.require_js_url = "require.js"
    exporter.jquery_url = "jquery.min.js"
    exporter.mathjax_url = "mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe"
    exporter.reveal_theme = (
        "white"  # its fonts ship with reveal.js; most themes fetch them
    )
    # more fits on a slide
    exporter.reveal_width, exporter.reveal_height = ("1280", "900")
    exporter.reveal_scroll = (
        True  # a slide taller than the screen scrolls instead of clipping
    )
    body, _ = exporter.from_notebook_node(
        nb, resources={"metadata": {"name": title(nb)}}
    )
    deck.write_text(body)


def make_deck(path, profile, out, nb=None):
    """Export notebook `path` (`nb` when given, else its last run, else executed now in
    `profile`) into the folder `out`."""
    nb, made_in = (
        (nb, profile) if nb is not None else last_run_or_execute(path, profile)
    )
    deck = f"{path.stem}.slides.html"
    export(nb, out / deck, speaker_notes(path))
    return {
        "name": path.stem,
        "title": title(nb),
        "deck": deck,
        "profile": made_in,
        "slides": expected_slides(nb),
    }


def write_index(decks, out):
    rows = "\n".join(
        f"<tr><td><a href='{html.escape(d['deck'])}'>{html.escape(d['name'].split('_')[0])} · "
        f"{html.escape(d['title'])}</a></td><td>{d['slides']}</td><td>{d['profile']}</td></tr>"
        for d in decks
    )
    (out / "index.html").write_text(
        "<!doctype html><meta charset='utf-8'><title>Course slides</title>"
        "<h1>Deep learning and GPUs: slide decks</h1>"
        "<p>Arrow keys or space to move, S for speaker notes, Esc for the overview.</p>"
        "<table border='1' cellpadding='4'><tr><th>deck</th><th>slides</th>"
        f"<th>executed in</th></tr>{rows}</table>"
    )


def main(argv=None):
    args = notebook_parser(__doc__.splitlines()[0], "slides").parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    copy_assets(args.out)
    decks, failed = [], []
    for path in notebooks(args.only):
        try:
            decks.append(make_deck(path, args.profile, args.out))
        except (
            Exception
        ) as e:  # keep going: one broken notebook should not hide the others
            failed.append(path.name)
            print(f"{path.name}: FAILED\n{str(e)[-2000:]}", file=sys.stderr)
            continue
        print(
            f"{decks[-1]['deck']:<48} {decks[-1]['slides']:3d} slides  "
            f"({decks[-1]['profile']})",
            flush=True,
        )
    write_index(decks, args.out)
    if args.out == BUILD / "slides" and (BUILD / "run.json").exists():
        run_course.write_index(json.loads((BUILD / "run.json").read_text()))
    print(
        f"{len(decks)} decks, {sum(d['slides'] for d in decks)} slides; "
        f"open {args.out / 'index.html'}"
        + (f"; FAILED: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
