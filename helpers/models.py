"""Every network the course builds, one function each, shared by notebooks and tests."""

import math

import keras
from keras import layers

__all__ = ["BASES", "LADDER", "SEQUENCE_LAYERS", "SHEAR_DEGREES", "ZOOM_RANGE", "architecture",
           "augmentation", "cats_dogs_deep", "cats_dogs_net", "cats_dogs_transfer", "cifar10_net",
           "classifier_head", "extract_features", "imagenet_base", "min_image_size", "mnist_cnn",
           "sentiment_net", "text_lstm", "transfer_model"]


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


def architecture(model):
    """A model's layers as (class name, settings) pairs, names left out and nested models
    opened: two models with equal architectures are the same network, written twice."""
    rows = []
    for layer in model.layers:
        if isinstance(layer, keras.Model):
            rows.append((type(layer).__name__, architecture(layer)))
            continue
        config = {k: v for k, v in layer.get_config().items() if k != "name"}
        rows.append((type(layer).__name__, config))
    return rows


# The tutorial's ImageDataGenerator(shear_range=0.2, zoom_range=0.2, horizontal_flip=True).
# Keras 2 read shear_range in *degrees* (it calls np.deg2rad on it) and sheared one axis;
# it drew the x and y zoom independently from [1 - 0.2, 1 + 0.2]; it filled with "nearest".
SHEAR_DEGREES = 0.2
ZOOM_RANGE = 0.2


def augmentation(seed=None):
    """The tutorial's augmentation as Keras 3 layers, with Keras 2's units kept.

    Keras 3's RandomShear takes the shear as a fraction of the picture (0.2 = 20 %), so
    0.2 degrees becomes sin(0.2 deg) = 0.0035 of the height; RandomZoom gets a width factor
    of its own, or it would keep the aspect ratio. The layers change pictures only in training.
    """
    shear = math.sin(math.radians(SHEAR_DEGREES))
    zoom = (-ZOOM_RANGE, ZOOM_RANGE)
    return keras.Sequential([
        # (0, shear): drawn in [0, shear] with a random sign; a one-number factor would be
        # saved as (-shear, shear), which Keras 3.15 refuses to load (keras-team/keras#21110)
        layers.RandomShear(x_factor=0.0, y_factor=(0.0, shear), fill_mode="nearest", seed=seed),
        layers.RandomZoom(zoom, zoom, fill_mode="nearest", seed=seed),
        layers.RandomFlip("horizontal", seed=seed),
    ], name="augmentation")


# The improvement ladder of source 000, each step on top of the previous one.
LADDER = {
    "0": dict(image_size=64, filters=(32, 32), dropout=0.0, augment=True),
    "1": dict(image_size=64, filters=(32, 32, 64), dropout=0.0, augment=True),
    "2": dict(image_size=64, filters=(32, 32, 64), dropout=0.5, augment=True),
    "2b": dict(image_size=64, filters=(32, 32, 64), dropout=0.5, augment=False),
    "3": dict(image_size=128, filters=(64, 64, 64, 64), dropout=0.5, augment=True),
}


def min_image_size(pairs):
    """Smallest input side that survives `pairs` of Conv2D(3x3, valid) + MaxPool(2)."""
    size = 1
    for _ in range(pairs):
        size = 2 * size + 2
    return size


def cats_dogs_net(step="0", seed=None, output_dtype=None, **changes):
    """One step of the cat/dog ladder (see LADDER); keyword arguments override a step's settings.

    0: the original net · 1: + Conv(64)+pool · 2: + Dropout(0.5) before the output ·
    2b: step 2 without shear/zoom/flip · 3: 128 px, one more conv+pool pair, 64 filters each.
    Input is 0..255 pixels; rescaling (and augmentation, when on) are part of the model.
    output_dtype="float32" keeps the sigmoid layer in float32 under a mixed-precision policy.
    """
    if str(step) not in LADDER:
        raise KeyError(f"Unknown ladder step {step!r}; choose one of {', '.join(LADDER)}.")
    unknown = set(changes) - set(LADDER["0"])
    if unknown:
        raise TypeError(f"cats_dogs_net() got unknown settings {sorted(unknown)}; "
                        f"a step can change {', '.join(LADDER['0'])}.")
    cfg = {**LADDER[str(step)], **changes}
    size = cfg["image_size"]
    smallest = min_image_size(len(cfg["filters"]))
    if size < smallest:
        raise ValueError(f"image_size={size} is too small for ladder step {step}: its "
                         f"{len(cfg['filters'])} conv+pool pairs need at least {smallest} px.")
    model = keras.Sequential(name=f"cats_dogs_step_{step}")
    model.add(keras.Input((size, size, 3)))
    if cfg["augment"]:
        model.add(augmentation(seed))
    model.add(layers.Rescaling(1 / 255))
    for filters in cfg["filters"]:
        model.add(layers.Conv2D(filters, 3, activation="relu"))
        model.add(layers.MaxPooling2D(2))
    model.add(layers.Flatten())
    model.add(layers.Dense(128, activation="relu"))
    if cfg["dropout"]:
        model.add(layers.Dropout(cfg["dropout"], seed=seed))
    model.add(layers.Dense(1, activation="sigmoid", dtype=output_dtype))
    return model


def cats_dogs_transfer(image_size=128, seed=None):
    """Beyond the cat/dog ladder: the embedded MobileNet (alpha 0.25, ImageNet weights, frozen)
    + global average pooling, Dropout(0.2) and Dense(1, sigmoid).

    Input is 0..255 pixels; the Rescaling layer maps them to MobileNet's -1..1.
    """
    from . import data

    base = keras.applications.MobileNet(
        input_shape=(image_size, image_size, 3), alpha=0.25, include_top=False,
        weights=str(data.pretrained_weights("mobilenet_0.25")))
    base.trainable = False  # its BatchNorm layers then stay in inference mode too
    return keras.Sequential([
        keras.Input((image_size, image_size, 3)),
        layers.Rescaling(1 / 127.5, offset=-1),
        base,
        layers.GlobalAveragePooling2D(),
        layers.Dropout(0.2, seed=seed),
        layers.Dense(1, activation="sigmoid"),
    ], name=f"cats_dogs_transfer_{image_size}px")


def cifar10_net(crop=24):
    """The CNN of TensorFlow's old CIFAR-10 tutorial: conv 5x5/64 -> pool -> conv 5x5/64 ->
    pool -> dense 384 -> dense 192 -> 10 (softmax).

    The tutorial fed it `crop` x `crop` patches of the 32 x 32 pictures (random ones for
    training, the centre for evaluation), cut by its input pipeline; input is 0..255 pixels.
    Its local response normalisation has no Keras 3 layer and is left out.
    """
    return keras.Sequential([
        keras.Input((crop, crop, 3)),
        layers.Rescaling(1 / 255),
        layers.Conv2D(64, 5, padding="same", activation="relu"),
        layers.MaxPooling2D(3, strides=2, padding="same"),
        layers.Conv2D(64, 5, padding="same", activation="relu"),
        layers.MaxPooling2D(3, strides=2, padding="same"),
        layers.Flatten(),
        layers.Dense(384, activation="relu"),
        layers.Dense(192, activation="relu"),
        layers.Dense(10, activation="softmax"),
    ], name="cifar10_net")


def cats_dogs_deep(image_size=64, convs_per_stage=8, filters=(32, 64, 128, 128), augment=True,
                   seed=None):
    """A deliberately deep cat/dog net (source 000's "30+ conv layers" experiment).

    Four stages of `convs_per_stage` Conv2D(3x3, same padding) layers, each stage followed
    by MaxPool(2): 32 conv layers by default. Then Dense 128, Dropout(0.5), sigmoid.
    Input is 0..255 pixels; rescaling and augmentation are layers of the model.
    """
    if convs_per_stage < 1:
        raise ValueError(f"convs_per_stage must be 1 or more, got {convs_per_stage}.")
    model = keras.Sequential(name="cats_dogs_deep")
    model.add(keras.Input((image_size, image_size, 3)))
    if augment:
        model.add(augmentation(seed))
    model.add(layers.Rescaling(1 / 255))
    for width in filters:
        for _ in range(convs_per_stage):
            model.add(layers.Conv2D(width, 3, padding="same", activation="relu"))
        model.add(layers.MaxPooling2D(2))
    model.add(layers.Flatten())
    model.add(layers.Dense(128, activation="relu"))
    model.add(layers.Dropout(0.5, seed=seed))
    model.add(layers.Dense(1, activation="sigmoid"))
    return model


# --- text: the primer's next-word LSTM and the IMDB sentiment nets ---------------------------


# --- text: the primer's next-word LSTM and the IMDB sentiment nets ---------------------------


def text_lstm(vocabulary=1000, window=20, embedding=128, units=128):
    """The primer's next-word model: Embedding(1000, 128) -> LSTM(128) -> Dense(1000, softmax).

    Input: `window` word ids. Keras 3 dropped `Embedding(input_length=20)`; the window
    length is now the shape of the Input.
    """
    return keras.Sequential([
        keras.Input((window,), dtype="int32"),
        layers.Embedding(vocabulary, embedding),
        layers.LSTM(units),
        layers.Dense(vocabulary, activation="softmax"),
    ], name="text_lstm")


SEQUENCE_LAYERS = ("lstm", "gru", "conv1d")


def sentiment_net(kind="lstm", vocabulary=10000, length=200, embedding=64, units=32):
    """Review sentiment from word ids: Embedding -> LSTM | GRU | Conv1D + max-pool -> sigmoid.

    The recurrent layers skip the padding zeros (mask_zero); Conv1D cannot use a mask, so
    its variant reads the padding and max-pools over it.
    """
    if kind not in SEQUENCE_LAYERS:
        raise ValueError(f"kind must be one of {', '.join(SEQUENCE_LAYERS)}, got {kind!r}.")
    middle = {"lstm": [layers.LSTM(units)], "gru": [layers.GRU(units)],
              "conv1d": [layers.Conv1D(units, 5, activation="relu"),
                         layers.GlobalMaxPooling1D()]}[kind]
    return keras.Sequential([
        keras.Input((length,), dtype="int32"),
        layers.Embedding(vocabulary, embedding, mask_zero=kind != "conv1d"),
        *middle,
        layers.Dense(1, activation="sigmoid"),
    ], name=f"sentiment_{kind}")


# --- transfer learning: an ImageNet base without its top, and a new head ---------------------

# name: (Keras application, its input preprocessing, constructor arguments)
BASES = {
    "mobilenet_0.25": (keras.applications.MobileNet, keras.applications.mobilenet.preprocess_input,
                       {"alpha": 0.25}),
    "mobilenet_v2": (keras.applications.MobileNetV2,
                     keras.applications.mobilenet_v2.preprocess_input, {}),
    "vgg16": (keras.applications.VGG16, keras.applications.vgg16.preprocess_input, {}),
}


def imagenet_base(name="mobilenet_0.25", image_size=160, pretrained=True):
    """A convolutional base without its ImageNet top; input 0..255 pixels, output a feature map.

    `mobilenet_0.25` loads the embedded weights (sha256 checked, offline). `vgg16` and
    `mobilenet_v2` download theirs via keras.applications; offline they fall back to the
    embedded MobileNet with a one-line notice. The model's name says which weights it has.
    A pretrained base comes frozen, its BatchNorm layers in inference mode for good.
    """
    from . import data

    if name not in BASES:
        raise KeyError(f"Unknown base {name!r}; choose one of {', '.join(BASES)}.")
    application, preprocess, kwargs = BASES[name]
    shape = (image_size, image_size, 3)
    weights = "imagenet" if pretrained else None
    if pretrained and name == "mobilenet_0.25":
        weights = str(data.pretrained_weights(name))
    try:
        base = application(include_top=False, weights=weights, input_shape=shape, **kwargs)
    except Exception as e:  # no network, or a download that failed its checksum
        if weights != "imagenet":
            raise
        print(f"Notice: no {name} ImageNet weights ({str(e)[:160]}); "
              "using the embedded MobileNet (alpha 0.25) instead.")
        return imagenet_base("mobilenet_0.25", image_size)
    base.trainable = not pretrained
    inputs = keras.Input(shape)
    features = base(preprocess(inputs), training=False if pretrained else None)
    kind = "imagenet" if pretrained else "random"
    return keras.Model(inputs, features, name=f"{name}_{kind}_{image_size}px")


def classifier_head(input_shape, classes, units=256, dropout=0.5):
    """The primer's new head: Flatten -> Dense(256, relu) -> Dense(classes, softmax),
    with Dropout before the output (few training pictures, many head weights)."""
    return keras.Sequential([
        keras.Input(tuple(input_shape)),
        layers.Flatten(),
        layers.Dense(units, activation="relu"),
        layers.Dropout(dropout),
        layers.Dense(classes, activation="softmax"),
    ], name="head")


def transfer_model(name="mobilenet_0.25", image_size=160, classes=10, pretrained=True):
    """Base + new head in one model: the primer's VGG16 example with any base in BASES."""
    base = imagenet_base(name, image_size, pretrained)
    head = classifier_head(base.output_shape[1:], classes)
    return keras.Sequential([base, head], name=f"{base.name}_with_head")


def extract_features(extractor, dataset):
    """Run every batch of `dataset` through `extractor` once: (features, labels) arrays.

    Images and labels are taken from the same pass, so a shuffling pipeline stays aligned.
    """
    import numpy as np

    features, labels = [], []
    for images, batch_labels in dataset:
        features.append(extractor.predict_on_batch(images))
        labels.append(keras.ops.convert_to_numpy(batch_labels))
    return np.concatenate(features), np.concatenate(labels)
