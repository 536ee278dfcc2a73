"""Predicting single pictures with notebook 04's and 03's saved models (notebook 06).

The course's models take 0..255 pixels and rescale inside: prediction code cannot forget 1/255.
"""

from pathlib import Path

import keras
import numpy as np

from . import config, data, images, ladder, models, training

__all__ = ["PICTURES", "TRANSFER", "dog_probability", "load_pictures", "model_path", "my_pictures",
           "train_transfer", "trained_cats_dogs", "trained_transfer", "without_rescaling"]

PICTURES = config.ROOT / "my_pictures"  # learners drop their own pictures here
TRANSFER = "cats_dogs_transfer"  # the name notebook 03 saves its fine-tuned transfer model under


def model_path(name="cats_dogs_original"):
    """Where notebook 04 (03: `name=TRANSFER`) saves its model, one file per profile."""
    return config.BUILD_DIR / "models" / f"{name}_{config.profile()}.keras"


def trained_cats_dogs():
    """Notebook 04's saved model for this profile, else step 0 trained now, saved (notebook 06)."""
    s = config.settings("cats_dogs")
    return _saved_or_trained(model_path(), "04", f"the original net for {s.epochs} epochs",
                             lambda: ladder.train("0", config.SEED, s)[0])


def _saved_or_trained(path, notebook, what, train):
    """The model saved at `path`, else `train()`'s, saved there, saying so."""
    if path.exists():
        print(f"Loaded {data.shown(path)}")
        return keras.saving.load_model(path)
    print(f"{data.shown(path)} is missing (run notebook {notebook} for it); training {what} "
          "instead.")
    model = train()
    training.save_model(model, path)
    return model


def train_transfer(s=None):
    """Notebook 03's transfer model, trained as 03 does (settings `s`, default `transfer`):
    a head on the features, then the base's top third fine-tuned with it. Out: (p(cat), p(dog))."""
    s = s or config.settings("transfer")
    config.set_seed()
    base = models.imagenet_base(s.base, s.image_size)
    train = data.cats_dogs("train", image_size=s.image_size, batch_size=s.batch, limit=s.train)
    features, labels = models.extract_features(base, train)
    head = models.classifier_head(features.shape[1:], len(train.class_names))
    head.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    head.fit(features, labels, epochs=s.head_epochs, batch_size=s.batch, verbose=0)
    models.unfreeze_top_third(base)
    model = keras.Sequential([base, head], name="fine_tuned")
    model.compile(optimizer=keras.optimizers.Adam(1e-4), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(train, epochs=s.finetune_epochs, shuffle=False, verbose=0)
    return model


def trained_transfer():
    """Notebook 03's saved transfer model for this profile, else `train_transfer` now, saved
    (notebook 06)."""
    s = config.settings("transfer")
    return _saved_or_trained(
        model_path(TRANSFER), "03", f"notebook 03's transfer model (epochs: head "
        f"{s.head_epochs}, fine-tuning {s.finetune_epochs})", lambda: train_transfer(s))


def load_pictures(paths, image_size):
    """Pictures as one float32 batch of 0..255 pixels, resized as in training; an unusable file
    is an error naming it and why (notebook 06)."""
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
    """The usable pictures in a learner's `folder`, sorted; every other file is named with why
    (notebook 06)."""
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
    """p(dog) of a one-sigmoid or (cat, dog) model for 0..255 pictures, refusing 0..1 ones
    (notebook 06)."""
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


def without_rescaling(model):
    """The tutorial's setup: the trained layers minus Rescaling, expecting 0..1 (notebook 06)."""
    kept = [layer for layer in model.layers if not isinstance(layer, keras.layers.Rescaling)]
    if len(kept) == len(model.layers):
        raise ValueError(f"{model.name} has no Rescaling layer to take out.")
    return keras.Sequential([keras.Input(model.input_shape[1:]), *kept],
                            name=f"{model.name}_without_rescaling")

