"""Notebook 08's exercise checks (CPU against GPU)."""

from .. import published
from ..exercises import Exercise, choice, number, timed_choice

SERVER = published.CIFAR10_EXAMPLES_PER_S["16-core server"]


def _mflop(convs_per_stage):
    from .. import models, roofline

    return (
        roofline.flops_per_image(models.cats_dogs_deep(convs_per_stage=convs_per_stage))
        / 1e6
    )


def _ratio(gpu, dtype, base="float32"):
    from .. import roofs

    return roofs.published_peak(gpu, dtype) / roofs.published_peak(gpu, base)


def _bound():
    """Which roof binds the roofline's estimate for the 128-px net on an A100 in TF32: a memory,
    b compute."""
    from .. import models, roofline, roofs

    found = roofline.predict(
        models.cats_dogs_net("3"), roofs.published_roofs(("A100",))[0], "tf32"
    )
    return "a" if found["bound"] == "memory" else "b"


def exercises():
    return [
        Exercise(
            "08",
            1,
            timed_choice(("batch 128", "batch 32"), "images/s"),
            given=("speeds",),
            hints="net = models.build('cifar10_net'); xs, ys = "
            "benchmark.synthetic_data(net, 128, 1); then timing.alternate({'batch 128': lambda: "
            "net.train_on_batch(xs, ys), 'batch 32': lambda: net.train_on_batch(xs[:32], "
            "ys[:32])}, units={'batch 128': 128, 'batch 32': 32}, rounds=c.rounds, "
            "seconds=c.seconds).",
            worked="The course's expectation: smaller batches do less work per step for the "
            "same fixed costs, so images/s and the peak share drop. On a CPU the drop can be "
            "small, even within the noise (c). On a GPU it is usually much larger: each step "
            "launches the same number of kernels, each with a quarter of the work, and a GPU "
            "needs large batches to fill its thousands of units.",
        ),
        Exercise(
            "08",
            2,
            number(
                lambda: _mflop(2),
                {
                    lambda: _mflop(
                        8
                    ): "that is the 32-conv net (8 convolutions a stage); this one has "
                    "2 a stage."
                },
                unit=" MFLOP",
                within=0.02,
            ),
            hints="roofline.flops_per_image(cats_dogs_deep(convs_per_stage=2)) / 1e6, "
            "and the same with the default 8 for the 32-conv net.",
            worked="It needs about 347 MFLOP instead of about 1,820, roughly a fifth: at the "
            "same share of the peak the CPU would train it about 5× faster. Its intensity "
            "(`roofline.arithmetic_intensity`) drops from about 110 to about 72 FLOP/byte, so "
            "on a GPU it would gain less.",
        ),
        Exercise(
            "08",
            3,
            number(
                lambda: SERVER / 16,
                {
                    SERVER: "that is the whole server's figure: divide by its 16 cores.",
                    SERVER * 16: "divide by the 16 cores, do not multiply.",
                },
                unit=" examples/s",
                within=0.03,
            ),
            hints=f"the source's server: {SERVER} CIFAR-10 examples/s on 16 cores.",
            worked=f"{SERVER} / 16 ≈ 13 examples/s per core there; here, divide this "
            "machine's figure by its usable cores (notebook 00's table). Still unfair: the cores "
            "differ (SIMD width, clock, memory bandwidth per core), and so does the software "
            "(TensorFlow 1 and the tutorial's own input pipeline there; TensorFlow 2.21, "
            "in-memory data and oneDNN here).",
        ),
        Exercise(
            "08",
            4,
            number(
                lambda: _ratio("V100", "float16"),
                {
                    lambda: _ratio(
                        "A100", "bfloat16", "tf32"
                    ): "that is Ampere's ratio, over TF32, "
                    "which TensorFlow's float32 uses there; "
                    "a V100 has no TF32."
                },
                unit="x",
                within=0.02,
            ),
            hints="roofs.published_peak('V100', 'float16') / "
            "roofs.published_peak('V100').",
            worked="About 8× by the datasheet: mixed precision runs the multiplies on the "
            "Tensor Cores and halves the bytes each activation moves. On Ampere and newer only "
            "about 2× (over TF32, which float32 already uses there). Fixed costs per step stay, "
            "so larger batches matter even more. On a GPU: `python -m tools.bench --model "
            "cifar10_net --model cats_dogs_128px --device gpu:0 --batch 512 --dtype float16 "
            "--record` measures it.",
        ),
        Exercise(
            "08",
            5,
            choice(
                lambda: _bound(),
                {
                    "a": "the prediction's `bound` says compute: the net's intensity "
                    "lies right of the "
                    "A100's TF32 ridge point.",
                    "b": "the prediction's `bound` says memory: the net's training "
                    "intensity lies left "
                    "of the A100's TF32 ridge point (its peak over its bandwidth).",
                },
            ),
            hints="compare the net's intensity (`roofline.predict(...)['intensity']`) with the "
            "ridge point: the A100's TF32 peak over its memory bandwidth.",
            worked="The memory roof: the net's training intensity at batch 32, about 32 "
            "FLOP/byte, lies left of the A100's TF32 ridge point (156 TFLOP/s over 1,555 GB/s, "
            "about 100 FLOP/byte), so the estimate reaches about 50 TFLOP/s: roughly 41,000 "
            "pictures/s (an estimate: caches can beat a memory roof read at the cache-blind "
            "count; the upper bound, the compute roof, is about 131,000). In 16 bits the "
            "activations' bytes halve and the intensity nearly doubles to about 63 FLOP/byte, "
            "still left of the 16-bit ridge point (about 200): memory-bound at about twice that "
            "speed.",
        ),
    ]
