"""Is this Python one the course supports? make runs it before it creates a virtual environment:

    python3 tools/check_python.py [NAME [MAKE GOALS]]

Prints the Python found and exits 0 on 3.11-3.13; otherwise says which versions the course
supports and how to point make at one (`PYTHON=python3.12 make ...`), and exits 1. NAME is how
make called it (its PYTHON). Standard library only, and no syntax newer than Python 3.0, so
that an old Python runs it and says what is wrong instead of failing deep inside pip.
"""

import sys

# The oldest and the newest minor version the course supports: requirements.lock is resolved
# and checked for these (tools/check_lock.py), and CI runs on them.
OLDEST, NEWEST = (3, 11), (3, 13)


def supported():
    """The supported versions as text: ['3.11', '3.12', '3.13']."""
    return ["3." + str(minor) for minor in range(OLDEST[1], NEWEST[1] + 1)]


def verdict(version, name, goals=""):
    """(True, what to print) for a supported `version` (a tuple), else (False, why and what
    to do)."""
    found = ".".join(str(part) for part in version[:3])
    names = supported()
    listed = ", ".join(names[:-1]) + " or " + names[-1]
    if OLDEST <= tuple(version[:2]) <= NEWEST:
        return True, "Python " + found + " (" + name + "): supported (" + listed + ")"
    age = (
        "too old"
        if tuple(version[:2]) < OLDEST
        else "newer than the course is tested on"
    )
    command = ("PYTHON=python" + names[-2] + " make " + goals).rstrip()
    return False, (
        "Python "
        + found
        + " ("
        + name
        + ") is "
        + age
        + ": the course needs Python "
        + listed
        + ".\nPoint make at one of those, for example:  "
        + command
        + "\n(install one from python.org, your package manager, pyenv or conda; "
        + "`python3.12 --version` shows whether it is there)."
    )


def main(argv):
    name = argv[1] if len(argv) > 1 else "python"
    if sys.executable and sys.executable != name:
        name = name + " = " + sys.executable
    ok, message = verdict(tuple(sys.version_info[:3]), name, " ".join(argv[2:]))
    if ok:
        print(message)
        return 0
    sys.stderr.write(message + "\n")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
