"""Notebook 10's page and its workers' script (notebooks/10_worker.py), run as the page runs
them: TF_CONFIG, the workers' shares and checkpoints, two real workers; and notebook 10b's
alpha-beta model of the all-reduce, with 10b's workers (notebooks/10b_worker.py)."""

import json
import os
import runpy
import shutil
import socket
import subprocess
import sys

from helpers import config, models, timing, training

import keras
import nbformat
import numpy as np
import page_source
import pytest
import tensorflow as tf

NOTEBOOK = "10_multi_device_training"
DEEP_DIVE = "10b_all_reduce_model"


def test_the_page_shows_the_script_its_workers_run_whole_in_one_cell():
    cells = nbformat.read(
        config.ROOT / "notebooks" / f"{NOTEBOOK}.ipynb", as_version=4
    ).cells
    code = [c.source for c in cells if c.cell_type == "code"]
    assert not any(source.startswith("%%writefile") for source in code)
    assert sum("Code(filename=WORKER)" in source for source in code) == 1
    assert training.WORKER.exists() and "%run -i -n {WORKER}" in "\n".join(code)


def on_page(name):
    """Notebook 10's `def name`, run with the names its page gives it."""
    namespace = {
        "json": json,
        "os": os,
        "shutil": shutil,
        "socket": socket,
        "subprocess": subprocess,
        "sys": sys,
        "tf": tf,
        "config": config,
        "folder": training.folder,
        "Run": training.Run,
        "WORKER": training.WORKER,
    }
    for needed in ("tf_config", "free_ports", name):
        exec(page_source.defined_on_page(NOTEBOOK, needed), namespace)
    return namespace[name]


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    """The workers' script's functions, its `__main__` part left out (as `%run -n` does)."""
    return runpy.run_path(str(training.WORKER), run_name="worker")


def test_tensorflow_reads_our_tf_config_as_the_cluster_and_this_workers_place(
    monkeypatch,
):
    addresses = ["127.0.0.1:1111", "127.0.0.1:2222"]
    monkeypatch.setenv("TF_CONFIG", json.dumps(on_page("tf_config")(addresses, 1)))
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert resolver.cluster_spec().as_dict() == {"worker": addresses}
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)


@pytest.mark.parametrize(
    "addresses, index, message",
    [
        ([], 0, "outside the cluster of 0 workers"),
        (["localhost"], 0, "not all host:port"),
        (["127.0.0.1:x"], 0, "not all host:port"),
        (["127.0.0.1:1111"], 1, "outside the cluster"),
    ],
)
def test_bad_cluster_is_refused(addresses, index, message):
    with pytest.raises(ValueError, match=message):
        on_page("tf_config")(addresses, index)


def test_free_ports_are_distinct_and_zero_workers_are_refused(tmp_path):
    ports = on_page("free_ports")(3)
    assert len(set(ports)) == 3 and all(1024 <= p < 65536 for p in ports)
    with pytest.raises(ValueError, match="1 or more workers"):
        on_page("free_ports")(0)
    with pytest.raises(ValueError, match="two or more workers"):
        training.weight_difference(training.Run("x", tmp_path, []))


def ring_by_its_steps(size, workers, alpha, beta):
    """A ring all-reduce counted step by step: 2(N-1) steps in a row (N-1 reduce-scatter, N-1
    all-gather), each sending one chunk of size/N bytes and paying the latency once."""
    return sum(alpha + size / workers * beta for _ in range(2 * (workers - 1)))


def follows_the_ring(model):
    return all(
        model(size, n, alpha, beta)
        == pytest.approx(ring_by_its_steps(size, n, alpha, beta))
        for size in (4, 3e6)
        for n in (1, 2, 3, 8)
        for alpha, beta in [(1e-3, 1e-8), (5e-5, 2e-10)]
    )


def test_the_alpha_beta_model_is_the_rings_2_n_minus_1_latencies_and_bytes():
    assert follows_the_ring(training.all_reduce_time)
    assert training.all_reduce_time(3e6, 4, 1e-3, 1e-8) == pytest.approx(
        6e-3 + 4.5e6 * 1e-8
    )
    assert training.all_reduce_time(3e6, 1, 1e-3, 1e-8) == 0.0
    # b as GB/s
    wrong = [
        lambda s, n, a, b: a + training.ring_bytes(s, n) * b,  # the latency paid once
        lambda s, n, a, b: 2 * (n - 1) * a + s * b,  # every worker sends S
        lambda s, n, a, b: 2 * (n - 1) * a + training.ring_bytes(s, n) / b,
    ]
    assert not any(follows_the_ring(model) for model in wrong)


@pytest.mark.parametrize(
    "workers, alpha, beta", [(2, 3e-3, 1 / 1.4e8), (4, 50e-6, 5e-11)]
)
def test_the_alpha_beta_fit_recovers_known_latency_and_seconds_a_byte(
    workers, alpha, beta
):
    sizes = [4, 32_528, 325_284, 3_252_868]
    seconds = [training.all_reduce_time(s, workers, alpha, beta) for s in sizes]
    assert training.fit_alpha_beta(sizes, seconds, workers) == pytest.approx(
        (alpha, beta)
    )
    noisy = [t * f for t, f in zip(seconds, (1.05, 0.95, 1.03, 0.98))]
    assert training.fit_alpha_beta(sizes, noisy, workers) == pytest.approx(
        (alpha, beta), rel=0.1
    )
    # latency paid once
    once = [alpha + training.ring_bytes(s, workers) * beta for s in sizes]
    assert training.fit_alpha_beta(sizes, once, workers)[0] == pytest.approx(
        alpha / (2 * (workers - 1))
    )


def test_the_alpha_beta_model_of_a_known_case_and_what_the_fit_refuses():
    assert training.ring_bytes(3e6, 2) == 3e6 and training.ring_bytes(3e6, 4) == 4.5e6
    assert training.all_reduce_time(3e6, 2, 1e-3, 1e-8) == pytest.approx(0.032)
    assert training.predicted_efficiency(0.1, 0.025) == pytest.approx(0.8)
    assert training.predicted_efficiency(0.1, 0.0) == 1.0
    # no time grew with size
    alpha, beta = training.fit_alpha_beta([4, 4e6], [1e-3, 1e-3])
    assert alpha == pytest.approx(5e-4) and beta == pytest.approx(0.0, abs=1e-15)
    alpha, beta = training.fit_alpha_beta([1e6, 2e6, 4e6], [0.005, 0.02, 0.045])
    # intercept below 0
    assert alpha == 0.0 and 1 / beta == pytest.approx(1.49e8, rel=0.01)
    for sizes, seconds, workers in [
        ([4, 4], [1, 2], 2),
        ([4, 8], [1, 2], 1),
        ([4, 8], [1], 2),
    ]:
        with pytest.raises(ValueError, match="two or more"):
            training.fit_alpha_beta(sizes, seconds, workers)
    with pytest.raises(ValueError, match="positive seconds"):
        training.predicted_efficiency(0.0, 0.01)


def sums_to():
    """10b's check that a step's parts, timed in the same rounds, add up to it."""
    namespace = {"np": np, "timing": timing}
    exec(page_source.defined_on_page(DEEP_DIVE, "sums_to"), namespace)
    return namespace["sums_to"]


def test_parts_that_make_the_step_add_up_to_it_and_a_part_left_out_does_not():
    rng = np.random.default_rng(0)
    load = rng.uniform(1.0, 1.6, 8)  # the machine's speed, changing from round to round
    compute, reduce = 0.030 * load, 0.004 * load
    # the step: exactly its two parts
    step = (compute + reduce) * rng.normal(1.0, 0.01, 8)
    right = sums_to()(
        list(step), {"compute": list(compute), "all-reduce": list(reduce)}
    )
    assert right["adds_up"] and right["low"] < 1.05 and right["high"] > 0.95
    assert (
        abs(right["residual"]) < 0.001
        and "cannot rule out that they add up" in right["text"]
    )
    wrong = sums_to()(list(step), {"compute": list(compute)})  # the all-reduce left out
    assert not wrong["adds_up"] and wrong["low"] > 1
    assert wrong["residual"] == pytest.approx(np.median(step) - np.median(compute))
    assert "they do not add up" in wrong["text"] and "residual +" in wrong["text"]
    too_much = sums_to()(list(step), {"compute": list(compute), "twice": list(compute)})
    assert not too_much["adds_up"] and too_much["high"] < 1 and too_much["residual"] < 0


@pytest.mark.parametrize("job", [{"epochs": 2, "epoch": 3}, {"epochs": 2}])
def test_worker_refuses_a_job_with_unknown_or_missing_keys(worker, tmp_path, job):
    (tmp_path / "job.json").write_text(json.dumps(job))
    with pytest.raises(
        ValueError, match=r"job.json has the keys .*a job needs exactly"
    ):
        worker["read_job"](tmp_path)


@pytest.mark.parametrize(
    "files, workers, per_worker", [(100, 2, 8), (64, 2, 32), (99, 3, 4)]
)
def test_each_worker_reads_its_own_files_and_together_whole_global_batches(
    worker, files, workers, per_worker
):
    paths, labels = [f"p{i}.jpg" for i in range(files)], list(range(files))
    global_batch = workers * per_worker
    shares = [
        worker["my_share"](
            tf.distribute.InputContext(workers, index, workers),
            paths,
            labels,
            global_batch,
        )
        for index in range(workers)
    ]
    read = [path for share, _ in shares for path in share]
    assert len(read) == len(set(read)) == files // global_batch * global_batch
    assert all(len(share) == files // global_batch * per_worker for share, _ in shares)
    assert all(labels[paths.index(p)] == y for share in shares for p, y in zip(*share))


def test_a_restored_checkpoint_resumes_with_the_same_weights_optimizer_and_epoch(
    worker, tmp_path
):
    def net_and_optimizer(seed):
        model = models.cats_dogs_net("0", seed=seed, image_size=32)
        optimizer = keras.optimizers.Adam()
        optimizer.build(model.trainable_variables)
        return model, optimizer

    model, optimizer = net_and_optimizer(1)
    epoch, backup = worker["restore_or_start"](model, optimizer, tmp_path)
    assert int(epoch.numpy()) == 0 and backup.latest_checkpoint is None
    images, targets = (
        np.random.default_rng(0).uniform(0, 255, (4, 32, 32, 3)),
        np.ones((4, 1)),
    )
    model.compile(optimizer=optimizer, loss="binary_crossentropy")
    model.train_on_batch(images, targets)
    epoch.assign_add(1)
    backup.save()
    fresh, fresh_optimizer = net_and_optimizer(2)
    restored, _ = worker["restore_or_start"](fresh, fresh_optimizer, tmp_path)
    assert int(restored.numpy()) == 1 and int(fresh_optimizer.iterations.numpy()) == 1
    assert all(
        np.array_equal(a, b) for a, b in zip(model.get_weights(), fresh.get_weights())
    )


@pytest.mark.slow
def test_two_workers_end_identical_and_a_killed_job_resumes():
    start = on_page("start")
    job = dict(epochs=3, per_worker_batch=8, train_limit=64, threads=1)
    # 10b's workers: 10's worker whole, then the step's parts and the all-reduces timed
    deep_dive = config.ROOT / "notebooks" / "10b_worker.py"
    two = training.wait(start("test_two", 2, script=deep_dive, **job))
    assert training.weight_difference(two) == 0.0
    assert two.results[0]["losses"] == two.results[1]["losses"]
    assert "worker 1: done (epochs 1-3)" in two.report(1)
    parts = two.results[0]["parts"]  # the step's parts, timed in the same rounds
    rounds = config.settings("compare").rounds
    kinds = ["alone", "together", "all_reduce", "with_all_reduce"]
    assert (
        sorted(parts) == sorted(kinds)
        and [len(parts[k]) for k in kinds] == [rounds] * 4
    )
    assert min(min(parts[k]) for k in kinds) > 0
    assert two.results[1]["parts"]["alone"] == []
    assert len(two.results[1]["parts"]["with_all_reduce"]) == rounds
    sizes, seconds = zip(*two.results[0]["all_reduce"])
    floats = models.cats_dogs_net("0").count_params()
    assert sizes == (4, 4 * (floats // 100), 4 * (floats // 10), 4 * floats)
    alpha, beta = training.fit_alpha_beta(sizes, seconds)
    assert alpha >= 0 and beta > 0 and min(seconds) > 0
    crashed = training.wait(
        start("test_fault", 2, **job), kill_at=(1, 1)
    )  # 10's workers
    assert crashed.killed[0] == 1 and crashed.progress(1)[-1] == "epoch 2 start"
    resumed = training.wait(start("test_fault", 2, fresh=False, **job))
    assert [r["first_epoch"] for r in resumed.results.values()] == [2, 2]
    assert training.weight_difference(resumed) == 0.0
    assert all(np.isfinite(r["losses"]).all() for r in resumed.results.values())
    timed = resumed.results[0][
        "parts"
    ]  # 10's own timing: the scaling efficiency's parts
    assert sorted(timed) == ["alone", "with_all_reduce"] and timed["alone"]
    assert resumed.results[1]["parts"]["alone"] == []
