"""Notebook 10's worker: `python 10_worker.py FOLDER`, its job in FOLDER/job.json and its
place in the cluster in the environment variable TF_CONFIG. Every worker runs this file."""

import json
import os
import sys
import time
from pathlib import Path

from helpers import config, data, folders, models

import keras
import numpy as np
import tensorflow as tf


# The training step (section 2). It uses the script's model, optimizer, strategy and
# global_batch: a worker makes them in its __main__ part, notebook 10's kernel before %run.
def replica_gradients(images, targets):
    with tf.GradientTape() as tape:
        predicted = model(images, training=True)
        per_example = keras.losses.binary_crossentropy(
            tf.cast(targets[:, None], predicted.dtype), predicted
        )
        loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch)
    return loss, tape.gradient(loss, model.trainable_variables)


def replica_step(images, targets):
    loss, gradients = replica_gradients(images, targets)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))  # all-reduce
    return loss


@tf.function
def train_step(iterator):
    losses = strategy.run(replica_step, args=next(iterator))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)


# Joining the cluster, each worker with its own share of the files (section 3).
def read_job(folder):
    job = json.loads((folder / "job.json").read_text())
    keys = ["epochs", "per_worker_batch", "profile", "threads", "train_limit"]
    if sorted(job) != keys:
        raise ValueError(
            f"job.json has the keys {sorted(job)}; a job needs exactly {keys}."
        )
    os.environ["COURSE_PROFILE"] = job["profile"]
    tf.config.threading.set_intra_op_parallelism_threads(job["threads"])
    tf.config.threading.set_inter_op_parallelism_threads(job["threads"])
    config.set_seed(config.SEED)
    return job


def join_cluster():
    strategy = (
        tf.distribute.MultiWorkerMirroredStrategy()
    )  # reads TF_CONFIG, waits for all
    with strategy.scope():
        model = models.cats_dogs_net("0", seed=config.SEED)
        optimizer = keras.optimizers.Adam()
        optimizer.build(model.trainable_variables)
    return strategy, model, optimizer


def my_share(context, paths, labels, global_batch):
    steps = len(paths) // global_batch  # whole global batches only
    first, every = context.input_pipeline_id, context.num_input_pipelines
    mine = slice(first, steps * global_batch, every)
    return paths[mine], labels[mine]


def worker_batches(job):
    paths, labels, _ = folders.cats_dogs_files("train", limit=job["train_limit"])
    steps, size = len(paths) // global_batch, model.input_shape[1]
    if steps < 1:
        raise ValueError(f"{len(paths)} pictures < a global batch ({global_batch})")

    def shard(context):  # called once on each worker, with that worker's context
        mine = my_share(context, paths, labels, global_batch)
        batch = context.get_per_replica_batch_size(global_batch)
        return data.image_pipeline(*mine, size, batch, shuffle=True).repeat()

    return iter(strategy.distribute_datasets_from_function(shard)), steps


# Training, with a checkpoint after every epoch (section 4).
def restore_or_start(model, optimizer, folder):
    epoch = tf.Variable(0, dtype=tf.int64, trainable=False)
    backup = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model, optimizer=optimizer, epoch=epoch),
        str(folder),
        max_to_keep=2,
    )
    if backup.latest_checkpoint:  # a restart: take up where the job left off
        restored = backup.checkpoint.restore(backup.latest_checkpoint)
        restored.assert_existing_objects_matched()
    return epoch, backup


def train(folder, job, batches, steps, epoch, backup):
    first, last, losses = int(epoch.numpy()) + 1, job["epochs"], []
    for number in range(first, last + 1):
        mark(folder, f"epoch {number} start")
        started = time.perf_counter()
        losses.append(sum(float(train_step(batches)) for _ in range(steps)) / steps)
        epoch.assign_add(1)
        backup.save()
        mark(folder, f"epoch {number} end")
        seconds = time.perf_counter() - started
        say(f"epoch {number}/{last}  loss {losses[-1]:.4f}  {seconds:.1f} s")
    return dict(first_epoch=first, epochs=last, losses=losses)


# The scaling efficiency (section 3): a step without its update, timed in alternated
# rounds (notebook 00's protocol) on worker 0 alone and on every worker with the all-reduce.
def replica_compute(images, targets, all_reduce=False):
    loss, gradients = replica_gradients(images, targets)
    if all_reduce:  # as apply_gradients does, without the update
        gradients = tf.distribute.get_replica_context().all_reduce("sum", gradients)
    return loss + tf.add_n([tf.reduce_sum(g) for g in gradients])  # every gradient used


@tf.function
def compute_step(iterator, all_reduce=False):
    options = {"all_reduce": all_reduce}
    return strategy.run(replica_compute, args=next(iterator), kwargs=options)


def barrier():  # returns when every worker has reached it: an all-reduce of one number
    strategy.reduce("SUM", strategy.run(lambda: tf.constant(1.0)), axis=None)


def time_parts(calls, steps=3):
    """Seconds a step of each of `calls`, round by round; "alone" runs on worker 0 only."""
    for call in calls.values():  # traces each; every worker takes part
        call()
    seconds = {kind: [] for kind in calls}
    for r in range(config.settings("compare").rounds):
        for kind in list(calls)[:: 1 if r % 2 == 0 else -1]:
            barrier()  # alone: worker 0 computes, the others wait at the next barrier
            if kind != "alone" or index == 0:
                started = time.perf_counter()
                for _ in range(steps):
                    calls[kind]()
                seconds[kind].append((time.perf_counter() - started) / steps)
    return seconds


# What a worker reports: its log lines, its progress, its weights and results.
def say(line):
    print(f"worker {index}: {line}", flush=True)


def mark(folder, line):
    with open(folder / f"progress_{index}.txt", "a") as progress:
        progress.write(line + "\n")


def finish(folder, result, batches):
    if replicas > 1:
        result["parts"] = time_parts(
            {
                "alone": lambda: compute_step(batches),
                "with_all_reduce": lambda: compute_step(batches, all_reduce=True),
            }
        )
    np.savez(folder / f"weights_{index}.npz", *[w.numpy() for w in model.weights])
    (folder / f"result_{index}.json").write_text(json.dumps(result, indent=1))
    barrier()  # worker 0 hosts the cluster's coordination: it must not leave first
    say(f"done (epochs {result['first_epoch']}-{result['epochs']})")


if __name__ == "__main__":  # what a worker process runs, in order (%run -n skips it)
    folder = Path(sys.argv[1])
    job = read_job(folder)
    strategy, model, optimizer = join_cluster()
    index, replicas = strategy.cluster_resolver.task_id, strategy.num_replicas_in_sync
    global_batch = job["per_worker_batch"] * replicas
    batches, steps = worker_batches(job)
    say(f"global batch {global_batch} = {replicas} x {job['per_worker_batch']}")
    say(f"its share: {steps * job['per_worker_batch']} pictures in {steps} steps")
    epoch, backup = restore_or_start(model, optimizer, folder / f"backup_{index}")
    say(f"starting at epoch {int(epoch.numpy()) + 1} of {job['epochs']}")
    finish(folder, train(folder, job, batches, steps, epoch, backup), batches)
