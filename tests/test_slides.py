"""The slide decks, opened offline in a real browser (Debian's chromium with chromedriver).

Each notebook is exported as `make slides` does, from its run in this test session (nbval's,
tests/conftest.py), then checked: slide and fragment counts match the metadata, the
keyboard reaches the last slide, every figure is on screen and not blank, and nothing was
fetched from the web. Without Node's packages (reveal.js from npm) or Chromium the tests are
skipped with the reason, except under CI, which installs both: there they fail.
"""

import os
import re
import tempfile

from tools import export_slides, is_deep_dive, notebooks, slide_types

import browser as chromium
import nbformat
import pytest

NOTEBOOKS = notebooks()


def node_missing(node_modules, environ):
    """Why the deck tests cannot run without Node's packages in `node_modules`; None when they
    are there, or under CI (`CI` set in `environ`), where their absence must fail the tests."""
    if (node_modules / "reveal.js").is_dir() or environ.get("CI"):
        return None
    return (
        "needs Node.js: the decks' reveal.js comes from npm (install Node.js; make test "
        "then runs npm ci)"
    )


MISSING = node_missing(export_slides.NODE_MODULES, os.environ)
pytestmark = [
    chromium.needed,
    pytest.mark.skipif(MISSING is not None, reason=str(MISSING)),
    pytest.mark.browser,
    pytest.mark.notebooks,
]
GET_REVEAL = """const done = arguments[0];
require(['reveal.js/dist/reveal.js'], R => {
  window.Reveal = R;
  R.isReady() ? done(true) : R.on('ready', () => done(true));
});"""


@pytest.fixture(scope="module")
def decks(tmp_path_factory, executed):
    """A folder with the browser files; `make(path)` exports a deck there once, as
    `make slides` does, from the notebook's run in this test session."""
    out = tmp_path_factory.mktemp("slides")
    export_slides.copy_assets(out)
    made = {}

    def make(path):
        if path not in made:
            made[path] = export_slides.make_deck(path, "smoke", out, executed(path))[
                "deck"
            ]
        return out / made[path]

    return make


def open_deck(browser, decks, path):
    browser.get(decks(path).as_uri())
    assert browser.execute_async_script(GET_REVEAL), "reveal.js did not start"
    return nbformat.read(path, as_version=4)


def count(nb, slide_type):
    return export_slides.slide_types(nb).count(slide_type)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_deck_matches_its_metadata_and_loads_nothing_from_the_web(decks, browser, path):
    nb = open_deck(browser, decks, path)
    assert browser.execute_script(
        "return Reveal.getTotalSlides()"
    ) == export_slides.expected_slides(nb)
    assert browser.execute_script(
        "return document.querySelectorAll('.fragment').length"
    ) == count(nb, "fragment")
    # the instructors' section of INSTRUCTORS.md (a deep dive may have none): the title
    # slide's speaker notes
    guide = slide_types.speaker_notes(path) is not None
    assert browser.execute_script(
        "return document.querySelectorAll('aside.notes').length"
    ) == guide + count(nb, "notes")
    html = decks(path).read_text()
    assert not re.findall(r"<(?:script|link)[^>]+(?:src|href)=\"(?:https?:)?//", html)
    assert browser.execute_script("return typeof MathJax.Hub") == "object"
    errors = [
        e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"
    ]
    assert not errors, errors


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_space_bar_walks_every_step_to_the_questionnaire(decks, browser, path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    nb = open_deck(browser, decks, path)
    steps = export_slides.expected_slides(nb) - 1 + count(nb, "fragment")
    body = browser.find_element(By.TAG_NAME, "body")
    # one WebDriver call, the keys pressed one by one
    body.send_keys(Keys.SPACE * (steps - 1))
    assert not browser.execute_script("return Reveal.isLastSlide()"), "ends too early"
    body.send_keys(Keys.SPACE)
    assert browser.execute_script("return Reveal.isLastSlide()")
    text = browser.execute_script("return Reveal.getCurrentSlide().innerText")
    assert ("summary" if is_deep_dive(path) else "questionnaire") in text.lower()
    body.send_keys(Keys.HOME)
    assert browser.execute_script("return Reveal.getIndices().h") == 0
    body.send_keys(Keys.END)
    assert browser.execute_script("return Reveal.isLastSlide()")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_figure_renders(decks, browser, path):
    open_deck(browser, decks, path)
    figures = browser.find_elements("css selector", ".slides img")
    for figure in figures:
        browser.execute_script(
            "const at = Reveal.getIndices(arguments[0].closest('section'));"
            "Reveal.slide(at.h, at.v, 1000); arguments[0].scrollIntoView();",
            figure,
        )
        assert browser.execute_script("return arguments[0].naturalWidth", figure) > 0
        assert chromium.painted(browser, figure, path.stem), (
            f"blank figure in {path.stem}; screenshot in {tempfile.gettempdir()}"
        )
    if path.name.startswith("00_"):
        assert figures, "notebook 00 plots the matrix-multiply speeds"
