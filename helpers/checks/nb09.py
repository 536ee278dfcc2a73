"""Notebook 09's exercise checks (mixed precision)."""

from ..exercises import Exercise, choice, timed_choice


def _collapsed(answer, history):
    """Exercise 4: did the learner's own run collapse, as notebook 09 counts collapses (its
    last validation accuracy within one point of 50 %, or a loss that turned non-finite)?"""
    import math

    h = getattr(history, "history", history)
    last = h["val_accuracy"][-1]
    broken = any(not math.isfinite(x) for x in h.get("loss", []))
    right = "a" if broken or abs(last - 0.5) <= 0.01 else "b"
    said = (
        f"your run ended at {last:.1%} validation accuracy"
        + (", with a loss that turned non-finite" if broken else "")
        + "."
    )
    return choice(
        right,
        dict.fromkeys(
            "ab",
            f"{said} Notebook 09 counts a run as collapsed "
            "when it ends within one point of 50 % or its "
            "weights turn non-finite.",
        ),
    )(answer)


def exercises():
    return [
        Exercise(
            "09",
            1,
            timed_choice(("mixed_float16", "float32"), "pictures/s"),
            given=("speeds",),
            hints="build `models.cats_dogs_net('2', output_dtype='float32')` once under "
            "keras.config.set_dtype_policy('mixed_float16') and once under 'float32' (set it "
            "back afterwards), compile both, take one batch `x, y` and time "
            "`net.train_on_batch(x, y)` of each in alternation: timing.alternate("
            "{'mixed_float16': ..., 'float32': ...}, units=len(x), rounds=c.rounds, "
            "seconds=c.seconds).",
            worked="On a CPU expect b, float32 faster, usually by far: TensorFlow's CPU "
            "kernels take no fast float16 path for these layers, so every layer converts to "
            "float32 and back, even on a Xeon whose SIMD list (notebook 00) shows "
            "avx512_fp16; the loss scaling adds a little more. On a GPU with Tensor Cores, "
            "mixed_float16 is usually the faster.",
        ),
        Exercise(
            "09",
            2,
            choice(
                "a",
                {
                    "b": "the dtype policy is global: the pooling, Flatten and Dense "
                    "layers compute in "
                    "bfloat16 too; print each layer's dtype_policy.name.",
                    "c": "output_dtype='float32' gives the last Dense layer the "
                    "float32 policy: its "
                    "sigmoid is computed at full precision.",
                },
            ),
            hints="for layer in net.layers: print(layer.name, layer.dtype_policy.name), for "
            "the net built under mixed_bfloat16 with and without output_dtype='float32'.",
            worked="a. Every layer reports mixed_bfloat16 (computes in bfloat16, keeps float32 "
            "weights); with output_dtype='float32' the last Dense reports float32, so its "
            "sigmoid is computed at full precision.",
        ),
        Exercise(
            "09",
            3,
            choice(
                "a",
                {
                    "b": "bfloat16 has 7 mantissa bits against float16's 10: it keeps fewer digits "
                    "(1000.5 becomes 1000 in bfloat16).",
                    "c": "float16's largest value is 65,504: 10⁶ overflows to infinity.",
                },
            ),
            hints="np.array([0.1, 1/3, 1000.5, 1e6], np.float32).astype(np.float16), and the "
            "same with .astype(ml_dtypes.bfloat16).",
            worked="a. float16 (10 mantissa bits) keeps about 3 significant digits, bfloat16 "
            "(7 bits) about 2: 1000.5 becomes 1000 in bfloat16 and stays 1000.5 in float16. "
            "But 10⁶ overflows float16 (its largest value is 65,504) and stays finite in "
            "bfloat16, which has float32's exponent range.",
        ),
        Exercise(
            "09",
            4,
            _collapsed,
            given=("history",),
            hints="keras.config.set_dtype_policy('mixed_bfloat16'), then "
            "models.cats_dogs_net('3', output_dtype='float32'), compile with "
            "keras.optimizers.Adam(3e-4), fit 10 epochs with training.FiniteCheck() among the "
            "callbacks, and set the policy back to 'float32'. Keep the History.",
            worked="Your measurement decides: look at run.history['val_accuracy'][-1] (within "
            "one point of 50 % is a collapse) and at run.history['loss'] (a non-finite value "
            "is one too). One seed cannot rule a collapse out; the deep dive 09b compares "
            "recorded runs of several seeds.",
        ),
    ]
