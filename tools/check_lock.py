"""Does requirements.lock install on every platform and Python version the course supports?

    python -m tools.check_lock                      # all of them (asks the package index)
    python -m tools.check_lock --platform macos-arm64 --python 3.13.0

For each platform and Python version, the lock's lines whose environment markers hold there go
to `pip install --dry-run --no-deps --only-binary=:all: --platform ... --python-version ...
--report`, which reads the index and each wheel's metadata (PEP 658), never a whole wheel. Then
every wheel pip picked must have one of the lock's hashes, and every dependency that its metadata
names on that platform must be pinned there at a version it accepts. pip's own resolver would
judge dependency markers for the machine it runs on (a Linux pip never asks for a Mac's
`appnope`), so that walk is done here with the target's markers. Every problem names the
platform, the Python version and the package. `make lock` runs this; `make test` runs it as
tests/test_check_lock.py.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tools import ROOT
from tools.check_python import supported

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

LOCK = ROOT / "requirements.lock"
# The oldest systems checked: glibc 2.28 (Debian 10, Ubuntu 20.04, RHEL 8) and macOS 12.
GLIBC = 28


def manylinux(arch):
    """pip's platform tags for a Linux with glibc 2.GLIBC on `arch`, newest first."""
    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    return [f"manylinux_2_{minor}_{arch}" for minor in range(GLIBC, 4, -1)] + [
        f"{name}_{arch}"
        for minor, name in legacy.items()
        if minor == 17 or arch == "x86_64"
    ]


def _markers(system, machine):
    platform = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}[system]
    return {
        "sys_platform": platform,
        "platform_system": system,
        "platform_machine": machine,
        "os_name": "nt" if system == "Windows" else "posix",
    }


# name: (what messages call it, its marker values, pip's --platform tags); pip adds the older
# macOS versions to macosx_12_0 itself.
PLATFORMS = {
    "linux-x86_64": ("Linux x86-64", _markers("Linux", "x86_64"), manylinux("x86_64")),
    "linux-aarch64": (
        "Linux aarch64",
        _markers("Linux", "aarch64"),
        manylinux("aarch64"),
    ),
    "macos-arm64": ("macOS arm64", _markers("Darwin", "arm64"), ["macosx_12_0_arm64"]),
    "windows-x86_64": ("Windows x86-64", _markers("Windows", "AMD64"), ["win_amd64"]),
}
# Published as a source archive only: pure Python, so pip builds it on any platform, and it
# declares no dependencies. Left out of the wheel check (--only-binary would refuse it).
SOURCE_ONLY = {"gputil"}


@dataclass
class Pin:
    name: str  # normalised as pip does
    version: str
    marker: str | None = None
    hashes: set = field(default_factory=set)


def pins(text=None):
    """The lock's pins, in its order; a package is there twice where a marker picks its version."""
    found = []
    for block in re.split(
        r"\n(?=[A-Za-z0-9])", LOCK.read_text() if text is None else text
    ):
        first = block.splitlines()[0]
        pin = re.match(
            r"([A-Za-z0-9_.\-]+)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$", first
        )
        if pin:
            found.append(
                Pin(
                    canonicalize_name(pin[1]),
                    pin[2],
                    pin[3],
                    set(re.findall(r"--hash=sha256:([0-9a-f]{64})", block)),
                )
            )
    return found


def pythons(every):
    """The Python versions to check: each supported one at .0, and each patch release at which
    a marker of the lock changes what is installed."""
    versions = {f"{minor}.0" for minor in supported()}
    for pin in every:
        for version in re.findall(
            r"python_full_version\s*[<>=!~]+\s*'([\d.]+)'", pin.marker or ""
        ):
            parts = (version.split(".") + ["0"])[:3]  # '3.12' is 3.12.0
            if ".".join(parts[:2]) in supported():
                versions.add(".".join(parts))
    return sorted(versions, key=Version)


def environment(platform, python):
    """The marker values of `platform` (a PLATFORMS key) with CPython `python` ('3.12.0')."""
    return {
        **PLATFORMS[platform][1],
        "python_version": ".".join(python.split(".")[:2]),
        "python_full_version": python,
        "implementation_version": python,
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_version": "",
    }


def applies(every, env):
    """The pins whose markers hold in `env`."""
    return [pin for pin in every if not pin.marker or Marker(pin.marker).evaluate(env)]


def roots():
    """requirements.txt's requirements: where the walk through the dependencies starts."""
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return [
        Requirement(line) for line in lines if line.strip() and not line.startswith("#")
    ]


def pip_dry_run(chosen, platform, python, tmp):
    """pip's report on installing `chosen` on `platform` with `python` ({} and pip's errors
    when it refuses)."""
    (tmp / "requirements.txt").write_text(
        "".join(
            f"{pin.name}=={pin.version}\n"
            for pin in chosen
            if pin.name not in SOURCE_ONLY
        )
    )
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--dry-run",
        "--quiet",
        "--no-deps",
        "--ignore-installed",
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        python,
        *(f"--platform={tag}" for tag in PLATFORMS[platform][2]),
        "--target",
        str(tmp / "target"),
        "--report",
        str(tmp / "report.json"),
        "-r",
        str(tmp / "requirements.txt"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    if done.returncode:
        errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
        return {}, " ".join(errors) or done.stderr[-1500:]
    return json.loads((tmp / "report.json").read_text()), ""


def wrong_hashes(report, chosen, label):
    """A problem for each wheel in pip's `report` whose sha256 is not among the lock's."""
    hashes = {pin.name: pin.hashes for pin in chosen}
    problems = []
    for item in report["install"]:
        name, info = canonicalize_name(item["metadata"]["name"]), item["download_info"]
        digest = info.get("archive_info", {}).get("hashes", {}).get("sha256")
        if digest not in hashes.get(name, set()):
            problems.append(
                f"{label}: pip would install {info['url'].rsplit('/', 1)[-1]}, whose "
                f"sha256 ({digest}) is not one of the lock's hashes for {name}"
            )
    return problems


def missing(requires, chosen, env, label, start):
    """A problem for each dependency that a package needs in `env` but the lock does not pin
    there at a version it accepts, walking from the requirements `start`. `requires`:
    {package: its metadata's Requires-Dist lines}."""
    pinned = {pin.name: pin.version for pin in chosen}
    problems, seen = [], set()
    todo = [("requirements.txt", None, requirement) for requirement in start]
    while todo:
        parent, extras, requirement = todo.pop()
        if requirement.marker and not any(
            requirement.marker.evaluate({**env, "extra": extra})
            for extra in ("", *(extras or ()))
        ):
            continue
        name = canonicalize_name(requirement.name)
        needer = parent if extras is None else f"{parent} {pinned[parent]}"
        if name not in pinned:
            problems.append(
                f"{label}: {needer} needs {requirement}, and the lock pins no "
                f"{name} there"
            )
            continue
        if not requirement.specifier.contains(pinned[name], prereleases=True):
            problems.append(
                f"{label}: {needer} needs {requirement}, and the lock pins "
                f"{name}=={pinned[name]}"
            )
        key = (name, frozenset(requirement.extras))
        if key not in seen:
            seen.add(key)
            todo += [
                (name, requirement.extras, Requirement(line))
                for line in requires.get(name, [])
            ]
    return sorted(problems)


def problems(platform, python, text=None, dry_run=pip_dry_run):
    """Everything that stops the lock (`text`, default requirements.lock) from installing on
    `platform` with CPython `python`, one line each; [] when it installs."""
    label = f"{PLATFORMS[platform][0]}, Python {python}"
    env = environment(platform, python)
    chosen = applies(pins(text), env)
    twice = sorted(
        {pin.name for pin in chosen if [p.name for p in chosen].count(pin.name) > 1}
    )
    if twice:
        return [f"{label}: the lock pins {name} twice there" for name in twice]
    with tempfile.TemporaryDirectory() as tmp:
        report, error = dry_run(chosen, platform, python, Path(tmp))
    if error:
        return [f"{label}: pip finds no wheel to install: {error}"]
    requires = {
        canonicalize_name(item["metadata"]["name"]): item["metadata"].get(
            "requires_dist", []
        )
        for item in report["install"]
    }
    return wrong_hashes(report, chosen, label) + missing(
        requires, chosen, env, label, roots()
    )


def start(combinations, jobs=4):
    """Check each (platform, python) of `combinations`, `jobs` at a time (pip mostly waits for
    the index); {combination: Future of (problems, seconds)}."""

    def timed(platform, python):
        begin = time.perf_counter()
        return problems(platform, python), time.perf_counter() - begin

    pool = ThreadPoolExecutor(jobs)
    futures = {
        combination: pool.submit(timed, *combination) for combination in combinations
    }
    pool.shutdown(wait=False)  # the queued checks still run
    return futures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--platform", action="append", choices=sorted(PLATFORMS))
    parser.add_argument("--python", action="append", help="e.g. 3.12.0 (default: all)")
    parser.add_argument("--jobs", type=int, default=4)
    args = parser.parse_args(argv)
    combinations = [
        (platform, python)
        for platform in args.platform or PLATFORMS
        for python in args.python or pythons(pins())
    ]
    failed = 0
    for (platform, python), future in start(combinations, args.jobs).items():
        found, seconds = future.result()
        failed += bool(found)
        print(
            f"{'FAILED' if found else 'ok':<6} {PLATFORMS[platform][0]}, Python {python} "
            f"({seconds:.0f} s)",
            *found,
            sep="\n  " if found else "",
            flush=True,
        )
    print(
        f"requirements.lock: {len(combinations) - failed} of {len(combinations)} platform and "
        "Python combinations install"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
