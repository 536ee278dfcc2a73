"""Put the "Open in Colab" badge and the Colab setup cell into every notebook; safe to re-run.

    python -m tools.colab        # every notebook in notebooks/, and the badges in README.md

Each notebook gets, at the top, a plain "Open in Colab" link (tag `colab-badge`; offline a
badge image would show broken) and, after its header, a lead-in plus a setup cell (tag
`colab-setup`) that on Colab only clones the course, installs what Colab lacks (never
TensorFlow or Keras) and moves into the course; elsewhere it does nothing. The repository is
`[tool.course] repository` in pyproject.toml: change it there and re-run this tool. Cells
that already carry the tags are updated in place.
"""

import re
import sys
import tomllib

from tools import BADGE_TAG, ROOT, SETUP_TAG, notebooks

import nbformat

COURSE = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["course"]
REPO, BRANCH = COURSE["repository"], COURSE["branch"]
BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
# Packages of requirements.txt that Colab does not have; their pins come from that file.
COLAB_LACKS = ("gputil",)

SETUP_LEAD_IN = (
    "**On Colab** the next cell fetches the course and installs the one package Colab lacks "
    "(Colab's own TensorFlow and Keras are kept); anywhere else it does nothing."
)

SETUP_CODE = """\
# Colab only: clone the course, install what Colab lacks, work in its notebooks/ folder.
import os
import subprocess
import sys

if "google.colab" in sys.modules and not os.path.isdir("../helpers"):
    if not os.path.isdir("{folder}"):
        url = "https://github.com/{repo}.git"
        subprocess.run(["git", "clone", "--depth=1", url], check=True)
    pip = [sys.executable, "-m", "pip", "install", "-q", {pins}]
    subprocess.run(pip, check=True)
    os.chdir("{folder}/notebooks")
    sys.path.insert(0, os.path.abspath(".."))"""


def badge(name, image=True):
    """Markdown for the badge that opens notebooks/`name` in Colab; `image=False`: a plain
    link, as the notebooks have it (offline, JupyterLab would show the badge broken)."""
    url = f"https://colab.research.google.com/github/{REPO}/blob/{BRANCH}/notebooks/{name}"
    return (
        f"[![Open In Colab]({BADGE_IMAGE})]({url})"
        if image
        else f"[Open in Colab]({url})"
    )


def colab_pins():
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return [
        line.strip()
        for line in lines
        if line.split("==")[0].strip().lower() in COLAB_LACKS
    ]


def setup_code():
    pins = ", ".join(f'"{pin}"' for pin in colab_pins())
    return SETUP_CODE.format(folder=REPO.split("/")[1], repo=REPO, pins=pins)


def tagged(cell, tag):
    return tag in cell.metadata.get("tags", [])


def updated(old, kind, source, tag):
    """`old` (keeping its id) or a new cell, with this source, the tag and no slide."""
    new = (
        nbformat.v4.new_markdown_cell()
        if kind == "markdown"
        else nbformat.v4.new_code_cell()
    )
    cell = old if old is not None and old.cell_type == kind else new
    cell.source = source
    cell.metadata["tags"] = [tag]
    cell.metadata["slideshow"] = {"slide_type": "skip"}
    return cell


def apply(path):
    """Insert or update the badge and setup cells of one notebook; True if it changed."""
    nb = nbformat.read(path, as_version=4)
    before = nbformat.writes(nb)
    ours = [c for c in nb.cells if tagged(c, BADGE_TAG) or tagged(c, SETUP_TAG)]
    rest = [c for c in nb.cells if c not in ours]
    old_badge = next((c for c in ours if tagged(c, BADGE_TAG)), None)
    old_setup = [c for c in ours if tagged(c, SETUP_TAG)] + [None, None]
    nb.cells = [
        updated(old_badge, "markdown", badge(path.name, image=False), BADGE_TAG),
        *rest[:1],
        updated(old_setup[0], "markdown", SETUP_LEAD_IN, SETUP_TAG),
        updated(old_setup[1], "code", setup_code(), SETUP_TAG),
        *rest[1:],
    ]
    nb.cells[3].outputs, nb.cells[3].execution_count = [], None
    if nbformat.writes(nb) == before:
        return False
    nbformat.write(nb, path)
    return True


def apply_readme(path=ROOT / "README.md"):
    """Give every notebook link in the README's course map its badge; True if it changed."""
    text = path.read_text()
    old_badge = re.compile(r" ?\[!\[Open In Colab\]\([^)]*\)\]\([^)]*\)")
    link = re.compile(r"\[[^\]]+\]\(notebooks/(\d\d[b-z]?_\w+\.ipynb)\)")
    lines = []
    for line in text.splitlines(keepends=True):
        if line.startswith("|") and link.search(line):
            line = old_badge.sub("", line)
            line = link.sub(
                lambda m: f"{m.group(0)} {badge(m.group(1))}", line, count=1
            )
        lines.append(line)
    if "".join(lines) == text:
        return False
    path.write_text("".join(lines))
    return True


def main():
    for path in notebooks():
        print(f"{path.name}: {'updated' if apply(path) else 'unchanged'}")
    print(f"README.md: {'updated' if apply_readme() else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
