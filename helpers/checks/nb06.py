"""Notebook 06's exercise checks (predictions)."""

import numpy as np

from ..exercises import Exercise, number


def _disagree(p_best, p_tutorial):
    return int(np.sum((np.ravel(p_best) > 0.5) != (np.ravel(p_tutorial) > 0.5)))


def _answered(p, labels):
    """The share (%) of pictures answered by the narrowest band, widened in steps of 0.05,
    whose answers are at least 95 % right; 0 when no band up to 0.05..0.95 gets there."""
    p, labels = np.ravel(p), np.ravel(labels)
    for width in np.arange(0, 0.5, 0.05):
        given = (p < 0.5 - width) | (p > 0.5 + width)
        if given.any() and ((p > 0.5 + width) == (labels == 1))[given].mean() >= 0.95:
            return 100 * given.mean()
    return 0.0


def _side(step):
    import keras

    from .. import models

    net = models.cats_dogs_net(step)
    return [layer for layer in net.layers if isinstance(layer, keras.layers.Conv2D)][
        -1
    ].output.shape[1]


def exercises():
    return [
        Exercise(
            "06",
            1,
            number(
                _disagree,
                {
                    lambda p_best, p_tutorial: (
                        np.size(p_best) - _disagree(p_best, p_tutorial)
                    ): "that counts the pictures they agree on."
                },
            ),
            given=("p_best", "p_tutorial"),
            hints="each model says dog where its probability is above 0.5: count the pictures "
            "where one says dog and the other cat.",
            worked="`np.sum((p_best > 0.5) != (p_tutorial > 0.5))`. There is no right side for "
            "a wolf or a tiger: a two-class model must put every picture on one. A small network "
            "trained on 1,400 photos may put most unfamiliar pictures on the same side; Grad-CAM "
            "shows whether it looked at the animal or at the background.",
        ),
        Exercise(
            "06",
            2,
            number(
                _answered,
                {lambda p, labels: _answered(p, labels) / 100: "give it in percent."},
                unit=" %",
                within=0.01,
            ),
            given=("p", "labels"),
            hints="widen the band in steps of 0.05, `for w in np.arange(0, 0.5, 0.05)` with "
            "`unsure=(0.5 - w, 0.5 + w)`, and stop at the first width where the answers given "
            "are at least 95 % right; the share of pictures answered there, in percent (0 when "
            "no band up to 0.05 ... 0.95 gets there).",
            worked="Widen as the hint says; section 4's loop over four bands shows the way. The "
            "answer is 0 when even the band 0.05 ... 0.95 leaves answers less than 95 % right. "
            "How many "
            "pictures still get an answer depends on how confident your network is: a model that "
            "is often sure and right keeps most; one with many outputs near 0.5 keeps few.",
        ),
        Exercise(
            "06",
            3,
            number(
                lambda: _side("2"),
                {
                    lambda: _side(
                        "0"
                    ): "that is the original network's last map: step 2 has more "
                    "conv layers, each shrinking the map.",
                    lambda: (
                        _side("2") // 2
                    ): "that is after the pooling: Grad-CAM takes the last "
                    "Conv2D layer's own output, before it is pooled.",
                },
            ),
            hints="follow the size through step 2's layers (`models.cats_dogs_net('2')`): "
            "every 3×3 convolution takes 2 off, every pooling halves (rounding down).",
            worked="Print `last.output.shape` for step 2's last Conv2D: its maps are coarser "
            "than the original's, so Grad-CAM's heat map has fewer, larger cells. Save step 2's "
            "model in notebook 05 with `training.save_model`, load it here with "
            "`keras.saving.load_model`, and call `grad_cam(step2, pictures, name)` with the name "
            "of its last Conv2D layer.",
        ),
    ]
