"""d2l's `# @save` idea (tools/pages.py): a definition a notebook marks `# @save` is the one source
of the helper that later notebooks import; `make pages` copies it, docstrings and comments
included, and nothing else keeps a second copy by hand."""

import json
import shutil

from helpers import config
from tools import pages

NOTEBOOK = "00b_inside_the_measurements"  # where timed_block and interval are written


def test_every_helper_is_word_for_word_what_its_page_marks_save(capsys):
    assert pages.main(["--check"]) == 0, capsys.readouterr().err


def copies(tmp_path):
    """The notebooks and helpers in tmp_path, to change without touching the course."""
    for folder in ("notebooks", "helpers"):
        shutil.copytree(config.ROOT / folder, tmp_path / folder)
    return tmp_path / "helpers", tmp_path / "notebooks"


def edit_page(notebooks, old, new):
    """Replace `old` by `new` in the one code cell of NOTEBOOK that holds it."""
    path = notebooks / f"{NOTEBOOK}.ipynb"
    book = json.loads(path.read_text(encoding="utf-8"))
    cells = [c for c in book["cells"] if old in "".join(c["source"])]
    assert len(cells) == 1, f"{old!r} is in {len(cells)} cells of {NOTEBOOK}"
    cells[0]["source"] = "".join(cells[0]["source"]).replace(old, new)
    path.write_text(json.dumps(book), encoding="utf-8")


def test_a_comment_changed_on_the_page_reaches_the_helper(tmp_path):
    helpers, notebooks = copies(tmp_path)
    edit_page(
        notebooks, "# at least one call", "# at least one call, however long it takes"
    )
    texts, problems = pages.written(helpers, notebooks)
    assert not problems
    assert "however long it takes" in texts[helpers / "timing.py"]
    assert texts[helpers / "data.py"] == (helpers / "data.py").read_text(
        encoding="utf-8"
    )


def test_a_mark_taken_off_the_page_or_a_name_no_helper_has_is_reported(tmp_path):
    helpers, notebooks = copies(tmp_path)
    edit_page(
        notebooks,
        "def timed_block(call, seconds):  # @save",
        "def timed_block(call, seconds):",
    )
    edit_page(
        notebooks,
        "def interval(a, b, level=0.95):  # @save",
        "def interval_of(a, b, level=0.95):  # @save",
    )
    problems = "\n".join(pages.written(helpers, notebooks)[1])
    assert "timing.py line" in problems and "no longer marks it # @save" in problems
    assert "`interval_of`" in problems and "found: none" in problems


def test_a_mark_after_the_bracket_of_a_wrapped_signature_counts(tmp_path):
    # `ruff format` wraps a long signature and leaves the mark after its opening bracket
    helpers, notebooks = copies(tmp_path)
    edit_page(
        notebooks,
        "def timed_block(call, seconds):  # @save",
        "def timed_block(  # @save\n    call, seconds\n):",
    )
    texts, problems = pages.written(helpers, notebooks)
    assert not problems
    assert (
        "def timed_block(  # @save\n    call, seconds\n):"
        in texts[helpers / "timing.py"]
    )
