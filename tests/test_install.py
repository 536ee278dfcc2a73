"""Node.js only where it is needed: `make course` runs the notebooks and builds the site without
npm (and says in one line how to get the decks), the site is built without npm's MathJax, and
the deck tests skip without Node's packages except under CI."""

import re
import subprocess

from helpers import config
from tools import build_site, notebooks

import nbformat
import pytest


def planned(*arguments):
    """The commands `make -n -B` would run (every target remade, nothing run)."""
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", *arguments],
        cwd=config.ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_course_without_npm_runs_the_notebooks_and_the_site_and_says_how_to_get_decks():
    commands = planned("course", "NPM=")
    assert "tools.run_course" in commands and "tools.build_site" in commands
    assert "npm" not in commands.replace("make slides", "").replace(
        "No slide decks", ""
    )
    assert "tools.export_slides" not in commands
    said = [line for line in commands.splitlines() if "Node.js" in line]
    assert said == [
        'echo "No slide decks: they need Node.js. Install it (nodejs.org or your '
        'package manager), then run make slides."'
    ]


def test_make_course_with_npm_also_builds_the_decks():
    commands = planned("course", "NPM=/usr/bin/npm").splitlines()
    order = [
        next(i for i, line in enumerate(commands) if word in line)
        for word in (
            "npm ci",
            "tools.run_course",
            "tools.export_slides",
            "tools.build_site",
        )
    ]
    assert order == sorted(order)
    assert not [line for line in commands if "No slide decks" in line]


def test_make_finds_npm_itself_and_only_the_decks_insist_on_it():
    makefile = (config.ROOT / "Makefile").read_text()
    assert "NPM := $(shell command -v npm 2>/dev/null)" in makefile
    without = planned("test", "NPM=")
    assert "pytest --nbval-lax" in without and "npm ci" not in without
    # it says how to get Node when npm is missing
    assert "npm ci" in planned("slides", "NPM=")


@pytest.mark.processes
def test_the_site_builds_without_mathjax_and_shows_formulas_as_tex(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(build_site, "MATHJAX", tmp_path / "no-node_modules" / "mathjax")
    path = notebooks(["02"])[0]  # the notebook with the most formulas
    build_site.build({path: nbformat.read(path, as_version=4)}, tmp_path / "site")
    page = (tmp_path / "site" / path.with_suffix(".html").name).read_text()
    assert re.search(
        r'<span class="math notranslate nohighlight">\\\(.+?\\\)</span>', page
    )
    assert (
        "MathJax.js" not in page
        and not (tmp_path / "site" / "_static" / "mathjax").exists()
    )


def test_the_site_takes_mathjax_from_npm_where_it_is(tmp_path, monkeypatch):
    mathjax = tmp_path / "node_modules" / "mathjax"
    mathjax.mkdir(parents=True)
    (mathjax / "MathJax.js").write_text("// MathJax")
    monkeypatch.setattr(build_site, "MATHJAX", mathjax)
    build_site.write_sources({}, tmp_path / "src")
    assert (tmp_path / "src" / "_static" / "mathjax" / "MathJax.js").exists()
    assert (
        'html_math_renderer = "tex"' not in (tmp_path / "src" / "conf.py").read_text()
    )


def test_the_deck_tests_skip_without_node_only_outside_ci(tmp_path):
    import test_slides

    assert "needs Node.js" in test_slides.node_missing(tmp_path, {})
    # CI: they run and fail
    assert test_slides.node_missing(tmp_path, {"CI": "true"}) is None
    (tmp_path / "reveal.js").mkdir()
    assert test_slides.node_missing(tmp_path, {}) is None
