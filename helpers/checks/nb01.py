"""Notebook 01's exercise checks (CNN basics on MNIST)."""

from ..exercises import Exercise, choice, number, timed_choice

SAME_LOSS = (
    "sparse categorical cross-entropy on label 3 is -log p[3], the same number as "
    "categorical cross-entropy on its one-hot vector"
)


def _without_second_pool():
    """The primer's network with its second MaxPooling2D left out: the count ex. 3 asks for."""
    import keras
    from keras import layers

    net = keras.Sequential(
        [
            keras.Input((28, 28, 1)),
            layers.Conv2D(32, 3, activation="relu"),
            layers.MaxPooling2D(2),
            layers.Conv2D(64, 3, activation="relu"),
            layers.Conv2D(64, 3, activation="relu"),
            layers.Flatten(),
            layers.Dense(64, activation="relu"),
            layers.Dense(10, activation="softmax"),
        ]
    )
    return net.count_params()


def exercises():
    return [
        Exercise(
            "01",
            1,
            choice(
                "b",
                {
                    "a": "a `\\` line gives sums of up to ±2 beside it: the filter's "
                    "+1s lie on one side "
                    "of such a line and its -1s on the other.",
                    "c": "a vertical line gives sums of up to ±2 beside it: the "
                    "filter's left and right "
                    "columns do not cancel on it.",
                    "d": "a horizontal line gives sums of up to ±2, for the same "
                    "reason as a vertical one.",
                },
            ),
            hints="slide the filter over a one-pixel line of each kind in your head, or run "
            "`convolve(np.eye(12, dtype='float32'), k)` and "
            "`convolve(np.fliplr(np.eye(12, dtype='float32')), k)` and look at the largest "
            "absolute value of each.",
            worked="b. The filter's +1s sit in the top-right corner, its -1s in the bottom-left, "
            "and its diagonal from top left to bottom right is 0. A `/` line crosses a patch "
            "through one +1, the 0 in the middle and one -1, or through equal numbers of each "
            "beside it: every sum is 0. A `\\` line, a vertical and a horizontal line each put "
            "more ink on one side than on the other: sums of ±2 beside them.\n"
            "k = np.array([[0, 1, 1], [-1, 0, 1], [-1, -1, 0]], 'float32')\n"
            "plots.images([scale(convolve(digit, k))], columns=1)",
        ),
        Exercise(
            "01",
            2,
            choice(
                "a",
                {
                    "b": f"the loss is the same function ({SAME_LOSS}), so it cannot teach more.",
                    "c": f"no information is lost: {SAME_LOSS}.",
                    "d": "the network, its arithmetic and its batches are unchanged: "
                    "only the labels "
                    "shrink from 10 floats to one integer, a tiny share of a step's work.",
                },
            ),
            hints="write out the loss for one digit both ways: what does the one-hot vector "
            "select from the network's ten probabilities?",
            worked="a. `model.compile(optimizer='adam', loss='sparse_categorical_crossentropy', "
            "metrics=['accuracy'])` on `data.mnist('train', batch_size=s.batch)` (integer "
            f"labels). {SAME_LOSS}, so the accuracy differs only as much as two runs of the "
            "same loss do. It saves building and moving a 10-float vector per label: nothing "
            "here, much with 50,000 classes (notebook 02's word model has 1,000).",
        ),
        Exercise(
            "01",
            3,
            number(
                lambda: _without_second_pool(),
                {
                    93_322: "that is the network with both pools. Without the second "
                    "one, the third "
                    "conv layer sees an 11×11 map, not a 5×5 one.",
                    552_074: "the third conv layer has no padding: it shrinks 11×11 to 9×9, so "
                    "Flatten gives 9·9·64 numbers, not 11·11·64.",
                    388_000: "that is the count without biases: each filter and each "
                    "Dense unit has "
                    "one more weight. The exact count is asked.",
                },
            ),
            hints="follow the size: 28 → 26 (conv) → 13 (pool) → 11 (conv) → ? (conv, no "
            "pool now). Flatten gives that size squared times 64; the first Dense layer has "
            "(inputs + 1) · 64 weights; the conv layers keep their counts.",
            worked="388,234. The third conv layer now outputs 9×9×64 = 5,184 numbers instead of "
            "576, so the first Dense layer has (5,184 + 1)·64 = 331,840 weights instead of "
            "36,928: 320 + 18,496 + 36,928 + 331,840 + 650 = 388,234. Build it without the "
            "second `layers.MaxPooling2D(2)` and print `count_params()`.",
        ),
        Exercise(
            "01",
            4,
            timed_choice(
                ("batch 256", "batch 64"),
                "digits/s",
                "Did you give `units=` in digits per call?",
            ),
            hints="time one training step at each batch in alternation, counting digits "
            "(units=), not steps, then let `timing.ratio` decide:\n"
            "net = keras.models.clone_model(model)\n"
            "net.compile(optimizer='adam', loss='categorical_crossentropy')\n"
            "xs = x_train[:256, :, :, None].astype('float32') / 255\n"
            "ys = keras.utils.to_categorical(y_train[:256], 10)\n"
            "c = config.settings('compare')\n"
            "speeds = timing.alternate({'batch 64': lambda: net.train_on_batch(xs[:64], ys[:64]),"
            " 'batch 256': lambda: net.train_on_batch(xs, ys)},\n"
            "    units={'batch 64': 64, 'batch 256': 256}, rounds=c.rounds, seconds=c.seconds)\n"
            "print(timing.ratio(speeds['batch 256'], speeds['batch 64'], "
            "('batch 256', 'batch 64'), unit='digits/s')['text'])",
            worked="It depends on your machine and how busy it is; your own rounds "
            "decide. Usually batch 256 trains more digits per second: a step's fixed costs "
            "are shared by 4× the digits, and larger multiplies keep the cores busier. Each "
            "epoch then makes 4× fewer weight updates, so after the same epochs the accuracy "
            "is usually a little lower.",
            given=("speeds",),
        ),
        Exercise(
            "01",
            5,
            choice(
                "b",
                {
                    "a": "at 0.25 each step multiplies the distance to the best w by "
                    "1 - 0.25·9.33 = "
                    "-1.33: it grows, so w cannot settle.",
                    "c": "at 0.2 each step multiplies the distance to the best w by 1 - 0.2·9.33 = "
                    "-0.87: it flips sign but shrinks, so w settles.",
                    "d": "both rates overshoot: the factor 1 - rate·9.33 is negative for any rate "
                    "above 1/9.33 ≈ 0.107, so w lands on the other side of the best value.",
                },
            ),
            hints="the loss is a parabola in w; its slope is 9.33·(w - best w), where "
            "9.33 = 2·mean(x²). What does one step w ← w - rate·slope do to the distance to the "
            "best w?",
            worked="b. Each step multiplies the distance to the best w by 1 - rate·9.33: -0.87 "
            "at 0.2 (the sign flips, the size shrinks: w swings from side to side and settles), "
            "-1.33 at 0.25 (the swings grow and the loss explodes). Any rate above "
            "2/9.33 ≈ 0.21 diverges here; networks have such a limit too.",
        ),
    ]
