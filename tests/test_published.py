"""helpers.published: the sources' figures, labelled as theirs."""

import re

from helpers import published


def test_published_figures_are_labelled_as_the_sources():
    shown = published.table()
    assert "machine (source 000, not measured here)" in shown.columns
    assert "15,000-17,000 examples/s" in shown["published speed"].tolist()


def test_the_numbers_agree_with_the_published_text():
    shown = published.table(models=("cifar10_net",))
    speeds = dict(zip(shown.iloc[:, 1], shown["published speed"]))
    v100, server, vm = published.CIFAR10_EXAMPLES_PER_S.values()
    low, high = (
        int(x.replace(",", ""))
        for x in re.findall(r"[\d,]+", speeds["Tesla V100 (batch 512)"])[:2]
    )
    assert low <= v100 <= high and f"~{server}" in " ".join(speeds.values())
    assert f"~{vm} examples/s" == speeds["VirtualBox VM"]
    for step, speed in published.LADDER_V100_SPEED.items():
        assert any(
            f"{speed} img/s" in s for s in published.table()["published speed"]
        ), step


def test_every_datasheet_is_cited_and_complete():
    for name, sheet in published.GPU_DATASHEETS.items():
        assert sheet["source"].startswith("NVIDIA") and name in sheet["source"]
        assert sheet["bandwidth_gbs"] > 0 and "float32" in sheet["tflops"]
        # the first wall: notebook 08 fits batches into it
        assert sheet["memory_gb"] > 0
    # Volta: no bfloat16
    assert "bfloat16" not in published.GPU_DATASHEETS["V100"]["tflops"]
    assert "bfloat16" not in published.GPU_DATASHEETS["T4"]["tflops"]  # nor Turing


def test_every_figure_of_the_blogs_ladder_belongs_to_one_of_its_steps():
    steps = set(published.LADDER)
    # a step without its accuracy shows "—"
    assert set(published.LADDER_ACCURACY) == steps
    assert set(published.LADDER_V100_SPEED) <= steps
    builds = [
        {k: v for k, v in s.items() if k != "change"} for s in published.LADDER.values()
    ]
    # no two steps build the same network
    assert len({repr(b) for b in builds}) == len(builds)
