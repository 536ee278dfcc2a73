"""Notebook 04's and 03's saved models, and pictures to show them (notebooks 06, 11)."""

import keras
import numpy as np

from . import config, data, images, ladder, models, training

__all__ = ["TRANSFER", "load_pictures", "model_path", "train_transfer", "trained_cats_dogs",
           "trained_transfer"]

TRANSFER = "cats_dogs_transfer"  # the name notebook 03 saves its fine-tuned transfer model under


def model_path(name="cats_dogs_original"):
    """Where notebook 04 (03: `name=TRANSFER`) saves its model for this profile (notebook 04)."""
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


def train_transfer(s):
    """Notebook 03's (p(cat), p(dog)) model, trained as 03 does with settings `s` (notebook 06)."""
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
    """Notebook 03's saved transfer model, else `train_transfer` now, saved (notebook 06)."""
    s = config.settings("transfer")
    return _saved_or_trained(
        model_path(TRANSFER), "03", f"notebook 03's transfer model (epochs: head "
        f"{s.head_epochs}, fine-tuning {s.finetune_epochs})", lambda: train_transfer(s))


def load_pictures(paths, image_size):
    """Pictures as one float32 batch of 0..255 pixels, resized as in training (notebook 06)."""
    batch = []
    for path in paths:
        ok, why = images.check_image(path)
        if not ok:
            raise ValueError(f"{path} cannot be used: {why}. Remove it or replace it.")
        batch.append(data.read_picture(str(path), (image_size, image_size)).numpy())
    if not batch:
        raise ValueError("No pictures given: pass a list of image files.")
    return np.stack(batch)
