"""The course's networks, one function each, for the notebooks that reuse them (01-11)."""

import math

import keras
import numpy as np
from keras import layers

from . import config, published

__all__ = [
    "BASES",
    "MODELS",
    "SHEAR_DEGREES",
    "ZOOM_RANGE",
    "augmentation",
    "build",
    "cats_dogs_deep",
    "cats_dogs_net",
    "cats_dogs_transfer",
    "cifar10_net",
    "classifier_head",
    "extract_features",
    "frozen_base",
    "imagenet_base",
    "ladder_layers",
    "ladder_net",
    "mnist_cnn",
    "sentiment_net",
    "text_lstm",
    "unfreeze_top_third",
]


# Written from notebooks/01_cnn_basics_mnist.ipynb by `make pages`: change it there.
def mnist_cnn():  # @save
    net = keras.Sequential([keras.Input((28, 28, 1))], name="mnist_cnn")
    net.add(layers.Conv2D(32, 3, activation="relu"))
    net.add(layers.MaxPooling2D(2))
    net.add(layers.Conv2D(64, 3, activation="relu"))
    net.add(layers.MaxPooling2D(2))
    net.add(layers.Conv2D(64, 3, activation="relu"))
    net.add(layers.Flatten())
    net.add(layers.Dense(64, activation="relu"))
    net.add(layers.Dense(10, activation="softmax"))
    return net


# The tutorial's ImageDataGenerator(shear_range=0.2, zoom_range=0.2, horizontal_flip=True).
# Keras 2 read shear_range in *degrees* (it calls np.deg2rad on it) and sheared one axis;
# it drew the x and y zoom independently from [1 - 0.2, 1 + 0.2]; it filled with "nearest".
# Notebook 04's `augmentation` writes these numbers out; notebook 07's NumPy augmentation reads
# them here, and tests/test_models.py measures the layers' shear and zoom against them.
SHEAR_DEGREES = 0.2
ZOOM_RANGE = 0.2


# Written from notebooks/04_cats_dogs_baseline.ipynb by `make pages`: change it there.
def augmentation(seed=None):  # @save
    shear = math.sin(math.radians(0.2))  # 0.2 degrees, as a fraction: 0.0035
    # (0, shear): Keras picks the sign at random, so ±0.2°
    steps = [
        layers.RandomShear(y_factor=(0.0, shear), fill_mode="nearest", seed=seed),
        layers.RandomZoom((-0.2, 0.2), (-0.2, 0.2), fill_mode="nearest", seed=seed),
        layers.RandomFlip("horizontal", seed=seed),
    ]
    return keras.Sequential(steps, name="augmentation")


# Written from notebooks/04_cats_dogs_baseline.ipynb by `make pages`: change it there.
def ladder_layers(  # @save
    image_size=64, filters=(32, 32), dropout=0.0, augment=True, seed=None
):
    stack = [keras.Input((image_size, image_size, 3))]
    if augment:
        stack.append(augmentation(seed))  # section 3: the tutorial's shear, zoom, flip
    stack.append(layers.Rescaling(1 / 255))  # pixels from 0..255 to 0..1
    for n in filters:  # each pair: a 3x3 convolution, then half the height and width
        stack += [layers.Conv2D(n, 3, activation="relu"), layers.MaxPooling2D(2)]
    stack += [layers.Flatten(), layers.Dense(128, activation="relu")]
    if dropout:  # notebook 05's step 2
        stack.append(layers.Dropout(dropout, seed=seed))
    return stack


# Written from notebooks/04_cats_dogs_baseline.ipynb by `make pages`: change it there.
def ladder_net(*, output_dtype=None, name="cats_dogs_step_0", **architecture):  # @save
    """ladder_layers(**architecture) and a sigmoid output, as a keras.Sequential."""
    stack = ladder_layers(**architecture)  # image_size, filters, dropout, augment, seed
    stack.append(layers.Dense(1, activation="sigmoid", dtype=output_dtype))
    return keras.Sequential(stack, name=name)


def cats_dogs_net(step="0", seed=None, output_dtype=None, **changes):
    """A step of the blog's cat/dog ladder (published.LADDER), keywords overriding its settings
    (notebooks 04, 05); output_dtype="float32" keeps the sigmoid float32 (notebook 09)."""
    if str(step) not in published.LADDER:
        raise KeyError(
            f"Unknown ladder step {step!r}; choose one of "
            f"{', '.join(published.LADDER)}."
        )
    settings = {k: v for k, v in published.LADDER[str(step)].items() if k != "change"}
    unknown = set(changes) - set(settings)
    if unknown:
        raise TypeError(
            f"cats_dogs_net() got unknown settings {sorted(unknown)}; "
            f"a step can change {', '.join(settings)}."
        )
    cfg = {**settings, **changes}
    size, smallest = cfg["image_size"], 1
    for _ in cfg["filters"]:  # each Conv2D(3x3) + MaxPool(2) needs 2 * size + 2 pixels
        smallest = 2 * smallest + 2
    if size < smallest:
        raise ValueError(
            f"image_size={size} is too small for ladder step {step}: its "
            f"{len(cfg['filters'])} conv+pool pairs need at least {smallest} px."
        )
    return ladder_net(
        output_dtype=output_dtype,
        name=f"cats_dogs_step_{step}",
        seed=seed,
        image_size=size,
        filters=cfg["filters"],
        dropout=cfg["dropout"],
        augment=cfg["augment"],
    )


def cats_dogs_transfer(image_size=128, seed=None):
    """The ladder's transfer step: the embedded MobileNet, frozen, and a sigmoid (notebook 05)."""
    base = keras.applications.MobileNet(
        input_shape=(image_size, image_size, 3),
        alpha=0.25,
        include_top=False,
        weights=str(_weights("mobilenet_0.25")),
    )
    base.trainable = False  # its BatchNorm layers then stay in inference mode too
    return keras.Sequential(
        [
            keras.Input((image_size, image_size, 3)),
            layers.Rescaling(1 / 127.5, offset=-1),
            base,
            layers.GlobalAveragePooling2D(),
            layers.Dropout(0.2, seed=seed),
            layers.Dense(1, activation="sigmoid"),
        ],
        name=f"cats_dogs_transfer_{image_size}px",
    )


# Written from notebooks/08_cpu_vs_gpu.ipynb by `make pages`: change it there.
def cifar10_net(crop=24):  # @save
    stack = [
        keras.Input((crop, crop, 3)),  # the tutorial's 24 x 24 crops, 0..255 pixels
        layers.Rescaling(1 / 255),
        layers.Conv2D(64, 5, padding="same", activation="relu"),
        layers.MaxPooling2D(3, strides=2, padding="same"),
        layers.Conv2D(64, 5, padding="same", activation="relu"),
        layers.MaxPooling2D(3, strides=2, padding="same"),
        layers.Flatten(),
        layers.Dense(384, activation="relu"),
        layers.Dense(192, activation="relu"),
        layers.Dense(10, activation="softmax"),
    ]
    return keras.Sequential(stack, name="cifar10_net")


# Written from notebooks/08_cpu_vs_gpu.ipynb by `make pages`: change it there.
def cats_dogs_deep(convs_per_stage=8, augment=True):  # @save
    model = keras.Sequential([keras.Input((64, 64, 3))], name="cats_dogs_deep")
    if augment:
        model.add(augmentation())  # random shear, zoom and flip, in training only
    model.add(layers.Rescaling(1 / 255))
    for width in (32, 64, 128, 128):  # four stages
        for _ in range(convs_per_stage):
            model.add(layers.Conv2D(width, 3, padding="same", activation="relu"))
        model.add(layers.MaxPooling2D(2))  # 64 -> 32 -> 16 -> 8 -> 4 pixels
    model.add(layers.Flatten())
    model.add(layers.Dense(128, activation="relu"))
    model.add(layers.Dropout(0.5))
    model.add(layers.Dense(1, activation="sigmoid"))
    return model


# Written from notebooks/02_rnn_basics_text.ipynb by `make pages`: change it there.
def text_lstm(vocabulary=1000, window=20, embedding=128, units=128):  # @save
    return keras.Sequential(
        [
            keras.Input((window,), dtype="int32"),  # `window` word ids
            layers.Embedding(vocabulary, embedding),
            layers.LSTM(units),
            layers.Dense(vocabulary, activation="softmax"),
        ],
        name="text_lstm",
    )


# Written from notebooks/02_rnn_basics_text.ipynb by `make pages`: change it there.
def sentiment_net(  # @save
    kind="lstm", vocabulary=10000, length=200, embedding=64, units=32
):
    conv = [layers.Conv1D(units, 5, activation="relu"), layers.GlobalMaxPooling1D()]
    middle = {"lstm": [layers.LSTM(units)], "gru": [layers.GRU(units)], "conv1d": conv}
    if kind not in middle:
        raise ValueError(f"kind must be 'lstm', 'gru' or 'conv1d', got {kind!r}.")
    stack = [
        keras.Input((length,), dtype="int32"),  # `length` word ids per review
        # id 0 is padding, which the LSTM and GRU skip
        layers.Embedding(vocabulary, embedding, mask_zero=kind != "conv1d"),
        *middle[kind],
        layers.Dense(1, activation="sigmoid"),
    ]
    return keras.Sequential(stack, name=f"sentiment_{kind}")


# name: (Keras application, its input preprocessing, constructor arguments)
BASES = {
    "mobilenet_0.25": (
        keras.applications.MobileNet,
        keras.applications.mobilenet.preprocess_input,
        {"alpha": 0.25},
    ),
    "vgg16": (keras.applications.VGG16, keras.applications.vgg16.preprocess_input, {}),
}


# Written from notebooks/03_transfer_learning.ipynb by `make pages`: change it there.
def frozen_base(application, preprocess, image_size, weights, **options):  # @save
    shape = (image_size, image_size, 3)
    backbone = application(
        include_top=False, weights=weights, input_shape=shape, **options
    )
    # fit changes none of its weights; BatchNorm runs in inference mode
    backbone.trainable = False
    pixels = keras.Input(shape)  # 0..255, as the course's loaders give them
    return keras.Model(
        pixels, backbone(preprocess(pixels)), name=f"frozen_{backbone.name}"
    )


def imagenet_base(name="mobilenet_0.25", image_size=160):
    """`frozen_base` for a name in BASES; offline, the embedded MobileNet (notebook 03)."""
    if name not in BASES:
        raise KeyError(f"Unknown base {name!r}; choose one of {', '.join(BASES)}.")
    application, preprocess, options = BASES[name]
    weights = str(_weights(name)) if name == "mobilenet_0.25" else "imagenet"
    try:
        return frozen_base(application, preprocess, image_size, weights, **options)
    except Exception as e:  # no network, or a download that failed its checksum
        if weights != "imagenet":
            raise
        print(
            f"Notice: no {name} ImageNet weights ({str(e)[:160]}); "
            "using the embedded MobileNet (alpha 0.25) instead."
        )
        return imagenet_base("mobilenet_0.25", image_size)


# Written from notebooks/03_transfer_learning.ipynb by `make pages`: change it there.
def classifier_head(input_shape, classes):  # @save
    stack = [
        keras.Input(tuple(input_shape)),
        layers.Flatten(),
        layers.Dense(256, activation="relu"),
        layers.Dropout(0.5),
        layers.Dense(classes, activation="softmax"),
    ]
    return keras.Sequential(stack, name="head")


# Written from notebooks/03_transfer_learning.ipynb by `make pages`: change it there.
def extract_features(extractor, dataset):  # @save
    features, labels = [], []
    for images, batch_labels in dataset:  # one pass: labels stay with their pictures
        features.append(extractor.predict_on_batch(images))
        labels.append(keras.ops.convert_to_numpy(batch_labels))
    return np.concatenate(features), np.concatenate(labels)


# Written from notebooks/03_transfer_learning.ipynb by `make pages`: change it there.
def unfreeze_top_third(base):  # @save
    backbone = base.layers[-1]  # the application: the base's only layer after its Input
    backbone.trainable = True  # every layer of it, until the loop says otherwise
    first = 2 * len(backbone.layers) // 3  # where the top third begins
    for i, layer in enumerate(backbone.layers):
        # a frozen BatchNorm runs in inference mode: it keeps ImageNet's statistics
        batch_norm = isinstance(layer, layers.BatchNormalization)
        layer.trainable = i >= first and not batch_norm


def _weights(name):
    return config.pretrained_weights(name)


# name -> how to build it (augment=False when the input pipeline augments), classes, default batch
MODELS = {
    "mnist_cnn": (lambda augment: mnist_cnn(), 10, 64),
    "cifar10_net": (lambda augment: cifar10_net(), 10, 128),
    "cats_dogs_original": (lambda augment: cats_dogs_net("0", augment=augment), 1, 32),
    "cats_dogs_improved": (lambda augment: cats_dogs_net("2", augment=augment), 1, 32),
    "cats_dogs_128px": (lambda augment: cats_dogs_net("3", augment=augment), 1, 32),
    "cats_dogs_deep": (lambda augment: cats_dogs_deep(augment=augment), 1, 32),
}


def _check(name, choices, what):
    if name not in choices:
        raise ValueError(
            f"Unknown {what} {name!r}; choose one of {', '.join(choices)}."
        )


def build(name, augment=True, jit_compile="auto"):
    """A bench network compiled with Adam and its cross-entropy; `jit_compile` as Keras takes it
    ("auto": XLA where Keras' rules allow it, never with augmentation layers) (notebooks 07, 08)."""
    _check(name, MODELS, "model")
    builder, classes, _ = MODELS[name]
    model = builder(augment)
    loss = "binary_crossentropy" if classes == 1 else "sparse_categorical_crossentropy"
    model.compile(optimizer="adam", loss=loss, jit_compile=jit_compile)
    return model
