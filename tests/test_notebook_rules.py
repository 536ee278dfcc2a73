"""Rules every course notebook keeps (nbval runs them; these check their stored form).

`problems(nb, name)` lists every rule a notebook breaks (CONTRIBUTING.md explains each);
the last tests show that it catches a deliberately broken copy of notebook 00.
A checked cell (one whose stored output nbval compares) carries the cell tag
`nbval-check-output`, never nbval's comment form, which a learner would see.
"""

import copy
import json
import re
from pathlib import Path

from tools import code_width, colab, is_deep_dive, notebooks, slide_types
from tools.checked_cells import CHECK_TAG, is_checked

import pytest

NOTEBOOKS = notebooks()
MAX_LINES = 15  # lines per code cell, blank lines and comments included
# `ruff format` writes a notebook's code at this width; a cell magic's code (%%writefile),
# which it leaves alone, is held to it here too. The notebooks ruff does not format yet
# are listed in pyproject.toml.
WIDTH, UNFORMATTED = code_width()
HEADER = ("**What you will learn**", "**Prerequisites", "**Time", "**Where this sits")
ENDING = ("## Summary", "## Exercises", "## Questionnaire")
# One lesson of about an hour: every markdown word of a path notebook (exercises included) and
# its cells; the path in all, read in a day. What the path does not need is an optional deep
# dive, a notebook of its own (08b_…), never a section of a path notebook.
LESSON_WORDS, LESSON_CELLS, PATH_WORDS = 3000, 80, 25000
DEEP_DIVE = "## Deep dive"
NOTES = "**Instructor notes"  # advice to a room the learner is not in: INSTRUCTORS.md
MAX_WORDS = 120  # words of text on one slide; details go to the speaker notes
# Words for the course's maintainers, not its learners: no markdown cell may say them
# (JupyterLab shows no slides, and a learner is never told which cells a test checks).
MARK = "NBVAL_CHECK_OUTPUT"  # nbval's comment form of the tag
MAINTENANCE = re.compile(r"checked cell|next slide", re.I)
# Paths that exist only on one machine: home, scratch and Colab folders, Windows drives.
MACHINE_PATH = re.compile(
    r"(?<![\w./:-])(?:/(?:home|Users|root|tmp|work|content|mnt)/|[A-Za-z]:\\)"
)


def text(cell):
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else source


def output_text(output):
    parts = [output.get("text", "")] + list(output.get("data", {}).values())
    return "".join("".join(p) if isinstance(p, list) else str(p) for p in parts)


def words(markdown):
    """The words a slide shows: collapsed <details>, HTML tags and link targets left out."""
    shown = re.sub(r"<details>.*?</details>", " ", markdown, flags=re.S)
    shown = re.sub(r"\]\([^)]*\)|<[^>]+>", " ", shown)
    return len(re.findall(r"\w\S*", shown))


def slides(cells, kinds):
    """Markdown text per slide: a slide or subslide cell and the cells that continue it."""
    shown = []
    for i, (cell, kind) in enumerate(zip(cells, kinds)):
        if kind in ("slide", "subslide") or not shown:
            shown.append([i, ""])
        if kind not in ("notes", "skip") and cell["cell_type"] == "markdown":
            shown[-1][1] += "\n" + text(cell)
    return shown


def numbered_items(markdown):
    return len(re.findall(r"^\d+\. ", markdown, re.M))


def problems(nb, name):
    """Every rule notebook `nb` (parsed JSON, file name `name`) breaks, one line each."""
    found = []
    cells = nb["cells"]
    tags = [c.get("metadata", {}).get("tags", []) for c in cells]
    if nb["metadata"].get("kernelspec", {}).get("name") != "python3":
        found.append("kernel: not python3")
    if (
        not cells
        or "colab-badge" not in tags[0]
        or text(cells[0]) != colab.badge(name, image=False)
    ):
        found.append(
            "colab: first cell is not the Colab link for this notebook (tools/colab.py)"
        )
    content = [
        c for c, t in zip(cells, tags) if not {"colab-badge", "colab-setup"} & set(t)
    ]
    header = text(content[0]) if content else ""
    number = name.split("_")[0]
    if not header.startswith(f"# {number} · ") or not all(h in header for h in HEADER):
        found.append(f"header: needs '# {number} · Title' and {', '.join(HEADER)}")
    code = [i for i, c in enumerate(cells) if c["cell_type"] == "code"]
    if (
        not code
        or "colab-setup" not in tags[code[0]]
        or text(cells[code[0]]) != colab.setup_code()
    ):
        found.append(
            "colab: first code cell is not the Colab setup cell (tools/colab.py)"
        )
    for i in code:
        cell, source = cells[i], text(cells[i])
        before = cells[i - 1] if i else {"cell_type": "code"}
        lead_in = text(before).strip() if before["cell_type"] == "markdown" else ""
        if not lead_in:
            found.append(f"lead-in: code cell {i} has no markdown sentence before it")
        if re.search(r"\bfit\(", source) and "expect" not in lead_in.lower():
            found.append(f"lead-in: training cell {i} does not say what to expect")
        if len(source.rstrip().splitlines()) > MAX_LINES:
            found.append(f"length: code cell {i} has more than {MAX_LINES} lines")
        wide = [n for n, line in enumerate(source.splitlines(), 1) if len(line) > WIDTH]
        if wide and name not in UNFORMATTED:
            found.append(
                f"width: code cell {i} line {wide[0]} is longer than {WIDTH} characters"
            )
        if any(o["output_type"] == "error" for o in cell["outputs"]):
            found.append(f"outputs: code cell {i} stores an error")
        if not is_checked(cell) and cell["outputs"]:
            found.append(
                f"outputs: code cell {i} stores outputs but is not tagged {CHECK_TAG}"
            )
        if is_checked(cell) and not cell["outputs"]:
            found.append(f"outputs: checked cell {i} has no stored output")
    notes = [
        i
        for i, c in enumerate(cells)
        if c["cell_type"] == "markdown" and text(c).lstrip().startswith(NOTES)
    ]
    if notes:
        found.append(
            f"notes: instructor notes in the notebook (cells {notes}); they belong in "
            f"{slide_types.GUIDE.name}, which the decks show as speaker notes"
        )
    if not is_deep_dive(name) and not slide_types.speaker_notes(Path(name)):
        found.append(
            f"notes: {slide_types.GUIDE.name} has no section '## {name[:2]} · …'"
        )
    if sum(is_checked(cells[i]) for i in code) < 3:
        found.append(f"outputs: fewer than three checked cells (tag {CHECK_TAG})")
    kinds = [
        c.get("metadata", {}).get("slideshow", {}).get("slide_type") for c in cells
    ]
    for i, shown in slides(cells, kinds):
        if words(shown) > MAX_WORDS:
            found.append(
                f"slides: the slide at cell {i} shows {words(shown)} words "
                f"(at most {MAX_WORDS}; move detail into a cell of its own or <details>)"
            )
    for i, (cell, kind) in enumerate(zip(cells, kinds)):
        if MARK in text(cell):
            found.append(
                f"markers: cell {i} shows {MARK}; tag the cell {CHECK_TAG} instead "
                "(the tag stays off the page, the decks and the site)"
            )
        if cell["cell_type"] != "code" and CHECK_TAG in tags[i]:
            found.append(f"outputs: {cell['cell_type']} cell {i} is tagged {CHECK_TAG}")
        if cell["cell_type"] == "markdown":
            said = MAINTENANCE.search(text(cell))
            if said:
                found.append(
                    f"maintenance: '{said.group(0).lower()}' in markdown cell {i} "
                    "(learners read it: say what the cell below does or shows)"
                )
            heading = re.search(r"^## ", text(cell), re.M)
            if heading and (heading.start() > 0 or kind != "slide"):
                found.append(
                    f"slides: section heading that does not open a slide (cell {i})"
                )
            if not text(cell).strip():
                found.append(f"slides: empty markdown cell {i} (an empty slide)")
        stored = "".join(output_text(o) for o in cell.get("outputs", []))
        if MACHINE_PATH.search(text(cell) + stored):
            found.append(f"paths: cell {i} has a machine-specific path")
        if kind is None:
            found.append(f"slides: cell {i} has no slide type (tools/slide_types.py)")
    if is_deep_dive(name):
        return found + summary_problems(cells)
    return found + ending_problems(cells, number) + lesson_problems(cells)


def prose_words(markdown):
    """The words a learner reads: HTML tags and link targets left out, <details> kept."""
    return len(re.findall(r"\w\S*", re.sub(r"\]\([^)]*\)|<[^>]+>", " ", markdown)))


def lesson_words(cells):
    """Every word of a notebook's markdown cells: what a learner reads, exercises included."""
    return sum(prose_words(text(c)) for c in cells if c["cell_type"] == "markdown")


def lesson_problems(cells):
    """A path notebook is one lesson: at most LESSON_WORDS words and LESSON_CELLS cells, and
    no deep-dive section (a deep dive is a notebook of its own)."""
    found = []
    words = lesson_words(cells)
    if words > LESSON_WORDS:
        found.append(
            f"lesson: too many words, {words} of markdown (at most {LESSON_WORDS}; cut, "
            "or move what the path does not need into a deep-dive notebook NNb_…)"
        )
    if len(cells) > LESSON_CELLS:
        found.append(f"lesson: too many cells, {len(cells)} (at most {LESSON_CELLS})")
    dives = [i for i, c in enumerate(cells) if text(c).startswith(DEEP_DIVE)]
    if dives:
        found.append(
            f"lesson: a deep-dive section at cell {dives[0]}; deep dives are notebooks "
            "of their own (NNb_…)"
        )
    return found


def summary_problems(cells):
    """A deep dive ends with its summary: no code cell after '## Summary'."""
    starts = [text(c) if c["cell_type"] == "markdown" else "" for c in cells]
    at = [i for i, t in enumerate(starts) if t.startswith(ENDING[0])]
    if not at or any(c["cell_type"] == "code" for c in cells[at[-1] :]):
        return ["ending: a deep dive ends with '## Summary' and no code after it"]
    return []


def ending_problems(cells, number):
    """After the last teaching code cell: Summary, Exercises, Questionnaire. The exercises check
    themselves: an answer cell calling q[N].check( after each '### Exercise N', the checks
    loaded first and the notebook's progress shown last."""
    starts = [text(c) if c["cell_type"] == "markdown" else "" for c in cells]
    at = next((i for i, t in enumerate(starts) if t.startswith(ENDING[1])), len(cells))
    teaching = [i for i, c in enumerate(cells[:at]) if c["cell_type"] == "code"]
    first = (teaching[-1] if teaching else 0) + 1
    heads = [
        next((i for i in range(first, len(cells)) if starts[i].startswith(h)), -1)
        for h in ENDING
    ]
    if -1 in heads or heads != sorted(heads):
        return [f"ending: after the last code cell, cells starting {', '.join(ENDING)}"]
    found = []
    if any(c["cell_type"] == "code" for c in cells[heads[2] :]):
        found.append("ending: a code cell after the questionnaire")
    if numbered_items(starts[heads[2]]) < 3:
        found.append("ending: 3+ numbered questions in the questionnaire")
    section = range(heads[1], heads[2])
    answers = [i for i in section if cells[i]["cell_type"] == "code"]
    if not answers:
        return found + [
            "ending: the exercises have no answer cells (q = exercises.load(...), "
            "then q[N].check(answer) after each '### Exercise N')"
        ]
    asked = [
        (i, int(m.group(1)))
        for i in section
        if (m := re.match(r"### Exercise (\d+)\n", starts[i]))
    ]
    if [n for _, n in asked] != list(range(1, len(asked) + 1)) or len(asked) < 3:
        found.append(
            "ending: 3+ exercises headed '### Exercise 1', '### Exercise 2', ..."
        )
    for i, n in asked:
        if i + 1 not in answers or f"q[{n}].check(" not in text(cells[i + 1]):
            found.append(
                f"ending: exercise {n} has no answer cell calling q[{n}].check( "
                "right after it"
            )
    if f'exercises.load("{number}")' not in text(cells[answers[0]]):
        found.append(
            "ending: the first exercise cell loads the checks: "
            f'exercises.load("{number}")'
        )
    if "exercises.progress(" not in text(cells[answers[-1]]):
        found.append(
            "ending: the last exercise cell shows the progress: exercises.progress("
        )
    return found


def numbering_problems(names):
    """Path notebooks are NN_lower_case.ipynb, numbered 00, 01, ... without gaps; a deep dive
    is NNb_lower_case.ipynb (then NNc_…) beside the path notebook NN it deepens."""
    found = [
        f"name: {n}"
        for n in names
        if not re.fullmatch(r"\d\d[b-z]?_[a-z0-9_]+\.ipynb", n)
    ]
    path = [n for n in names if not is_deep_dive(n)]
    numbers = [int(n[:2]) for n in path]
    if not numbers or numbers != list(range(len(numbers))):
        found.append(f"numbering: {numbers} has gaps or repeats")
    for n in set(names) - set(path):
        letters = sorted(d[2] for d in names if d[:2] == n[:2] and is_deep_dive(d))
        if int(n[:2]) not in numbers or letters != list("bcdefgh"[: len(letters)]):
            found.append(
                f"numbering: deep dive {n} beside no notebook, or letters skip"
            )
    return found


def test_the_path_reads_in_a_day():
    """The numbered path in all (deep dives apart): at most PATH_WORDS words."""
    words = {
        p.stem: lesson_words(json.loads(p.read_text())["cells"])
        for p in NOTEBOOKS
        if not is_deep_dive(p)
    }
    assert sum(words.values()) <= PATH_WORDS, words


def test_notebooks_are_numbered_without_gaps():
    assert numbering_problems([p.name for p in NOTEBOOKS]) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_keeps_every_rule(path):
    assert problems(json.loads(path.read_text()), path.name) == []


def lead_in_of_first_check(nb):
    i = next(i for i, c in enumerate(nb["cells"]) if is_checked(c))
    return nb["cells"][i - 1]


def unchecked(cell):
    """`cell` made an ordinary code cell: no tag, no stored output."""
    cell.update(outputs=[])
    cell["metadata"]["tags"] = [
        t for t in cell["metadata"].get("tags", []) if t != CHECK_TAG
    ]


def last_markdown(nb):
    return next(c for c in reversed(nb["cells"]) if c["cell_type"] == "markdown")


def first_section(nb):
    return next(c for c in nb["cells"] if text(c).startswith("## "))


BREAKAGES = {
    "kernel": lambda nb: nb["metadata"]["kernelspec"].update(name="ir"),
    "colab: first cell": lambda nb: nb["cells"].pop(0),
    "colab: first code": lambda nb: nb["cells"][3].update(source="print('hi')"),
    "header: needs": lambda nb: nb["cells"][1].update(source="# 00 · Setup\n\nHello"),
    "lead-in": lambda nb: lead_in_of_first_check(nb).update(
        cell_type="code", outputs=[], execution_count=None
    ),
    "length": lambda nb: nb["cells"][-4].update(source="x = 1\n" * (MAX_LINES + 1)),
    "outputs: code cell": lambda nb: nb["cells"][3].update(
        outputs=[{"output_type": "error", "ename": "E", "evalue": "", "traceback": []}]
    ),
    "width": lambda nb: nb["cells"][-4].update(source="x = " + "1 + " * WIDTH + "1"),
    "paths": lambda nb: nb["cells"][-4].update(source="open('/home/ana/cats/1.jpg')"),
    "slides: cell 5 has no": lambda nb: nb["cells"][5]["metadata"].pop("slideshow"),
    "slides: section heading": lambda nb: first_section(nb).update(
        source="Some text first.\n\n" + text(first_section(nb))
    ),
    "slides: the slide at": lambda nb: first_section(nb).update(
        source=text(first_section(nb)) + " more" * MAX_WORDS
    ),
    "markers": lambda nb: nb["cells"][-4].update(source=f"x = 1  {MARK}"),
    "slides: empty": lambda nb: nb["cells"][2].update(source="  \n"),
    "notes: instructor notes in": lambda nb: nb["cells"].insert(
        5, {"cell_type": "markdown", "metadata": {}, "source": [NOTES + ":** hi"]}
    ),
    "maintenance: 'checked cell'": lambda nb: first_section(nb).update(
        source=text(first_section(nb)) + "\n\nThe Checked Cell below prints it."
    ),
    "maintenance: 'next slide'": lambda nb: last_markdown(nb).update(
        source=text(last_markdown(nb)) + "\n\nMore on the next slide."
    ),
    "ending": lambda nb: nb["cells"].pop(),
    "outputs: fewer": lambda nb: [unchecked(c) for c in nb["cells"] if is_checked(c)],
    "lesson: too many words": lambda nb: first_section(nb).update(
        source=text(first_section(nb)) + " word" * LESSON_WORDS
    ),
    "lesson: a deep-dive": lambda nb: first_section(nb).update(
        source=text(first_section(nb)).replace("## ", DEEP_DIVE + " · ", 1)
    ),
    "outputs: code cell 3 stores": lambda nb: nb["cells"][3].update(
        outputs=[{"output_type": "stream", "name": "stdout", "text": "hi\n"}]
    ),
    "lesson: too many cells": lambda nb: nb["cells"].extend(
        copy.deepcopy(nb["cells"][-1:]) * LESSON_CELLS
    ),
}


@pytest.mark.parametrize("rule", BREAKAGES)
def test_lint_catches_a_broken_copy(rule):
    path = NOTEBOOKS[0]
    nb = json.loads(path.read_text())
    assert problems(nb, path.name) == []
    broken = copy.deepcopy(nb)
    BREAKAGES[rule](broken)
    assert any(p.startswith(rule) for p in problems(broken, path.name)), rule


def test_numbering_catches_a_gap_and_a_bad_name():
    assert numbering_problems(["00_a.ipynb", "02_b.ipynb"])
    assert numbering_problems(["00_a.ipynb", "01_Cats Dogs.ipynb"])
    assert numbering_problems(["00_a.ipynb", "00c_deep.ipynb"])  # no 00b
    assert numbering_problems(["00_a.ipynb", "01b_deep.ipynb"])  # no 01
    assert not numbering_problems(["00_a.ipynb", "00b_deep.ipynb", "01_b.ipynb"])


def exercise_cell(nb, n):
    return next(c for c in nb["cells"] if text(c).startswith(f"### Exercise {n}\n"))


EXERCISE_BREAKAGES = {
    "ending: exercise 2 has no answer": lambda nb: nb["cells"].pop(
        nb["cells"].index(exercise_cell(nb, 2)) + 1
    ),
    "ending: 3+ exercises headed": lambda nb: exercise_cell(nb, 2).update(
        source="### Exercise 7\n\nWhat else?"
    ),
    "ending: the first exercise cell loads": lambda nb: [
        c.update(source="q = {}") for c in nb["cells"] if "exercises.load(" in text(c)
    ],
    "ending: the last exercise cell shows": lambda nb: [
        c.update(source="print('done')")
        for c in nb["cells"]
        if "exercises.progress(" in text(c)
    ],
    "ending: a code cell after": lambda nb: nb["cells"].append(
        copy.deepcopy(nb["cells"][3])
    ),
}


@pytest.mark.parametrize("rule", EXERCISE_BREAKAGES)
def test_lint_catches_a_broken_exercise_section(rule):
    """Notebook 01's exercises check themselves: each part of that form is required."""
    path = next(p for p in NOTEBOOKS if p.name.startswith("01_"))
    nb = json.loads(path.read_text())
    assert problems(nb, path.name) == []
    broken = copy.deepcopy(nb)
    EXERCISE_BREAKAGES[rule](broken)
    assert any(p.startswith(rule) for p in problems(broken, path.name)), rule


def test_speaker_notes_are_the_guides_section_of_the_notebook(tmp_path):
    guide = tmp_path / "guide.md"
    guide.write_text(
        "# For instructors\n\n## 01 · One\n\nAsk.\n\n## 02 · Two\n\nShow.\n"
    )
    assert slide_types.speaker_notes(Path("02_two.ipynb"), guide) == "Show."
    assert slide_types.speaker_notes(Path("03_three.ipynb"), guide) is None
