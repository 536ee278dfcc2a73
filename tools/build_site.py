"""Build the course website from the executed notebooks: build/site/index.html.

    python -m tools.build_site                  # from the last `make course` run in build/
    python -m tools.build_site --profile smoke  # notebooks not run yet are executed in smoke

Sphinx with myst-nb renders every executed notebook (outputs and figures included, nothing
executed again) with sphinx-book-theme: a sidebar in teaching order, a table of contents per
page, full-text search. Each page links its slide deck, Colab and the notebook file. The home
page has the course map, how to run the course, and the recorded results in results/; the
glossary (notebooks/glossary.md) and the instructors' notes (INSTRUCTORS.md) are the last
pages. Wide tables wrap instead of being cut off (tools/templates/site.css).
Everything the pages load is copied next to them: nothing comes from the web. MathJax comes
from npm (node_modules/, as for the decks); without Node the site is built all the same, its
formulas shown as TeX source.
"Try your classifier" (try.html, from tools/templates/try.html and try.js) runs the TFLite file
notebook 12 exported (build/12_export/) on a photo, in the browser, with LiteRT.js (npm, copied
from node_modules/ as MathJax is); without Node, or before notebook 12 has run, the page is built
all the same and says how to get what it lacks. Browsers load WebAssembly only over http:
`make serve` serves the site (tools/serve.py).
"""

import json
import re
import shutil
import subprocess
import sys
import time

from tools import (
    BUILD,
    ROOT,
    colab,
    export_slides,
    is_plumbing,
    notebook_parser,
    notebooks,
)
from tools.slide_types import GUIDE

import nbformat

# the repository slug and branch of pyproject.toml's [tool.course], as the badges have them
COLAB = f"https://colab.research.google.com/github/{colab.REPO}/blob/{colab.BRANCH}/notebooks/"
CONF = """project = "Deep learning and GPUs"
author = "the course authors"
extensions = ["myst_nb"]
nb_execution_mode = "off"  # the notebooks were executed by tools/run_course.py
html_theme = "sphinx_book_theme"
html_title = "Deep learning and GPUs"
html_static_path = ["_static"]
html_css_files = ["site.css"]  # tools/templates/site.css: wide tables fit, phones get no overflow
html_js_files = ["site.js"]  # tools/templates/site.js: the sidebar buttons work (issue 2451)
html_context = {"default_mode": "auto"}  # unset, the theme logs an error on every page
html_theme_options = {"home_page_in_toc": True, "show_toc_level": 2,
                      # no right-hand contents on the home page: its wide tables get the room
                      "secondary_sidebar_items": {"**": ["page-toc"], "index": []},
                      "use_download_button": False, "use_fullscreen_button": False}
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML"  # node_modules: no CDN
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3  # glossary.md#tfdata: the notebooks link the glossary's entries
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]
"""
GLOSSARY = ROOT / "notebooks" / "glossary.md"  # a page of its own, after the notebooks
# npm's (make course runs `npm ci` where npm is)
MATHJAX = ROOT / "node_modules" / "mathjax"
TEMPLATES = ROOT / "tools" / "templates"
# LiteRT.js, pinned in package.json like MathJax
LITERT = ROOT / "node_modules" / "@litertjs"
# What try.html loads: node_modules/@litertjs/<source> copied into _try/litert/<target>. Only the
# runtimes without threads or JSPI: relaxed-SIMD browsers load the first, the others "compat".
LITERT_FILES = {
    "core/dist/index.js": "index.js",
    "wasm-utils/dist/index.js": "wasm-utils.js",
    **{
        f"core/wasm/{name}": name
        for name in (
            "litert_wasm_internal.js",
            "litert_wasm_internal.wasm",
            "litert_wasm_compat_internal.js",
            "litert_wasm_compat_internal.wasm",
        )
    },
}
MODEL = BUILD / "12_export"  # notebook 12's model.tflite and class_names.json
# Without MathJax: formulas written as TeX, as MathJax's renderer writes them, and no script.
TEX_ONLY = """
html_math_renderer = "tex"


def setup(app):
    from sphinx.ext import mathjax

    app.add_html_math_renderer("tex", (mathjax.html_visit_math, None),
                               (mathjax.html_visit_displaymath, None))
    return {"parallel_read_safe": True}
"""


def links(path, decks):
    """The line of links at the top of a page: deck (when exported to `decks`, the folder
    beside the site's), Colab, notebook file."""
    found = []
    if (decks / f"{path.stem}.slides.html").exists():
        found.append(f'<a href="../slides/{path.stem}.slides.html">Slides</a>')
    found.append(
        f'<a href="{COLAB}{path.name}"><img src="_static/colab-badge.svg" '
        'alt="Open in Colab" style="vertical-align: middle"></a>'
    )
    found.append(f'<a href="_notebooks/{path.name}" download>Download the notebook</a>')
    return " · ".join(found)


def page(nb, path, decks):
    """The notebook as the site shows it: the Colab plumbing replaced by a line of links."""
    # a copy: the notebook is left as it was
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    nb.cells = [c for c in nb.cells if not is_plumbing(c)]
    header = next(i for i, c in enumerate(nb.cells) if c.source.startswith("# "))
    nb.cells.insert(header + 1, nbformat.v4.new_markdown_cell(links(path, decks)))
    # no widget state: it would load require.js from a CDN
    nb.metadata.pop("widgets", None)
    return nb


def course_map():
    """The README's course map, its Colab badges left out (the pages link Colab)."""
    lines = (ROOT / "README.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| # |"))
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        line = re.sub(r" \[!\[Open In Colab\]\([^)]*\)\]\([^)]*\)", "", line)
        table.append(re.sub(r"\]\(notebooks/(\w+)\.ipynb\)", r"](\1.ipynb)", line))
    return "\n".join(table)


def quick_start():
    """The README's Quick start section (its two commands)."""
    text = (ROOT / "README.md").read_text()
    return text.split("## Quick start", 1)[1].split("\n## ", 1)[0].strip()


def recorded_tables():
    """The recorded 25-epoch ladder and every recorded benchmark run, as HTML tables."""
    from helpers import ladder, results

    runs, records = ladder.load_runs(ladder.RECORDED), results.load()
    shown = ladder.table(ladder.summary(runs), "recorded") if runs else None
    return (
        shown.to_html(index=False, border=0) if runs else "No ladder is recorded yet.",
        results.table(records).to_html(index=False, border=0)
        if records
        else "No benchmark run is recorded yet.",
    )


def lacks(model=MODEL):
    """What try.html would lack, as sentences that say how to get it: [] when nothing."""
    missing = []
    if not all((LITERT / source).is_file() for source in LITERT_FILES):
        missing.append(
            "LiteRT.js, which comes from npm: install Node.js, run <code>npm ci</code>,"
            " then <code>make site</code>"
        )
    if not (
        (model / "model.tflite").is_file() and (model / "class_names.json").is_file()
    ):
        missing.append(
            "the model: run notebook 12 (<code>make course</code>), which exports "
            "<code>model.tflite</code> and <code>class_names.json</code> into "
            "build/12_export/, then <code>make site</code>"
        )
    return missing


def try_page(out, model=MODEL):
    """try.html and its _try/ folder in the site `out`: the page, LiteRT.js from node_modules/
    and the model and class names from `model`, and its "not sure" band (band.json) where
    `model` has one. Without LiteRT.js or the model the page says how to get them and loads no
    script."""
    folder = out / "_try"
    folder.mkdir(parents=True, exist_ok=True)
    missing = lacks(model)
    if all((LITERT / source).is_file() for source in LITERT_FILES):
        (folder / "litert").mkdir(exist_ok=True)
        for source, target in LITERT_FILES.items():
            shutil.copy2(LITERT / source, folder / "litert" / target)
        # its one import, made a path the browser finds
        core = folder / "litert" / "index.js"
        text = core.read_text()
        if 'from "@litertjs/wasm-utils"' not in text:
            raise SystemExit(
                f"{LITERT / 'core'} no longer imports @litertjs/wasm-utils as "
                "tools/build_site.py expects: check the pinned version"
            )
        core.write_text(
            text.replace('from "@litertjs/wasm-utils"', 'from "./wasm-utils.js"')
        )
    if (model / "model.tflite").is_file() and (model / "class_names.json").is_file():
        for name in ("model.tflite", "class_names.json"):
            shutil.copy2(model / name, folder / name)
    # the page asks for band.json only where try.html names it (no request that would fail)
    band = ""
    if (model / "band.json").is_file():
        shutil.copy2(model / "band.json", folder / "band.json")
        band = ', "not sure" band: <code id="band">_try/band.json</code>'
    else:
        (folder / "band.json").unlink(missing_ok=True)
    shutil.copy2(TEMPLATES / "try.js", folder / "try.js")
    status = (
        "This page lacks " + "; and ".join(missing) + "."
        if missing
        else "Loading LiteRT.js and the model…"
    )
    script = "" if missing else '<script type="module" src="_try/try.js"></script>'
    html = (TEMPLATES / "try.html").read_text()
    (out / "try.html").write_text(
        html.replace("@STATUS@", status)
        .replace("@SCRIPT@", script)
        .replace("@BAND@", band)
    )


def home(paths):
    toc = "\n".join([*(p.stem for p in paths), GLOSSARY.stem, GUIDE.stem])
    ladder, benchmarks = recorded_tables()
    return f"""# Deep learning and GPUs

A course in numbered notebooks, from CNN, RNN and transfer-learning basics through improving a
cat/dog network step by step to timing CPU against GPU. Every page below is a notebook as it
ran in the course's last `make course`, with its outputs and figures.

<p><a href="try.html">Try your classifier</a>: notebook 12's model on a photo from your phone,
run in the browser (<code>make serve</code> shows the address to open).</p>

```{{toctree}}
:maxdepth: 1
:caption: Notebooks
:hidden:

{toc}
```

## Course map

{course_map()}

## How to run it

{quick_start()}

## Recorded results

These runs were **recorded** on the machines their records name (in `results/`), not on the
machine that built this page.

### The cat/dog ladder on the tutorial's photos

25 epochs of one pass over the 8,000 training photos: 1/32 of the blog's training (its Keras 2
"epoch" was 8,000 batches of 32). Notebook 05 shows longer runs too.

<div>{ladder}</div>

### Benchmarks

<div>{benchmarks}</div>
"""


def write_sources(pages, src):
    shutil.rmtree(src, ignore_errors=True)
    (src / "_static").mkdir(parents=True)
    (src / "conf.py").write_text(CONF if MATHJAX.is_dir() else CONF + TEX_ONLY)
    for name in ("colab-badge.svg", "site.css", "site.js"):
        shutil.copy2(ROOT / "tools" / "templates" / name, src / "_static")
    if MATHJAX.is_dir():
        shutil.copytree(
            MATHJAX,
            src / "_static" / "mathjax",
            ignore=shutil.ignore_patterns("unpacked", "test", "*.md", "docs"),
        )
    for path, nb in pages.items():
        nbformat.write(page(nb, path, src.parent / "slides"), src / path.name)
    shutil.copy2(GLOSSARY, src / GLOSSARY.name)
    shutil.copy2(GUIDE, src / GUIDE.name)
    (src / "index.md").write_text(home(list(pages)))


def build(pages, out, model=MODEL):
    """Write the site of `pages` ({notebook file: its executed copy}) into the folder `out`,
    try.html with the model and class names in the folder `model`; returns the seconds it
    took. The Sphinx sources go to `out`_src beside it.

    Sphinx runs in a process of its own: its parallel readers are forked, and a fork of a
    process that has TensorFlow loaded (a test session, a notebook) can crash when the child
    frees TensorFlow's objects."""
    start = time.perf_counter()
    src = out.parent / f"{out.name}_src"
    write_sources(pages, src)
    shutil.rmtree(out, ignore_errors=True)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-b",
            "html",
            "-q",
            "-j",
            "auto",
            str(src),
            str(out),
        ]
    )
    if done.returncode != 0:
        raise SystemExit(f"sphinx-build failed on {src} (exit code {done.returncode})")
    (out / "_notebooks").mkdir()
    for path in pages:
        shutil.copy2(path, out / "_notebooks" / path.name)
    try_page(out, model)
    return time.perf_counter() - start


def main(argv=None):
    args = notebook_parser(__doc__.splitlines()[0], "site").parse_args(argv)
    paths = notebooks(args.only)
    seconds = build(
        {
            path: export_slides.last_run_or_execute(path, args.profile)[0]
            for path in paths
        },
        args.out,
    )
    tex = (
        ""
        if MATHJAX.is_dir()
        else (
            "; formulas show as TeX source: MathJax comes with "
            "Node.js (install it, then run make site)"
        )
    )
    print(
        f"site of {len(paths)} notebooks built in {seconds:.0f} s; "
        f"open {args.out / 'index.html'}{tex}"
    )
    missing = "; and ".join(re.sub("<[^>]+>", "", why) for why in lacks())
    print(
        f"try.html (your classifier in a browser) lacks {missing}"
        if missing
        else "make serve: the site and try.html, your classifier, on a phone on the same network"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
