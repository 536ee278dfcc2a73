"""One worker of notebook 10's multi-worker training: `python -m helpers.worker FOLDER`.

helpers.distributed starts one per worker with its TF_CONFIG; FOLDER/job.json says what to
train (keys: JOB_DEFAULTS). Notebook 10 writes out `join_cluster`, `my_share`,
`restore_or_start` and the step functions (tests keep them identical); `main` adds the
records in FOLDER: progress lines, losses, images/s, validation accuracy, final weights.
It trains with the step `fit` would run: Keras 3's `fit` fails under
MultiWorkerMirroredStrategy with two or more workers (keras-team/keras issue 20585).
"""

import json
import os
import sys
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from . import config, data, models
from .timing import StepTimer

__all__ = ["JOB_DEFAULTS", "join_cluster", "main", "my_share", "read_job", "restore_or_start"]

JOB_DEFAULTS = {"per_worker_batch": 16, "train_limit": None, "val_limit": None, "epochs": 2,
                "threads": 1, "profile": "sample"}


def read_job(path):
    """FOLDER/job.json merged over JOB_DEFAULTS; unknown keys are an error (notebook 10)."""
    job = json.loads((Path(path) / "job.json").read_text())
    unknown = sorted(set(job) - set(JOB_DEFAULTS))
    if unknown:
        raise ValueError(f"Unknown job keys {unknown}; known: {', '.join(JOB_DEFAULTS)}.")
    return {**JOB_DEFAULTS, **job}


def join_cluster():
    """The strategy of the cluster in TF_CONFIG, and the net and optimizer mirrored by it
    (notebook 10)."""
    strategy = tf.distribute.MultiWorkerMirroredStrategy()  # reads TF_CONFIG, waits for all
    with strategy.scope():
        model = models.cats_dogs_net("0", seed=config.SEED)
        optimizer = keras.optimizers.Adam()
        optimizer.build(model.trainable_variables)
    return strategy, model, optimizer


def my_share(context, paths, labels, global_batch):
    """The files of one worker's input pipeline: every n-th from its own index, whole global
    batches only (notebook 10)."""
    steps = len(paths) // global_batch
    mine = slice(context.input_pipeline_id, steps * global_batch, context.num_input_pipelines)
    return paths[mine], labels[mine]


def restore_or_start(model, optimizer, folder):
    """An epoch counter and a checkpoint manager of model, optimizer and counter in `folder`,
    restored from its latest checkpoint if there is one (notebook 10)."""
    epoch = tf.Variable(0, dtype=tf.int64, trainable=False)
    backup = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model, optimizer=optimizer, epoch=epoch), str(folder),
        max_to_keep=2)
    if backup.latest_checkpoint:
        backup.checkpoint.restore(backup.latest_checkpoint).assert_existing_objects_matched()
    return epoch, backup


def log(*parts):
    print(*parts, flush=True)


def _accuracy(model, job):
    """The share of the validation pictures the model gets right."""
    paths, labels, _ = data.cats_dogs_files("validation", limit=job["val_limit"])
    correct = 0
    for images, targets in data.image_pipeline(paths, labels, model.input_shape[1], 64):
        predicted = keras.ops.convert_to_numpy(model(images, training=False))[:, 0] > 0.5
        correct += int(np.sum(predicted == targets.numpy().astype(bool)))
    return correct / len(paths)


def main(path):
    """Train the job in FOLDER `path` as one worker of the cluster TF_CONFIG describes."""
    path = Path(path)
    job = read_job(path)
    os.environ["COURSE_PROFILE"] = job["profile"]
    # One thread pool per worker, sized as if each worker were its own machine.
    tf.config.threading.set_intra_op_parallelism_threads(job["threads"])
    tf.config.threading.set_inter_op_parallelism_threads(job["threads"])
    config.set_seed(config.SEED)
    strategy, model, optimizer = join_cluster()
    index, replicas = strategy.cluster_resolver.task_id, strategy.num_replicas_in_sync
    global_batch = job["per_worker_batch"] * replicas
    paths, labels, _ = data.cats_dogs_files("train", limit=job["train_limit"])
    steps = len(paths) // global_batch
    if steps < 1:
        raise ValueError(f"{len(paths)} training pictures are fewer than one global batch "
                         f"({global_batch}): use more pictures or a smaller batch.")
    log(f"worker {index}: {replicas} replica(s) in sync, global batch {global_batch} = "
        f"{job['per_worker_batch']} per worker x {replicas}; reads "
        f"{steps * job['per_worker_batch']} of {steps * global_batch} pictures (its share), "
        f"{steps} steps per epoch")

    def shard(context):  # called once on each worker, with that worker's context
        mine = my_share(context, paths, labels, global_batch)
        batch = context.get_per_replica_batch_size(global_batch)
        return data.image_pipeline(*mine, model.input_shape[1], batch, shuffle=True).repeat()

    batches = iter(strategy.distribute_datasets_from_function(shard))
    epoch, backup = restore_or_start(model, optimizer, path / f"backup_{index}")
    if int(epoch.numpy()):
        log(f"worker {index}: restored {Path(backup.latest_checkpoint).name}, "
            f"resuming after epoch {int(epoch.numpy())}")

    def replica_step(images, targets):
        with tf.GradientTape() as tape:
            predicted = model(images, training=True)
            per_example = keras.losses.binary_crossentropy(
                tf.cast(targets[:, None], predicted.dtype), predicted)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))  # all-reduce
        return loss

    @tf.function
    def train_step(iterator):
        losses = strategy.run(replica_step, args=next(iterator))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    progress, first_epoch, losses, rates = path / f"progress_{index}.txt", None, [], []
    clock = StepTimer()
    while int(epoch.numpy()) < job["epochs"]:
        number = int(epoch.numpy()) + 1
        first_epoch = first_epoch or number
        with open(progress, "a") as f:
            f.write(f"epoch {number} start\n")
        clock.start()
        total = 0.0
        for _ in range(steps):
            total += float(train_step(batches))
            clock.step()
        rates.append(clock.images_per_s(global_batch))  # first step: tracing and decoding
        losses.append(total / steps)
        epoch.assign_add(1)
        backup.save()
        with open(progress, "a") as f:
            f.write(f"epoch {number} end\n")
        log(f"worker {index}: epoch {number}/{job['epochs']}  loss {losses[-1]:.4f}  "
            f"{rates[-1]:,.0f} images/s (all workers together)  {clock.wall_s():.1f} s")
    result = {"first_epoch": first_epoch, "epochs": job["epochs"], "losses": losses,
              "images_per_s": rates[-1] if rates else None, "val_accuracy": _accuracy(model, job)}
    np.savez(path / f"weights_{index}.npz", *[w.numpy() for w in model.weights])
    (path / f"result_{index}.json").write_text(json.dumps(result, indent=1))
    # A last all-reduce as a barrier: worker 0 hosts the cluster's coordination service,
    # so it must not exit while the others are still validating.
    strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(lambda: tf.constant(1.0)), axis=None)
    log(f"worker {index}: done (epochs {first_epoch}-{job['epochs']}), validation accuracy "
        f"{result['val_accuracy']:.1%}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m helpers.worker FOLDER  (FOLDER holds job.json)")
    main(sys.argv[1])
