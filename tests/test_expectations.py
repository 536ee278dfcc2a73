"""What a notebook tells a learner to expect agrees with the course's own recorded runs.

Each row: the sentence in the notebook, the records in results/ it speaks of, and the range
it promises. A re-recorded run that leaves the range fails here, so the text cannot drift.
"""

import json

from helpers import config

import pytest

EXPECTATIONS = [
    # notebook, words in it, records, what is read from each record, low, high
    ("07", "roughly 500–1,500 images/s", "*_cats_dogs_original_cpu0_jpeg_*.json",
     lambda r: [r["images_per_s"]], 500, 1500),
    ("08", "roughly 500–3,000 examples/s", "*_cifar10_net_cpu0_synthetic_*.json",
     lambda r: [r["images_per_s"]], 500, 3000),
    ("05", "their means roughly 65–75 %", "cats_dogs_ladder_sample_*.json",
     lambda r: [r["summary"][step]["mean"] * 100 for step in ("2", "2b")], 65, 75),
]


def disagreements(text, words, records, read, low, high):
    """Why notebook `text` and the `records` ({name: parsed JSON}) disagree, one line each."""
    found = [] if words in text else [f"the notebook no longer says {words!r}"]
    if not records:
        found.append("no records to check it against in results/")
    for name, record in records.items():
        found += [f"{name}: {value:.1f} is outside {words!r}"
                  for value in read(record) if not low <= value <= high]
    return found


def notebook_text(number):
    return next((config.ROOT / "notebooks").glob(f"{number}_*.ipynb")).read_text()


def recorded(pattern):
    return {p.name: json.loads(p.read_text()) for p in sorted(config.RESULTS_DIR.glob(pattern))}


@pytest.mark.parametrize("notebook, words, records, read, low, high", EXPECTATIONS,
                         ids=[row[0] for row in EXPECTATIONS])
def test_an_expectation_holds_for_every_recorded_run(notebook, words, records, read, low, high):
    assert disagreements(notebook_text(notebook), words, recorded(records), read, low,
                         high) == []


def test_a_record_outside_the_range_or_a_changed_sentence_is_caught():
    notebook, words, pattern, read, low, high = EXPECTATIONS[0]
    text, records = notebook_text(notebook), recorded(pattern)
    slower = {**records, "slow.json": {**next(iter(records.values())), "images_per_s": 120.0}}
    assert disagreements(text, words, slower, read, low, high) == [
        f"slow.json: 120.0 is outside {words!r}"]
    assert disagreements(text.replace(words, "about 2,000 images/s"), words, records, read,
                         low, high) == [f"the notebook no longer says {words!r}"]
    assert disagreements(text, words, {}, read, low, high)
