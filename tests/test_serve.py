"""`make serve` (tools/serve.py): the site at /, the decks beside it under /slides/, where
every page's "Slides" link (../slides/NAME.slides.html) leads over http as from file://."""

import threading
import urllib.error
import urllib.parse
import urllib.request

from tools import serve

import pytest


@pytest.fixture
def served(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "slides").mkdir()
    (tmp_path / "site" / "01_cnn.html").write_text(
        "<a href='../slides/01.html'>Slides</a>"
    )
    (tmp_path / "slides" / "01.html").write_text("the deck")
    (tmp_path / "secret.txt").write_text("not served")
    httpd = serve.server(tmp_path / "site", port=0, bind="127.0.0.1")
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""


def test_a_pages_slides_link_leads_to_its_deck_over_http(served):
    assert get(f"{served}/01_cnn.html")[0] == 200
    # what a browser makes of ../slides/01.html on /01_cnn.html
    link = urllib.parse.urljoin(f"{served}/01_cnn.html", "../slides/01.html")
    assert get(link) == (200, "the deck")


def test_nothing_outside_the_site_and_the_decks_is_served(served):
    for path in (
        "/../secret.txt",
        "/slides/../secret.txt",
        "/slides/%2e%2e/secret.txt",
    ):
        assert get(served + path)[0] == 404
