"""Every exercise check (helpers/checks/): a reference answer passes, a typical wrong one fails
with the hint written for it, and each notebook asks exactly the exercises its module checks."""

import json
import re
import subprocess
import sys

from helpers import config, exercises

import pytest

SPEEDS = {"batch 64": [100, 102, 98, 101, 99, 100], "batch 256": [150, 149, 152, 151, 148, 150]}
WANDER = {"batch 64": [100, 140, 70, 120, 80, 100], "batch 256": [95, 150, 75, 110, 90, 105]}
AUGMENTED = {"accuracy": [0.5, 0.6, 0.65, 0.7, 0.72, 0.74],
             "val_accuracy": [0.5, 0.58, 0.62, 0.66, 0.68, 0.69]}
PLAIN = {"accuracy": [0.5, 0.65, 0.75, 0.85, 0.9, 0.95],
         "val_accuracy": [0.5, 0.6, 0.63, 0.64, 0.63, 0.64]}

# (notebook, exercise, the right answer, what check() needs beside it, a wrong answer,
#  words of the hint that wrong answer gets)
CASES = [
    ("01", 1, "b", {}, "a", "+1s lie on one side"),
    ("01", 2, "a", {}, "c", "no information is lost"),
    ("01", 3, 388_234, {}, 93_322, "both pools"),
    ("01", 3, "388,234", {}, 552_074, "11×11 to 9×9"),
    ("01", 4, "a", {"speeds": SPEEDS}, "c", "batch 256 was faster"),
    ("01", 4, "c", {"speeds": WANDER}, "a", "cannot tell the two apart"),
    ("01", 5, "b", {}, "d", "both rates overshoot"),
    ("04", 1, "a", {"with_augmentation": AUGMENTED, "without": PLAIN}, "c",
     "larger without augmentation"),
    ("04", 1, "c", {"with_augmentation": AUGMENTED, "without": AUGMENTED}, "a",
     "not clearly different"),
    ("04", 1, "c", {"with_augmentation": {k: v[:2] for k, v in AUGMENTED.items()},
                    "without": {k: v[:2] for k, v in PLAIN.items()}}, "a", "too few to tell"),
    ("04", 2, 3_696_801, {}, 813_217, "count at 64 px"),
    ("04", 2, 3_696_801, {}, 3_946_657, "61 → 30"),
    ("04", 3, 800, {"pictures": 8000}, 25, "1/32 of the tutorial's pictures"),
    ("04", 3, "4,572 epochs", {"pictures": 1400}, 800, "your training set has 1,400"),
    ("04", 3, 4572, {"pictures": 1400}, 4571, "too small"),
    ("04", 3, 800, {"pictures": 8000}, 200_000, "counts steps"),
    ("04", 2, 3_696_801, {}, 4 * 813_217, "not every layer grows 4-fold"),
    ("01", 3, "388 234", {}, 388_000, "without biases"),
    ("01", 4, "c", {"speeds": WANDER}, "a", "Did you give `units=`"),
    ("01", 4, "c", {"speeds": WANDER}, "a", "cannot tell the two apart"),
]
SAME = {"cuDNN": [100, 102, 99, 101, 100, 98], "no cuDNN": [101, 100, 100, 102, 99, 99]}
FASTER = {"cuDNN": [300, 310, 290, 305, 300, 295], "no cuDNN": [100, 102, 99, 101, 100, 98]}
FROM_SCRATCH = {"val_accuracy": [0.5, 0.52, 0.51]}
CASES += [
    ("00", 1, "a", {"balance": 9.5}, "b", "above your CPU's balance point of 9.5"),
    ("00", 1, "b", {"balance": 40.0}, "c", "would slow the large multiplies"),
    ("00", 2, 0.5, {}, 2, "each float32 number is 4 bytes"),
    ("00", 2, "0.5 FLOP/byte", {}, 0.1667, "moves one matrix"),
    ("00", 3, 0.687, {"gflops": 200.0}, 687, "milliseconds"),
    ("00", 3, 0.687, {"gflops": 200.0}, 0.344, "a multiply-add is 2 FLOP"),
    ("02", 1, 902_584, {}, 388_584, "the 1,000-token model"),
    ("02", 1, 902_584, {}, 899_584, "a bias for every word"),
    ("02", 1, 902_584, {}, 837_048, "4 gates"),
    ("02", 2, "a", {}, "c", "the most likely word gets nearly all"),
    ("02", 3, "a", {"scores": [[0.7], [0.6]]}, "b", "positive review 0.70"),
    ("02", 3, "b", {"scores": [0.3, 0.6]}, "a", "the sarcastic one 0.60"),
    ("02", 4, "c", {"speeds": SAME}, "a", "cannot tell the two apart"),
    ("02", 4, "a", {"speeds": FASTER}, "c", "cuDNN was faster"),
    ("03", 1, 66_306, {}, 1_639_170, "the Flatten head"),
    ("03", 1, 66_306, {}, 66_048, "a bias too"),
    ("03", 2, 1.96, {}, 1.4, "the square of the side"),
    ("03", 3, "a", {"scratch": FROM_SCRATCH, "pretrained": 0.9, "pictures": 400}, "b",
     "from scratch 51.0% against the pretrained head's 90.0%"),
    ("03", 3, "b", {"scratch": FROM_SCRATCH, "pretrained": 0.53, "pictures": 400}, "a",
     "no clear one"),
    ("03", 4, 375, {}, 67, "the ratio of the parameters"),
    ("03", 5, "b", {}, "a", "BatchNorm moving means"),
]
# answers the checks refuse to judge, with what they say instead
UNJUDGED = [
    ("01", 4, {"speeds": {"64": [1, 2, 3], "256": [1, 2, 3]}}, "named 'batch 256' and 'batch 64'"),
    ("01", 4, {"speeds": {k: v[:2] for k, v in SPEEDS.items()}}, "at least 3 rounds"),
    ("01", 4, {"speeds": [1, 2, 3]}, "what timing.alternate returns"),
    ("02", 3, {"scores": [0.5]}, "your model's two outputs"),
]


@pytest.fixture(autouse=True)
def build(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "BUILD_DIR", tmp_path)


@pytest.mark.parametrize("notebook, n, right, given, wrong, hint", CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[4]}" for c in CASES])
def test_the_reference_answer_passes_and_a_wrong_one_gets_its_hint(
        notebook, n, right, given, wrong, hint, capsys):
    check = exercises.load(notebook)[n]
    check.check(right, **given)
    check.check(wrong, **given)
    said = capsys.readouterr().out.splitlines()
    assert said[-2] == f"Exercise {n}: right."
    assert said[-1].startswith(f"Exercise {n}: not yet: ") and hint in said[-1]


@pytest.mark.parametrize("notebook, n, given, said", UNJUDGED)
def test_a_measurement_the_check_cannot_read_is_explained_not_judged(
        notebook, n, given, said, capsys):
    exercises.load(notebook)[n].check("a", **given)
    assert said in capsys.readouterr().out.splitlines()[-1]


def notebooks_with_checks():
    return sorted(p.stem[2:] for p in (config.ROOT / "helpers" / "checks").glob("nb*.py"))


@pytest.mark.parametrize("notebook", notebooks_with_checks())
def test_every_exercise_is_checked_and_tested(notebook, capsys):
    path = next((config.ROOT / "notebooks").glob(f"{notebook}_*.ipynb"))
    cells = json.loads(path.read_text())["cells"]
    asked = [int(m.group(1)) for c in cells
             if (m := re.match(r"### Exercise (\d+)\n", "".join(c["source"])))]
    checked = sorted(exercises.load(notebook))
    assert asked == checked
    assert sorted({n for nb, n, *_ in CASES if nb == notebook}) == checked


@pytest.mark.parametrize("notebook", notebooks_with_checks())
def test_every_hint_and_solution_prints(notebook, capsys):
    for e in exercises.load(notebook).values():
        e.hint()
        e.solution()
    out = capsys.readouterr().out
    assert out.count("Hint for exercise") == out.count("A worked solution") > 0


@pytest.mark.processes
def test_loading_a_notebooks_checks_needs_no_tensorflow():
    """The answer cells run beside the notebook's own work: loading them starts nothing heavy."""
    code = ("import sys; from helpers import exercises; "
            + "; ".join(f"exercises.load({n!r})" for n in notebooks_with_checks())
            + "; print('tensorflow' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=config.ROOT, timeout=120)
    assert done.stdout.splitlines()[-1] == "False", done.stderr[-2000:]
