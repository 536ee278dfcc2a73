"""Notebook 00's exercise checks (setup and hardware)."""

from ..exercises import Exercise, choice, number

# FLOP per byte of a float32 128×128 multiply: 21.3
AT_128 = 2 * 128**3 / (3 * 128**2 * 4)


def _small(answer, balance):
    """Exercise 1: a, fixed costs, on every machine; b's reply follows the learner's own
    balance point."""
    below = (
        f"your roofline puts its {AT_128:.0f} FLOP per byte below your balance point of "
        f"{balance:.1f}, so fed from memory it would be bandwidth-bound; but its three "
        "matrices (192 KB) stay in the CPU's caches from one call to the next, so memory "
        "does not feed it: the fixed cost of each call holds it back."
    )
    above = (
        f"a 128×128 multiply does {AT_128:.0f} FLOP per byte it moves, above your CPU's "
        f"balance point of {balance:.1f} FLOP/byte: by the roofline it could run at the "
        "peak, so memory is not what holds it back."
    )
    return choice(
        "a",
        {
            "b": below if AT_128 < balance else above,
            "c": "a CPU lowers its clock, if at all, under long heavy SIMD work, which the large "
            "multiplies are; a small one runs at the higher clock. What weighs is the fixed "
            "cost of each call.",
        },
    )(answer)


def _seconds(gflops):
    return 2 * 4096**3 / (gflops * 1e9)


def exercises():
    return [
        Exercise(
            "00",
            1,
            _small,
            given=("balance",),
            hints="count the FLOP of a 128×128 multiply (2n³) and compare its time with the "
            "microseconds that calling any operation costs; then place it on the roofline: its "
            "intensity is 2n³ / (3n² · 4 bytes).",
            worked="a. A 128×128 multiply is only 4.2 MFLOP, so the fixed cost of a call "
            "(Python, handing the operation to TensorFlow, bringing the matrices into the "
            "caches; on a GPU the kernel launch, the CPU asking the GPU to run one compiled "
            "routine) takes as long as the arithmetic. Its intensity, 21 FLOP/byte, lies above "
            "the balance point of most CPUs (section 5 printed yours); where it lies below, "
            "its three matrices (192 KB) still stay in the caches between calls, so bandwidth "
            "is not the limit on any machine. Large matrices share those costs out and keep "
            "every SIMD lane busy.",
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
            worked="0.5 FLOP/byte: 2n² FLOP over about 4n² bytes. Far below any balance point "
            "printed above (this CPU's and every GPU's), so it is memory-bound: which is why "
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
