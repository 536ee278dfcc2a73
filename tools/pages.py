"""`make pages`: d2l's `#@save` idea, spelled `# @save` as `ruff format` writes comments.
A top-level `def` or `class` that a notebook writes out with `# @save` on its signature
(the first line, or any line of one that ruff wrapped) is the one source of that code: this
command copies it, word for word, over the definition of the same name in helpers/, under a
comment naming the notebook. `--check` changes nothing and lists what differs
(tests/test_pages.py runs it).

    python -m tools.pages            write every marked definition into its helper
    python -m tools.pages --check    exit 1 and say which helper differs from its page
"""

import argparse
import ast
import difflib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARK = "# @save"
WRITTEN = re.compile(r"# Written from notebooks/(\S+)\.ipynb by `make pages`")


def _shown(path):
    """The path as a learner types it: from the repository's root where it lies inside."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def _definitions(source):
    """{name: (first line, (header's first, last), last line)} of the top-level defs and
    classes, 1-based, decorators included; `%` magic lines are read as blank lines."""
    code = "\n".join(
        "" if ln.lstrip().startswith("%") else ln for ln in source.splitlines()
    )
    spans = {}
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            # the header: the `def` or `class` line to the line before the body
            header = (node.lineno, node.body[0].lineno - 1)
            spans[node.name] = (first, header, node.end_lineno)
    return spans


def on_pages(notebooks):
    """{name: (notebook stem, source)} of every definition marked # @save on a page."""
    saved = {}
    for path in sorted(Path(notebooks).glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] != "code" or MARK not in source:
                continue
            lines = source.splitlines()
            for name, (first, (top, end), last) in _definitions(source).items():
                # the mark may follow any line of the signature (`def f(  # @save`)
                if not any(MARK in ln for ln in lines[top - 1 : max(top, end)]):
                    continue
                if name in saved:
                    raise SystemExit(
                        f"`{name}` is marked {MARK} in notebooks/{saved[name][0]}"
                        f".ipynb and in {_shown(path)}: keep one."
                    )
                saved[name] = (path.stem, "\n".join(lines[first - 1 : last]))
    return saved


def written(helpers=ROOT / "helpers", notebooks=ROOT / "notebooks"):
    """{helper path: its text with every marked definition copied in}, and the problems: a
    marked name no helper defines, or one that two define; a copy whose mark has gone."""
    texts = {
        p: p.read_text(encoding="utf-8") for p in sorted(Path(helpers).glob("*.py"))
    }
    homes = {}
    for path, text in texts.items():
        for name in _definitions(text):
            homes.setdefault(name, []).append(path)
    saved, problems = on_pages(notebooks), []
    for name, (stem, source) in saved.items():
        if len(homes.get(name, [])) != 1:
            where = ", ".join(str(_shown(p)) for p in homes.get(name, [])) or "none"
            problems.append(
                f"`{name}` (marked {MARK} in notebooks/{stem}.ipynb) must be "
                f"defined in exactly one helper module, found: {where}. Add a "
                "`def` of that name to the module it belongs in, then run make pages."
            )
            continue
        path = homes[name][0]
        lines = texts[path].splitlines()
        first, _, last = _definitions(texts[path])[name]
        if first > 1 and WRITTEN.match(lines[first - 2]):
            first -= 1
        block = [
            f"# Written from notebooks/{stem}.ipynb by `make pages`: change it there."
        ]
        lines[first - 1 : last] = block + source.splitlines()
        texts[path] = "\n".join(lines) + "\n"
    for path, text in texts.items():
        lines = text.splitlines()
        for line_no, line in enumerate(lines):
            copy = WRITTEN.match(line)
            after = [ln for ln in lines[line_no + 1 :] if not ln.startswith("@")][:1]
            name = re.match(r"(?:def|class) (\w+)", after[0]) if after else None
            if copy and (not name or name[1] not in saved):
                problems.append(
                    f"{_shown(path)} line {line_no + 1}: a copy from "
                    f"notebooks/{copy[1]}.ipynb whose page no longer marks it "
                    f"{MARK}: delete the comment or mark the page again."
                )
    return texts, problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="change nothing; list differences"
    )
    args = parser.parse_args(argv)
    texts, problems = written()
    for path, text in texts.items():
        if text != path.read_text(encoding="utf-8"):
            if args.check:
                diff = difflib.unified_diff(
                    path.read_text(encoding="utf-8").splitlines(),
                    text.splitlines(),
                    "helper",
                    "pages",
                    lineterm="",
                )
                problems.append(
                    f"{_shown(path)} differs from the pages that mark "
                    f"{MARK} in it: run `make pages`.\n" + "\n".join(list(diff)[:30])
                )
            else:
                path.write_text(text, encoding="utf-8")
                print(f"wrote {_shown(path)}")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
