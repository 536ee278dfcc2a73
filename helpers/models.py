"""Every network the course builds, one function each, shared by notebooks and tests."""

import keras
from keras import layers


def mnist_cnn():
    """The primer's MNIST CNN: Conv 32 -> pool -> Conv 64 -> pool -> Conv 64 -> Dense 64 -> 10."""
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        layers.Conv2D(32, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Conv2D(64, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Conv2D(64, 3, activation="relu"),
        layers.Flatten(),
        layers.Dense(64, activation="relu"),
        layers.Dense(10, activation="softmax"),
    ], name="mnist_cnn")


def cats_dogs_original(image_size=64):
    """The tutorial's cat/dog net: two Conv(32)+pool pairs, Dense 128, sigmoid output.

    Input is 0..255 pixels: the 1/255 rescaling is the model's first layer, so no
    prediction code can forget it.
    """
    return keras.Sequential([
        keras.Input((image_size, image_size, 3)),
        layers.Rescaling(1 / 255),
        layers.Conv2D(32, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Conv2D(32, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Flatten(),
        layers.Dense(128, activation="relu"),
        layers.Dense(1, activation="sigmoid"),
    ], name="cats_dogs_original")


MODELS = {"mnist_cnn": mnist_cnn, "cats_dogs_original": cats_dogs_original}


def build(name, **kwargs):
    """Build a course model by name; a clear error lists the valid names."""
    if name not in MODELS:
        raise KeyError(f"Unknown model {name!r}; choose one of {', '.join(sorted(MODELS))}.")
    return MODELS[name](**kwargs)
