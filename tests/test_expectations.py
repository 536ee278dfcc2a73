"""What a notebook tells a learner to expect agrees with the course's records and its code.

Two lists, each row a sentence in a notebook and the range it promises:
- RECORDED: figures measured on some machine. The row holds for every kind of machine that has
  records in results/ (AVX2, AVX-512 bf16, AMX, a GPU): one test per row and kind, so a record
  from a new kind of machine that leaves the range fails here, and the sentence must change.
- COMPUTED: figures the course's own code gives on any machine (FLOPs, bytes, shares of a data
  set): the test computes them and checks the words still say so.
A changed sentence fails too: the notebook must still contain the exact words.
Two expectations need real training on the sample and are held by slow tests (`make
test-slow`): notebook 01's 96–99 % (tests/test_training.py) and step 2b learning (test_ladder).
"""

import json
import math

from helpers import config, exercises, hardware, models, roofline, roofs

import pytest


def step_speed(runs, step):
    return [r["images_per_s"] for r in runs if r["step"] == step]


def slowest_other_over_step_3(runs):
    """How many times faster than step 3 the slowest other ladder step trained."""
    others = [r["images_per_s"] for r in runs if r["step"] not in ("3", "transfer")]
    return [min(others) / max(step_speed(runs, "3"))] if step_speed(runs, "3") else []


def slowest_other_over_deep(records):
    """How many times faster than the deep network the slowest other cat/dog network trained."""
    deep = [r["images_per_s"] for r in records if r["model"] == "cats_dogs_deep"]
    others = [r["images_per_s"] for r in records if r["model"] != "cats_dogs_deep"]
    return [min(others) / max(deep)] if deep and others else []


RECORDED = [
    # notebook, words in it, records in results/, what is read from one kind's records, low, high
    (
        "08",
        "roughly 500–3,000 examples/s",
        "*_cifar10_net_cpu0_synthetic_*.json",
        lambda records: [r["images_per_s"] for r in records],
        500,
        3000,
    ),
    (
        "08",
        "expect it to be the slowest on the CPU",
        "*_cats_dogs_*_cpu0_synthetic_*.json",
        slowest_other_over_deep,
        1,
        1e6,
    ),
    (
        "05b",
        "the 128-pixel step costs by far the most time per picture on a CPU",
        "cats_dogs_ladder_tutorial/step-*.json",
        slowest_other_over_step_3,
        3,
        1000,
    ),
]


def vgg16_multiply_adds():
    import keras

    return roofline.flops_per_image(keras.applications.VGG16(weights=None)) / 2


def unknown_share(max_tokens):
    from helpers import data

    import keras
    import numpy as np

    text = data.shakespeare()
    layer = keras.layers.TextVectorization(max_tokens=max_tokens)
    layer.adapt([text])
    return float(np.mean(keras.ops.convert_to_numpy(layer(text)) == 1))


def dense_weights(step):
    import keras

    return [
        layer.count_params()
        for layer in models.cats_dogs_net(step).layers
        if isinstance(layer, keras.layers.Dense)
    ][0]


def deep(**change):
    return models.cats_dogs_deep(**change)


def a100_tf32(step):
    """The roofline's prediction for a ladder step on an A100 (datasheet) training in TF32."""
    return roofline.predict(
        models.cats_dogs_net(step), roofs.published_roofs(("A100",))[0], "tf32"
    )


def a100_16bit(step):
    """The same prediction in the A100's 16-bit formats (datasheet)."""
    return roofline.predict(
        models.cats_dogs_net(step), roofs.published_roofs(("A100",))[0], "16-bit"
    )


def jit_allowed(model):
    """1 when every layer of `model` allows XLA, the check Keras' `jit_compile="auto"` (and
    `jit_compile=True`) makes before compiling on any backend (keras.src.trainers.trainer's
    model_supports_jit, before its platform exceptions); else 0."""
    return float(all(layer.supports_jit for layer in model._flatten_layers()))


def printed_percent(fraction):
    """A fraction as the notebooks print it (`:.1%`), in percent."""
    return float(f"{fraction:.1%}".rstrip("%"))


def float32_fraction(right, total):
    """right / total as Keras keeps an accuracy: a 32-bit float (notebook 04b)."""
    import numpy as np

    return float(np.float32(right) / np.float32(total))


COMPUTED = [
    # notebook, words in it, what the course's code gives, low, high
    (
        "01",
        "93,322 parameters layer by layer (most of them in the last conv layer and the first "
        "dense layer)",
        lambda: models.mnist_cnn().count_params(),
        93_322,
        93_322,
    ),
    ("04b", "In radians 0.2 is about 11.5°", lambda: math.degrees(0.2), 11.4, 11.6),
    (
        "04b",
        "the nearest 32-bit float is 0.72250003, printed as 72.3 %",
        lambda: round(float32_fraction(578, 800), 8),
        0.72250003,
        0.72250003,
    ),
    (
        "04b",
        "the nearest 32-bit float is 0.72250003, printed as 72.3 %",
        lambda: printed_percent(float32_fraction(578, 800)),
        72.3,
        72.3,
    ),
    (
        "04b",
        "578 / 800 times 100 comes out as exactly 72.25",
        lambda: 578 / 800 * 100,
        72.25,
        72.25,
    ),
    (
        "04b",
        "Python rounds a tie to the even digit, printed as 72.2 %",
        lambda: printed_percent(578 / 800),
        72.2,
        72.2,
    ),
    (
        "05",
        "295,040 weights instead of 802,944",
        lambda: dense_weights("1"),
        295_040,
        295_040,
    ),
    (
        "05",
        "295,040 weights instead of 802,944",
        lambda: dense_weights("0"),
        802_944,
        802_944,
    ),
    (
        "02",
        "about 18 % of Tiny Shakespeare at 1000 tokens",
        lambda: 100 * unknown_share(1000),
        16,
        20,
    ),
    (
        "03",
        "about 15 billion multiply-adds per picture",
        vgg16_multiply_adds,
        14e9,
        16e9,
    ),
    (
        "03",
        "MobileNet 0.25 at 224 px: about 41 million",
        lambda: (
            roofline.flops_per_image(models.imagenet_base("mobilenet_0.25", 224)) / 2
        ),
        38e6,
        44e6,
    ),
    (
        "03",
        "about 375 times the arithmetic",  # both bases at 224 px, VGG16's without a download
        lambda: (
            roofline.flops_per_image(
                models.frozen_base(*models.BASES["vgg16"][:2], 224, None)
            )
            / roofline.flops_per_image(models.imagenet_base("mobilenet_0.25", 224))
        ),
        360,
        390,
    ),
    (
        "09",
        "with 14× the arithmetic per picture of the 64-pixel step 2",
        lambda: (
            roofline.flops_per_image(models.cats_dogs_net("3"))
            / roofline.flops_per_image(models.cats_dogs_net("2"))
        ),
        13.5,
        14.5,
    ),
    (
        "08",
        "about 77× the arithmetic of the original",
        lambda: (
            roofline.flops_per_image(models.cats_dogs_deep())
            / roofline.flops_per_image(models.cats_dogs_net("0"))
        ),
        70,
        85,
    ),
    (
        "08",
        "the deep net about 10× the original's training intensity",  # at batch 32
        lambda: (
            roofline.training_intensity(models.cats_dogs_deep(), 32)
            / roofline.training_intensity(models.cats_dogs_net("0"), 32)
        ),
        9.5,
        10.5,
    ),
    (
        "08",
        "about 347 MFLOP instead of about 1,820",
        lambda: roofline.flops_per_image(deep(convs_per_stage=2)) / 1e6,
        330,
        365,
    ),
    (
        "08",
        "about 347 MFLOP instead of about 1,820",
        lambda: roofline.flops_per_image(deep()) / 1e6,
        1_730,
        1_910,
    ),
    (
        "08",
        "from about 110 to about 72 FLOP/byte",
        lambda: roofline.arithmetic_intensity(deep()),
        105,
        116,
    ),
    (
        "08",
        "from about 110 to about 72 FLOP/byte",
        lambda: roofline.arithmetic_intensity(deep(convs_per_stage=2)),
        68,
        76,
    ),
    (
        "08b",
        "the blog's V100 ran its cat/dog networks at under 3 % of its float32 roof",
        lambda: (
            100
            * max(p["ratio"] for p in roofline.blog_points() if p["step"] != "cifar10")
        ),
        0,
        3,
    ),
    (
        "08",
        "roughly 41,000 pictures/s",
        lambda: a100_tf32("3")["pictures_per_s"],
        39e3,
        44e3,
    ),
    (
        "08",
        "the upper bound, the compute roof, is about 131,000",
        lambda: a100_tf32("3")["upper_bound"],
        125e3,
        137e3,
    ),
    (
        "08",
        "training intensity at batch 32, about 32 FLOP/byte",
        lambda: a100_tf32("3")["intensity"],
        30,
        34,
    ),
    (
        "08",
        "nearly doubles to about 63 FLOP/byte",
        lambda: a100_16bit("3")["intensity"],
        60,
        66,
    ),
    (
        "08b",
        "the random augmentation layers (`RandomShear`, `RandomZoom`) do not",
        lambda: jit_allowed(models.cats_dogs_net("0")),
        0,
        0,
    ),
    (
        "08b",
        "A network whose layers all allow it, like the CIFAR-10 net",
        lambda: jit_allowed(models.cifar10_net()),
        1,
        1,
    ),
    (
        "10",
        "an all-reduce of about 3 MB of gradients",
        lambda: 4 * models.cats_dogs_net("0").count_params() / 1e6,
        2.5,
        3.5,
    ),
]


def notebook_text(number):
    """The notebook's file, and the hints and worked solutions its exercise checks print."""
    text = next((config.ROOT / "notebooks").glob(f"{number}_*.ipynb")).read_text()
    if (config.ROOT / "helpers" / "checks" / f"nb{number}.py").exists():
        shown = exercises.load(number).values()
        text += "\n".join(f"{e.hints}\n{e.worked}" for e in shown)
    return text


def kind_of(record):
    """The kind of machine a record was made on: a GPU's name, else the CPU's widest SIMD
    unit (bench records, ladder runs and sample-ladder files keep the CPU in three places)."""
    hw = record.get("hardware")
    if isinstance(hw, dict):
        if hw.get("gpus") and not record.get("device", "cpu").startswith("cpu"):
            return hw["gpus"][0]["name"]
        return hardware.cpu_kind(hw["cpu"]["simd"])
    simd = record.get("cpu_simd") or record.get("machine", {}).get("cpu", {}).get(
        "simd", []
    )
    return hardware.cpu_kind(simd)


def recorded(pattern):
    """The records matching `pattern` in results/, grouped by kind of machine."""
    groups = {}
    for path in sorted(config.RESULTS_DIR.glob(pattern)):
        record = json.loads(path.read_text())
        groups.setdefault(kind_of(record), {})[path.name] = record
    return groups


def disagreements(text, words, records, read, low, high):
    """Why notebook `text` and one kind's `records` ({name: parsed JSON}) disagree."""
    found = [] if words in text else [f"the notebook no longer says {words!r}"]
    if not records:
        found.append("no records to check it against in results/")
    found += [
        f"{value:,.1f} is outside {words!r}"
        for value in read(list(records.values()))
        if not low <= value <= high
    ]
    return found


CASES = [
    (row, kind, records)
    for row in RECORDED
    for kind, records in recorded(row[2]).items()
]


@pytest.mark.parametrize(
    "row, kind, records",
    CASES,
    ids=[f"{row[0]}-{row[1][:30]}-{kind}" for row, kind, _ in CASES],
)
def test_an_expectation_holds_on_every_kind_of_machine_recorded(row, kind, records):
    notebook, words, _, read, low, high = row
    assert disagreements(notebook_text(notebook), words, records, read, low, high) == []


def test_every_recorded_expectation_has_records():
    assert [row[1] for row in RECORDED if not recorded(row[2])] == []


@pytest.mark.parametrize(
    "notebook, words, compute, low, high",
    COMPUTED,
    ids=[f"{row[0]}-{row[1][:30]}" for row in COMPUTED],
)
def test_a_figure_the_course_computes_is_what_the_notebook_says(
    notebook, words, compute, low, high
):
    assert words in notebook_text(notebook)
    assert low <= compute() <= high


def test_a_record_outside_the_range_or_a_changed_sentence_is_caught():
    notebook, words, pattern, read, low, high = RECORDED[0]
    text = notebook_text(notebook)
    kind, records = next(iter(recorded(pattern).items()))
    slower = {
        **records,
        "slow.json": {**next(iter(records.values())), "images_per_s": 120.0},
    }
    assert disagreements(text, words, slower, read, low, high) == [
        f"120.0 is outside {words!r}"
    ]
    assert disagreements(
        text.replace(words, "about 5,000 examples/s"), words, records, read, low, high
    ) == [f"the notebook no longer says {words!r}"]
    assert disagreements(text, words, {}, read, low, high)


def test_records_of_two_kinds_of_cpu_are_held_apart():
    avx2 = {"cpu_simd": ["sse4_2", "avx", "avx2", "fma"], "hardware": "AMD EPYC"}
    bf16 = {
        "device": "cpu:0",
        "hardware": {"gpus": [], "cpu": {"simd": ["avx2", "avx512f", "avx512_bf16"]}},
    }
    assert (kind_of(avx2), kind_of(bf16)) == ("AVX2", "AVX-512 bf16")


# Notebook 09b's account of the AMX Xeon's step-by-step hunt, held to the log as printed there
# (results/nan_check/amx-xeon-2026-12-04/, copied from the shared records unchanged).
AMX_LOG = (
    config.RESULTS_DIR / "nan_check" / "amx-xeon-2026-12-04" / "hunt-and-replay.log"
)
HUNT = [  # words in notebook 09b, lines the log must hold
    (
        "after steps 536 and 903 of two seeds",
        ["NaN after step 536: 128", "NaN after step 903: 128"],
    ),
    (
        "a block of 128 values each; where the variable was logged, in the kernel",
        [
            "NaN after step 536: 128 non-finite weights;",
            "NaN after step 903: 128 non-finite weights in "
            "[('cats_dogs_step_3/conv2d_5/kernel', 128",
        ],
    ),
    (
        "20 of 20 for each",
        [
            "replay of step 536 (seed 1), ONEDNN_MAX_CPU_ISA=default (AMX): 0 of 20",
            "replay of step 903 (seed 7), ONEDNN_MAX_CPU_ISA=default (AMX): 0 of 20",
        ],
    ),
    (
        "identical to the bit",
        [
            "(AMX): 0 of 20 replays non-finite; 1 distinct weight results",
            "(AMX): 0 of 10 replays non-finite; 1 distinct weight results",
        ],
    ),
    (
        "did not help (NaN after 181 steps, 64 values of the second convolution's kernel)",
        [
            "first conv float32, 4000 steps",
            "NaN after step 181: 64 non-finite weights in [('cats_dogs_step_3/conv2d_5/kernel', 64",
        ],
    ),
    (
        "4,000 steps stayed finite",
        ["no AMX (AVX512_CORE_BF16), 4000 steps", "no NaN in 4000 steps"],
    ),
]


# ...and of the course's own tool run again on a machine of that kind (tools/nan_hunt.py)
HUNT_HERE = config.RESULTS_DIR / "nan_check" / "hunt_2026-12-04_this-machine.log"
REPLAY_HERE = config.RESULTS_DIR / "nan_check" / "replay_2026-12-04_this-machine.log"
HUNT += [
    (
        "NaN after step 599, 128 values of the second convolution's kernel",
        [
            "Non-finite weights after step 599",
            "128 of 36,864 values, shape (3, 3, 64, 64)",
            "(Conv2D 2 of 4)",
        ],
    ),
    (
        "Its first 20 replays from the saved state gave 19 identical finite results and 1 NaN",
        ["1 of 20 replays non-finite; 2 distinct results"],
    ),
    (
        "40 more replays, and 20 with AMX capped off, were all finite",
        [
            "ONEDNN_MAX_CPU_ISA=default, TF_ENABLE_ONEDNN_OPTS=default",
            "0 of 40 replays non-finite",
            "ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16, TF",
            "0 of 20 replays non-finite",
        ],
    ),
    (
        "this NaN came back once in 60 replays, or never",
        [
            "1 of 20 replays non-finite",
            "0 of 40 replays non-finite",
            "0 of 20 replays non-finite",
        ],
    ),
]


@pytest.mark.parametrize("words, lines", HUNT, ids=[w[:30] for w, _ in HUNT])
def test_09bs_account_of_the_amx_hunt_is_what_its_log_shows(words, lines):
    assert words in notebook_text("09b")
    logs = "".join(p.read_text() for p in (AMX_LOG, HUNT_HERE, REPLAY_HERE))
    assert [line for line in lines if line not in logs] == []


def test_09bs_rate_of_about_one_nan_in_1000_amx_steps_expects_four_in_4000():
    """The AMX hunts' steps up to each NaN, and the NaN check's runs on the sample (44 steps an
    epoch), counted together."""
    import re

    hunted = [int(n) for n in re.findall(r"NaN after step (\d+)", AMX_LOG.read_text())]
    runs = [
        json.loads(p.read_text())
        for p in (config.RESULTS_DIR / "nan_check" / "xeon-amx_sample_bf16").glob(
            "*.json"
        )
    ]
    events = len(hunted) + sum(any(r["nonfinite_weights_per_epoch"]) for r in runs)
    steps = sum(hunted) + sum(44 * r["epochs"] for r in runs)
    assert "about one event in 1,000 steps expects four" in notebook_text("09b")
    assert 1 / 1400 <= events / steps <= 1 / 700 and round(4000 * events / steps) == 4
    # no event in 4,000 steps at that rate: Poisson's chance of zero, "about 2 %"
    assert "by chance about 2 % of the time" in notebook_text("09b")
    assert 0.015 <= math.exp(-4000 * events / steps) <= 0.025
