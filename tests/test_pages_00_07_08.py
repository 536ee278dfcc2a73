"""What notebooks 00, 07 and 08 write out on the page is the code later notebooks import from
the helpers (tests/page_source.py: the d2l `#@save` idea)."""

from helpers import compare, data, keras2_loader, models, peak, timing

import pytest
from page_source import defined_on_page, helper_source

ON_PAGE = [  # notebook, the helper it writes out
    ("00_setup_and_hardware", timing.first_and_median),
    ("00_setup_and_hardware", timing.wait_for),
    ("00_setup_and_hardware", peak.matmul_flops),
    ("00_setup_and_hardware", compare.timed_block),
    ("00_setup_and_hardware", compare.alternate),
    ("00_setup_and_hardware", compare.interval),
    ("00_setup_and_hardware", compare.ratio),
    ("07_input_pipeline", keras2_loader.keras2_picture),
    ("07_input_pipeline", keras2_loader.PillowBatches),
    ("07_input_pipeline", data.image_pipeline),
    ("08_cpu_vs_gpu", models.cats_dogs_deep),
]


@pytest.mark.parametrize("notebook, helper", ON_PAGE,
                         ids=[f"{n[:2]}-{h.__name__}" for n, h in ON_PAGE])
def test_the_page_and_the_helper_are_the_same_code(notebook, helper):
    assert defined_on_page(notebook, helper.__name__) == helper_source(helper), (
        f"notebooks/{notebook}.ipynb and {helper.__module__}.{helper.__name__} differ: "
        "change both together")
