"""Notebook 02's exercise checks (RNN basics on text)."""

from ..exercises import Exercise, choice, number, timed_choice


def _lstm(vocabulary):
    from .. import models

    return models.text_lstm(vocabulary=vocabulary).count_params()


def _rated(answer, scores):
    """Exercise 3: which of the learner's two reviews their own model rated more positive."""
    import numpy as np

    values = np.asarray(scores, dtype="float64").ravel()
    if values.size != 2:
        return (
            "`scores` should hold your model's two outputs, the positive review's first: "
            "lstm_model.predict(reviews(tf.constant([positive, sarcastic])))."
        )
    said = (
        f"your model gave the positive review {values[0]:.4f} and the sarcastic one "
        f"{values[1]:.4f}."
    )
    return choice("a" if values[0] >= values[1] else "b", {"a": said, "b": said})(
        answer
    )


def exercises():
    return [
        Exercise(
            "02",
            1,
            number(
                lambda: _lstm(3000),
                {
                    lambda: _lstm(
                        1000
                    ): "that is the 1,000-token model: the Embedding and the output "
                    "layer both grow with the vocabulary.",
                    lambda: (
                        _lstm(3000) - 3000
                    ): "the output layer has a bias for every word too.",
                    lambda: (
                        _lstm(3000) - 4 * 128 * 128
                    ): "each of the LSTM's 4 gates sees the input "
                    "(128) and its previous output (128).",
                    lambda: (
                        _lstm(3000) - 2000 * 129
                    ): "the output Dense layer grows with the vocabulary "
                    "too: 128 weights and a bias per word.",
                },
            ),
            hints="Embedding: vocabulary × 128. LSTM: 4 gates × (128 inputs + 128 previous "
            "outputs + 1 bias) × 128 units, whatever the vocabulary. Dense: 128 × vocabulary "
            "+ vocabulary.",
            worked="902,584: Embedding 3,000·128 = 384,000; LSTM 4·(128·(128 + 128) + 128) "
            "= 131,584 (the same as before: it does not depend on the vocabulary); Dense "
            "128·3,000 + 3,000 = 387,000. `text_lstm(vocabulary=3000).count_params()` "
            "agrees.",
        ),
        Exercise(
            "02",
            2,
            choice(
                "a",
                {
                    "b": "a low temperature sharpens the distribution: dividing the "
                    "log-probabilities by "
                    "0.01 multiplies the gaps between words a hundredfold.",
                    "c": "dividing the log-probabilities by 0.01 changes the "
                    "probabilities a lot: the "
                    "most likely word gets nearly all of it.",
                },
            ),
            hints="run `with_temperature(np.array([0.5, 0.3, 0.2]), 0.01)` and look at what "
            "is left for the second and third word.",
            worked="a. Dividing the log-probabilities by 0.01 leaves the most likely word almost "
            "all the probability: the generator becomes greedy and soon loops on a few words, "
            "because the same 20-word window keeps giving the same prediction.",
        ),
        Exercise(
            "02",
            3,
            _rated,
            given=("scores",),
            hints="scores = lstm_model.predict(reviews(tf.constant([positive, sarcastic])))"
            "; the first output is the positive review's.",
            worked="Read your own scores. Expect the positive one above 0.5 but not near 1: "
            "a one-line review gives a model trained on 200-word reviews few cues. The "
            "sarcastic one often lands above 0.5 too: it sees 'great' and no clearly negative "
            "word; 2,000 training reviews teach word-level cues, not irony.",
        ),
        Exercise(
            "02",
            4,
            timed_choice(("default", "use_cudnn=False"), "reviews/s"),
            given=("speeds",),
            hints="build the page's sentiment LSTM again with the layer's flag off, "
            "compile it alike, then time both (`clone_model` does not keep `use_cudnn`):\n"
            "no_cudnn = keras.Sequential([keras.Input((200,), dtype='int32'), "
            "layers.Embedding(reviews.vocabulary_size(), 64, mask_zero=True), "
            "layers.LSTM(32, use_cudnn=False), layers.Dense(1, activation='sigmoid')])\n"
            "no_cudnn.compile(optimizer=keras.optimizers.Adam(3e-4), "
            "loss='binary_crossentropy', metrics=['accuracy'])\n"
            "pair = timing.alternate({'default': steps['LSTM'], 'use_cudnn=False': lambda: "
            "no_cudnn.train_on_batch(batch_ids, batch_labels)}, units=len(batch_labels), "
            "rounds=c.rounds, seconds=c.seconds)",
            worked="On a GPU expect the cuDNN LSTM many times as fast: without cuDNN Keras "
            "runs the step loop on the GPU, many tiny kernels per word, each kernel launch "
            "costing microseconds. On a CPU there is no cuDNN, so both run the same code: "
            "expect c, the same or inconclusive. The results of the layer do not change, "
            "only the speed.",
        ),
    ]
