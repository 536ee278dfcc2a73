"""Notebook 00's exercise checks (setup and hardware)."""

from ..exercises import Exercise, choice, number

# Exercise 1: the 95 % interval of A's speed over B's that the learner reads a verdict from
LOW, HIGH = 0.97, 1.25


def _seconds(gflops):
    return 2 * 4096**3 / (gflops * 1e9)


def exercises():
    return [
        Exercise(
            "00",
            1,
            choice(
                "c",
                {
                    "a": f"the interval starts at {LOW}, below 1: B may be as fast as A or "
                    "faster. 'A is faster' needs the whole interval above 1.",
                    "b": f"'the same' needs the whole interval within 10 % either way "
                    f"(0.91-1.10x); it reaches {HIGH}.",
                },
            ),
            hints="compare the interval's two ends with 1 and with the 10 % band "
            "(0.91-1.10x): which of the three rules does it meet?",
            worked=f"c, inconclusive. {LOW}-{HIGH}x reaches below 1, so A is not surely "
            "faster, and above 1.10, so the two are not surely the same: the machine's "
            "speed moved more than the difference. Rerun when it is quieter, or with more "
            "rounds.",
        ),
        Exercise(
            "00",
            2,
            number(
                lambda: 0.5,
                {
                    2: "that is FLOP per number: each float32 number is 4 bytes.",
                    0.25: "a multiply-add is 2 FLOP: an n×n matrix times a vector is 2n² FLOP.",
                    1
                    / 6: "a matrix-vector product moves one matrix; the two vectors are n numbers "
                    "each, nothing beside its n².",
                },
                unit=" FLOP/byte",
                within=0.04,
            ),
            hints="FLOP: n² multiply-adds. Bytes: the n×n matrix dominates, 4 bytes a number. "
            "Divide, and let n grow large.",
            worked="0.5 FLOP/byte: 2n² FLOP over about 4n² bytes. Far below your balance "
            "point `ours` (and every GPU's datasheet one), so it is memory-bound: which is why "
            "batch-1 inference, a matrix times one vector per layer, rarely reaches the "
            "FLOP/s peak.",
        ),
        Exercise(
            "00",
            3,
            number(
                _seconds,
                {
                    lambda gflops: (
                        _seconds(gflops) / 2
                    ): "a multiply-add is 2 FLOP: 2·4096³ FLOP.",
                    lambda gflops: (
                        _seconds(gflops) * 1000
                    ): "that is milliseconds; the check wants seconds.",
                },
                unit=" s",
                within=0.03,
            ),
            given=("gflops",),
            hints="2·4096³ FLOP divided by your best rate in FLOP/s (GFLOP/s × 10⁹). Your best "
            "float32 rate: max(speeds['cpu:0 float32'][1]).",
            worked="2·4096³ ≈ 137.4 GFLOP, divided by your best float32 rate (at 200 GFLOP/s, "
            "0.69 s). At the H200's datasheet peak, `roofs.published_peak('H200')` (67 "
            "TFLOP/s in plain float32), about 2 ms; TensorFlow would run it as TF32 there by "
            "default, with a higher peak still.",
        ),
    ]
