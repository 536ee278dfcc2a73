"""Multi-device plumbing: TF_CONFIG, worker jobs, and (slow) a real two-worker run."""

import inspect
import json
import re

from helpers import config, distributed, worker

import nbformat
import numpy as np
import pytest


def test_tensorflow_reads_our_tf_config_as_the_cluster_and_this_workers_place(monkeypatch):
    import tensorflow as tf

    addresses = ["127.0.0.1:1111", "127.0.0.1:2222"]
    monkeypatch.setenv("TF_CONFIG", json.dumps(distributed.tf_config(addresses, 1)))
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert resolver.cluster_spec().as_dict() == {"worker": addresses}
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)


@pytest.mark.parametrize("addresses, index, message", [
    ([], 0, "at least one worker"),
    (["localhost"], 0, "not host:port"),
    (["127.0.0.1:x"], 0, "not host:port"),
    (["127.0.0.1:1111"], 1, "outside the cluster"),
])
def test_bad_cluster_is_refused(addresses, index, message):
    with pytest.raises(ValueError, match=message):
        distributed.tf_config(addresses, index)


def test_free_ports_are_distinct():
    ports = distributed.free_ports(3)
    assert len(set(ports)) == 3 and all(1024 <= p < 65536 for p in ports)
    with pytest.raises(ValueError):
        distributed.free_ports(0)


def test_worker_refuses_an_unknown_job_key(tmp_path):
    (tmp_path / "job.json").write_text(json.dumps({"epochs": 2, "epoch": 3}))
    with pytest.raises(ValueError, match=r"Unknown job keys \['epoch'\]"):
        worker.read_job(tmp_path)
    (tmp_path / "job.json").write_text(json.dumps({"epochs": 5}))
    assert worker.read_job(tmp_path)["epochs"] == 5


def test_zero_workers_and_unfinished_runs_are_refused(tmp_path):
    with pytest.raises(ValueError, match="workers must be 1 or more"):
        distributed.start(workers=0)
    empty = distributed.Run("x", tmp_path, [], [])
    with pytest.raises(ValueError, match="two or more workers"):
        distributed.weight_difference(empty)
    with pytest.raises(ValueError, match="one-worker run"):
        distributed.scaling_efficiency(empty, empty)


@pytest.mark.slow
def test_two_workers_end_identical_and_a_killed_job_resumes():
    job = dict(epochs=3, per_worker_batch=8, train_limit=64, val_limit=64)
    two = distributed.train(workers=2, name="test_two", **job)
    assert distributed.weight_difference(two) == 0.0
    assert two.results[0]["losses"] == two.results[1]["losses"]
    crashed = distributed.train(workers=2, name="test_fault", kill_at=(1, 1), **job)
    assert crashed.killed[0] == 1 and crashed.progress(1)[-1] == "epoch 2 start"
    resumed = distributed.train(workers=2, name="test_fault", fresh=False, **job)
    assert [r["first_epoch"] for r in resumed.results.values()] == [2, 2]
    assert distributed.weight_difference(resumed) == 0.0
    assert all(np.isfinite(r["losses"]).all() for r in resumed.results.values())


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
    path = config.ROOT / "notebooks" / "10_multi_device_training.ipynb"
    cells = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                      if c.cell_type == "code")
    shown = step_functions(cells)
    assert len(shown) == 2, "notebook 10 should write out replica_step and train_step"
    assert shown == step_functions(inspect.getsource(worker.main)), (
        "notebook 10's step function differs from helpers/worker.py's: change both together")
