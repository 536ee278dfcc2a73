"""Re-execute notebooks in `smoke` and store outputs only on the cells nbval checks.

    python -m tools.refresh_checked_outputs          # every notebook
    python -m tools.refresh_checked_outputs 03

A checked cell carries the cell tag `nbval-check-output` (tools/checked_cells.py). Run this
after changing one; review the diff: a changed stored output is a changed fact that nbval will
hold every later run to.
"""

import argparse
import sys

from tools import notebooks
from tools.checked_cells import is_checked
from tools.run_course import execute

import nbformat


def joined_streams(outputs):
    """`outputs` with each run of stdout (or stderr) pieces joined into one: how a print
    reached the kernel, in one piece or two, is not part of the fact a cell states."""
    joined = []
    for output in outputs:
        last = joined[-1] if joined else None
        if (
            output.output_type == "stream"
            and last is not None
            and last.output_type == "stream"
            and last.name == output.name
        ):
            last.text += output.text
        else:
            joined.append(output)
    return joined


def keep_checked_outputs(nb):
    """Clear outputs and counts of every code cell that is not checked by nbval; join the
    stream pieces of those that are."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if not is_checked(cell):
            cell.outputs, cell.execution_count = [], None
        cell.outputs = joined_streams(cell.outputs)
        cell.metadata.pop("execution", None)
    return nb


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("only", nargs="*")
    args = parser.parse_args()
    for path in notebooks(args.only):
        nb = keep_checked_outputs(execute(path, "smoke"))
        nbformat.write(nb, path)
        checked = sum(is_checked(c) for c in nb.cells)
        print(f"{path.name}: {checked} checked cells refreshed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
