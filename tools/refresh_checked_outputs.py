"""Re-execute notebooks in `smoke` and store outputs only on `# NBVAL_CHECK_OUTPUT` cells.

    python -m tools.refresh_checked_outputs          # every notebook
    python -m tools.refresh_checked_outputs 03

Run it after changing a checked cell; review the diff: a changed stored output is
a changed fact that nbval will hold every later run to.
"""

import argparse
import sys

from tools import CHECK_MARK, notebooks
from tools.run_course import execute

import nbformat


def keep_checked_outputs(nb):
    """Clear outputs and counts of every code cell that is not checked by nbval."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if CHECK_MARK not in cell.source:
            cell.outputs, cell.execution_count = [], None
        cell.metadata.pop("execution", None)
    return nb


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("only", nargs="*")
    args = parser.parse_args()
    for path in notebooks(args.only):
        nb = keep_checked_outputs(execute(path, "smoke"))
        nbformat.write(nb, path)
        checked = sum(CHECK_MARK in c.source for c in nb.cells if c.cell_type == "code")
        print(f"{path.name}: {checked} checked cells refreshed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
