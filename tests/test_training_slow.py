"""Trainings whose results the notebooks state; they train for real (`make test-slow`)."""

from helpers import config, data, models, training

import pytest


@pytest.mark.slow
def test_mnist_sample_reaches_the_accuracy_notebook_01_states(profile):
    """Notebook 01 says: about 97-98 % on the sample, anything from 96 % to 99 % is normal."""
    profile("sample")
    config.set_seed()
    s = config.settings("mnist")
    model = models.mnist_cnn()
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
    history, timer = training.fit(model, data.mnist("train", one_hot=True),
                                  data.mnist("validation", one_hot=True), epochs=s.epochs,
                                  verbose=0)
    accuracy = history.history["val_accuracy"][-1]
    assert 0.96 <= accuracy <= 0.99, f"validation accuracy {accuracy:.3f}"
    assert len(timer.epochs) == s.epochs and timer.images_per_second > 0
