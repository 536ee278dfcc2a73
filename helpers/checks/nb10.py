"""Notebook 10's exercise checks (multi-device training)."""

from ..exercises import Exercise, choice, number


def exercises():
    return [
        Exercise(
            "10",
            1,
            number(
                lambda: 320,
                {
                    333: "that splits the files three ways; my_share keeps whole global "
                    "batches of 3 x 32 = 96 pictures only.",
                    334: "that splits the files three ways; my_share keeps whole global "
                    "batches of 3 x 32 = 96 pictures only.",
                    960: "that is what the three workers read together; each reads a third.",
                    992: "that counts batches of 32 over all the files; the global batch "
                    "is 3 x 32 = 96, and each worker reads a third of it.",
                },
                unit=" pictures",
            ),
            hints="the global batch is workers x per-worker batch; how many whole global "
            "batches do 1,000 files hold, and what share of each does one worker read?",
            worked="320. The global batch is 3 x 32 = 96 pictures; 1,000 files hold 10 whole "
            "global batches (960 pictures; my_share leaves the last 40 out), and each step "
            "a worker reads its 32: 10 x 32 = 320 pictures an epoch, 10 steps.",
        ),
        Exercise(
            "10",
            2,
            choice(
                "a",
                {
                    "b": "every worker writes its own checkpoint; the restart reads "
                    "them, whichever "
                    "worker died.",
                    "c": "the restart starts every worker again, the chief included.",
                },
            ),
            hints="run training.wait(start('fault', 2, **job), kill_at=(0, 1)), then the "
            "restart cell, and read which epoch it resumes from.",
            worked="a. Worker 1 now fails with the connection error; the restart resumes from "
            "epoch 2 as before, because every worker kept its own checkpoint. On a cluster, "
            "losing the chief also loses whatever only the chief writes (the final model, logs) "
            "until the restart.",
        ),
        Exercise(
            "10",
            3,
            number(
                lambda replicas: 5.0 * (replicas + 1),
                {
                    lambda replicas: (
                        5.0 * replicas * (replicas + 1)
                    ): "that is the sum; 'mean' divides it by the replicas."
                },
                within=1e-6,
            ),
            given=("replicas",),
            hints="replica i contributes 10·(i + 1): with two replicas 10 and 20. What is their "
            "mean?",
            worked="15.0 with two replicas, on every replica. Keras averages gradients over the "
            "global batch by dividing each replica's loss by the global batch size and then "
            "summing the gradients: the same as a mean of per-replica means when the replicas' "
            "batches are equal.",
        ),
        Exercise(
            "10",
            4,
            choice(
                "a",
                {
                    "b": "the checkpoint holds the optimizer already: Checkpoint(model=..., "
                    "optimizer=..., epoch=...).",
                    "c": "the learning rate is a constant of the script; it is the "
                    "same after a restart.",
                },
            ),
            hints="two things decide which pictures an epoch sees and how they are changed: "
            "the augmentation layers' random state, and the pipeline's place in the data.",
            worked="a. The augmentation layers' random state: add it to the checkpoint in "
            "`restore_or_start`, `seeds=[v.value for v in model.variables if 'seed_generator' in "
            "v.path]` (Keras keeps each random layer's state in a seed_generator_state "
            "variable, which model.weights leaves out). And the pipeline's place: after "
            "`restore_or_start`, skip the finished epochs' batches, `for _ in "
            "range(int(epoch.numpy()) * steps): next(batches)`. Save notebooks/10_worker.py, run "
            "the two-worker run, the crash, the restart and the comparison again: expect the "
            "same losses and the same final weights.",
        ),
    ]
