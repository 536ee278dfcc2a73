from helpers import models, monitor, plots

import keras
import numpy as np


def test_history_plot_has_training_and_validation_curves():
    logs = {"loss": [1.0, 0.5], "val_loss": [1.1, 0.7], "accuracy": [0.5, 0.8],
            "val_accuracy": [0.4, 0.7]}
    fig = plots.history(logs)
    assert len(fig.axes) == 2
    assert [len(ax.lines) for ax in fig.axes] == [2, 2]


def test_confusion_matrix_counts():
    fig, counts = plots.confusion_matrix([0, 0, 1, 2, 2], [0, 1, 1, 2, 0], ["a", "b", "c"])
    assert counts.tolist() == [[1, 1, 0], [0, 1, 0], [1, 0, 1]]
    assert counts.sum() == 5


def test_image_grid_has_one_panel_per_image():
    imgs = [np.full((8, 8, 3), i * 20, dtype=np.uint8) for i in range(5)]
    fig = plots.images(imgs, titles=list("abcde"), columns=3)
    shown = [ax for ax in fig.axes if ax.images]
    assert len(shown) == 5 and shown[4].get_title() == "e"


def test_bars_and_reference_line():
    fig = plots.bars({"cpu": 100.0, "gpu": 3000.0}, "images/s", reference=2000, log=True)
    ax = fig.axes[0]
    assert len(ax.patches) == 2 and len(ax.lines) == 1


def test_utilization_plot_draws_marks():
    with monitor.Utilization(interval=0.02, gpus=False) as usage:
        usage.mark("epoch 1")
        sum(range(200000))
    fig = plots.utilization(usage)
    assert len(fig.axes[0].lines) == 2  # the CPU line and one mark


def test_mnist_cnn_matches_the_primer():
    model = models.mnist_cnn()
    assert model.count_params() == 93_322
    assert model.output_shape == (None, 10)
    assert [type(layer).__name__ for layer in model.layers].count("Conv2D") == 3


def test_cats_dogs_step_0_matches_the_tutorial():
    model = models.cats_dogs_net("0", augment=False)
    assert model.input_shape == (None, 64, 64, 3) and model.output_shape == (None, 1)
    assert model.count_params() == 813_217
    assert isinstance(model.layers[0], keras.layers.Rescaling)
