"""helpers.benchmark: a timed run and its record, the input-wait share; tools.bench, its recording
command line, and its plan."""

import json
import time

from helpers import benchmark, data, folders, models, results
from tools import bench as recorder

import keras
import numpy as np
import pytest
from gpu_rehearsal import fake_gpu, fake_nvidia_smi  # noqa: F401  (fixtures, used by name)


def test_a_synthetic_run_gives_a_complete_record(fixed_peak):
    record = benchmark.run("mnist_cnn", batch_size=16, steps=4, warmup=1)
    assert (
        record["images_per_s"] > 0
        and record["step_s"]["p10"] <= record["step_s"]["p90"]
    )
    assert record["timed_steps"] == 4 and record["warmup_steps"] == 1
    assert (
        record["hardware"]["cpu"]["logical_cores"] >= 1
        and record["backend"] == "tensorflow"
    )
    assert (
        record["kind"] == "recorded"
        and "benchmark.run('mnist_cnn'" in record["command"]
    )
    assert record["source"] == "synthetic" and record["workers"] is None
    # the multiply's speed just before the steps and right after (fixed here)
    assert record["multiply_now"] == [1e11, 1e11]
    json.dumps(record)  # a record must be storable as JSON


class SlowBatches(keras.utils.PyDataset):
    """MNIST-shaped random batches that take `delay` seconds each to make."""

    def __init__(self, delay, batch=16, batches=40):
        super().__init__()
        self.delay, self.batch, self.batches = delay, batch, batches
        rng = np.random.default_rng(0)
        self.x = rng.integers(0, 256, (batch, 28, 28, 1)).astype("float32")
        self.y = rng.integers(0, 10, batch).astype("float32")

    def __len__(self):
        return self.batches

    def __getitem__(self, index):
        time.sleep(self.delay)
        return self.x, self.y


@pytest.mark.processes
@pytest.mark.alone  # beside the notebooks, a busy core slowed the fast run's steps to half speed
def test_a_slow_source_makes_the_network_wait_and_a_fast_one_does_not(fixed_peak):
    slow = benchmark.run(
        "mnist_cnn",
        batch_size=16,
        steps=6,
        warmup=2,
        source=SlowBatches(0.1),
        label="slow",
    )
    fast = benchmark.run(
        "mnist_cnn",
        batch_size=16,
        steps=6,
        warmup=2,
        source=SlowBatches(0.0),
        label="fast",
    )
    assert slow["source"] == "slow" and slow["input_wait_share"] > 0.5
    assert slow["images_per_s"] < 16 / 0.1  # never faster than the source makes batches
    assert fast["input_wait_share"] < slow["input_wait_share"] / 2


def test_a_pydataset_records_its_workers(fixed_peak):
    paths, labels, _ = folders.cats_dogs_files("train", limit=16)
    loader = data.PillowBatches(paths, labels, 64, 8, repeat=3, workers=2)
    record = benchmark.run(
        "cats_dogs_original",
        batch_size=8,
        steps=3,
        warmup=1,
        source=loader,
        label="python",
        augment=False,
    )
    assert record["workers"] == 2 and record["use_multiprocessing"] is False
    assert record["augment_in_model"] is False and results.table([record])["source"][
        0
    ] == ("python w2t")
    assert 0 < record["images_per_s"] and 0 < record["synthetic_images_per_s"]


@pytest.mark.parametrize("source", ["jpeg", "python"])
def test_the_recording_command_builds_the_course_sources(source):
    real, warmup, augment = recorder._source(
        "cats_dogs_original", 8, source, 2, False, 3, 1
    )
    x, y = real[0] if source == "python" else next(iter(real))
    assert tuple(x.shape) == (8, 64, 64, 3) and tuple(y.shape)[0] == 8
    # the pipeline is timed after one full pass over its pictures; the loader augments itself
    assert (warmup > 1, augment) == (
        (True, True) if source == "jpeg" else (False, False)
    )


def plan(argv):
    return recorder._plan(recorder._parser().parse_args(argv))


def test_all_runs_every_network_in_every_format_of_a_gpu_with_the_batch_sweep(
    monkeypatch,
):
    monkeypatch.setattr(recorder.hardware, "devices", lambda: ["cpu:0", "gpu:0"])
    monkeypatch.setattr(
        recorder.roofs,
        "supported_dtypes",
        lambda device: ["float32", "float16", "bfloat16"],
    )
    # (model, device, batch, source, ..., jit, dtype)
    gpu = plan(["--all", "--device", "gpu"])
    assert {(run[0], run[-1]) for run in gpu} == {
        (m, t) for m in models.MODELS for t in ("float32", "float16", "bfloat16")
    }
    assert {run[1] for run in gpu} == {"gpu:0"} and {run[3] for run in gpu} == {
        "synthetic"
    }
    as_it_comes = [run for run in gpu if run[6] is None]
    assert sorted(
        run[2]
        for run in as_it_comes
        if run[0] == "cifar10_net" and run[-1] == "float16"
    ) == [128, 256, 512, 1024]
    assert [
        run[2]
        for run in as_it_comes
        if run[0] == "cats_dogs_deep" and run[-1] == "float16"
    ] == [32]
    # the XLA pair: every network in every format at its own batch, jit_compile both ways
    assert sorted(
        (run[0], run[2], str(run[6]), run[-1]) for run in gpu if run[6]
    ) == sorted(
        (m, models.MODELS[m][2], j, t)
        for m in models.MODELS
        for j in ("auto", "True")
        for t in ("float32", "float16", "bfloat16")
    )
    everything = plan(["--all"])  # the CPU in float32, with the input-pipeline runs
    assert {run[-1] for run in everything if run[1] == "cpu:0"} == {"float32"}
    assert {run[3] for run in everything if run[1] == "cpu:0"} == {
        "synthetic",
        "jpeg",
        "python",
    }
    # make bench as before
    assert {run[6] for run in everything if run[1] == "cpu:0"} == {None}
    # on the CPU only when asked
    assert {run[6] for run in plan(["--all", "--device", "cpu", "--xla", "both"])} == {
        None,
        "auto",
        True,
    }


def test_asking_for_a_gpu_where_there_is_none_says_what_keras_sees(monkeypatch):
    monkeypatch.setattr(recorder.hardware, "devices", lambda: ["cpu:0"])
    with pytest.raises(SystemExit, match="no gpu device here; Keras .* sees cpu:0"):
        plan(["--all", "--device", "gpu"])


@pytest.mark.processes
@pytest.mark.usefixtures("fake_gpu")
def test_bench_gpu_records_each_gpu_under_its_name_with_its_power_timeline(
    fixed_peak, tmp_path, capsys
):
    # two Tesla T4s (tests/gpu_rehearsal.py) whose work runs on the CPU
    recorder.main(
        [
            "--all",
            "--device",
            "gpu",
            "--model",
            "mnist_cnn",
            "--dtype",
            "float16",
            "--batch",
            "8",
            "--steps",
            "3",
            "--warmup",
            "0",
            "--record",
            "--out",
            str(tmp_path),
        ]
    )
    found = results.load(tmp_path)  # as it comes, then the XLA pair, on each GPU
    gpus = ("gpu:0", "gpu:1")
    assert sorted((r["device"], str(r["jit_compile"])) for r in found) == sorted(
        [(d, "auto") for d in gpus] * 2 + [(d, "True") for d in gpus]
    )
    # no augmentation layers: XLA on both ways on a GPU
    assert all(r["xla"] for r in found)
    assert len(list(tmp_path.glob("*_b8_float16_xla-on.json"))) == 2
    rules = [
        json.loads(p.read_text())
        for p in sorted(tmp_path.glob("*_gpu_rules_gpu*.json"))
    ]
    assert [[r["rule"] for r in rec["rules"]] for rec in rules] == [
        ["tensor-core shapes", "NHWC vs NCHW", "uint8 vs float32 over PCIe"]
    ] * 2
    out = capsys.readouterr().out  # each rule: its prediction, measurement and verdict
    assert (
        out.count("  predict: ")
        == out.count("  measure: ")
        == out.count("  verdict: ")
        == 6
    )
    for r in found:
        assert r["device_name"] == "Tesla T4" and r["dtype"] == "float16"
        assert results.machine_name(r) == "Tesla T4"
        index = r["device"][-1]
        assert r["power_w"][f"gpu{index}_power_w"] > 0
        assert any(f"gpu{index}_pct" in sample for sample in r["timeline"]["samples"])
    assert (
        len(
            list(
                tmp_path.glob("*_tesla-t4_mnist_cnn_gpu[01]_synthetic_b8_float16.json")
            )
        )
        == 2
    )


@pytest.mark.processes
def test_jit_compile_is_recorded_and_augmentation_layers_refuse_xla(fixed_peak):
    assert (
        models.build("cats_dogs_original", augment=False, jit_compile=True).jit_compile
        is True
    )
    with pytest.warns(UserWarning, match="doesn't support `jit_compile=True`"):
        assert models.build("cats_dogs_original", jit_compile=True).jit_compile is False
    record = benchmark.run(
        "mnist_cnn", batch_size=8, steps=3, warmup=0, jit_compile=True
    )
    assert record["jit_compile"] is True and record["xla"] is True
    # a CPU-only machine
    default = benchmark.run("mnist_cnn", batch_size=8, steps=3, warmup=0)
    assert default["jit_compile"] == "auto" and default["xla"] is False


def test_on_a_cpu_the_gpu_rules_say_why_they_are_skipped(capsys):
    recorder.main(["--rules", "--device", "cpu:0"])
    out = capsys.readouterr().out
    assert (
        out.count("skipped on cpu:0: it is about a GPU") == 3 and "predict" not in out
    )


@pytest.mark.parametrize("rule", [r["rule"] for r in benchmark.gpu_rules("cpu:0")])
def test_each_gpu_rule_prints_a_prediction_from_its_numbers_a_measurement_and_a_verdict(
    rule,
):
    # any device runs it; only a GPU means it
    found = getattr(benchmark, rule)("cpu:0", "Tesla T4")
    lines = benchmark.rule_lines(found)
    assert [line.split(":")[0].strip() for line in lines[1:]] == [
        "predict",
        "measure",
        "verdict",
    ]
    assert found["verdict"] in ("faster", "slower", "same", "inconclusive")
    assert any(c.isdigit() for c in found["prediction"]) and len(found["speeds"]) == 2


def test_bad_names_get_clear_errors():
    with pytest.raises(ValueError, match="cats_dogs_128px"):
        benchmark.run("resnet50")
    with pytest.raises(ValueError, match="not 'jpeg': leave it out for synthetic data"):
        benchmark.run("mnist_cnn", source="jpeg")
    with pytest.raises(ValueError, match="Unknown dtype 'int8'"):
        benchmark.run("mnist_cnn", dtype="int8")


def test_cli_help_and_missing_model(capsys):
    with pytest.raises(SystemExit) as done:
        recorder.main(["--help"])
    assert done.value.code == 0 and "--record" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="cifar10_net"):
        recorder.main([])
    with pytest.raises(SystemExit, match="no JPEG source"):
        recorder.main(["--model", "mnist_cnn", "--source", "jpeg", "--steps", "3"])
