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


@pytest.mark.parametrize("notebook, words, records, read, low, high", EXPECTATIONS,
                         ids=[row[0] for row in EXPECTATIONS])
def test_an_expectation_holds_for_every_recorded_run(notebook, words, records, read, low, high):
    text = next((config.ROOT / "notebooks").glob(f"{notebook}_*.ipynb")).read_text()
    assert words in text, f"notebook {notebook} no longer says {words!r}: update this table"
    files = sorted(config.RESULTS_DIR.glob(records))
    assert files, f"no records {records} in results/"
    for path in files:
        for value in read(json.loads(path.read_text())):
            assert low <= value <= high, f"{path.name}: {value:.1f} is outside {words!r}"
