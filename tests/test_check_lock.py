"""requirements.lock installs on every platform and Python version the course supports
(tools/check_lock.py): asked of the package index in `make test` (marker `network`), and the
check's own logic, offline, in `make check`."""

import re

from tools import check_lock
from tools.check_python import supported

import pytest

COMBINATIONS = [
    (platform, python)
    for platform in check_lock.PLATFORMS
    for python in check_lock.pythons(check_lock.pins())
]


@pytest.fixture(scope="module")
def checks(request):
    """Every collected combination checked, four at a time, from the first test on."""
    wanted = [
        tuple(item.callspec.params.values())
        for item in request.session.items
        if getattr(item, "originalname", None) == "test_the_lock_installs_on"
        and getattr(item, "module", None) is request.module
    ]
    return check_lock.start(wanted or COMBINATIONS)


@pytest.mark.network
@pytest.mark.parametrize(
    ("platform", "python"), COMBINATIONS, ids=[f"{p}-{v}" for p, v in COMBINATIONS]
)
def test_the_lock_installs_on(checks, platform, python):
    problems, seconds = checks[(platform, python)].result()
    print(f"{platform} {python}: {seconds:.0f} s")
    assert not problems, "\n".join(problems)


def test_every_supported_platform_and_python_is_checked():
    assert {p for p, _ in COMBINATIONS} == {
        "linux-x86_64",
        "linux-aarch64",
        "macos-arm64",
        "windows-x86_64",
    }
    assert (
        {v.rsplit(".", 1)[0] for _, v in COMBINATIONS}
        == set(supported())
        == {"3.11", "3.12", "3.13"}
    )


def test_the_lock_is_universal_with_markers_where_a_platform_needs_more():
    """What made the Linux-only lock fail on a Mac (appnope) and on Windows (colorama,
    pywinpty) is pinned, for those platforms only; every other Linux pin is kept."""
    pins = check_lock.pins()
    linux = {
        p.name
        for p in check_lock.applies(
            pins, check_lock.environment("linux-x86_64", "3.11.7")
        )
    }
    mac = {
        p.name
        for p in check_lock.applies(
            pins, check_lock.environment("macos-arm64", "3.11.7")
        )
    }
    windows = {
        p.name
        for p in check_lock.applies(
            pins, check_lock.environment("windows-x86_64", "3.13.0")
        )
    }
    assert "appnope" in mac - linux - windows
    assert {"colorama", "pywinpty"} <= windows - linux - mac
    assert "pexpect" in linux & mac and "pexpect" not in windows
    assert all(p.hashes for p in pins) and len(linux) > 100


# The check's logic on a made-up lock and made-up index answers: no index needed.
LOCK = """# a made-up lock
ipykernel==7.4.0 \\
    --hash=sha256:{a}
appnope==1.0.0 ; sys_platform == 'darwin' \\
    --hash=sha256:{b}
soupsieve==2.10 ; python_full_version < '3.11.5' \\
    --hash=sha256:{c}
soupsieve==4.1.3 ; python_full_version >= '3.11.5' \\
    --hash=sha256:{d}
""".format(a="a" * 64, b="b" * 64, c="c" * 64, d="d" * 64)
IPYKERNEL_NEEDS = [
    "appnope>=0.1.2; platform_system == 'Darwin'",
    "soupsieve",
    "comm>=0.1.1",
    "pytest; extra == 'test'",
]


def fake_index(requires, digest="a" * 64):
    """A stand-in for pip: every pin installs, ipykernel's wheel has `digest`."""

    def dry_run(chosen, platform, python, tmp):
        return {
            "install": [
                {
                    "metadata": {
                        "name": pin.name,
                        "requires_dist": requires.get(pin.name, []),
                    },
                    "download_info": {
                        "url": f"https://files/{pin.name}.whl",
                        "archive_info": {
                            "hashes": {
                                "sha256": digest
                                if pin.name == "ipykernel"
                                else next(iter(pin.hashes))
                            }
                        },
                    },
                }
                for pin in chosen
            ]
        }, ""

    return dry_run


def test_the_lock_is_read_with_its_markers_and_forks():
    pins = check_lock.pins(LOCK)
    assert [(p.name, p.version, p.marker) for p in pins][1:3] == [
        ("appnope", "1.0.0", "sys_platform == 'darwin'"),
        ("soupsieve", "2.10", "python_full_version < '3.11.5'"),
    ]
    assert check_lock.pythons(pins) == ["3.11.0", "3.11.5", "3.12.0", "3.13.0"]
    env = check_lock.environment("linux-x86_64", "3.11.2")  # Debian 12's Python
    assert [(p.name, p.version) for p in check_lock.applies(pins, env)] == [
        ("ipykernel", "7.4.0"),
        ("soupsieve", "2.10"),
    ]


def test_a_dependency_missing_on_one_platform_is_named_with_that_platform(monkeypatch):
    monkeypatch.setattr(
        check_lock, "roots", lambda: [check_lock.Requirement("ipykernel")]
    )
    lock = LOCK.replace(
        "appnope==1.0.0 ; sys_platform == 'darwin'",
        "appnope==1.0.0 ; sys_platform == 'win32'",
    )
    index = fake_index({"ipykernel": IPYKERNEL_NEEDS + ["comm"]})
    found = check_lock.problems(
        "macos-arm64",
        "3.12.0",
        lock + "comm==0.2.3 \\\n    --hash=sha256:" + "e" * 64 + "\n",
        index,
    )
    assert found == [
        "macOS arm64, Python 3.12.0: ipykernel 7.4.0 needs appnope>=0.1.2; "
        'platform_system == "Darwin", and the lock pins no appnope there'
    ]
    assert (
        check_lock.problems(
            "linux-aarch64",
            "3.12.0",
            lock + "comm==0.2.3 \\\n    --hash=sha256:" + "e" * 64 + "\n",
            index,
        )
        == []
    )


def test_a_version_the_dependency_refuses_and_a_missing_package_are_problems(
    monkeypatch,
):
    monkeypatch.setattr(
        check_lock, "roots", lambda: [check_lock.Requirement("ipykernel")]
    )
    index = fake_index({"ipykernel": ["soupsieve>=3", "comm>=0.1.1"]})
    found = check_lock.problems("windows-x86_64", "3.11.0", LOCK, index)
    assert found == [
        "Windows x86-64, Python 3.11.0: ipykernel 7.4.0 needs comm>=0.1.1, and the lock pins "
        "no comm there",
        "Windows x86-64, Python 3.11.0: ipykernel 7.4.0 needs soupsieve>=3, and the lock pins "
        "soupsieve==2.10",
    ]
    assert (
        check_lock.problems(
            "windows-x86_64",
            "3.12.0",
            LOCK,
            fake_index({"ipykernel": ["soupsieve>=3"]}),
        )
        == []
    )


def test_a_wheel_whose_hash_the_lock_lacks_is_a_problem(monkeypatch):
    monkeypatch.setattr(check_lock, "roots", lambda: [])
    found = check_lock.problems(
        "linux-x86_64", "3.13.0", LOCK, fake_index({}, "f" * 64)
    )
    assert len(found) == 1 and re.match(
        r"Linux x86-64, Python 3\.13\.0: pip would install ipykernel\.whl, whose sha256 \(f+\) "
        r"is not one of the lock's hashes for ipykernel$",
        found[0],
    )


@pytest.mark.network
def test_a_package_without_a_wheel_for_the_platform_is_named(monkeypatch):
    """pywinpty has Windows wheels only: pinned for Linux, pip refuses it there."""
    monkeypatch.setattr(
        check_lock, "roots", lambda: [check_lock.Requirement("pywinpty")]
    )
    pywinpty = next(p for p in check_lock.pins() if p.name == "pywinpty")
    lock = (
        f"pywinpty=={pywinpty.version} \\\n"
        + "".join(
            f"    --hash=sha256:{h} \\\n" for h in sorted(pywinpty.hashes)
        ).rstrip(" \\\n")
        + "\n"
    )
    found = check_lock.problems("linux-x86_64", "3.12.0", lock)
    assert len(found) == 1 and found[0].startswith(
        "Linux x86-64, Python 3.12.0: pip finds no wheel to install:"
    ), found
    assert f"pywinpty=={pywinpty.version}" in found[0]
    assert check_lock.problems("windows-x86_64", "3.12.0", lock) == []
