"""The install files agree with each other, the README's commands exist, the course code
makes no unsafe calls (importing `helpers`: tests/test_imports.py), and every test file says by
its name what it tests."""

import re
import sys
import tomllib

from helpers import config

ROOT = config.ROOT


def requirements():
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_every_requirement_is_pinned():
    for line in requirements():
        assert re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[0-9][0-9A-Za-z.\-]*", line), line


def test_course_stack_is_pinned():
    names = {line.split("==")[0].lower() for line in requirements()}
    for needed in (
        "tensorflow",
        "keras",
        "jupyterlab",
        "matplotlib",
        "pillow",
        "numpy",
        "nbval",
        "gputil",
        "psutil",
        "pytest",
        "ruff",
    ):
        assert needed in names, needed


def locked():
    """{package: version} of requirements.lock, names normalised as pip does."""
    text = (ROOT / "requirements.lock").read_text()
    pins = re.findall(r"^([A-Za-z0-9_.\-]+)==([^ \\\n]+)", text, re.M)
    return {re.sub(r"[-_.]+", "-", name).lower(): version for name, version in pins}


def test_the_lock_holds_every_pin_of_requirements_txt_at_its_version_with_hashes():
    lock, text = locked(), (ROOT / "requirements.lock").read_text()
    for line in requirements():
        name, version = line.split("==")
        name = re.sub(r"[-_.]+", "-", name.split("[")[0]).lower()
        assert lock.get(name) == version, (
            f"{name}: requirements.txt {version}, lock "
            f"{lock.get(name)}; run `make lock` after changing requirements.txt"
        )
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])
    assert all("--hash=sha256:" in block for block in blocks if "==" in block)
    assert len(lock) > 100  # the whole environment, not only the direct pins


def test_environment_yml_installs_requirements_txt():
    text = (ROOT / "environment.yml").read_text()
    pip_section = text.split("- pip:")[1]
    lines = [line.strip() for line in pip_section.splitlines()]
    entries = [line[2:] for line in lines if line.startswith("- ")]
    assert entries == ["-r requirements.txt", "-e ."]
    python = re.search(r"- python=(\d+\.\d+)", text).group(1)
    floor = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "requires-python"
    ]
    assert floor.startswith(">=") and tuple(map(int, python.split("."))) >= tuple(
        map(int, floor[2:].split("."))
    )


def test_readme_quick_start_commands_exist_in_the_makefile():
    readme = (ROOT / "README.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    for target in ("course", "test", "lab"):
        assert f"make {target}" in readme
        assert re.search(rf"^{target}:", makefile, re.M), target
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def make_targets(markdown):
    """The target of every `make` command in `markdown`'s code blocks and inline code (options
    and VAR=value arguments left out): `PYTHON=python3.12 make course FORCE=1` gives course."""
    fence = r"^```[^\n]*\n(.*?)^```"
    blocks = re.findall(fence, markdown, re.M | re.S)
    inline = re.findall(r"`([^`]+)`", re.sub(fence, "", markdown, flags=re.M | re.S))
    lines = [line for block in blocks for line in block.splitlines()]
    lines += [" ".join(code.split()) for code in inline]  # inline code may wrap a line
    command = (
        r"(?<![\w./-])make(?:[ \t]+(?:-\S+|[A-Za-z_]\w*=\S*))*[ \t]+([\w$][\w$()./-]*)"
    )
    return {
        target.rstrip(".") for line in lines for target in re.findall(command, line)
    }


def makefile_targets(makefile):
    """The targets the rules of `makefile` define (not a variable's name, not a recipe line)."""
    rules = re.findall(
        r"^([\w.$()/%-]+(?:[ \t]+[\w.$()/%-]+)*)[ \t]*::?(?!=)", makefile, re.M
    )
    return {target for rule in rules for target in rule.split()}


def test_make_targets_are_read_from_code_and_checked_against_the_makefile():
    text = (
        "Run it:\n```bash\nmake course   # all of it\nPYTHON=python3.12 make -j2 lab\n```\n"
        "then `make\ntest FORCE=1`, `cd x && make nonsuch.`; to make sure, read on.\n"
    )
    assert make_targets(text) == {"course", "lab", "test", "nonsuch"}
    rules = "X := a:b\ncourse lab: x.txt\n\t@echo make: y\ntest: lab\n"
    assert makefile_targets(rules) == {"course", "lab", "test"}
    assert make_targets(text) - makefile_targets(rules) == {"nonsuch"}


def test_every_make_target_the_readme_and_contributing_name_is_in_the_makefile():
    defined = makefile_targets((ROOT / "Makefile").read_text())
    assert {
        "course",
        "test",
        "test-colab",
        "test-gpu-rehearsal",
        "$(VENV)/.installed",
    } <= defined
    for name, least in (
        ("README.md", {"course", "test", "test-colab"}),
        ("CONTRIBUTING.md", {"test", "check"}),
    ):
        named = make_targets((ROOT / name).read_text())
        assert least <= named, (name, named)  # the reading finds what is there
        missing = sorted(named - defined)
        assert not missing, (
            f"{name} names make targets the Makefile does not define: {missing}"
        )


FORBIDDEN = {
    "safe_mode" + "=False": "loads code from a model file",
    "allow_pickle" + "=True": "unpickles downloaded data",
    "shell" + "=True": "runs a composed string through the shell",
}


def test_no_unsafe_calls_in_the_course_code():
    roots = ["helpers", "tools", "tests", "notebooks"]
    offenders = []
    for root in roots:
        for path in (config.ROOT / root).rglob("*"):
            if (
                path.suffix not in (".py", ".ipynb")
                or ".ipynb_checkpoints" in path.parts
            ):
                continue
            text = path.read_text(errors="replace").replace(" ", "")
            for pattern, why in FORBIDDEN.items():
                if pattern in text:
                    offenders.append(
                        f"{path.relative_to(config.ROOT)}: {pattern} ({why})"
                    )
    assert not offenders, offenders


def test_every_package_the_helpers_import_is_a_dependency():
    """Every module `helpers` imports outside the standard library and outside a try block
    (the optional ones) is named in pyproject.toml's dependencies."""
    import ast

    distribution = {
        "PIL": "pillow",
        "GPUtil": "gputil",
        "ai_edge_litert": "ai-edge-litert",
    }
    declared = {
        re.split(r"[<>=!~ ]", d)[0].lower()
        for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
            "dependencies"
        ]
    }
    needed = set()
    for path in (ROOT / "helpers").glob("*.py"):
        tree = ast.parse(path.read_text())
        optional = {
            id(n)
            for t in ast.walk(tree)
            if isinstance(t, ast.Try)
            for b in t.body
            for n in ast.walk(b)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Import | ast.ImportFrom)
                and id(node) not in optional
            ):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else ([node.module] if node.level == 0 else [])
                )
                needed |= {n.split(".")[0] for n in names}
    jax_backend_only = {"jax"}  # imported only when Keras runs on JAX (benchmark.py)
    third_party = needed - set(sys.stdlib_module_names) - {"helpers"} - jax_backend_only
    missing = {distribution.get(n, n).lower() for n in third_party} - declared
    assert missing == set(), f"imported by helpers/ but not in dependencies: {missing}"


def test_the_floors_are_the_oldest_stack_the_notebooks_are_tested_on():
    """pyproject.toml promises that the helpers work from its floors up; `make test-colab` runs
    every notebook on requirements-colab.txt. A floor below that stack is a promise nobody
    checks, one above it refuses Colab."""
    floors = dict(
        re.match(r"([\w-]+)>=([\d.]+)$", d).groups()
        for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
            "dependencies"
        ]
    )
    tested = {}
    for line in (ROOT / "requirements-colab.txt").read_text().splitlines():
        found = re.match(r"([\w-]+)==([\d.]+?)(\.\*)?$", line.split("#")[0].strip())
        if found:
            tested[found[1].lower()] = found[2]
    assert {name: tested.get(name) for name in floors} == floors


# Test files that check the course as a whole rather than one module or page, and what they check.
PROJECT_CHECKS = {
    "expectations": "what every notebook tells a learner to expect, against records and code",
    "glossary": "the glossary's terms, linked where a learner first meets them",
    "gpu_rehearsal": "every module's GPU branches under a fake T4",
    "imports": "how the helper modules import one another and TensorFlow",
    "install": "make course without npm",
    "jupyterlab": "a learner's run of a notebook and its exercise in JupyterLab",
    "notebook_rules": "the rules every notebook keeps",
    "packaging": "the install files, the Makefile's targets, and these names",
    "site": "the website in a browser",
    "slides": "the decks in a browser",
    "try_page": "the site's classifier page in a browser",
    "workflows": "the GitHub workflows",
}


def _unmirrored(names, modules):
    """Test files (test_X) with no module X in helpers/ or tools/, no page (pages_NN) and no
    place among PROJECT_CHECKS."""
    return sorted(
        n
        for n in names
        if n not in modules
        and n not in PROJECT_CHECKS
        and not re.fullmatch(r"pages_\d\d", n)
    )


def test_every_test_file_mirrors_a_module_a_page_or_checks_the_whole_course():
    modules = {
        p.stem
        for folder in ("helpers", "tools")
        for p in (ROOT / folder).iterdir()
        if p.suffix == ".py" or (p / "__init__.py").exists()
    }
    names = [p.stem.removeprefix("test_") for p in (ROOT / "tests").glob("test_*.py")]
    # it can fail
    assert _unmirrored(["data", "pages_11", "predict"], {"data"}) == ["predict"]
    assert _unmirrored(names, modules) == []
