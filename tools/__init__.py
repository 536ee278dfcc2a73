"""The course's build tools, run from the course folder as `python -m tools.NAME`.

build_sample            data/ from ../shared/data (the embedded sample and its manifest)
run_course              execute notebooks into build/ (HTML, timings, index)
refresh_checked_outputs re-run notebooks and store the outputs nbval checks
export_slides           reveal.js decks in build/slides
build_site              the course website in build/site (Sphinx + myst-nb)
colab                   Colab badges and setup cells
slide_types             a slide type for every cell that has none
bench                   record benchmark runs into results/ (helpers.benchmark)
ladder                  record notebook 05's cat/dog ladder into results/, resumably
check_lock              does requirements.lock install on every platform and Python? (pip's dry run)
check_python            the Python make found, 3.11-3.13 (a script: `python3 tools/check_python.py`)
"""

import argparse
import os
import tomllib
from pathlib import Path

__all__ = [
    "BADGE_TAG",
    "BUILD",
    "NOTEBOOKS",
    "PLUMBING_TAGS",
    "ROOT",
    "SETUP_TAG",
    "code_width",
    "is_deep_dive",
    "is_plumbing",
    "notebooks",
    "notebook_parser",
]

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
# as helpers.config has it
BUILD = Path(os.environ.get("COURSE_BUILD") or ROOT / "build")
# Cells that tools.colab writes into every notebook: Colab plumbing, not course content.
BADGE_TAG, SETUP_TAG = "colab-badge", "colab-setup"
PLUMBING_TAGS = (BADGE_TAG, SETUP_TAG)


def is_plumbing(cell):
    """True for the Colab badge and setup cells (by their tags)."""
    return bool(set(cell.metadata.get("tags", [])) & set(PLUMBING_TAGS))


def code_width():
    """(ruff format's line length, the names of the notebooks it does not format yet), as
    pyproject.toml sets them."""
    ruff = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]
    return ruff["line-length"], {Path(p).name for p in ruff["format"]["exclude"]}


def is_deep_dive(path):
    """True for an optional deep dive (`08b_….ipynb`), False for a notebook of the path."""
    return Path(path).name[2:3] not in ("_", "")


def notebooks(selected=()):
    """The course notebooks in teaching order, each path notebook (`08_…`) followed by its
    optional deep dives (`08b_…`, `08c_…`); optionally only those whose name starts so."""
    found = sorted(
        [
            *NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"),
            *NOTEBOOKS.glob("[0-9][0-9][b-z]_*.ipynb"),
        ]
    )
    return [
        p for p in found if not selected or any(p.name.startswith(s) for s in selected)
    ]


def notebook_parser(description, out):
    """The options of a tool that builds something from executed notebooks: --profile, --out
    (default build/`out`) and the notebook number prefixes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--profile", default=os.environ.get("COURSE_PROFILE", "sample"))
    parser.add_argument("--out", type=Path, default=BUILD / out)
    parser.add_argument("only", nargs="*", help="notebook number prefixes, e.g. 00 05")
    return parser
