"""Serve the course website (build/site) on the local network: `make serve`.

    python -m tools.serve              # build/site on port 8000, every network interface
    python -m tools.serve --port 8080

It prints the address to open on a phone on the same Wi-Fi (this machine's address on the local
network) and the one for this machine. "Try your classifier" (try.html) needs http: a browser
loads WebAssembly only over it, never from a file:// page. The picture a phone classifies stays on
the phone: the server only sends the page, LiteRT.js and the model. The slide decks
(build/slides, `make slides`) are served under /slides/, where the pages' "Slides" links find
them. Ctrl-C stops it.
"""

import argparse
import functools
import http.server
import os
import socket
import sys
from pathlib import Path

from tools import BUILD


class Handler(http.server.SimpleHTTPRequestHandler):
    """The site's files, with the types a browser checks (.wasm compiles as it arrives only as
    application/wasm; .mjs is JavaScript), and no request logged unless it failed."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".tflite": "application/octet-stream",
    }

    slides = None  # the decks' folder, served under /slides/ (server() sets it)

    def translate_path(self, path):
        """/slides/... from the decks' folder beside the site, as the pages' ../slides/ links
        find it from file://; every other path from the site's folder."""
        route = path.split("?", 1)[0].split("#", 1)[0]
        if self.slides is not None and route.startswith("/slides/"):
            inside = super().translate_path("/" + path[len("/slides/") :])
            return os.path.join(self.slides, os.path.relpath(inside, self.directory))
        return super().translate_path(path)

    def log_request(self, code="-", size="-"):
        if str(code)[:1] not in "23":
            super().log_request(code, size)


def lan_address():
    """This machine's address on the local network, found without sending anything: a UDP
    socket "connected" to a private address only asks the system which interface would send
    to it. 127.0.0.1 when no network is up."""
    for target in ("10.255.255.255", "192.168.255.255", "172.31.255.255"):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                probe.connect((target, 1))
                address = probe.getsockname()[0]
            except OSError:
                continue
        if not address.startswith(("0.", "127.")):
            return address
    try:  # no route to a private network: the address the machine's name has, if not loopback
        address = socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"
    return address if not address.startswith("127.") else "127.0.0.1"


def addresses(port, page="try.html"):
    """(the address for a phone on the same network, the one for this machine) of `page`."""
    return f"http://{lan_address()}:{port}/{page}", f"http://localhost:{port}/{page}"


class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # a browser that left: no trace
        if not isinstance(sys.exception(), ConnectionError):
            super().handle_error(request, client_address)


def server(folder, port=8000, bind="0.0.0.0", slides=None):
    """An HTTP server of `folder` (port 0: any free port), and of the decks in `slides`
    (default: the folder `slides` beside it) under /slides/; `.serve_forever()` runs it."""
    slides = Path(slides or Path(folder).parent / "slides")
    handler = type("SiteHandler", (Handler,), {"slides": str(slides)})
    return Server((bind, port), functools.partial(handler, directory=str(folder)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--folder", default=str(BUILD / "site"))
    args = parser.parse_args(argv)
    if not (BUILD / "site" / "index.html").exists() and args.folder == str(
        BUILD / "site"
    ):
        print(
            "build/site has no website yet: run make site (or make course) first.",
            file=sys.stderr,
        )
        return 1
    httpd = server(args.folder, args.port)
    phone, here = addresses(httpd.server_address[1])
    print(
        f"Serving {args.folder} on port {httpd.server_address[1]} of every network interface.\n"
        f"On a phone on the same Wi-Fi open  {phone}\n"
        f"On this machine open               {here}\n"
        "(A firewall may have to let the port through; Ctrl-C stops the server.)"
    )
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        print()
    finally:
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
