"""Give every notebook cell a slide type for the reveal.js decks; safe to re-run.

    python -m tools.slide_types            # cells without a slide type get one
    python -m tools.slide_types --reset    # recompute every cell's slide type

Cells that already have a slide type (set by hand in JupyterLab's property inspector, or by
an earlier run) keep it unless --reset. The rules, first match wins:
- the Colab badge and setup cells, the first code cell (imports) and its lead-in: skip;
- a code cell: fragment, so the slide shows the lead-in first and the code and its result
  on the next key press;
- a markdown cell starting with `#` or `##`: a new slide; with `###`: a subslide;
- any other markdown cell: a subslide (one idea: its text, then the code it leads into),
  except right after a cell that is only a heading, where it continues that slide.
"""

import re
import sys

from tools import ROOT, is_plumbing, notebooks

import nbformat

# The instructors' notes: a section per notebook ("## NN · Title"), out of the learners'
# notebooks; each deck shows its notebook's section as speaker notes (press S).
GUIDE = ROOT / "INSTRUCTORS.md"


def speaker_notes(path, guide=GUIDE):
    """The guide's section for notebook `path` (its text under "## NN ·", a deep dive's under
    "## NNb ·"), or None."""
    sections = re.split(r"^## ", guide.read_text(), flags=re.M)[1:]
    number = path.name.split("_")[0]
    found = [s.split("\n", 1) for s in sections if s.startswith(f"{number} ")]
    return found[0][1].strip() if found else None


def slide_type(cells, i, first_code):
    """The slide type the rules give cells[i]; `first_code` is the imports cell's index."""
    cell = cells[i]
    text = cell.source.lstrip()
    previous = cells[i - 1].source.strip() if i else ""
    if is_plumbing(cell):
        return "skip"
    lead_in = (
        i + 1 == first_code
        and cell.cell_type == "markdown"
        and not text.startswith("# ")
    )
    if i == first_code or lead_in:
        return "skip"
    if cell.cell_type == "code":
        return "fragment"
    if text.startswith(("# ", "## ")):
        return "slide"
    if text.startswith("### "):
        return "subslide"
    heading_only = previous.startswith("#") and "\n" not in previous
    return "-" if heading_only and cells[i - 1].cell_type == "markdown" else "subslide"


def apply(path, reset=False):
    """Set the slide types of one notebook; True if it changed."""
    nb = nbformat.read(path, as_version=4)
    before = nbformat.writes(nb)
    cells = nb.cells
    plumbing = [is_plumbing(c) for c in cells]
    first_code = next(
        (i for i, c in enumerate(cells) if c.cell_type == "code" and not plumbing[i]),
        None,
    )
    for i, cell in enumerate(cells):
        if reset or "slide_type" not in cell.metadata.get("slideshow", {}):
            cell.metadata["slideshow"] = {
                "slide_type": slide_type(cells, i, first_code)
            }
    if nbformat.writes(nb) == before:
        return False
    nbformat.write(nb, path)
    return True


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    for path in notebooks():
        changed = apply(path, reset="--reset" in args)
        print(f"{path.name}: {'updated' if changed else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
