"""The d2l `#@save` idea: a function or class written out on a notebook's page and the helper
that later notebooks import must be the same code. A test asserts

    assert page_source.defined_on_page("07_input_pipeline", "image_pipeline") == \
        page_source.helper_source(data.image_pipeline)
"""

import ast
import inspect
import textwrap

from helpers import config

import nbformat


def defined_on_page(notebook, name):
    """The source of the top-level `def name` or `class name` in the notebook's code cells."""
    path = config.ROOT / "notebooks" / f"{notebook}.ipynb"
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code" or name not in cell.source:
            continue
        lines = [ln for ln in cell.source.splitlines() if not ln.lstrip().startswith("%")]
        tree = ast.parse("\n".join(lines))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
                return _normalised(ast.get_source_segment("\n".join(lines), node))
    raise AssertionError(f"{notebook}.ipynb writes out no `def {name}` or `class {name}`")


def helper_source(obj):
    """The helper's source, in the same normal form as defined_on_page's."""
    return _normalised(textwrap.dedent(inspect.getsource(obj)))


def _normalised(source):
    """Code without docstrings and comments: the page explains in markdown, the helper in
    its docstring; the statements must agree."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(getattr(body[0], "value", None), ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)
