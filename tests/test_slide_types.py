"""The slide-type tool (tools/slide_types.py) follows the rules, keeps hand-made choices and
is safe to re-run."""

from tools import slide_types

import nbformat


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
            md("### Detail"),
            md("More."),
            code("x = 1"),
            md("## Summary"),
        ]
    )
    nb.cells[7].metadata["slideshow"] = {"slide_type": "fragment"}  # chosen by hand
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
        "subslide",
        "fragment",
        "fragment",
        "slide",
    ]
    assert slide_types.apply(path, reset=True)
    assert (
        nbformat.read(path, as_version=4).cells[7].metadata.slideshow["slide_type"]
        == "-"
    )
