"""helpers.models: the networks of notebooks 01-05 (shapes, parameter counts, masks, frozen bases,
fine-tuning) and the tutorial's augmentation."""

import math

from helpers import config, models

import keras
import numpy as np
import pytest
import tensorflow as tf


def test_text_lstm_matches_the_primer():
    model = models.text_lstm()
    assert model.input_shape == (None, 20) and model.output_shape == (None, 1000)
    embedding = 1000 * 128
    lstm = 4 * (128 * (128 + 128) + 128)  # four gates, each a Dense over [input, state]
    dense = 128 * 1000 + 1000
    assert model.count_params() == embedding + lstm + dense == 388_584


def test_text_lstm_outputs_a_distribution():
    probs = keras.ops.convert_to_numpy(models.text_lstm()(np.zeros((2, 20), "int32")))
    assert probs.shape == (2, 1000)
    assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize(
    "kind, middle",
    [
        ("lstm", 4 * (32 * (64 + 32) + 32)),
        # Keras 3 GRU: reset_after, two biases per gate
        ("gru", 3 * (32 * (64 + 32) + 2 * 32)),
        ("conv1d", 5 * 64 * 32 + 32),
    ],
)
def test_sentiment_nets_param_counts(kind, middle):
    model = models.sentiment_net(kind)
    assert model.input_shape == (None, 200) and model.output_shape == (None, 1)
    assert model.count_params() == 10_000 * 64 + middle + 33


def test_recurrent_sentiment_nets_skip_padding_and_conv_does_not():
    masks = {
        kind: models.sentiment_net(kind).layers[0].mask_zero
        for kind in ("lstm", "gru", "conv1d")
    }
    assert masks == {"lstm": True, "gru": True, "conv1d": False}


def test_lstm_result_does_not_depend_on_padding_length():
    padded = models.sentiment_net("lstm", vocabulary=50, length=12)
    exact = models.sentiment_net("lstm", vocabulary=50, length=3)
    exact.set_weights(padded.get_weights())
    a = keras.ops.convert_to_numpy(padded(np.array([[5, 7, 9] + [0] * 9])))
    b = keras.ops.convert_to_numpy(exact(np.array([[5, 7, 9]])))
    assert np.allclose(a, b, atol=1e-6)


def test_unknown_sentiment_kind_lists_the_choices():
    with pytest.raises(
        ValueError, match="'lstm', 'gru' or 'conv1d', got 'transformer'"
    ):
        models.sentiment_net("transformer")


def test_embedded_mobilenet_base_is_frozen_and_loads_the_real_weights():
    base = models.imagenet_base("mobilenet_0.25", 160)
    assert base.name == "frozen_mobilenet_0.25_160"
    assert base.output_shape == (None, 5, 5, 256)
    assert base.count_params() == 218_544 and not base.trainable_weights
    reference = keras.applications.MobileNet(
        alpha=0.25,
        include_top=False,
        input_shape=(160, 160, 3),
        weights=str(config.pretrained_weights()),
    )
    first = base.get_layer("mobilenet_0.25_160").get_layer("conv1").get_weights()[0]
    assert np.array_equal(first, reference.get_layer("conv1").get_weights()[0])


def test_base_takes_raw_pixels_and_preprocesses_them():
    base = models.imagenet_base("mobilenet_0.25", 128)
    pixels = (
        np.random.default_rng(0).uniform(0, 255, (2, 128, 128, 3)).astype("float32")
    )
    inner = base.get_layer("mobilenet_0.25_128")
    expected = inner(
        keras.applications.mobilenet.preprocess_input(pixels.copy()), training=False
    )
    assert np.allclose(
        base.predict(pixels, verbose=0), keras.ops.convert_to_numpy(expected), atol=1e-4
    )


def test_downloaded_base_falls_back_to_embedded_mobilenet_offline(monkeypatch, capsys):
    def offline(**kwargs):
        raise ConnectionError("no network")

    monkeypatch.setitem(models.BASES, "vgg16", (offline, lambda x: x, {}))
    base = models.imagenet_base("vgg16", 160)
    assert base.name == "frozen_mobilenet_0.25_160"
    assert "using the embedded MobileNet" in capsys.readouterr().out


def test_unknown_base_lists_the_choices():
    with pytest.raises(KeyError, match="vgg16"):
        models.imagenet_base("resnet50")


def test_primer_head_param_count():
    head = models.classifier_head((5, 5, 256), 10)
    assert head.output_shape == (None, 10)
    assert head.count_params() == (5 * 5 * 256 * 256 + 256) + (256 * 10 + 10)


@pytest.mark.processes
def test_fine_tuning_moves_the_top_third_and_keeps_batchnorm_statistics():
    base = models.imagenet_base("mobilenet_0.25", 128)
    models.unfreeze_top_third(base)
    backbone = base.layers[-1]
    convs = [
        layer for layer in backbone.layers if isinstance(layer, keras.layers.Conv2D)
    ]
    norms = [
        layer
        for layer in backbone.layers
        if isinstance(layer, keras.layers.BatchNormalization)
    ]
    watched = {
        "top conv": convs[-1].kernel,
        "first conv": convs[0].kernel,
        "top BatchNorm mean": norms[-1].moving_mean,
        "top BatchNorm scale": norms[-1].gamma,
    }
    before = {name: w.numpy().copy() for name, w in watched.items()}
    model = keras.Sequential(
        [base, keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(1)]
    )
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    pixels = (
        np.random.default_rng(0).uniform(0, 255, (8, 128, 128, 3)).astype("float32")
    )
    model.fit(pixels, np.arange(8.0), epochs=1, batch_size=4, verbose=0)
    moved = {
        name: not np.array_equal(before[name], w.numpy()) for name, w in watched.items()
    }
    assert moved == {
        "top conv": True,
        "first conv": False,
        "top BatchNorm mean": False,
        "top BatchNorm scale": False,
    }


def test_extract_features_keeps_labels_aligned_with_a_shuffling_pipeline():
    images = np.arange(10, dtype="float32")[:, None, None, None] * np.ones(
        (1, 4, 4, 3), "float32"
    )
    labels = np.arange(10)
    ds = (
        tf.data.Dataset.from_tensor_slices((images, labels))
        .shuffle(10, seed=1)
        .batch(3)
    )
    extractor = keras.Sequential(
        [keras.Input((4, 4, 3)), keras.layers.GlobalAveragePooling2D()]
    )
    features, got = models.extract_features(extractor, ds)
    assert features.shape == (10, 3)
    assert np.array_equal(features[:, 0], got.astype("float32"))
    assert sorted(got.tolist()) == labels.tolist()


def test_deep_net_has_more_than_thirty_conv_layers():
    model = models.cats_dogs_deep()
    convs = [layer for layer in model.layers if isinstance(layer, keras.layers.Conv2D)]
    assert len(convs) >= 30 and model.output_shape == (None, 1)


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


def test_a_ladder_step_is_ladder_net_with_the_steps_arguments():
    # cats_dogs_net only looks a step up: its network is notebook 04's ladder_net with them
    step_2 = models.cats_dogs_net("2", seed=1)
    mine = models.ladder_net(filters=(32, 32, 64), dropout=0.5, seed=1)
    assert step_2.name == "cats_dogs_step_2"
    assert [type(layer) for layer in step_2.layers] == [
        type(layer) for layer in mine.layers
    ]
    assert step_2.count_params() == mine.count_params() == 323_809
    assert models.cats_dogs_net("2", dropout=0.4).layers[-2].rate == 0.4


# --- the tutorial's augmentation, translated with Keras 2's units: shear in degrees, x/y zoom
# drawn independently, horizontal flip. Measured on pictures, not read from the layers' settings.

SIZE = 401  # odd: the zoom's centre (SIZE - 1) / 2 is a pixel row and column


def centre(profile):
    """Sub-pixel position of a bright line across one row or column of a picture."""
    weights = np.clip(profile, 0, None)
    return float((weights * np.arange(len(profile))).sum() / weights.sum())


def lines_picture():
    """A black picture with one white line across its middle row and one down its middle column."""
    picture = np.zeros((1, SIZE, SIZE, 3), "float32")
    picture[:, SIZE // 2, :, :] = 255
    picture[:, :, SIZE // 2, :] = 255
    return picture


def tilts(layer, draws=200):
    """The largest tilt of either line per draw: how far one end moved against the other,
    as a share of the picture's side."""
    picture, result = lines_picture(), []
    for _ in range(draws):
        out = np.asarray(layer(picture, training=True))[0, :, :, 0]
        row_left, row_right = centre(out[:, 5]), centre(out[:, -6])
        col_top, col_bottom = centre(out[5, :]), centre(out[-6, :])
        result.append(
            max(abs(row_right - row_left), abs(col_bottom - col_top)) / (SIZE - 11)
        )
    return np.array(result)


@pytest.mark.processes
def test_shear_is_a_fraction_of_a_degree_as_in_keras_2():
    # Keras 2's shear_range=0.2 is 0.2 degrees: one side moves sin(0.2 deg) = 0.35 % of the
    # picture against the other. Keras 3's RandomShear(0.2) would move it up to 20 %.
    most = math.sin(math.radians(models.SHEAR_DEGREES))
    shear = models.augmentation(seed=3).layers[0]
    measured = tilts(shear)
    assert measured.max() <= most * 1.05
    assert measured.max() >= most * 0.7  # it does shear, nearly up to its limit
    # the whole augmentation (zoom can stretch a tilt by 1.2 / 0.8) stays below 1 %
    assert tilts(models.augmentation(seed=4), draws=100).max() < 0.01


def square_sides(layer, draws=200):
    """Width and height of a centred white square after each draw, as a share of before."""
    picture = np.zeros((1, SIZE, SIZE, 3), "float32")
    picture[:, 150:251, 150:251, :] = 255
    sides = []
    for _ in range(draws):
        out = np.asarray(layer(picture, training=True))[0, :, :, 0]
        sides.append(
            ((out[SIZE // 2] > 127).sum() / 101, (out[:, SIZE // 2] > 127).sum() / 101)
        )
    return np.array(sides)


def test_zoom_draws_width_and_height_independently_from_0_8_to_1_2():
    zoom = models.augmentation(seed=5).layers[1]
    sides = square_sides(zoom)
    # a zoom factor z shows 1/z of the picture: sides from 1/1.2 to 1/0.8 of their size
    assert sides.min() > 1 / 1.2 - 0.03 and sides.max() < 1 / 0.8 + 0.03
    assert sides.min() < 0.87 and sides.max() > 1.18  # the whole range is used
    aspect = sides[:, 0] / sides[:, 1]
    # width and height change separately
    assert aspect.min() < 0.8 and aspect.max() > 1.25
    assert abs(np.corrcoef(sides[:, 0], sides[:, 1])[0, 1]) < 0.3


def test_flip_mirrors_left_and_right_about_half_the_time():
    picture = np.zeros((1, 8, 8, 3), "float32")
    picture[:, :, :2, :] = 255  # bright on the left
    flip = models.augmentation(seed=6).layers[2]
    flipped = [
        np.asarray(flip(picture, training=True))[0, 0, -1, 0] > 127 for _ in range(200)
    ]
    assert 0.35 < np.mean(flipped) < 0.65


def test_augmentation_leaves_pictures_alone_outside_training():
    picture = np.random.default_rng(0).uniform(0, 255, (2, 64, 64, 3)).astype("float32")
    out = models.augmentation(seed=1)(picture, training=False)
    np.testing.assert_array_equal(np.asarray(out), picture)
