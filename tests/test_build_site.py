"""The site's pages (tools/build_site.py): a deck is linked only where it lies beside the
site; the instructor notes are collapsed on the page and kept as the deck's speaker notes.
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


def test_the_site_collapses_instructor_notes_the_deck_keeps_them_as_speaker_notes(
    tmp_path,
):
    from tools import build_site, export_slides

    path = notebooks()[1]
    nb = nbformat.read(path, as_version=4)
    notes = [c.source for c in nb.cells if c.source.startswith(slide_types.NOTES)]
    page = build_site.page(nb, path, tmp_path)
    collapsed = [
        c.source
        for c in page.cells
        if c.source.startswith('<details class="instructor-notes">')
    ]
    assert len(collapsed) == len(notes) >= 1
    assert not any(c.source.startswith(slide_types.NOTES) for c in page.cells)
    assert all(c.endswith("</details>") and "<summary>" in c for c in collapsed)
    export_slides.export(nb, tmp_path / "deck.html")
    assert (tmp_path / "deck.html").read_text().count('<aside class="notes">') == len(
        notes
    )
