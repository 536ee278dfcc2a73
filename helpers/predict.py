"""Predicting single pictures with the trained cat/dog models (notebook 06).

The course's models take 0..255 pixels and rescale inside, so prediction code cannot
forget the 1/255. `without_rescaling` rebuilds the tutorial's setup to show that bug.
`trained_cats_dogs` is notebook 04's network, `trained_transfer` notebook 03's transfer model.
"""

from pathlib import Path

import keras
import numpy as np

from . import config, data, images, ladder, models, training

__all__ = ["PICTURES", "TRANSFER", "dog_probability", "grad_cam", "load_pictures", "model_path",
           "my_pictures", "train_transfer", "trained_cats_dogs", "trained_transfer", "verdicts",
           "without_rescaling"]

PICTURES = config.ROOT / "my_pictures"  # learners drop their own pictures here
TRANSFER = "cats_dogs_transfer"  # the name notebook 03 saves its fine-tuned transfer model under


def model_path(name="cats_dogs_original"):
    """Where notebook 04 (and 03, `name=TRANSFER`) saves its model: one file per profile
    (a smoke model is no model)."""
    return config.BUILD_DIR / "models" / f"{name}_{config.profile()}.keras"


def trained_cats_dogs():
    """The model notebook 04 saved for this profile; without one, train step 0 now and save it."""
    path = model_path()
    if path.exists():
        print(f"Loaded {data.shown(path)}")
        return keras.saving.load_model(path)
    s = config.settings("cats_dogs")
    print(f"{data.shown(path)} is missing (run notebook 04 for it); "
          f"training the original net for {s.epochs} epochs instead.")
    model, _ = ladder.train("0", config.SEED, s)
    training.save_model(model, path)
    return model


def train_transfer(s=None):
    """Notebook 03's transfer model, trained the way 03 does on its page under the `transfer`
    settings `s`: the ImageNet base's features computed once, a new head trained on them, then
    the base's top third fine-tuned with the head at a low learning rate. In: 0..255 pixels;
    out: (p(cat), p(dog))."""
    s = s or config.settings("transfer")
    config.set_seed()
    base = models.imagenet_base(s.base, s.image_size)
    train = data.cats_dogs("train", image_size=s.image_size, batch_size=s.batch, limit=s.train)
    features, labels = models.extract_features(base, train)
    head = models.classifier_head(features.shape[1:], len(train.class_names))
    head.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    head.fit(features, labels, epochs=s.head_epochs, batch_size=s.batch, verbose=0)
    backbone = base.layers[-1]  # the Keras application inside the base
    backbone.trainable = True
    for layer in backbone.layers[: -len(backbone.layers) // 3]:
        layer.trainable = False
    model = keras.Sequential([base, head], name="fine_tuned")
    model.compile(optimizer=keras.optimizers.Adam(1e-4), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(train, epochs=s.finetune_epochs, shuffle=False, verbose=0)
    return model


def trained_transfer():
    """The transfer model notebook 03 saved for this profile; without one, train it now the
    way 03 does (`train_transfer`, saying so) and save it."""
    path = model_path(TRANSFER)
    if path.exists():
        print(f"Loaded {data.shown(path)}")
        return keras.saving.load_model(path)
    s = config.settings("transfer")
    print(f"{data.shown(path)} is missing (run notebook 03 for it); training notebook 03's "
          f"transfer model instead (epochs: head {s.head_epochs}, "
          f"fine-tuning {s.finetune_epochs}).")
    model = train_transfer(s)
    training.save_model(model, path)
    return model


def load_pictures(paths, image_size):
    """Pictures as one float32 batch (N, size, size, 3) of 0..255 pixels, resized the way
    the training pipeline resizes. An unusable file is an error naming the file and why."""

    batch = []
    for path in paths:
        ok, why = images.check_image(path)
        if not ok:
            raise ValueError(f"{path} cannot be used: {why}. Remove it or replace it.")
        batch.append(data.read_picture(str(path), (image_size, image_size)).numpy())
    if not batch:
        raise ValueError("No pictures given: pass a list of image files.")
    return np.stack(batch)


def my_pictures(folder=PICTURES):
    """The usable pictures a learner put into `folder` (sorted); [] when there are none.
    Every other file is named with the reason it is not used (the folder's own README and
    .gitignore aside), and a used one with a note (turned upright, transparency) too."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    report = images.check_images(folder)
    for path, why in report.bad:
        print(f"Not used: {data.shown(path)}: {why}")
    for path, note in report.notes:
        print(f"Used: {data.shown(path)}: {note}")
    unused = [p for p in report.unused if p.name not in ("README.md", ".gitignore")]
    if unused or report.hidden:
        print(f"{data.shown(folder)}: {images.unused_line(unused, report.hidden)}")
    return sorted(report.good)


def dog_probability(model, pictures):
    """p(dog) for a batch of 0..255 pictures, from a one-sigmoid model or a (cat, dog) softmax;
    refuses pictures already scaled to 0..1."""
    pictures = np.asarray(pictures, dtype="float32")
    if pictures.ndim != 4:
        raise ValueError(f"Expected a batch (N, height, width, 3), got shape {pictures.shape}; "
                         "for one picture use picture[None].")
    if 0 < pictures.max() <= 1.0:
        raise ValueError("These pictures look scaled to 0..1 already (largest value "
                         f"{pictures.max():.2f}); this model rescales by itself: "
                         "pass 0..255 pixels.")
    outputs = model.output_shape[-1]
    if outputs not in (1, 2):
        raise ValueError(f"{model.name} has {outputs} outputs; a cat/dog model has one (p(dog)) "
                         "or two (p(cat), p(dog)).")
    return model.predict(pictures, verbose=0)[:, outputs - 1]


def verdicts(p_dog, unsure=(0.5, 0.5)):
    """'cat' below unsure[0], 'dog' above unsure[1], 'not sure' in between (inclusive)."""
    low, high = unsure
    if not 0 <= low <= high <= 1:
        raise ValueError(f"unsure must be (low, high) with 0 <= low <= high <= 1, got {unsure}.")
    return ["cat" if p < low else "dog" if p > high else "not sure" for p in np.ravel(p_dog)]


def without_rescaling(model):
    """The tutorial's setup: the same trained layers minus Rescaling, so it expects 0..1."""
    kept = [layer for layer in model.layers if not isinstance(layer, keras.layers.Rescaling)]
    if len(kept) == len(model.layers):
        raise ValueError(f"{model.name} has no Rescaling layer to take out.")
    return keras.Sequential([keras.Input(model.input_shape[1:]), *kept],
                            name=f"{model.name}_without_rescaling")


def grad_cam(model, pictures, layer=None):
    """Grad-CAM heat maps (N, height, width) in 0..1: where the last conv layer's features
    pushed the model towards the class it predicted. The model must end in Dense(1, sigmoid)."""
    import tensorflow as tf

    last = model.layers[-1]
    if not isinstance(last, keras.layers.Dense) or last.units != 1:
        raise ValueError(f"{model.name} must end in Dense(1, sigmoid) for this Grad-CAM.")
    convs = [lay.name for lay in model.layers if isinstance(lay, keras.layers.Conv2D)]
    layer = layer or (convs[-1] if convs else None)
    if layer not in convs:
        raise ValueError(f"{layer!r} is not a Conv2D layer of {model.name}; choose from {convs}.")
    x = tf.convert_to_tensor(pictures, dtype="float32")
    with tf.GradientTape() as tape:
        for lay in model.layers[:-1]:
            x = lay(x, training=False)
            if lay.name == layer:
                features = x
                tape.watch(features)
        logit = (keras.ops.matmul(x, last.kernel) + last.bias)[:, 0]  # before the sigmoid
        score = tf.abs(logit)  # evidence for the class it predicts (dog: +, cat: -)
    grads = tape.gradient(score, features)
    weights = tf.reduce_mean(grads, axis=(1, 2), keepdims=True)  # one weight per channel
    cam = tf.nn.relu(tf.reduce_sum(weights * features, axis=-1))[..., None]
    cam = tf.image.resize(cam, pictures.shape[1:3])[..., 0].numpy()
    peak = cam.max(axis=(1, 2), keepdims=True)
    return np.divide(cam, peak, out=np.zeros_like(cam), where=peak > 0)
