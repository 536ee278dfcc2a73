"""Notebook 05's exercise checks (the improvement ladder)."""

from ..exercises import Exercise, choice, timed_choice


def _ahead(before, after):
    """A judge: is step `after` clearly above (a), clearly below (b) step `before`, or can the
    learner's own live seeds not tell (c)? From `ladder.difference` on their `rows`."""

    def judge(answer, rows):
        from .. import ladder

        missing = [step for step in (before, after) if step not in rows]
        if missing:
            return (
                f"`rows` has no step {' and '.join(missing)}: add it to s.steps and run "
                "the live training and section 4 again."
            )
        gain, interval = ladder.difference(rows[before], rows[after])
        if interval is None:
            right, said = (
                "c",
                f"{gain:+.1f} points from one seed each: no interval at all",
            )
        else:
            low, high = interval
            right = "a" if low > 0 else "b" if high < 0 else "c"
            said = f"{gain:+.1f} points, 95 % interval {low:+.1f} to {high:+.1f}"
        why = f"your own live runs say, step {after} minus step {before}: {said}."
        return choice(right, dict.fromkeys("abc", why))(answer)

    return judge


def exercises():
    return [
        Exercise(
            "05",
            1,
            _ahead("2b", "2"),
            given=("rows",),
            hints="set `s.epochs = 20`, run the live training cell and section 4 again; "
            "`ladder.difference(rows['2b'], rows['2'])` gives step 2's lead over 2b with its "
            "interval. An interval that spans 0 cannot tell.",
            worked="It depends on your seeds. Longer training gives the network without "
            "augmentation (2b) more time to memorise its training photos: its training accuracy "
            "keeps rising while its validation accuracy stalls, so step 2's lead tends to grow "
            "with epochs. With few seeds the interval stays wide: c is a fair answer where it "
            "spans 0.",
        ),
        Exercise(
            "05",
            2,
            _ahead("0", "2"),
            given=("rows",),
            hints="set `s.steps = ('0', '2', '2b')`, run the live training and section 4 "
            "again; `ladder.difference(rows['0'], rows['2'])` for your live runs, and "
            "`ladder.difference(recorded['0'], recorded['2'])` for the recorded ones.",
            worked="Compare your live interval with the recorded one. With a sixth of the "
            "photos and fewer epochs, expect the live interval wide: the recorded gain may not "
            "show. The verdicts only pair neighbouring steps, so compute this gain yourself.",
        ),
        Exercise(
            "05",
            3,
            timed_choice(("with BatchNorm", "without"), "pictures/s"),
            given=("speeds",),
            hints="copy `ladder_layers` into a cell (`import inspect; "
            "print(inspect.getsource(models.ladder_layers))`), under `from keras import "
            "layers` and `from helpers.models import augmentation`; give each Conv2D no "
            "activation and add `layers.BatchNormalization()`, then "
            "`layers.Activation('relu')`, after it. Build each network as "
            "`keras.Sequential(stack + [layers.Dense(1, activation='sigmoid')])`, "
            "the stack from your copy or from `models.ladder_layers()`. Compile both "
            "alike, take one batch `pictures, labels` and time "
            "`net.train_on_batch(pictures, labels)` of each in alternation, with "
            "`c = config.settings('compare')` and `from helpers import timing`: "
            "timing.alternate({'with BatchNorm': ..., 'without': ...}, units=len(labels), "
            "rounds=c.rounds, seconds=c.seconds).",
            worked="Usually b: every BatchNormalization layer adds work per picture (a mean "
            "and a variance per channel, then the scale and shift, forward and backward). "
            "Whether it learns faster per epoch is a second measurement: train both like the "
            "live steps and compare the validation accuracy after each epoch.",
        ),
    ]
