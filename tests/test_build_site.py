"""The site's pages (tools/build_site.py): a deck is linked only where it lies beside the
site; the instructors' notes (INSTRUCTORS.md) are the decks' speaker notes, on no page.
The built site in Chromium: tests/test_site.py."""

from tools import notebooks, slide_types

import nbformat


def test_a_site_page_links_a_deck_only_when_the_deck_is_beside_the_site(tmp_path):
    """A site built in a temporary folder must not link the decks of the course's build/."""
    from tools import build_site

    path, decks = notebooks()[0], tmp_path / "slides"
    assert "Slides" not in build_site.links(path, decks)
    decks.mkdir()
    (decks / f"{path.stem}.slides.html").write_text("<!doctype html>")
    assert f'href="../slides/{path.stem}.slides.html"' in build_site.links(path, decks)


def test_the_decks_show_the_instructors_notes_the_pages_none(tmp_path):
    from tools import build_site, export_slides

    path = notebooks(["01_"])[0]
    nb = nbformat.read(path, as_version=4)
    notes = slide_types.speaker_notes(path)
    page = build_site.page(nb, path, tmp_path)
    assert notes and not any(notes[:60] in c.source for c in page.cells)
    export_slides.make_deck(path, "smoke", tmp_path, nb=nb)
    deck = (tmp_path / f"{path.stem}.slides.html").read_text()
    first = notes.split(". ")[0]  # the notes' first sentence, plain text
    assert deck.count('<aside class="notes">') == 1 and first in deck
