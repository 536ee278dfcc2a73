from helpers import plots, timing

import numpy as np
import pytest


def test_history_plot_has_training_and_validation_curves():
    logs = {
        "loss": [1.0, 0.5],
        "val_loss": [1.1, 0.7],
        "accuracy": [0.5, 0.8],
        "val_accuracy": [0.4, 0.7],
    }
    fig = plots.history(logs)
    assert len(fig.axes) == 2
    assert [len(ax.lines) for ax in fig.axes] == [2, 2]


def test_confusion_matrix_counts():
    fig, counts = plots.confusion_matrix(
        [0, 0, 1, 2, 2], [0, 1, 1, 2, 0], ["a", "b", "c"]
    )
    assert counts.tolist() == [[1, 1, 0], [0, 1, 0], [1, 0, 1]]
    assert counts.sum() == 5


def test_image_grid_has_one_panel_per_image():
    imgs = [np.full((8, 8, 3), i * 20, dtype=np.uint8) for i in range(5)]
    fig = plots.images(imgs, titles=list("abcde"), columns=3)
    shown = [ax for ax in fig.axes if ax.images]
    assert len(shown) == 5 and shown[4].get_title() == "e"


def test_bars_are_labelled_with_their_values():
    fig = plots.bars({"cpu": 100.0, "gpu": 3000.0}, "images/s", log=True)
    ax = fig.axes[0]
    assert len(ax.patches) == 2 and ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.texts] == ["100", "3,000"]  # each bar labelled


def test_utilization_plot_draws_marks():
    with timing.Utilization(interval=0.02, gpus=False) as usage:
        usage.mark("epoch 1")
        sum(range(200000))
    fig = plots.utilization(usage)
    assert len(fig.axes[0].lines) == 3  # the whole CPU's line, this process's, one mark
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
        "CPU % (all programs)",
        "CPU % (this process)",
    ]


def test_utilization_grid_draws_every_part():
    from helpers import plots, timing

    with timing.Utilization(interval=0.02, gpus=False) as usage:
        sum(range(100000))
    fig = plots.utilization_grid(
        {"one": usage, "two": usage, "three": usage}, columns=2
    )
    assert sum(bool(ax.lines) for ax in fig.axes) == 3 and len(fig.axes) == 4


def test_heat_maps_are_laid_over_their_pictures():
    from helpers import plots

    pictures = np.zeros((3, 8, 8, 3), "float32")
    fig = plots.overlays(
        pictures, np.ones((3, 8, 8)), titles=["a", "b", "c"], columns=2
    )
    shown = [ax for ax in fig.axes if ax.images]
    assert len(shown) == 3 and all(len(ax.images) == 2 for ax in shown)


def test_roofline_draws_each_roof_at_its_figure_and_each_point_where_it_belongs():
    from helpers import roofs

    cpu = roofs.roofs(
        "cpu:0", 10e9, {"float32": 100e9, "bfloat16": 400e9}, "measured here"
    )
    point = {"label": "net", "intensity": 20.0, "flops_per_s": 50e9, "kind": "measured"}
    ax = plots.roofline([cpu], [point]).axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    lines = {line.get_label(): line for line in ax.lines}
    memory = lines["cpu:0 memory: 10 GB/s (measured)"]
    x, y = memory.get_data()
    # up to the top
    assert y[0] / x[0] == pytest.approx(10e9) and x[-1] == pytest.approx(40)
    for label, top, ridge in (
        ("float32: 100 GFLOP/s, ridge 10", 100e9, 10),
        ("bfloat16: 400 GFLOP/s, ridge 40", 400e9, 40),
    ):
        x, y = lines[f"cpu:0 {label} FLOP/B"].get_data()
        # ridge = peak / bandwidth
        assert x[0] == pytest.approx(ridge) and list(y) == [top, top]
    x, y = lines["measured (points)"].get_data()
    assert (x[0], y[0]) == (20.0, 50e9)
    assert [t.get_text() for t in ax.texts] == ["net"]
