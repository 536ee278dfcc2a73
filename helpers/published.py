"""Published figures, never measured here: the blog's (source 000) and NVIDIA's GPU datasheets,
each cited; notebooks 00 (through helpers.roofs), 04, 05, 07 and 08 show them, labelled. Also
the blog's ladder steps, which models.cats_dogs_net builds (notebooks 04, 05)."""

__all__ = [
    "CIFAR10_EXAMPLES_PER_S",
    "GPU_DATASHEETS",
    "LADDER",
    "LADDER_ACCURACY",
    "LADDER_PICTURES_PER_RUN",
    "LADDER_TRAINING",
    "LADDER_V100_SPEED",
    "SERVER_CORES",
    "SPEEDS",
    "table",
]

SPEEDS = [  # (model, machine, speed, utilisation), as the blog states them
    (
        "cifar10_net",
        "Tesla V100 (batch 512)",
        "15,000-17,000 examples/s",
        "GPU ~45 % busy",
    ),
    (
        "cifar10_net",
        "2x Xeon Silver 4110, 16 cores, AVX2 build (batch 512)",
        "~210 examples/s",
        "",
    ),
    ("cifar10_net", "VirtualBox VM", "~90 examples/s", ""),
    ("cats_dogs_original", "VirtualBox VM, workers 1 / batch 32", "47 img/s", ""),
    ("cats_dogs_original", "VirtualBox VM, workers 4 / batch 64", "64 img/s", ""),
    (
        "cats_dogs_original",
        "Tesla V100",
        "~3x after tuning workers and batch; ~4x the 16-core server",
        "GPU 0-10 % busy, CPU ~10 %: input-bound",
    ),
    ("cats_dogs_improved", "Tesla V100", "425 img/s", ""),
    ("cats_dogs_improved", "Tesla V100, no shear/zoom/flip (step 2b)", "533 img/s", ""),
    # the net the blog improved to 94 %: part 1 gives its ratio and load, part 2 its speed
    ("cats_dogs_128px", "Tesla V100", "333 img/s; ~23x the CPU", "GPU ~50 % busy"),
    ("cats_dogs_deep", "16-core server, CPU only", "~3 img/s", ""),
    (
        "cats_dogs_deep",
        "Tesla V100",
        "~100x the CPU, about the 94 % net's speed",
        "GPU 100 % busy (temperature and power in nvidia-smi)",
    ),
]

# the CIFAR-10 speeds as numbers (examples/s; the V100's is the middle of its range)
CIFAR10_EXAMPLES_PER_S = {
    "Tesla V100": 16_000,
    "16-core server": 210,
    "VirtualBox VM": 90,
}
SERVER_CORES = 16

# The blog's improvement ladder (part 2), each step on top of the one before (2b: step 2 without
# augmentation): what it changes, in the course's words, and the settings models.cats_dogs_net
# builds it from. The one definition of the steps; helpers.ladder adds the course's transfer step.
LADDER = {
    "0": dict(
        change="original (2 x Conv32+pool, Dense 128)",
        image_size=64,
        filters=(32, 32),
        dropout=0.0,
        augment=True,
    ),
    "1": dict(
        change="+ Conv2D(64) + MaxPool",
        image_size=64,
        filters=(32, 32, 64),
        dropout=0.0,
        augment=True,
    ),
    "2": dict(
        change="+ Dropout(0.5)",
        image_size=64,
        filters=(32, 32, 64),
        dropout=0.5,
        augment=True,
    ),
    "2b": dict(
        change="step 2 without shear/zoom/flip",
        image_size=64,
        filters=(32, 32, 64),
        dropout=0.5,
        augment=False,
    ),
    "3": dict(
        change="128 px, + conv/pool pair, 64 filters each",
        image_size=128,
        filters=(64, 64, 64, 64),
        dropout=0.5,
        augment=True,
    ),
}
# validation %, per step
LADDER_ACCURACY = {"0": 80, "1": 84, "2": 90, "2b": 85, "3": 94}
LADDER_V100_SPEED = {"2": 425, "2b": 533, "3": 333}  # pictures/s (step 1: "unchanged")
# Keras 2's fit_generator(steps_per_epoch=8000, epochs=25) at batch 32 (part 1: "8.000 Schritte
# und 32 Bilder pro Schritt"): 256,000 pictures an "epoch", 800 passes over the 8,000 photos.
LADDER_TRAINING = {"epochs": 25, "steps_per_epoch": 8000, "batch": 32, "photos": 8000}
LADDER_PICTURES_PER_RUN = (
    LADDER_TRAINING["epochs"]
    * LADDER_TRAINING["steps_per_epoch"]
    * LADDER_TRAINING["batch"]
)

# NVIDIA's datasheets (not the sources'): dense TFLOP/s per format (half the "with sparsity"
# figures; "tf32": TensorFloat-32, TensorFlow's float32 on Ampere and newer), memory GB/s and
# GB (the 16 GB V100).
GPU_DATASHEETS = {
    "H200": {
        "tflops": {"float32": 67.0, "tf32": 495.0, "bfloat16": 989.0, "float16": 989.0},
        "bandwidth_gbs": 4800,
        "memory_gb": 141,
        "source": "NVIDIA H200 Tensor Core GPU datasheet (SXM)",
    },
    "H100": {
        "tflops": {"float32": 67.0, "tf32": 495.0, "bfloat16": 989.0, "float16": 989.0},
        "bandwidth_gbs": 3350,
        "memory_gb": 80,
        "source": "NVIDIA H100 Tensor Core GPU datasheet (SXM)",
    },
    "A100": {
        "tflops": {"float32": 19.5, "tf32": 156.0, "bfloat16": 312.0, "float16": 312.0},
        "bandwidth_gbs": 1555,
        "memory_gb": 40,
        "source": "NVIDIA A100 Tensor Core GPU datasheet (40 GB SXM)",
    },
    "V100": {
        "tflops": {"float32": 15.7, "float16": 125.0},
        "bandwidth_gbs": 900,
        "memory_gb": 16,
        "source": "NVIDIA Tesla V100 GPU Accelerator datasheet (SXM2)",
    },
    "T4": {
        "tflops": {"float32": 8.1, "float16": 65.0},
        "bandwidth_gbs": 320,
        "memory_gb": 16,
        "source": "NVIDIA T4 Tensor Core GPU datasheet",
    },
    "L4": {
        "tflops": {"float32": 30.3, "tf32": 60.0, "bfloat16": 121.0, "float16": 121.0},
        "bandwidth_gbs": 300,
        "memory_gb": 24,
        "source": "NVIDIA L4 Tensor Core GPU datasheet",
    },
}


def table(models=None):
    """The blog's speeds (only `models`' if given) as a DataFrame labelled as the source's
    (notebooks 07 and 08)."""
    import pandas as pd

    columns = (
        "model",
        "machine (source 000, not measured here)",
        "published speed",
        "utilisation",
    )
    return pd.DataFrame(
        [
            dict(zip(columns, row))
            for row in SPEEDS
            if models is None or row[0] in models
        ]
    )
