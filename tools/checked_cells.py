"""The cells whose stored output nbval checks: each carries the cell tag `nbval-check-output`.

nbval (0.11) reads its options from a cell's tags as well as from comment lines: the tag
`nbval-check-output` is its comment `# NBVAL_CHECK_OUTPUT`, and `--nbval-lax` checks the output of
exactly the cells that carry one of them. The course uses the tag only, which keeps the marker out
of the code a learner reads, the decks and the site (tests/test_notebook_rules.py refuses the
comment).
"""

__all__ = ["CHECK_TAG", "is_checked"]

CHECK_TAG = "nbval-check-output"  # nbval's tag for "compare this cell's output"


def is_checked(cell):
    """True for a code cell that nbval checks (tagged `nbval-check-output`). Takes an nbformat
    cell or a cell as parsed JSON."""
    tags = cell.get("metadata", {}).get("tags", [])
    return cell["cell_type"] == "code" and CHECK_TAG in tags
