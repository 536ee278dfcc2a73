"""Notebook 04's exercise checks (the tutorial's cat/dog network)."""

import statistics

from .. import published
from ..exercises import Exercise, choice, number

T = published.LADDER_TRAINING  # the tutorial's fit_generator settings


def _gaps(history):
    """Training minus validation accuracy, each of the last third of the epochs (3 at least)."""
    h = getattr(history, "history", history)
    gaps = [a - v for a, v in zip(h["accuracy"], h["val_accuracy"])]
    return gaps[-max(3, len(gaps) // 3) :]


def _gap_verdict(with_augmentation, without):
    """a (larger without), b (smaller without) or c (cannot tell), and what the runs gave.

    The gap's epoch-to-epoch wander in the learner's own runs is its yardstick: the difference
    of the means is clear when its 95 % Welch interval (`ladder.difference`, as notebook 05
    compares steps) leaves out 0."""
    from .. import ladder

    a, b = _gaps(with_augmentation), _gaps(without)
    said = (
        f"gap with augmentation {statistics.mean(a):.1%}, without "
        f"{statistics.mean(b):.1%} (mean of your last {len(a)} and {len(b)} epochs)"
    )
    if min(len(a), len(b)) < 3:
        return "c", said + ": fewer than 3 epochs each, too few to tell"
    rows = [
        {"mean": statistics.mean(g), "spread": statistics.stdev(g), "runs": len(g)}
        for g in (a, b)
    ]
    gain, (low, high) = ladder.difference(*rows)  # points, without minus with
    if low <= 0 <= high:
        return (
            "c",
            said + f": the difference lies within its 95 % interval ({low:+.1f} to "
            f"{high:+.1f} points)",
        )
    return ("a" if gain > 0 else "b"), said


def _gap_why(with_augmentation, without):
    right, said = _gap_verdict(with_augmentation, without)
    meaning = {
        "a": "larger without augmentation",
        "b": "smaller without augmentation",
        "c": "not clearly different",
    }[right]
    return f"your own runs say the gap is {meaning}: {said}."


def _at_128():
    from .. import models

    return models.ladder_net(image_size=128).count_params()


def _tutorial_pictures():
    return T["epochs"] * T["steps_per_epoch"] * T["batch"]


def _epochs(pictures):
    """Exercise 3: one-pass epochs over the learner's `pictures` that match the tutorial's."""
    return -(-_tutorial_pictures() // pictures)  # rounded up: whole epochs


def exercises():
    return [
        Exercise(
            "04",
            1,
            choice(
                lambda **runs: _gap_verdict(**runs)[0], dict.fromkeys("abc", _gap_why)
            ),
            hints="train `ladder_net(augment=False)` (section 4) with the same "
            "`compile` and `fit` as section 5 (the same epochs), keep its History as `plain`, then "
            "`plots.history(plain)`. Compare training minus validation accuracy over the last "
            "epochs of both runs.",
            worked="Usually a: without augmentation the network sees the very same "
            "photos every epoch and memorises them, so its training accuracy climbs faster "
            "while its validation accuracy stalls. Whether your runs show it clearly depends "
            "on the epochs: the check compares the gap's mean over your last epochs, with a 95 % "
            "interval from how much it wandered from epoch to epoch.",
            given=("with_augmentation", "without"),
        ),
        Exercise(
            "04",
            2,
            number(
                _at_128,
                {
                    813_217: "that is the count at 64 px. Flatten's output grows with the picture, "
                    "and the Dense layer with it.",
                    4 * 813_217: "not every layer grows 4-fold: a conv layer's weights "
                    "do not depend on "
                    "the picture's size, and Flatten's output grows from 14·14·32 to "
                    "30·30·32 numbers (4.6×), not 4×.",
                    3_946_657: "pooling drops an odd last row and column: 61 → 30, not 31.",
                    4_204_705: "a 3×3 convolution without padding shrinks each side by 2: "
                    "128 → 126, then 63 → 61.",
                },
            ),
            hints="follow the size: 128 → 126 (conv) → 63 (pool) → 61 (conv) → 30 (pool). "
            "Flatten gives 30·30·32 numbers; the Dense layer has (inputs + 1)·128 weights; the "
            "conv layers and the output keep their counts (896, 9,248, 129).",
            worked="3,696,801: Flatten gives 30·30·32 = 28,800 numbers, the Dense layer "
            "28,800·128 + 128 = 3,686,528 weights, and 896 + 9,248 + 129 more: 4.5 times the "
            "64-px network, nearly all in the Dense layer again. "
            "`ladder_net(image_size=128).count_params()` agrees.",
        ),
        Exercise(
            "04",
            3,
            number(
                _epochs,
                {
                    _tutorial_pictures() // T["photos"]: lambda pictures: (
                        f"800 passes over the tutorial's 8,000 photos; your training set has "
                        f"{pictures:,} pictures."
                    ),
                    T[
                        "epochs"
                    ]: "25 one-pass epochs train on 1/32 of the tutorial's pictures even with "
                    "its 8,000 photos: each of its epochs was 8,000 steps of 32.",
                    T["epochs"]
                    * T["steps_per_epoch"]: "that counts steps (batches of 32), not "
                    "pictures.",
                },
                unit=" epochs",
            ),
            given=("pictures",),
            hints="pictures the tutorial trained on: epochs × steps per epoch × batch. One "
            "Keras 3 epoch is one pass over your training pictures (`train.num_examples`); "
            "round up to whole epochs.",
            worked="The tutorial trained on 25 × 8,000 × 32 = 6,400,000 pictures: 800 passes "
            "over its 8,000 photos. One Keras 3 epoch is one pass over your training set, so "
            "it takes 6,400,000 / `train.num_examples` epochs, rounded up (for example 4,572 for "
            "1,400 pictures): `model.fit(train, validation_data=val, epochs=...)`, with no "
            "`steps_per_epoch` (an epoch is one pass) and no `workers=` (tf.data decodes in "
            "parallel and prefetches).",
        ),
    ]
