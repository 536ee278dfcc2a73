"""Rules every course notebook keeps (nbval runs them; these check their stored form)."""

import json

from helpers import config

import pytest

NOTEBOOKS = sorted((config.ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
MARK = "# NBVAL_CHECK_OUTPUT"


def code_cells(path):
    nb = json.loads(path.read_text())
    return nb, [c for c in nb["cells"] if c["cell_type"] == "code"]


def test_notebooks_are_numbered_without_gaps():
    numbers = [int(p.name[:2]) for p in NOTEBOOKS]
    assert numbers and numbers == list(range(len(numbers)))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_at_least_three_checked_cells(path):
    _, cells = code_cells(path)
    checked = [c for c in cells if MARK in "".join(c["source"])]
    assert len(checked) >= 3
    assert all(c["outputs"] for c in checked), "a checked cell has no stored output"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_outputs_only_on_checked_cells_and_no_errors(path):
    nb, cells = code_cells(path)
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    for cell in cells:
        if MARK not in "".join(cell["source"]):
            assert not cell["outputs"], "".join(cell["source"])[:80]
        assert not any(o["output_type"] == "error" for o in cell["outputs"])
