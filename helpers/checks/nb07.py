"""Notebook 07's exercise checks (the input pipeline)."""

from ..exercises import Exercise, choice, timed_choice


def _loader(answer):
    """Exercise 4: the learner's PyDataset, with the workers that fit_generator had."""
    import keras

    if not isinstance(answer, keras.utils.PyDataset):
        return (
            f"that is a {type(answer).__name__}; Keras 3's replacement for a "
            "keras.utils.Sequence fed to fit_generator is a keras.utils.PyDataset."
        )
    if answer.workers != 4 or not answer.use_multiprocessing:
        return (
            f"it has workers={answer.workers}, use_multiprocessing="
            f"{answer.use_multiprocessing}: in Keras 3 the workers moved from fit to the "
            "dataset, so give it workers=4 and use_multiprocessing=True."
        )
    return None


def exercises():
    return [
        Exercise(
            "07",
            1,
            timed_choice(("4 threads", "1 thread"), "images/s"),
            given=("speeds",),
            hints="each call a short fit of 5 steps, so that the loader's workers run as "
            "in training: timing.alternate({'4 threads': lambda: net.fit(PillowBatches(paths, "
            "labels, 64, 32, augment=False, workers=4), steps_per_epoch=5, epochs=1, "
            "verbose=0), '1 thread': ... workers=1 ...}, units=5 * 32, rounds=c.rounds, "
            "seconds=c.seconds). Try processes (use_multiprocessing=True) and batch 64 the "
            "same way.",
            worked="It depends on the machine. More workers prepare batches side by side, "
            "but on a CPU-only machine they share the cores with the network: they help only "
            "while a core would otherwise idle. Threads take turns at Python code (the global "
            "interpreter lock, GIL, lets one thread of a process run Python at a time; Pillow "
            "lets go of it while it decodes); processes avoid the lock but must send every "
            "batch back. A larger batch spreads a step's fixed cost over more pictures.",
        ),
        Exercise(
            "07",
            2,
            choice(
                "a",
                {
                    "b": "prefetch only moves the work, overlapping the next batch "
                    "with the current "
                    "step: with every core busy there is no idle core to move it to.",
                    "c": "they differ: cache removes the decoding from the second "
                    "pass on, prefetch "
                    "removes nothing, it only overlaps.",
                },
            ),
            hints="which of the two makes less work, and which only moves it to another time?",
            worked="a. `image_pipeline(paths, labels, 64, 32, repeat=True, cache=True, "
            "prefetch=False)` and the same with `cache=False, prefetch=True`, each timed in "
            "alternation with the course pipeline as in section 5. cache removes the decoding "
            "from the second pass on; prefetch overlaps the next batch with the current step, "
            "which helps only where a core is free for it.",
        ),
        Exercise(
            "07",
            3,
            choice(
                "a",
                {
                    "b": "which augmentation is faster is a second question; the "
                    "slowdown's trouble is "
                    "its yardstick: the in-memory run is then another network.",
                    "c": "the slowdown is a ratio of speeds; it says nothing about accuracy.",
                },
            ),
            hints="a slowdown is 1 − pipeline speed ÷ the same network's speed from memory. "
            "Without its augmentation layers, which network runs from memory?",
            worked="a. The in-memory run now uses a network without augmentation layers, "
            "which does less work per picture: the yardstick is another network, and the "
            "slowdown now counts Python's augmentation as input work. Compare the two runs' "
            "images/s instead: both do the same whole job (decode, augment, train).",
        ),
        Exercise(
            "07",
            4,
            _loader,
            hints="write a `class Batches(keras.utils.PyDataset)` like `PillowBatches` in "
            "section 3: `__init__(self, ..., **kwargs)` calls `super().__init__(**kwargs)`; "
            "`__len__` and `__getitem__`. Create it with workers=4, "
            "use_multiprocessing=True, and pass that object to the check.",
            worked="`model.fit(Batches(..., workers=4, use_multiprocessing=True), "
            "steps_per_epoch=250, epochs=25)`: `fit_generator` is gone (fit takes a PyDataset), "
            "and the workers moved from `fit` to the dataset.",
        ),
    ]
