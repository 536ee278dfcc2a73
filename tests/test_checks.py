"""Every exercise check (helpers/checks/): a reference answer passes, a typical wrong one fails
with the hint written for it, and each notebook asks exactly the exercises its module checks."""

import json
import re
import subprocess
import sys

from helpers import config, exercises

import numpy as np
import pytest

SPEEDS = {
    "batch 64": [100, 102, 98, 101, 99, 100],
    "batch 256": [150, 149, 152, 151, 148, 150],
}
WANDER = {
    "batch 64": [100, 140, 70, 120, 80, 100],
    "batch 256": [95, 150, 75, 110, 90, 105],
}
AUGMENTED = {
    "accuracy": [0.5, 0.6, 0.65, 0.7, 0.72, 0.74],
    "val_accuracy": [0.5, 0.58, 0.62, 0.66, 0.68, 0.69],
}
PLAIN = {
    "accuracy": [0.5, 0.65, 0.75, 0.85, 0.9, 0.95],
    "val_accuracy": [0.5, 0.6, 0.63, 0.64, 0.63, 0.64],
}

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
    (
        "04",
        1,
        "a",
        {"with_augmentation": AUGMENTED, "without": PLAIN},
        "c",
        "larger without augmentation",
    ),
    (
        "04",
        1,
        "c",
        {"with_augmentation": AUGMENTED, "without": AUGMENTED},
        "a",
        "not clearly different",
    ),
    (
        "04",
        1,
        "c",
        {
            "with_augmentation": {k: v[:2] for k, v in AUGMENTED.items()},
            "without": {k: v[:2] for k, v in PLAIN.items()},
        },
        "a",
        "too few to tell",
    ),
    ("04", 2, 3_696_801, {}, 813_217, "count at 64 px"),
    ("04", 2, 3_696_801, {}, 3_946_657, "61 → 30"),
    ("04", 3, 800, {"pictures": 8000}, 25, "1/32 of the tutorial's pictures"),
    ("04", 3, "4,572 epochs", {"pictures": 1400}, 800, "your training set has 1,400"),
    ("04", 3, 4572, {"pictures": 1400}, 4571, "too small"),
    ("04", 3, 800, {"pictures": 8000}, 200_000, "counts steps"),
    ("04", 2, 3_696_801, {}, 4 * 813_217, "not every layer grows 4-fold"),
    ("01", 3, "388 234", {}, 388_000, "without biases"),
    ("01", 4, "c", {"speeds": WANDER}, "a", "Did you give units="),
    ("01", 4, "c", {"speeds": WANDER}, "a", "cannot tell the two apart"),
]
SAME = {
    "default": [100, 102, 99, 101, 100, 98],
    "use_cudnn=False": [101, 100, 100, 102, 99, 99],
}
FASTER = {
    "default": [300, 310, 290, 305, 300, 295],
    "use_cudnn=False": [100, 102, 99, 101, 100, 98],
}
FROM_SCRATCH = {"val_accuracy": [0.5, 0.52, 0.51]}
CASES += [
    ("00", 1, "c", {}, "a", "starts at 0.97, below 1"),
    ("00", 1, "(C)", {}, "b", "within 10 % either way"),
    ("00", 2, 0.5, {}, 2, "each float32 number is 4 bytes"),
    ("00", 2, "0.5 FLOP/byte", {}, 0.1667, "moves one matrix"),
    ("00", 3, 0.687, {"gflops": 200.0}, 687, "milliseconds"),
    ("00", 3, 0.687, {"gflops": 200.0}, 0.344, "a multiply-add is 2 FLOP"),
    ("02", 1, 902_584, {}, 388_584, "the 1,000-token model"),
    ("02", 1, 902_584, {}, 899_584, "a bias for every word"),
    ("02", 1, 902_584, {}, 837_048, "4 gates"),
    ("02", 2, "a", {}, "c", "the most likely word gets nearly all"),
    ("02", 3, "a", {"scores": [[0.7], [0.6]]}, "b", "positive review 0.7000"),
    ("02", 3, "b", {"scores": [0.4958, 0.4982]}, "a", "the sarcastic one 0.4982"),
    ("02", 4, "c", {"speeds": SAME}, "a", "cannot tell the two apart"),
    ("02", 4, "a", {"speeds": FASTER}, "c", "default was faster"),
    ("02", 1, 902_584, {}, 644_584, "grows with the vocabulary too"),
    ("00", 2, "1/2", {}, "1/4", "a multiply-add is 2 FLOP"),
    ("03", 1, 66_306, {}, 1_639_170, "the Flatten head"),
    ("03", 1, 66_306, {}, 66_048, "a bias too"),
    ("03", 1, 66_306, {}, 65_792, "the output layer"),
    ("03", 2, 1.96, {}, 1.4, "the square of the side"),
    (
        "03",
        3,
        "a",
        {"scratch": FROM_SCRATCH, "pretrained": 0.9, "pictures": 400},
        "b",
        "from scratch 51.0% against the pretrained head 90.0%",
    ),
    (
        "03",
        3,
        "b",
        {"scratch": FROM_SCRATCH, "pretrained": 0.53, "pictures": 400},
        "a",
        "only a difference beyond ±7.1% is clear",
    ),
    ("03", 4, 375, {}, 67, "the ratio of the parameters"),
]
ROWS = {
    "0": {"mean": 0.60, "spread": 0.01, "runs": 3},
    "2": {"mean": 0.70, "spread": 0.01, "runs": 3},
    "2b": {"mean": 0.69, "spread": 0.02, "runs": 3},
}
BN = {
    "with BatchNorm": [80, 81, 79, 80, 82, 80],
    "without": [100, 102, 99, 101, 100, 98],
}
THREADS = {
    "4 threads": [100, 140, 70, 120, 80, 100],
    "1 thread": [95, 150, 75, 110, 90, 105],
}
# 0.47, 0.53 wrong
P_DOG = np.array([0.05, 0.1, 0.47, 0.53, 0.9, 0.95, 0.6, 0.4, 0.02, 0.98])
LABELS = np.array([0, 0, 1, 0, 1, 1, 1, 0, 0, 1])
CASES += [
    ("05", 1, "c", {"rows": ROWS}, "a", "step 2 minus step 2b: +1.0 points"),
    ("05", 2, "a", {"rows": ROWS}, "c", "step 2 minus step 0: +10.0 points"),
    ("05", 3, "b", {"speeds": BN}, "a", "without was faster"),
    (
        "06",
        1,
        1,
        {"p_best": [0.9, 0.2, 0.6], "p_tutorial": [0.8, 0.7, 0.9]},
        2,
        "the pictures they agree on",
    ),
    ("06", 2, 80, {"p": P_DOG, "labels": LABELS}, 0.8, "in percent"),
    ("06", 2, "80 %", {"p": P_DOG, "labels": LABELS}, 100, "too large"),
    ("06", 3, 12, {}, 29, "the original network's last map"),
    ("06", 3, 12, {}, 6, "after the pooling"),
    ("06", 2, 0, {"p": P_DOG, "labels": 1 - LABELS}, 20, "too large"),
    ("07", 1, "c", {"speeds": THREADS}, "a", "cannot tell the two apart"),
    ("07", 2, "a", {}, "b", "no idle core"),
    ("07", 3, "a", {}, "c", "says nothing about accuracy"),
    (
        "08",
        1,
        "a",
        {
            "speeds": {
                "batch 128": [300, 301, 299, 300, 302, 298],
                "batch 32": [200, 201, 199, 200, 202, 198],
            }
        },
        "b",
        "batch 128 was faster",
    ),
    ("08", 2, 347, {}, 1820, "the 32-conv net"),
    ("08", 3, 13.1, {}, 210, "divide by its 16 cores"),
    ("08", 4, 8, {}, 2, "Ampere's ratio"),
    ("08", 5, "a", {}, "b", "left of the A100's TF32 ridge point"),
    (
        "09",
        1,
        "b",
        {
            "speeds": {
                "mixed_float16": [20, 21, 19, 20, 22, 20],
                "float32": [100, 102, 99, 101, 100, 98],
            }
        },
        "a",
        "float32 was faster",
    ),
    ("09", 2, "a", {}, "c", "gives the last Dense layer the float32 policy"),
    ("09", 3, "a", {}, "c", "65,504"),
    (
        "09",
        4,
        "a",
        {"history": {"val_accuracy": [0.6, 0.5, 0.5], "loss": [0.7, 0.69, 0.69]}},
        "b",
        "ended at 50.0%",
    ),
    (
        "09",
        4,
        "b",
        {"history": {"val_accuracy": [0.6, 0.7], "loss": [0.7, 0.6]}},
        "a",
        "ended at 70.0%",
    ),
    ("10", 1, 320, {}, 333, "keeps whole global batches"),
    ("10", 1, "320 pictures", {}, 960, "each reads a third"),
    ("10", 2, "a", {}, "b", "every worker writes its own checkpoint"),
    ("10", 3, 15, {"replicas": 2}, 30, "that is the sum"),
    ("10", 4, "a", {}, "b", "holds the optimizer already"),
    (
        "11",
        1,
        "c",
        {
            "speeds": {
                "XLA": WANDER["batch 64"],
                "serving function": WANDER["batch 256"],
            }
        },
        "a",
        "cannot tell the two apart",
    ),
    (
        "11",
        2,
        "a",
        {"first": 0.6, "second": 0.85, "pictures": 200},
        "b",
        "calibrated on 4 pictures 60.0% against calibrated on all 85.0%",
    ),
    (
        "11",
        3,
        "a",
        {
            "speeds": {
                "2 threads": [150, 151, 149, 150, 152, 148],
                "1 thread": [100, 102, 98, 101, 99, 100],
            }
        },
        "c",
        "2 threads was faster",
    ),
    (
        "12",
        1,
        "dog, cat",
        {
            "counts": [[8, 3, 0], [1, 9, 0], [0, 1, 9]],
            "classes": ["cat", "dog", "horse"],
        },
        "dog and horse",
        "mixes cat and dog most: 4 pictures",
    ),
    (
        "12",
        1,
        "none",
        {"counts": [[8, 0], [0, 9]], "classes": ["cat", "dog"]},
        "cat, dog",
        "answer 'none'",
    ),
    ("12", 2, 257, {}, 256, "a bias too"),
    ("12", 3, "a", {}, "b", "training=False"),
]
# exercises whose right and wrong answers have a test of their own, below
OWN_TESTS = [("07", 4), ("12", 4)]
# answers the checks refuse to judge, with what they say instead
UNJUDGED = [
    (
        "01",
        4,
        {"speeds": {"64": [1, 2, 3], "256": [1, 2, 3]}},
        "named 'batch 256' and 'batch 64'",
    ),
    ("01", 4, {"speeds": {k: v[:2] for k, v in SPEEDS.items()}}, "at least 3 rounds"),
    ("01", 4, {"speeds": [1, 2, 3]}, "what timing.alternate returns"),
    ("02", 3, {"scores": [0.5]}, "your model's two outputs"),
    ("05", 1, {"rows": {"2": ROWS["2"]}}, "no step 2b"),
]


@pytest.fixture(autouse=True)
def build(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "BUILD_DIR", tmp_path)


@pytest.mark.parametrize(
    "notebook, n, right, given, wrong, hint",
    CASES,
    ids=[f"{c[0]}-{c[1]}-{c[4]}" for c in CASES],
)
def test_the_reference_answer_passes_and_a_wrong_one_gets_its_hint(
    notebook, n, right, given, wrong, hint, capsys
):
    check = exercises.load(notebook)[n]
    check.check(right, **given)
    check.check(wrong, **given)
    said = capsys.readouterr().out.splitlines()
    assert said[-2] == f"Exercise {n}: right."
    assert said[-1].startswith(f"Exercise {n}: not yet: ") and hint in said[-1]


@pytest.mark.parametrize("notebook, n, given, said", UNJUDGED)
def test_a_measurement_the_check_cannot_read_is_explained_not_judged(
    notebook, n, given, said, capsys
):
    exercises.load(notebook)[n].check("a", **given)
    assert said in capsys.readouterr().out.splitlines()[-1]


def notebooks_with_checks():
    return sorted(
        p.stem[2:] for p in (config.ROOT / "helpers" / "checks").glob("nb*.py")
    )


@pytest.mark.parametrize("notebook", notebooks_with_checks())
def test_every_exercise_is_checked_and_tested(notebook, capsys):
    path = next((config.ROOT / "notebooks").glob(f"{notebook}_*.ipynb"))
    cells = json.loads(path.read_text())["cells"]
    asked = [
        int(m.group(1))
        for c in cells
        if (m := re.match(r"### Exercise (\d+)\n", "".join(c["source"])))
    ]
    checked = sorted(exercises.load(notebook))
    assert asked == checked
    tested = {n for nb, n, *_ in CASES if nb == notebook} | {
        n for nb, n in OWN_TESTS if nb == notebook
    }
    assert sorted(tested) == checked


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
    code = (
        "import sys; from helpers import exercises; "
        + "; ".join(f"exercises.load({n!r})" for n in notebooks_with_checks())
        + "; print('tensorflow' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=config.ROOT,
        timeout=120,
    )
    assert done.stdout.splitlines()[-1] == "False", done.stderr[-2000:]


def test_a_keras_3_dataset_with_the_workers_passes_and_a_sequence_without_them_does_not(
    capsys,
):
    import keras

    class Batches(keras.utils.PyDataset):
        def __len__(self):
            return 1

        def __getitem__(self, i):
            return np.zeros((1, 2)), np.zeros((1,))

    check = exercises.load("07")[4]
    check.check(Batches(workers=4, use_multiprocessing=True))
    check.check(Batches())
    check.check([1, 2])
    said = capsys.readouterr().out.splitlines()[-3:]
    assert said[0] == "Exercise 4: right."
    assert "workers=1" in said[1] and "moved from fit to the dataset" in said[1]
    assert "that is a list" in said[2]


def test_the_dynamic_range_file_is_judged_by_the_learners_own_sizes(tmp_path, capsys):
    plain, smaller = tmp_path / "model.tflite", tmp_path / "dynamic.tflite"
    plain.write_bytes(b"x" * 4000)
    smaller.write_bytes(b"x" * 1000)
    check = exercises.load("12")[4]
    check.check(4, plain=plain, dynamic=smaller)
    check.check(0.25, plain=plain, dynamic=smaller)
    said = capsys.readouterr().out.splitlines()[-2:]
    assert said == [
        "Exercise 4: right.",
        "Exercise 4: not yet: the other way round: the "
        "float32 file's size over the smaller one's.",
    ]


def test_the_interval_of_00s_first_exercise_is_inconclusive_by_the_courses_rule():
    """00 ex. 1: its right letter (c) is what timing.verdict says of that interval."""
    from helpers import timing
    from helpers.checks import nb00

    low, high = nb00.LOW, nb00.HIGH
    kind = timing.verdict(low, (low * high) ** 0.5, high, ("A", "B"))[0]
    assert kind == "inconclusive"


def test_the_facts_the_choices_of_09_rest_on_hold():
    """09 ex. 2: under mixed_bfloat16 every layer computes in bfloat16 but the float32 output;
    ex. 3: float16 keeps 1000.5 and overflows at 10⁶, bfloat16 rounds 1000.5 and keeps 10⁶."""
    from helpers import models

    import keras
    import ml_dtypes

    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        net = models.cats_dogs_net("2", output_dtype="float32")
    finally:
        keras.config.set_dtype_policy("float32")
    policies = [layer.dtype_policy.name for layer in net.layers]
    assert policies[-1] == "float32" and set(policies[:-1]) == {"mixed_bfloat16"}
    values = np.array([1000.5, 1e6], np.float32)
    with np.errstate(over="ignore"):
        assert np.isinf(values.astype(np.float16)[1])
    assert values[:1].astype(np.float16)[0] == 1000.5
    assert values.astype(ml_dtypes.bfloat16).astype(np.float32).tolist() == [
        1000.0,
        999424.0,
    ]
