"""The exercise checks' mechanism: one line per check, nothing raised for a wrong answer, and
what the checks found kept in build/progress.json, the best state winning."""

import json

from helpers import config, exercises

import pytest


@pytest.fixture
def build(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "BUILD_DIR", tmp_path)
    return tmp_path


def counting():
    return exercises.Exercise(
        "99",
        1,
        exercises.number(lambda: 12, {10: "ten is two short"}),
        hints="add two",
        worked="12",
    )


def test_a_right_answer_says_right_and_is_recorded(build, capsys):
    assert counting().check(12) is None  # Jupyter shows nothing under the line
    assert capsys.readouterr().out == "Exercise 1: right.\n"
    assert json.loads((build / "progress.json").read_text()) == {"99": {"1": "right"}}


def test_a_typical_wrong_answer_gets_its_own_hint_and_a_later_one_keeps_right(
    build, capsys
):
    e = counting()
    e.check(10)
    assert "not yet: ten is two short" in capsys.readouterr().out
    e.check("12")
    e.check(13.4)
    assert "13.4 is too large" in capsys.readouterr().out.splitlines()[-1]
    assert exercises._read() == {"99": {"1": "right"}}


def test_no_answer_and_a_missing_measurement_are_said_not_recorded(build, capsys):
    e = exercises.Exercise(
        "99", 2, exercises.choice("a", {"b": "no"}), "h", "w", given=("speeds",)
    )
    e.check(None)
    e.check("a", speeds=None)
    out = capsys.readouterr().out
    assert "no answer yet" in out and "speeds still None: run" in out
    assert not (build / "progress.json").exists()


def test_a_choice_explains_each_wrong_letter_and_asks_for_a_letter(build, capsys):
    judge = exercises.choice(
        "b", {"a": "a is the other way", "c": "c ignores the bias"}
    )
    assert judge("(B)") is None and judge("a") == "a is the other way"
    assert "one of the letters a, b, c" in judge("yes")


def test_a_number_says_what_is_not_a_number():
    assert "holds no number" in exercises.number(lambda: 3)("three")
    for written in ("1,234", "1 234", "1_234", "1234 weights", 1234.0):
        assert exercises.number(lambda: 1234)(written) is None, written


def test_the_solution_is_recorded_as_seen_and_progress_lists_every_exercise(
    build, capsys
):
    q = exercises.load("04")
    q[2].solution()
    assert "3,696,801" in capsys.readouterr().out
    table = exercises.progress()
    assert {"01", "04"} <= set(table.index)
    assert table.loc["04", 2] == "solution seen" and table.loc["04", 1] == "to do"
    assert table.loc["01"].iloc[:5].tolist() == ["to do"] * 5


def test_the_hints_and_solution_stay_hidden_until_asked_and_copying_is_told_apart(
    build,
):
    e = counting()
    assert "12" not in repr(e) and "add two" not in repr(e)
    e.solution()
    e.check(12)
    assert exercises._read() == {"99": {"1": "right after the solution"}}


def test_an_unreadable_progress_file_is_kept_aside_and_said_not_lost(build, capsys):
    (build / "progress.json").write_text('{"01": {"1": "ri')  # cut off
    counting().check(12)
    said = capsys.readouterr().out
    assert (
        "progress.json could not be read" in said and "progress.unreadable.json" in said
    )
    assert (build / "progress.unreadable.json").read_text() == '{"01": {"1": "ri'
    assert exercises._read() == {"99": {"1": "right"}}


def test_what_a_check_prints_has_no_markdown_code_marks(build, capsys):
    """JupyterLab prints text as it is: `None` would show its backticks."""
    e = exercises.Exercise(
        "99", 3, exercises.choice("a", {"b": "`b` is the other way"}), "use `a`", "`a`"
    )
    for answer in (None, "b"):
        e.check(answer)
    e.hint()
    e.solution()
    out = capsys.readouterr().out
    assert "`" not in out and "b is the other way" in out and "use a" in out


def test_a_count_off_by_a_common_factor_says_which(build, capsys):
    judge = exercises.number(lambda: 1000)
    assert "factor of 2:" in judge(2000) and "factor of 2:" in judge(500)
    assert "factor of 4:" in judge(250)
    assert "factor of 1,000:" in judge(1)
    assert judge(1300).endswith("the hint shows the steps.")  # no common factor
    assert judge(1000) is None
