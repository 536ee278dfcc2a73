"""The cells whose stored output nbval checks: marked by the cell tag `nbval-check-output`.

    python -m tools.checked_cells 06 07     # move `# NBVAL_CHECK_OUTPUT` lines into the tag
    python -m tools.checked_cells           # every notebook

nbval (0.11) reads its options from a cell's tags as well as from comment lines: the tag
`nbval-check-output` is its comment `# NBVAL_CHECK_OUTPUT`, and `--nbval-lax` checks the output of
exactly the cells that carry one of them. The tag keeps the marker out of the code a learner reads
(and out of the decks and the site). The conversion takes the comment line out of each code cell
that has it, tags the cell instead and keeps its stored output; it is safe to re-run. Until every
notebook is converted, `is_checked` accepts either form.
"""

import sys

from tools import CHECK_MARK, notebooks

import nbformat

__all__ = ["CHECK_TAG", "has_mark", "is_checked", "to_tag"]

CHECK_TAG = "nbval-check-output"  # nbval's tag for "compare this cell's output"


def _source(cell):
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else source


def has_mark(cell):
    """True when a line of the cell's source is the comment `# NBVAL_CHECK_OUTPUT`."""
    return any(line.strip() == CHECK_MARK for line in _source(cell).splitlines())


def is_checked(cell):
    """True for a code cell that nbval checks: tagged `nbval-check-output` (or, until the
    notebook is converted, with a `# NBVAL_CHECK_OUTPUT` line). Takes an nbformat cell or a
    cell as parsed JSON."""
    tags = cell.get("metadata", {}).get("tags", [])
    return cell["cell_type"] == "code" and (CHECK_TAG in tags or has_mark(cell))


def to_tag(nb):
    """Move every `# NBVAL_CHECK_OUTPUT` line of the code cells of `nb` (an nbformat notebook)
    into the cell tag; returns how many cells it converted."""
    converted = 0
    for cell in nb.cells:
        if cell.cell_type != "code" or not has_mark(cell):
            continue
        lines = [line for line in cell.source.splitlines() if line.strip() != CHECK_MARK]
        cell.source = "\n".join(lines)
        tags = cell.metadata.setdefault("tags", [])
        if CHECK_TAG not in tags:
            tags.append(CHECK_TAG)
        converted += 1
    return converted


def main(argv=None):
    only = sys.argv[1:] if argv is None else argv
    for path in notebooks(only):
        nb = nbformat.read(path, as_version=4)
        converted = to_tag(nb)
        if converted:
            nbformat.write(nb, path)
        tagged = sum(is_checked(c) for c in nb.cells)
        print(f"{path.name}: {converted} cells converted, {tagged} checked cells tagged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
