"""Notebook 03's exercise checks (transfer learning)."""

from ..exercises import Exercise, accuracy_choice, number


def _gap_head():
    import keras
    from keras import layers

    return keras.Sequential(
        [
            keras.Input((5, 5, 256)),
            layers.GlobalAveragePooling2D(),
            layers.Dense(256, activation="relu"),
            layers.Dropout(0.5),
            layers.Dense(2, activation="softmax"),
        ]
    ).count_params()


def _flops(name, size):
    """Forward FLOPs per picture of a base, built without its weights (nothing downloaded)."""
    from .. import models, roofline

    application, preprocess, options = models.BASES[name]
    return roofline.flops_per_image(
        models.frozen_base(application, preprocess, size, None, **options)
    )


def _scratch(answer, scratch, pretrained, pictures):
    """Exercise 3: the from-scratch run's last validation accuracy against the pretrained
    head's, on the learner's own runs."""
    h = getattr(scratch, "history", scratch)
    return accuracy_choice(("from scratch", "the pretrained head"))(
        answer, h["val_accuracy"][-1], pretrained, pictures
    )


def exercises():
    return [
        Exercise(
            "03",
            1,
            number(
                _gap_head,
                {
                    1_639_170: "that is the Flatten head: global average pooling "
                    "leaves 256 numbers, "
                    "one per channel, not 5·5·256.",
                    256 * 256 + 256 * 2: "each Dense unit has a bias too.",
                    (256 + 1) * 256: "that is the hidden Dense layer alone: the output "
                    "layer's (256 + 1)·2 weights count too.",
                },
            ),
            hints="GlobalAveragePooling2D averages each of the 256 channels over the 5 × 5 "
            "positions: the Dense layer sees 256 numbers. Then (inputs + 1) × units per Dense "
            "layer.",
            worked="66,306: (256 + 1)·256 + (256 + 1)·2, instead of 1,639,170, because the "
            "Dense layer sees 256 numbers instead of 6,400. The accuracy stays within a point or "
            "two of the Flatten head: for 'is there a cat anywhere' a feature's position "
            "matters little.",
        ),
        Exercise(
            "03",
            2,
            number(
                lambda: _flops("mobilenet_0.25", 224) / _flops("mobilenet_0.25", 160),
                {
                    224
                    / 160: "FLOPs grow with the number of positions, the square of the side."
                },
                unit="x",
                within=0.03,
            ),
            hints="every convolution runs at every position of its map, and the maps scale with "
            "the picture: the work grows with the pixels, (224 / 160)².",
            worked="About 1.96x: (224/160)² = 1.96, and `roofline.flops_per_image` of the two "
            "bases agrees within a percent or two (the maps' sizes round). Time both feature "
            "passes with `extract_features` to see whether this machine follows: a larger "
            "picture also gives better features, expect a few points more accuracy at 224 px.",
        ),
        Exercise(
            "03",
            3,
            _scratch,
            given=("scratch", "pretrained", "pictures"),
            hints="build it with `frozen_base(keras.applications.MobileNet, "
            "keras.applications.mobilenet.preprocess_input, s.image_size, None, alpha=0.25)`, "
            "make it trainable (`base.layers[-1].trainable = True`), put "
            "`classifier_head(...)` on top, fit 5 epochs and keep the History as "
            "`scratch`; `head_accuracy` is the pretrained head's.",
            worked="Usually a, far below the pretrained head and near chance: MobileNet's "
            "218,544 base weights and its BatchNorm statistics need far more than 1,400 "
            "pictures to learn useful features. That is what the ImageNet pretraining bought.",
        ),
        Exercise(
            "03",
            4,
            number(
                lambda: _flops("vgg16", 224) / _flops("mobilenet_0.25", 224),
                {
                    67: "that is the ratio of the parameters: arithmetic per picture "
                    "counts each weight "
                    "once per position it is used at."
                },
                unit="x",
                within=0.03,
            ),
            hints="vgg = frozen_base(*models.BASES['vgg16'][:2], 224, None); then "
            "roofline.flops_per_image(vgg) / roofline.flops_per_image(mobilenet at 224 px), "
            "the MobileNet built from models.BASES['mobilenet_0.25'] with its options too "
            "(**BASES[name][2]: alpha=0.25).",
            worked="VGG16's base needs about 15 billion multiply-adds per picture "
            "(MobileNet 0.25 at 224 px: about 41 million), about 375 times the arithmetic. Its "
            "base has 14,714,688 parameters "
            "(67× MobileNet 0.25's) and gives 7·7·512 = 25,088 features, so the primer's "
            "Dense(256) head alone has 6,422,784 weights. A CPU spends its time on arithmetic: "
            "which is why `full`, with VGG16, wants a GPU.",
        ),
    ]
