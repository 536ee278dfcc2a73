"""Notebook 12's exercise checks (your own classifier)."""

import re

from ..exercises import Exercise, choice, number


def _confused(answer, counts, classes):
    """Exercise 1: the pair of classes the learner's own confusion matrix mixes most, either
    way round; "none" where it made no mistake."""
    import numpy as np

    counts = np.asarray(counts)
    wrong = counts - np.diag(np.diag(counts))
    mixed = wrong + wrong.T
    named = {
        c.lower() for c in re.split(r"[,;/]|\band\b|\s+", str(answer)) if c.strip()
    }
    if not mixed.any():
        return (
            None if named == {"none"} else "your model made no mistake: answer 'none'."
        )
    i, j = np.unravel_index(mixed.argmax(), mixed.shape)
    pair = {classes[i].lower(), classes[j].lower()}
    if named == pair:
        return None
    unknown = named - {c.lower() for c in classes}
    if unknown:
        return f"{', '.join(sorted(unknown))}: not a class here; the classes are {classes}."
    return (
        f"your matrix mixes {classes[i]} and {classes[j]} most: {mixed[i, j]} pictures "
        "one way or the other."
    )


def _smaller(plain, dynamic):
    from pathlib import Path

    return Path(plain).stat().st_size / Path(dynamic).stat().st_size


def exercises():
    return [
        Exercise(
            "12",
            1,
            _confused,
            given=("counts", "classes"),
            hints="read the confusion matrix off the diagonal: add row i, column j and "
            "row j, column i for each pair of classes. Answer with the two names, as in "
            "'cat, dog'.",
            worked="Which classes get confused depends on your pictures: the matrix and "
            "the most confident mistakes show it, and Grad-CAM whether the model looked at the "
            "object or at, say, the table they all stood on. The loader's line names each "
            "folder's label and count and what it left out: fix the folder and run again until "
            "it says what you meant.",
        ),
        Exercise(
            "12",
            2,
            number(
                lambda: 257,
                {
                    256: "the new output has a bias too.",
                    257
                    * 4: "only the last layer grows, by one output; the Dense(256) layer before it "
                    "is unchanged.",
                },
            ),
            hints="the head's last layer is Dense(classes) on 256 inputs: what does one more "
            "class add?",
            worked="257: one more output of the last layer, 256 weights and a bias. "
            "DEFAULT_CLASSES = ['cat', 'dog', 'horse', 'deer']; write_pictures keeps the three "
            "classes' files and writes deer/. Read the new row and column of the matrix: the "
            "classes it mixes deer with look alike at 32 × 32 pixels.",
        ),
        Exercise(
            "12",
            3,
            choice(
                "a",
                {
                    "b": "a random layer does nothing outside training: predict and "
                    "the export both "
                    "call the model with training=False.",
                    "c": "the head's features were computed once, before fine-tuning, "
                    "from unflipped "
                    "pictures.",
                },
            ),
            hints="when were the head's features computed, and what does RandomFlip do when "
            "training is False?",
            worked="a. `model = keras.Sequential([keras.Input((s.image_size, s.image_size, 3)), "
            "keras.layers.RandomFlip('horizontal'), base, head])` before compiling for "
            "fine-tuning. The head's features were computed once from unflipped pictures, so "
            "only fine-tuning sees flipped ones; saved_model serves model(x, training=False), "
            "where a random layer does nothing, so the file answers as predict does.",
        ),
        Exercise(
            "12",
            4,
            number(
                _smaller,
                {
                    lambda plain, dynamic: (
                        1 / _smaller(plain, dynamic)
                    ): "the other way round: the "
                    "float32 file's size over the "
                    "smaller one's."
                },
                unit="x",
                within=0.05,
            ),
            given=("plain", "dynamic"),
            hints="to_tflite(out / 'saved_model', quantize='dynamic') returns the file's "
            "bytes: write them beside model.tflite, and divide the two sizes "
            "(path.stat().st_size).",
            worked="About 4× smaller: the weights are stored as 8-bit integers instead of "
            "32-bit floats (the rest of the file does not shrink). The accuracy usually moves "
            "little, but only the measurement on your pictures tells.",
        ),
    ]
