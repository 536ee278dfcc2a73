"""The Colab setup cell does nothing outside Colab and the right things on it; the badge and
slide-type tools are safe to re-run and follow a changed repository slug; checked cells carry
nbval's tag, and the old marker line moves into it; the site collapses the instructor notes
that the decks keep as speaker notes."""

import os
import shutil
import subprocess
import sys
import types

from helpers import config
from tools import checked_cells, colab, notebooks, slide_types

import nbformat

NOTEBOOK = config.ROOT / "notebooks" / "00_setup_and_hardware.ipynb"


def refuse(*args, **kwargs):
    raise AssertionError(f"the setup cell ran a command: {args}")


def test_setup_cell_does_nothing_outside_colab(monkeypatch):
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    monkeypatch.setattr(subprocess, "run", refuse)
    cwd, path = os.getcwd(), list(sys.path)
    exec(colab.setup_code(), {})
    assert os.getcwd() == cwd and sys.path == path


def test_setup_cell_on_colab_clones_installs_and_moves_in(monkeypatch, tmp_path):
    folder = tmp_path / colab.REPO.split("/")[1]
    calls = []

    def run(command, check):
        calls.append(command)
        if command[:2] == [
            "git",
            "clone",
        ]:  # what a clone brings, as far as the cell cares
            (folder / "notebooks").mkdir(parents=True)
            (folder / "helpers").mkdir()

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    monkeypatch.setattr(subprocess, "run", run)
    exec(colab.setup_code(), {})
    assert calls[0] == [
        "git",
        "clone",
        "--depth=1",
        f"https://github.com/{colab.REPO}.git",
    ]
    assert calls[1][1:5] == ["-m", "pip", "install", "-q"] and calls[1][5:] == [
        "gputil==1.4.0"
    ]
    assert not any("tensorflow" in arg or "keras" in arg for arg in calls[1])
    assert os.getcwd() == str(folder / "notebooks") and sys.path[0] == str(folder)
    exec(colab.setup_code(), {})  # running the cell again changes nothing
    assert len(calls) == 2 and os.getcwd() == str(folder / "notebooks")


def test_colab_tool_follows_a_new_slug_and_is_idempotent(monkeypatch, tmp_path):
    notebook, readme = tmp_path / NOTEBOOK.name, tmp_path / "README.md"
    shutil.copy(NOTEBOOK, notebook)
    shutil.copy(config.ROOT / "README.md", readme)
    assert not colab.apply(notebook) and not colab.apply_readme(readme)
    monkeypatch.setattr(colab, "REPO", "someone/other-course")
    assert colab.apply(notebook) and colab.apply_readme(readme)
    assert not colab.apply(notebook) and not colab.apply_readme(readme)
    nb = nbformat.read(notebook, as_version=4)
    assert len(nb.cells) == len(nbformat.read(NOTEBOOK, as_version=4).cells)
    assert "github/someone/other-course/blob/main/notebooks/00_" in nb.cells[0].source
    assert "https://github.com/someone/other-course.git" in nb.cells[3].source
    assert 'os.chdir("other-course/notebooks")' in nb.cells[3].source
    lines = [
        line for line in readme.read_text().splitlines() if "](notebooks/00_" in line
    ]
    assert lines and all(line.count("Open In Colab") == 1 for line in lines)
    assert "other-course/blob/main/notebooks/00_setup_and_hardware.ipynb" in lines[0]


def test_slide_types_follow_the_rules_and_keep_hand_made_choices(tmp_path):
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook(
        cells=[
            md("# 01 · Title"),
            md("We import."),
            code("import helpers"),
            md("## 1 · Idea"),
            md("We train; expect 90 %."),
            code("model.fit()"),
            md("**Instructor notes:** go slow"),
            md("### Detail"),
            md("More."),
            code("x = 1"),
            md("## Summary"),
        ]
    )
    nb.cells[8].metadata["slideshow"] = {"slide_type": "fragment"}  # chosen by hand
    path = tmp_path / "01_x.ipynb"
    nbformat.write(nb, path)
    assert slide_types.apply(path) and not slide_types.apply(path)
    got = [
        c.metadata.slideshow["slide_type"]
        for c in nbformat.read(path, as_version=4).cells
    ]
    assert got == [
        "slide",
        "skip",
        "skip",
        "slide",
        "-",
        "fragment",
        "notes",
        "subslide",
        "fragment",
        "fragment",
        "slide",
    ]
    assert slide_types.apply(path, reset=True)
    assert (
        nbformat.read(path, as_version=4).cells[8].metadata.slideshow["slide_type"]
        == "-"
    )


def test_checked_cells_carry_nbvals_tag_and_keep_one_output_each():
    from tools.refresh_checked_outputs import keep_checked_outputs

    from nbval.plugin import find_comment_markers, find_metadata_tags

    tag = checked_cells.CHECK_TAG  # nbval reads the tag as it reads the comment line
    comment = find_comment_markers("# NBVAL_CHECK_OUTPUT")
    assert dict(find_metadata_tags({"tags": [tag]})) == dict(comment) == {"check": True}
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    shown = nbformat.v4.new_output("stream", name="stdout", text="3\n")
    nb = nbformat.v4.new_notebook(
        cells=[
            md("Not code", metadata={"tags": [tag]}),
            code("print(1 + 2)", outputs=[shown]),
            code("print(2)", metadata={"tags": [tag]}, outputs=[shown]),
        ]
    )
    assert [checked_cells.is_checked(c) for c in nb.cells] == [False, False, True]
    nb.cells[2].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text=t) for t in ("2", "\n")
    ]  # one print that reached the kernel in two
    keep_checked_outputs(nb)
    assert [len(c.get("outputs", [])) for c in nb.cells] == [0, 0, 1]
    assert nb.cells[2].outputs[0].text == "2\n"


def test_a_site_page_links_a_deck_only_when_the_deck_is_beside_the_site(tmp_path):
    """A site built in a temporary folder must not link the decks of the course's build/."""
    from tools import build_site

    path, decks = notebooks()[0], tmp_path / "slides"
    assert "Slides" not in build_site.links(path, decks)
    decks.mkdir()
    (decks / f"{path.stem}.slides.html").write_text("<!doctype html>")
    assert f'href="../slides/{path.stem}.slides.html"' in build_site.links(path, decks)


def test_the_site_collapses_instructor_notes_the_deck_keeps_them_as_speaker_notes(
    tmp_path,
):
    from tools import build_site, export_slides

    path = notebooks()[1]
    nb = nbformat.read(path, as_version=4)
    notes = [c.source for c in nb.cells if c.source.startswith(slide_types.NOTES)]
    page = build_site.page(nb, path, tmp_path)
    collapsed = [
        c.source
        for c in page.cells
        if c.source.startswith('<details class="instructor-notes">')
    ]
    assert len(collapsed) == len(notes) >= 1
    assert not any(c.source.startswith(slide_types.NOTES) for c in page.cells)
    assert all(c.endswith("</details>") and "<summary>" in c for c in collapsed)
    export_slides.export(nb, tmp_path / "deck.html")
    assert (tmp_path / "deck.html").read_text().count('<aside class="notes">') == len(
        notes
    )
