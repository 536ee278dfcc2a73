"""The glossary (notebooks/glossary.md, a page of the site): every entry is linked where a
learner meets the term before the notebook that teaches it.

An entry is a `### Term` heading, a sentence or two, and "*Taught in [NN](...)*" or "*Defined
here*" (no notebook teaches it). SPELLINGS says how each term is written in the notebooks' text.
A notebook earlier than the one that teaches a term, and using it, links `glossary.md#<anchor>`
(the anchor is the heading as myst-parser and GitHub make it); for a term defined here, the first
notebook that uses it does.
"""

import json
import re

from tools import ROOT, notebooks

import pytest

GLOSSARY = ROOT / "notebooks" / "glossary.md"
SPELLINGS = {
    "All-reduce": r"\ball-reduce",
    "Alternation": r"\balternat",
    "Arithmetic intensity": r"arithmetic intensity",
    "Augmentation": r"\baugment",
    "Batch": r"\bbatch(?:es)?\b",
    "BatchNorm": r"BatchNorm|batch normali[sz]ation",
    "Bias": r"\bbias(?:es)?\b",
    "Compute capability": r"compute capability",
    "cuDNN": r"\bcuDNN\b",
    "Dropout": r"\bdropout\b",
    "EXIF orientation": r"\bEXIF\b",
    "GIL": r"\bGIL\b|interpreter lock",
    "gRPC": r"\bgRPC\b",
    "Kernel launch": r"kernel launch",
    "LSTM": r"\bLSTM\b",
    "Mantissa": r"\bmantissa",
    "Mixed precision": r"mixed precision|\bb?float16\b",
    "oneDNN": r"\boneDNN\b",
    "Profile": r"\bprofiles?\b",
    "PyDataset": r"\bPyDataset\b",
    "Roofline": r"\broofline",
    "Save mark": r"# @save",
    "Student's t": r"Student'?s \*?t\b",
    "tanh": r"\btanh\b",
    "tf.data": r"\btf\.data\b",
    "Validation set": r"\bvalidat",
    "Welch interval": r"\bWelch",
    "XLA": r"\bXLA\b",
}


def anchor(heading):
    """The id myst-parser (myst_heading_anchors) and GitHub give a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def entries(text):
    """{term: notebook number that teaches it, or None where the glossary defines it}."""
    found = {}
    for term, body in re.findall(
        r"^### ([^\n]+)\n(.*?)(?=^### |\Z)", text, re.M | re.S
    ):
        taught = re.search(r"\*Taught in\s+\[(\d\d)[b-z]?\]", body)
        if not taught and "*Defined here" not in body:
            raise ValueError(
                f"glossary entry {term!r} says neither 'Taught in' nor 'Defined here'"
            )
        found[term] = int(taught.group(1)) if taught else None
    return found


def prose(path):
    cells = json.loads(path.read_text())["cells"]
    return "\n".join(
        "".join(c["source"]) for c in cells if c["cell_type"] == "markdown"
    )


def unlinked(texts, taught, spellings):
    """'NN uses Term ...' for every notebook that should link an entry and does not.
    `texts`: {notebook number: its markdown}; `taught`: entries()."""
    found = []
    for term, where in taught.items():
        using = [
            n
            for n, text in sorted(texts.items())
            if re.search(spellings[term], text, re.I)
        ]
        early = [n for n in using if n < where] if where is not None else using[:1]
        link = f"](glossary.md#{anchor(term)})"
        place = "the glossary" if where is None else f"{where:02d}"
        found += [
            f"{n:02d} uses {term!r} (taught in {place}) without a link {link[1:]}"
            for n in early
            if link not in texts[n]
        ]
    return found


def course_texts():
    """Prose per notebook number: a path notebook and its deep dives together."""
    texts = {}
    for p in notebooks():
        texts[int(p.name[:2])] = texts.get(int(p.name[:2]), "") + "\n" + prose(p)
    return texts


def test_every_entry_has_a_spelling_and_a_place():
    taught = entries(GLOSSARY.read_text())
    assert sorted(taught) == sorted(SPELLINGS)
    numbers = {int(p.name[:2]) for p in notebooks()}
    assert {n for n in taught.values() if n is not None} <= numbers
    assert list(taught) == sorted(taught, key=str.lower), (
        "entries in alphabetical order"
    )


def test_every_early_use_links_the_glossary():
    assert unlinked(course_texts(), entries(GLOSSARY.read_text()), SPELLINGS) == []


def test_a_term_used_early_without_a_link_is_found():
    texts = {
        0: "We time in alternation.",
        1: "A tf.data pipeline.",
        7: "tf.data, taught.",
    }
    taught, spellings = {"tf.data": 7}, {"tf.data": SPELLINGS["tf.data"]}
    assert unlinked(texts, taught, spellings) == [
        "01 uses 'tf.data' (taught in 07) without a link (glossary.md#tfdata)"
    ]
    texts[1] = "A [tf.data](glossary.md#tfdata) pipeline."
    assert unlinked(texts, taught, spellings) == []


def test_a_term_defined_here_is_linked_where_first_used():
    texts = {0: "Nothing.", 2: "A tanh.", 3: "Another tanh."}
    spellings = {"tanh": SPELLINGS["tanh"]}
    assert [p[:2] for p in unlinked(texts, {"tanh": None}, spellings)] == ["02"]


def test_an_entry_without_a_place_is_refused():
    with pytest.raises(ValueError, match="neither"):
        entries("### Thing\nA thing.\n")


def test_anchors_are_myst_and_github_ids():
    assert anchor("tf.data") == "tfdata"
    assert anchor("Student's t") == "students-t"
    assert anchor("EXIF orientation") == "exif-orientation"
