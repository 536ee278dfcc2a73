"""The figures the course's sources published: shown beside ours, never measured here.

Source 000 is the blog in two parts (the cat/dog ladder on a Tesla V100, and the CPU/GPU
comparison); COURSE.md lists the sources. Notebooks 05, 07 and 08 read these instead of
typing them in, and label them as the source's wherever they are shown.
"""

__all__ = ["CIFAR10_EXAMPLES_PER_S", "LADDER_ACCURACY", "LADDER_PICTURES_PER_RUN",
           "LADDER_TRAINING", "LADDER_V100_SPEED", "SPEEDS", "table"]

# Training speed per model and machine, as the blog states it (text, as published).
SPEEDS = [  # (model, machine, speed, utilisation)
    ("cifar10_net", "Tesla V100 (batch 512)", "15,000-17,000 examples/s", "GPU ~45 % busy"),
    ("cifar10_net", "2x Xeon Silver 4110, 16 cores, AVX2 build (batch 512)",
     "~210 examples/s", ""),
    ("cifar10_net", "VirtualBox VM", "~90 examples/s", ""),
    ("cats_dogs_original", "VirtualBox VM, workers 1 / batch 32", "47 img/s", ""),
    ("cats_dogs_original", "VirtualBox VM, workers 4 / batch 64", "64 img/s", ""),
    ("cats_dogs_original", "Tesla V100", "~3x after tuning workers and batch; ~4x the "
     "16-core server", "GPU 0-10 % busy, CPU ~10 %: input-bound"),
    ("cats_dogs_improved", "Tesla V100", "425 img/s; ~23x the CPU", "GPU ~50 % busy"),
    ("cats_dogs_improved", "Tesla V100, no shear/zoom/flip (step 2b)", "533 img/s", ""),
    ("cats_dogs_128px", "Tesla V100", "333 img/s", ""),
    ("cats_dogs_deep", "16-core server, CPU only", "~3 img/s", ""),
    ("cats_dogs_deep", "Tesla V100", "~100x the CPU, about the improved net's speed",
     "GPU 100 % busy"),
]

# The same CIFAR-10 speeds as numbers (examples/s; the V100's is the middle of its range).
CIFAR10_EXAMPLES_PER_S = {"Tesla V100": 16_000, "16-core server": 210, "VirtualBox VM": 90}
SERVER_CORES = 16

# The cat/dog ladder (notebook 05): validation accuracy in % per step.
LADDER_ACCURACY = {"0": 80, "1": 84, "2": 90, "2b": 85, "3": 94}
# Its V100 training speeds in pictures/s, where it gives a figure (for step 1 it says only
# "unchanged", and none for step 0).
LADDER_V100_SPEED = {"2": 425, "2b": 533, "3": 333}
# How long each ladder run trained: Keras 2's fit_generator(steps_per_epoch=8000, epochs=25) at
# batch 32 (part 1: "8.000 Schritte und 32 Bilder pro Schritt"), i.e. 256,000 pictures an
# "epoch", 32 passes over the 8,000 training photos, 800 passes in a run.
LADDER_TRAINING = {"epochs": 25, "steps_per_epoch": 8000, "batch": 32, "photos": 8000}
LADDER_PICTURES_PER_RUN = (LADDER_TRAINING["epochs"] * LADDER_TRAINING["steps_per_epoch"]
                           * LADDER_TRAINING["batch"])


def table(models=None):
    """The source's speeds (optionally only for `models`) as a DataFrame labelled as the
    source's, so that no reader takes them for a measurement."""
    import pandas as pd

    columns = ("model", "machine (source 000, not measured here)", "published speed",
               "utilisation")
    return pd.DataFrame([dict(zip(columns, row)) for row in SPEEDS
                         if models is None or row[0] in models])
