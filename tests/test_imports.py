"""Importing the helpers: no cycle, no TensorFlow where a module does not need it, no file
written, and TensorFlow's start-up lines kept out of the learner's output."""

import ast
import os
import subprocess
import sys

from helpers import config

import pytest

HELPERS = sorted(
    p.stem for p in (config.ROOT / "helpers").glob("*.py") if p.stem != "__init__"
)
# The modules that work without TensorFlow: tools, tests and notebooks that only read records,
# plot or describe the machine start in a fraction of a second.
WITHOUT_TENSORFLOW = {
    "config",
    "exercises",
    "hardware",
    "ladder",
    "plots",
    "published",
    "results",
}


# The layers, lowest first: a module imports only modules before it (CONTRIBUTING's room table).
LAYERS = [
    "config",
    "published",
    "hardware",
    "plots",
    "results",
    "timing",
    "models",
    "attribution",
    "roofs",
    "roofline",
    "benchmark",
    "decoding",
    "images",
    "folders",
    "data",
    "training",
    "export",
    "ladder",
    "exercises",
]


def _imports():
    """Each helper module -> the helper modules it imports, at the top or inside a function."""
    graph = {}
    for name in HELPERS:
        tree = ast.parse((config.ROOT / "helpers" / f"{name}.py").read_text())
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                found |= (
                    {node.module.split(".")[0]}
                    if node.module
                    else {a.name for a in node.names}
                )
            elif isinstance(node, ast.ImportFrom) and node.module == "helpers":
                # in code a page writes (make pages)
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "helpers."
            ):
                found.add(node.module.split(".")[1])
        graph[name] = found & set(HELPERS)
    return graph


def _cycle(graph):
    """A list of modules that import each other in a ring, or None."""
    state = {}

    def visit(name, path):
        state[name] = "open"
        for other in sorted(graph[name]):
            if state.get(other) == "open":
                return path[path.index(other) :] + [other]
            if other not in state and (ring := visit(other, path + [other])):
                return ring
        state[name] = "done"
        return None

    return next(
        (ring for name in graph if name not in state and (ring := visit(name, [name]))),
        None,
    )


def test_no_helper_module_imports_one_that_imports_it_back():
    # it can fail
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle(_imports()) is None


def _upward(graph, layers):
    """(module, what it imports) for each import of a module in the same or a later layer."""
    return sorted(
        (name, other)
        for name, imported in graph.items()
        for other in imported
        if layers.index(other) >= layers.index(name)
    )


def test_each_helper_module_imports_only_the_layers_before_it():
    assert set(LAYERS) == set(HELPERS), (
        "place a new module in LAYERS and CONTRIBUTING's table"
    )
    assert _upward({"a": {"b"}, "b": set()}, ["a", "b"]) == [("a", "b")]  # it can fail
    assert _upward(_imports(), LAYERS) == []


def _fresh(code, cwd, build):
    env = {**os.environ, "COURSE_BUILD": str(build), "PYTHONPATH": ""}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


@pytest.mark.processes
def test_importing_a_helper_writes_nothing_and_needs_tensorflow_only_where_it_uses_it(
    tmp_path,
):
    build = tmp_path / "build"
    check = "import sys, helpers.{0}; print('tensorflow' in sys.modules)"
    with_tf = []
    for (
        name
    ) in HELPERS:  # each in a fresh interpreter: what it imports, not what others did
        if name in WITHOUT_TENSORFLOW:
            assert (
                _fresh(check.format(name), tmp_path, build).stdout.strip() == "False"
            ), name
        else:
            with_tf.append(name)
    # the others together, in one interpreter (TensorFlow starts once)
    _fresh("; ".join(f"import helpers.{name}" for name in with_tf), tmp_path, build)
    assert not build.exists() and list(tmp_path.iterdir()) == [], (
        "an import wrote a file"
    )


@pytest.mark.processes
def test_helpers_keeps_tensorflows_start_up_lines_out_of_the_learners_output(tmp_path):
    """Installed (pip -e), `helpers` imports outside the course folder without TensorFlow; when
    Keras starts TensorFlow later, its start-up lines go to `helpers.startup_log`."""
    code = (
        "import sys, helpers; print('tensorflow' in sys.modules); import keras; "
        "keras.ops.ones(1); sys.stderr.write('after\\n'); print(repr(helpers.startup_log))"
    )
    done = _fresh(code, tmp_path, tmp_path / "build")
    assert done.stdout.splitlines()[0] == "False"
    assert done.stderr == "after\n", done.stderr[-2000:]
    assert isinstance(eval(done.stdout.splitlines()[1]), str)
