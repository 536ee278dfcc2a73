"""Exercises that check themselves: a learner's answer is right, or "not yet" with the reason.

A notebook's exercises come from `load("01")` (each notebook's checks live in
`helpers/checks/nbNN.py`). The learner writes an answer and runs `q[3].check(answer)`:
the check compares it with what the learner's own objects give (a network they built, their
own timings), never with a figure from another machine, and prints one line. `q[3].hint()`
and `q[3].solution()` print on request. What each check found is kept in
`build/progress.json` (never in the repository); `progress()` shows it for every notebook.

Four kinds of check, three of them as Kaggle Learn and learnr have them:
- `Exercise(judge=...)`: any check; `judge(answer, **given)` returns None when the answer is
  right, or a sentence that says what is not right yet.
- `number(expected, wrong=...)`: a count worked out by hand, against the count the learner's
  objects give; a typical wrong count gets its own hint.
- `choice(right, why_not)`: a "what happens, and why?" question as letters, every wrong
  letter with its own explanation.
- `timed_choice(names)`: "which is faster?" answered a, b or c against the learner's own
  alternated rounds (`timing.alternate`), read by notebook 00's `timing.ratio`;
  `accuracy_choice(names)` the same for two accuracies measured on the same pictures.
"""

import importlib
import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from . import config

__all__ = [
    "Exercise",
    "accuracy_choice",
    "choice",
    "load",
    "number",
    "progress",
    "progress_file",
    "timed_choice",
]

RIGHT, AFTER, SEEN, NOT_YET = (
    "right",
    "right after the solution",
    "solution seen",
    "not yet",
)
# the best first: a later "not yet" keeps a "right"
STATES = (RIGHT, AFTER, SEEN, NOT_YET)
NUMBER = re.compile(r"[-+]?\d[\d,_ ]*(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?)?")  # 1,234; 1/2


def progress_file():
    """Where the checks keep what they found: `build/progress.json` (COURSE_BUILD moves it)."""
    return config.BUILD_DIR / "progress.json"


def _read():
    """What the checks found so far; a file that cannot be read is kept aside, and said so."""
    path = progress_file()
    if not path.exists():
        return {}
    try:
        found = json.loads(path.read_text())
        if isinstance(found, dict):
            return found
        why = f"it holds a {type(found).__name__}, not a table of notebooks"
    except (OSError, ValueError) as error:
        why = str(error)
    kept = path.with_name("progress.unreadable.json")
    path.replace(kept)
    print(
        f"{config.BUILD_DIR.name}/{path.name} could not be read ({why}); kept as "
        f"{kept.name}, and a new one begins."
    )
    return {}


def _record(notebook, number, state):
    found = _read()
    mine = found.setdefault(notebook, {})
    old = mine.get(str(number))
    # solved or copied: both said
    state = AFTER if (old, state) == (SEEN, RIGHT) else state
    if old in STATES and STATES.index(old) <= STATES.index(state):
        return  # keep the better state
    mine[str(number)] = state
    path = progress_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(f".{os.getpid()}.part")
    part.write_text(json.dumps(found, indent=1, sort_keys=True))
    part.replace(path)  # a reader never sees half a file


def _plain(text):
    """`text` as a learner reads it printed: Markdown's code marks (`None`) taken off."""
    return re.sub(r"`([^`]+)`", r"\1", text)


@dataclass(repr=False)
class Exercise:
    """One exercise: `check(answer, **given)`, `hint()`, `solution()`."""

    notebook: str
    number: int
    judge: Callable
    hints: str
    worked: str
    given: tuple = field(default=())  # names of what check() needs beside the answer

    def __repr__(self):  # the hints and the solution stay hidden until asked for
        return (
            f"<exercise {self.number} of notebook {self.notebook}: q[{self.number}].check("
            f"answer), q[{self.number}].hint(), q[{self.number}].solution()>"
        )

    def check(self, answer=None, **given):
        """Print "right." or "not yet: <why>", record it, and return None (Jupyter shows no
        value under the line). Never raises for a wrong answer."""
        missing = [name for name in self.given if given.get(name) is None]
        if answer is None or answer is Ellipsis:
            print(
                f"Exercise {self.number}: no answer yet. Write yours in place of None "
                "and run the cell again."
            )
        elif missing:
            print(
                f"Exercise {self.number}: {' and '.join(missing)} still None: run what the "
                "exercise asks for first and keep its result under that name."
            )
        else:
            why = self.judge(answer, **given)
            _record(self.notebook, self.number, NOT_YET if why else RIGHT)
            print(
                f"Exercise {self.number}: "
                + (f"not yet: {_plain(why)}" if why else "right.")
            )

    def hint(self):
        print(f"Hint for exercise {self.number}: {_plain(self.hints)}")

    def solution(self):
        _record(self.notebook, self.number, SEEN)
        print(f"A worked solution of exercise {self.number}:\n{_plain(self.worked)}")


def _near(value, target, within):
    return abs(value - target) <= within * abs(target)


def number(expected, wrong=None, unit="", within=0.0):
    """A judge for a count: `expected(**given)` gives the right one from the learner's objects;
    `wrong` maps a typical wrong count to what went wrong there (a text, or a function of what
    the learner gave); `within` is the share either way that still counts as right (0: exact)."""

    def judge(answer, **given):
        # 388234, "388,234", "388 234", "800 epochs", "1/2"
        found = NUMBER.search(str(answer))
        if not found:
            return f"{answer!r} holds no number: write the count, for example 12345."
        top, _, bottom = re.sub(r"[,_ ]", "", found.group()).partition("/")
        value = float(top) / float(bottom or 1)
        right = expected(**given)
        if _near(value, right, within):
            return None
        for count, why in (wrong or {}).items():
            if _near(value, count(**given) if callable(count) else count, within):
                return why(**given) if callable(why) else why
        size = "small" if value < right else "large"
        return f"{found.group().strip()}{unit} is too {size}{_off_by(value, right)}"

    return judge


# Factors a count is often off by, and the slip each one suggests
FACTORS = {
    2: "something counted twice, or half of it left out (a multiply-add is 2 FLOPs)?",
    4: "bytes against 4-byte float32 numbers, or a side where its square belongs?",
    1000: "a unit: thousands, or ms against s?",
    1_000_000: "a unit: millions, or µs against s?",
}


def _off_by(value, right):
    """'; off by a factor of 2: ...?' where `value` is that far from `right`, else where the
    hint helps: what a learner reads after "too large" or "too small"."""
    if value and right:
        ratio = max(value / right, right / value)
        for factor, slip in FACTORS.items():
            if abs(ratio - factor) <= 0.02 * factor:
                return f", by a factor of {factor:,}: {slip}"
    return "; the hint shows the steps."


def choice(right, why_not):
    """A judge for a question answered by a letter: `why_not` maps each wrong letter to why."""
    letters = sorted(set(why_not) | ({right} if isinstance(right, str) else set()))

    def judge(answer, **given):
        letter = str(answer).strip().strip("()").lower()
        wanted = right(**given) if callable(right) else right
        if letter not in letters:
            return f"answer with one of the letters {', '.join(letters)}."
        if letter == wanted:
            return None
        explain = why_not.get(letter)
        return explain(**given) if callable(explain) else explain

    return judge


def timed_choice(names, unit, note=""):
    """A judge for "which of `names` (two workloads) is faster?": a (the first), b (the
    second) or c (the rounds cannot tell: the same within 10 %, or inconclusive), from the
    `speeds` the learner's `timing.alternate` gave, with notebook 00's verdict; `note` is added
    to a wrong answer's message (what to look at in the timing itself)."""

    def judge(answer, speeds, **given):
        from . import timing

        if not isinstance(speeds, dict) or set(names) - set(speeds):
            return (
                f"`speeds` should be what timing.alternate returns for two workloads named "
                f"{names[0]!r} and {names[1]!r} (the hint shows the call)."
            )
        if min(len(speeds[k]) for k in names) < 3:
            return "time at least 3 rounds of each: fewer cannot give an interval."
        found = timing.ratio(speeds[names[0]], speeds[names[1]], names, unit=unit)
        right = {"faster": "a", "slower": "b"}.get(found["verdict"], "c")
        said = {
            "a": f"{names[0]} was faster",
            "b": f"{names[1]} was faster",
            "c": "they cannot tell the two apart",
        }[right]
        why = f"your own rounds say {said}: {found['text']}. {note}".strip()
        return choice(right, dict.fromkeys("abc", why))(answer)

    return judge


def accuracy_choice(names):
    """A judge for "how does `names[0]`'s accuracy compare with `names[1]`'s?": a (lower),
    b (no clear difference) or c (higher), from the two accuracies the learner measured on
    the same `pictures`. A difference is clear beyond twice its standard error (each accuracy
    a share of `pictures` right: its binomial spread)."""

    def judge(answer, first, second, pictures, **given):
        error = math.sqrt((first * (1 - first) + second * (1 - second)) / pictures)
        right = (
            "b"
            if abs(first - second) <= 2 * error
            else ("a" if first < second else "c")
        )
        said = (
            f"{names[0]} {first:.1%} against {names[1]} {second:.1%} on {pictures:,} "
            f"pictures, where only a difference beyond ±{2 * error:.1%} is clear."
        )
        return choice(right, dict.fromkeys("abc", f"your own runs say: {said}"))(answer)

    return judge


def load(notebook):
    """Notebook `notebook`'s exercises, by number: `q = load("01")`, then `q[3].check(...)`."""
    module = importlib.import_module(f"helpers.checks.nb{notebook}")
    found = {e.number: e for e in module.exercises()}
    print(
        f"Notebook {notebook}: {len(found)} exercises. For each, run its cell with your "
        "answer; q[n].hint() and q[n].solution() help."
    )
    return found


def progress(notebooks=None):
    """A table of every notebook's exercises and what their checks found (build/progress.json)."""
    import pandas as pd

    folder = config.ROOT / "helpers" / "checks"
    found, rows = _read(), []
    for path in sorted(folder.glob("nb*.py")):
        notebook = path.stem[2:]
        if notebooks and notebook not in notebooks:
            continue
        module = importlib.import_module(f"helpers.checks.nb{notebook}")
        for e in module.exercises():
            state = found.get(notebook, {}).get(str(e.number), "to do")
            rows.append({"notebook": notebook, "exercise": e.number, "state": state})
    table = pd.DataFrame(rows, columns=["notebook", "exercise", "state"])
    return table.pivot(index="notebook", columns="exercise", values="state").fillna("")
