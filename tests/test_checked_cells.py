"""Checked cells (tools/checked_cells.py) carry nbval's tag, which nbval reads as it reads
the old marker line, and keep one output each when refreshed."""

from tools import checked_cells

import nbformat


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
    # one print that reached the kernel in two
    nb.cells[2].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text=t) for t in ("2", "\n")
    ]
    keep_checked_outputs(nb)
    assert [len(c.get("outputs", [])) for c in nb.cells] == [0, 0, 1]
    assert nb.cells[2].outputs[0].text == "2\n"
