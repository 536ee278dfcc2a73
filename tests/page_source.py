"""A function or class that lives on a notebook's page alone, read out of the notebook so that a
test can run the page's own code:

    exec(page_source.defined_on_page("06_cats_dogs_predictions", "grad_cam"), namespace)

(What a page marks `# @save` is copied into helpers/ by `make pages`: tests/test_pages.py.)"""

import ast

from helpers import config

import nbformat


def defined_on_page(notebook, name):
    """The source of the top-level `def name` or `class name` in the notebook's code cells."""
    path = config.ROOT / "notebooks" / f"{notebook}.ipynb"
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code" or name not in cell.source:
            continue
        lines = [
            ln for ln in cell.source.splitlines() if not ln.lstrip().startswith("%")
        ]
        tree = ast.parse("\n".join(lines))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
                return _normalised(ast.get_source_segment("\n".join(lines), node))
    raise AssertionError(
        f"{notebook}.ipynb writes out no `def {name}` or `class {name}`"
    )


def _normalised(source):
    """The code without its docstrings and comments."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(getattr(body[0], "value", None), ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)
