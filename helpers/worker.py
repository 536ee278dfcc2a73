"""One worker of a multi-worker training: `python -m helpers.worker FOLDER`.

helpers.distributed starts one of these per worker, with TF_CONFIG in the environment.
FOLDER/job.json says what to train (keys: JOB_DEFAULTS). The worker writes:

- FOLDER/progress_<i>.txt   "epoch N start" / "epoch N end" lines (the kill demo watches them)
- FOLDER/result_<i>.json    epochs run, first epoch, losses, images/s, validation accuracy
- FOLDER/weights_<i>.npz    its final weights (to check that every worker has the same ones)
- FOLDER/backup_<i>/        a tf.train.Checkpoint of model, optimizer and epoch after each epoch

Keras 3's `model.fit` does not yet run under MultiWorkerMirroredStrategy with more than one
worker (keras-team/keras issue 20585: it fails before the first step), so the worker trains
with the loop `fit` would run: `strategy.run` of one step per replica, the loss averaged over
the *global* batch, and the Keras optimizer summing the gradients of all replicas
(an all-reduce) before it updates the weights.
"""

import json
import os
import sys
import time
from pathlib import Path

__all__ = ["JOB_DEFAULTS", "main", "read_job"]

JOB_DEFAULTS = {"step": "0", "image_size": 64, "per_worker_batch": 16, "train_limit": None,
                "val_limit": None, "epochs": 2, "threads": 1, "seed": 42, "profile": "sample"}


def read_job(path):
    """The job of FOLDER/job.json merged over JOB_DEFAULTS; unknown keys are an error."""
    job = json.loads((Path(path) / "job.json").read_text())
    unknown = sorted(set(job) - set(JOB_DEFAULTS))
    if unknown:
        raise ValueError(f"Unknown job keys {unknown}; known: {', '.join(JOB_DEFAULTS)}.")
    return {**JOB_DEFAULTS, **job}


def log(*parts):
    print(*parts, flush=True)


def _cluster(job):
    """This worker's index, its MultiWorkerMirroredStrategy and the global batch."""
    import tensorflow as tf

    # One thread pool per worker, sized as if each worker were its own machine.
    tf.config.threading.set_intra_op_parallelism_threads(job["threads"])
    tf.config.threading.set_inter_op_parallelism_threads(job["threads"])
    index = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {}).get("index", 0)
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    replicas = strategy.num_replicas_in_sync  # one CPU replica per worker
    global_batch = job["per_worker_batch"] * replicas
    log(f"worker {index}: {replicas} replica(s) in sync, global batch {global_batch} = "
        f"{job['per_worker_batch']} per worker x {replicas}")
    return index, strategy, global_batch


def _batches(job, strategy, global_batch, index):
    """An iterator over this worker's share of the training pictures, and steps per epoch."""
    from helpers import data

    paths, labels, _ = data.cats_dogs_files("train", limit=job["train_limit"], seed=job["seed"])
    steps = len(paths) // global_batch
    if steps < 1:
        raise ValueError(f"{len(paths)} training pictures are fewer than one global batch "
                         f"({global_batch}): use more pictures or a smaller batch.")

    def shard(context):
        """This worker's share of the files: every n-th file, starting at its own index
        (sliced before decoding, so that no worker decodes another's pictures)."""
        mine = slice(context.input_pipeline_id, steps * global_batch,
                     context.num_input_pipelines)
        batch = context.get_per_replica_batch_size(global_batch)
        return data.image_pipeline(paths[mine], labels[mine], job["image_size"], batch,
                                   shuffle=True, seed=job["seed"]).repeat()

    log(f"worker {index}: reads {steps * job['per_worker_batch']} of the "
        f"{steps * global_batch} pictures (its shard), {steps} steps per epoch")
    return iter(strategy.distribute_datasets_from_function(shard)), steps


def _model(job, strategy, path, index):
    """The step's network, its optimizer and an epoch counter, restored from this worker's
    last backup if there is one; and the backup manager."""
    from helpers import config, models

    import keras
    import tensorflow as tf

    config.set_seed(job["seed"])
    with strategy.scope():
        model = models.cats_dogs_net(job["step"], seed=job["seed"],
                                     image_size=job["image_size"])
        optimizer = keras.optimizers.Adam()
        optimizer.build(model.trainable_variables)
        epoch = tf.Variable(0, dtype=tf.int64, trainable=False)
    backup = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model, optimizer=optimizer, epoch=epoch),
        str(path / f"backup_{index}"), max_to_keep=2)
    if backup.latest_checkpoint:
        backup.checkpoint.restore(backup.latest_checkpoint).assert_existing_objects_matched()
        log(f"worker {index}: restored {Path(backup.latest_checkpoint).name}, "
            f"resuming after epoch {int(epoch.numpy())}")
    return model, optimizer, epoch, backup


def _accuracy(model, job):
    """The share of the validation pictures the model gets right."""
    from helpers import data

    import keras
    import numpy as np

    paths, labels, _ = data.cats_dogs_files("validation", limit=job["val_limit"])
    correct = 0
    for images, targets in data.image_pipeline(paths, labels, job["image_size"], 64):
        predicted = keras.ops.convert_to_numpy(model(images, training=False))[:, 0] > 0.5
        correct += int(np.sum(predicted == targets.numpy().astype(bool)))
    return correct / len(paths)


def main(path):
    """Train the job in FOLDER `path` as one worker of the cluster TF_CONFIG describes."""
    path = Path(path)
    job = read_job(path)
    os.environ["COURSE_PROFILE"] = job["profile"]
    from helpers.timing import StepTimer

    import keras
    import numpy as np
    import tensorflow as tf

    index, strategy, global_batch = _cluster(job)
    batches, steps = _batches(job, strategy, global_batch, index)
    model, optimizer, epoch, backup = _model(job, strategy, path, index)

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
    clock, started = StepTimer(), time.perf_counter()
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
    result = {"worker": index, "workers": strategy.num_replicas_in_sync,
              "global_batch": global_batch, "steps_per_epoch": steps, "first_epoch": first_epoch,
              "epochs": job["epochs"], "losses": losses, "epoch_rates": rates,
              "images_per_s": rates[-1] if rates else None,
              "wall_s": time.perf_counter() - started, "val_accuracy": _accuracy(model, job)}
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
