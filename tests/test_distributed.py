"""Multi-device plumbing: TF_CONFIG, shards, checkpoints, notebook 10's page, two real workers."""

import inspect
import json
import re

from helpers import config, distributed, models, worker

import keras
import nbformat
import numpy as np
import page_source
import pytest
import tensorflow as tf

NOTEBOOK = "10_multi_device_training"


def test_tensorflow_reads_our_tf_config_as_the_cluster_and_this_workers_place(monkeypatch):
    addresses = ["127.0.0.1:1111", "127.0.0.1:2222"]
    monkeypatch.setenv("TF_CONFIG", json.dumps(distributed.tf_config(addresses, 1)))
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert resolver.cluster_spec().as_dict() == {"worker": addresses}
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)


@pytest.mark.parametrize("addresses, index, message", [
    ([], 0, "outside the cluster of 0 workers"),
    (["localhost"], 0, "not all host:port"),
    (["127.0.0.1:x"], 0, "not all host:port"),
    (["127.0.0.1:1111"], 1, "outside the cluster"),
])
def test_bad_cluster_is_refused(addresses, index, message):
    with pytest.raises(ValueError, match=message):
        distributed.tf_config(addresses, index)


def test_free_ports_are_distinct_and_zero_workers_are_refused(tmp_path):
    ports = distributed.free_ports(3)
    assert len(set(ports)) == 3 and all(1024 <= p < 65536 for p in ports)
    with pytest.raises(ValueError, match="1 or more workers"):
        distributed.start("test_zero", 0)
    with pytest.raises(ValueError, match="two or more workers"):
        distributed.weight_difference(distributed.Run("x", tmp_path, []))


def test_worker_refuses_an_unknown_job_key(tmp_path):
    (tmp_path / "job.json").write_text(json.dumps({"epochs": 2, "epoch": 3}))
    with pytest.raises(ValueError, match=r"Unknown job keys \['epoch'\]"):
        worker.read_job(tmp_path)
    (tmp_path / "job.json").write_text(json.dumps({"epochs": 5}))
    assert worker.read_job(tmp_path)["epochs"] == 5


@pytest.mark.parametrize("files, workers, per_worker", [(100, 2, 8), (64, 2, 32), (99, 3, 4)])
def test_each_worker_reads_its_own_files_and_together_whole_global_batches(files, workers,
                                                                          per_worker):
    paths, labels = [f"p{i}.jpg" for i in range(files)], list(range(files))
    global_batch = workers * per_worker
    shares = [worker.my_share(tf.distribute.InputContext(workers, index, workers), paths,
                              labels, global_batch) for index in range(workers)]
    read = [path for share, _ in shares for path in share]
    assert len(read) == len(set(read)) == files // global_batch * global_batch
    assert all(len(share) == files // global_batch * per_worker for share, _ in shares)
    assert all(labels[paths.index(p)] == y for share in shares for p, y in zip(*share))


def test_a_restored_checkpoint_resumes_with_the_same_weights_optimizer_and_epoch(tmp_path):
    def net_and_optimizer(seed):
        model = models.cats_dogs_net("0", seed=seed, image_size=32)
        optimizer = keras.optimizers.Adam()
        optimizer.build(model.trainable_variables)
        return model, optimizer

    model, optimizer = net_and_optimizer(1)
    epoch, backup = worker.restore_or_start(model, optimizer, tmp_path)
    assert int(epoch.numpy()) == 0 and backup.latest_checkpoint is None
    images, targets = np.random.default_rng(0).uniform(0, 255, (4, 32, 32, 3)), np.ones((4, 1))
    model.compile(optimizer=optimizer, loss="binary_crossentropy")
    model.train_on_batch(images, targets)
    epoch.assign_add(1)
    backup.save()
    fresh, fresh_optimizer = net_and_optimizer(2)
    restored, _ = worker.restore_or_start(fresh, fresh_optimizer, tmp_path)
    assert int(restored.numpy()) == 1 and int(fresh_optimizer.iterations.numpy()) == 1
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), fresh.get_weights()))


@pytest.mark.parametrize("name", ["mirrored_strategy", "tf_config", "start"])
def test_notebook_10_builds_its_strategy_and_workers_as_the_helper_does(name):
    assert page_source.defined_on_page(NOTEBOOK, name) == page_source.helper_source(
        getattr(distributed, name)), (f"notebook 10's {name} differs from helpers/"
                                      "distributed.py's: change both together")


@pytest.mark.parametrize("name", ["join_cluster", "my_share", "restore_or_start"])
def test_notebook_10_shows_the_code_each_worker_runs(name):
    assert page_source.defined_on_page(NOTEBOOK, name) == page_source.helper_source(
        getattr(worker, name)), (f"notebook 10's {name} differs from helpers/worker.py's: "
                                 "change both together")


def step_functions(source):
    """The `replica_step` and `train_step` definitions in `source`, dedented, in order."""
    found, indent = [], None
    for line in source.splitlines():
        start = re.match(r"(\s*)(def replica_step|@tf\.function)", line)
        if start:
            indent = len(start.group(1))
            found.append([])
        elif indent is not None and line.strip() and (
                len(line) - len(line.lstrip()) <= indent and "def train_step" not in line):
            indent = None
        if indent is not None:
            found[-1].append(line[indent:])
    return ["\n".join(block).strip() for block in found]


def test_notebook_10_shows_the_step_the_worker_runs():
    path = config.ROOT / "notebooks" / f"{NOTEBOOK}.ipynb"
    cells = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                      if c.cell_type == "code")
    shown = step_functions(cells)
    assert len(shown) == 2, "notebook 10 should write out replica_step and train_step"
    assert shown == step_functions(inspect.getsource(worker.main)), (
        "notebook 10's step function differs from helpers/worker.py's: change both together")


@pytest.mark.slow
def test_two_workers_end_identical_and_a_killed_job_resumes():
    job = dict(epochs=3, per_worker_batch=8, train_limit=64, val_limit=64)
    two = distributed.wait(distributed.start("test_two", 2, **job))
    assert distributed.weight_difference(two) == 0.0
    assert two.results[0]["losses"] == two.results[1]["losses"]
    crashed = distributed.wait(distributed.start("test_fault", 2, **job), kill_at=(1, 1))
    assert crashed.killed[0] == 1 and crashed.progress(1)[-1] == "epoch 2 start"
    resumed = distributed.wait(distributed.start("test_fault", 2, fresh=False, **job))
    assert [r["first_epoch"] for r in resumed.results.values()] == [2, 2]
    assert distributed.weight_difference(resumed) == 0.0
    assert all(np.isfinite(r["losses"]).all() for r in resumed.results.values())
