"""helpers.ladder: the cat/dog improvement ladder (notebook 05), each step's network and the run
records; notebook 06's saved models, loaded, checked and trained when missing."""

import json
from types import SimpleNamespace

from helpers import config, data, ladder, models, published
from tools import ladder as recorder

import keras
import numpy as np
import pytest
from conftest import numbers

# Parameter counts worked out by hand: the extra conv/pool pair of step 1 shrinks Flatten
# from 14*14*32 to 6*6*64 values, so step 1 has fewer weights than the original.
PARAMS = {"0": 813_217, "1": 323_809, "2": 323_809, "2b": 323_809, "3": 407_745}


def layer_types(model):
    return [type(layer).__name__ for layer in model.layers]


@pytest.mark.parametrize("step", list(published.LADDER))
def test_every_step_has_its_parameter_count_and_one_sigmoid_output(step):
    model = models.cats_dogs_net(step)
    assert model.count_params() == PARAMS[step]
    assert model.output_shape == (None, 1)
    assert model.layers[-1].activation.__name__ == "sigmoid"


def test_each_step_builds_on_the_previous_one():
    convs = {
        s: [
            lay.filters
            for lay in models.cats_dogs_net(s).layers
            if isinstance(lay, keras.layers.Conv2D)
        ]
        for s in published.LADDER
    }
    assert convs["0"] == [32, 32]
    assert convs["1"] == convs["2"] == convs["2b"] == [32, 32, 64]
    assert convs["3"] == [64, 64, 64, 64]
    assert "Dropout" not in layer_types(models.cats_dogs_net("1"))
    dropout = [
        lay
        for lay in models.cats_dogs_net("2").layers
        if isinstance(lay, keras.layers.Dropout)
    ]
    assert len(dropout) == 1 and dropout[0].rate == 0.5


def test_only_step_2b_has_no_augmentation():
    for step in published.LADDER:
        names = [layer.name for layer in models.cats_dogs_net(step).layers]
        assert ("augmentation" in names) == (step != "2b"), step


def test_step_3_takes_128_pixels_and_the_others_64():
    sizes = {s: models.cats_dogs_net(s).input_shape for s in published.LADDER}
    assert sizes.pop("3") == (None, 128, 128, 3)
    assert set(sizes.values()) == {(None, 64, 64, 3)}


def test_rescaling_is_inside_every_step():
    for step in published.LADDER:
        assert "Rescaling" in layer_types(models.cats_dogs_net(step)), step


def test_transfer_step_trains_only_its_head():
    model = models.cats_dogs_transfer()
    assert model.input_shape == (None, 128, 128, 3) and model.output_shape == (None, 1)
    trainable = sum(int(w.numpy().size) for w in model.trainable_weights)
    # MobileNet 0.25 gives 256 features; one weight each + bias
    assert trainable == 256 + 1
    assert model.count_params() > 200_000  # the frozen ImageNet base is still there


def fake(step, seed, acc, speed=100.0):
    return {
        "step": step,
        "seed": seed,
        "val_accuracy": acc,
        "params": 10,
        "images_per_s": speed,
    }


def test_summary_gives_mean_and_spread_per_step_in_order():
    records = [
        fake("1", 1, 0.70),
        fake("0", 1, 0.60),
        fake("0", 2, 0.64),
        fake("0", 3, 0.62),
        fake("1", 2, 0.74, speed=300.0),
    ]
    rows = ladder.summary(records)
    assert list(rows) == ["1", "0"]
    assert rows["0"]["runs"] == 3
    assert rows["0"]["mean"] == pytest.approx(0.62)
    assert rows["0"]["spread"] == pytest.approx(0.02)
    assert (rows["0"]["min"], rows["0"]["max"]) == (0.60, 0.64)
    assert rows["1"]["images_per_s"] == pytest.approx(200.0)


def test_one_run_has_no_spread_and_no_runs_is_a_clear_error():
    assert ladder.summary([fake("2", 1, 0.7)])["2"]["spread"] == 0.0
    with pytest.raises(ValueError, match="train at least one step"):
        ladder.summary([])


def test_table_shows_the_source_figures_beside_ours():
    rows = ladder.summary([fake("2b", 1, 0.7), fake("transfer", 1, 0.9)])
    shown = ladder.table(rows).set_index("step")
    assert (
        shown.loc["2b", "source"] == "85 %" and shown.loc["2b", "source V100"] == "533"
    )
    assert shown.loc["2b", "val. acc. here"] == "70.0 ± 0.0 %"
    assert shown.loc["transfer", "source"] == "—"
    assert shown.loc["transfer", "val. acc. here"].startswith("90.0")


def test_smoke_records_never_land_in_results(profile):
    profile("smoke")
    assert ladder.results_file().parent == config.BUILD_DIR / "results"
    profile("sample")
    path = ladder.results_file()
    assert path.parent == config.RESULTS_DIR and "_sample_" in path.name


@pytest.mark.processes
def test_training_one_step_gives_a_complete_record(profile, tmp_path):
    profile("smoke")
    s = SimpleNamespace(train=64, val=64, epochs=1, batch=32)
    _, record = ladder.train("2b", 7, s)
    assert (record["step"], record["seed"], record["epochs"]) == ("2b", 7, 1)
    assert (record["train_images"], record["val_images"]) == (64, 64)
    assert record["params"] == PARAMS["2b"] and record["image_size"] == 64
    assert 0.0 <= record["val_accuracy"] <= 1.0 and record["images_per_s"] > 0
    assert record["profile"] == "smoke" and "keras" in record["versions"]
    assert (
        record["nonfinite_weights_per_epoch"] == [0]
        and len(record["loss_per_epoch"]) == 1
    )
    path = ladder.save([record], tmp_path / "run.json")
    stored = json.loads(path.read_text())
    assert stored["records"][0]["seed"] == 7 and "cpu" in stored["machine"]
    assert stored["summary"]["2b"]["runs"] == 1


@pytest.mark.slow
def test_step_2b_learns_on_the_sample(profile):
    profile("sample")
    s = SimpleNamespace(train=None, val=None, epochs=10, batch=32)
    _, record = ladder.train("2b", 1, s)
    assert record["train_images"] == 1400 and record["val_images"] == 800
    assert record["val_accuracy"] > 0.6  # chance is 0.5; about 0.7 after 10 epochs


@pytest.mark.processes
def test_a_saved_step_loads_with_plain_keras_in_a_fresh_process(tmp_path):
    import subprocess
    import sys

    model = models.cats_dogs_net("2", seed=1)
    model.save(tmp_path / "step2.keras")
    pictures = (
        np.random.default_rng(1).uniform(0, 255, (2, 64, 64, 3)).astype("float32")
    )
    np.save(tmp_path / "pictures.npy", pictures)
    # a process in which the course cannot be imported: only Keras' own classes are there
    script = (
        "import sys; sys.modules['helpers'] = None\n"
        "import keras, numpy as np\n"
        "m = keras.saving.load_model('step2.keras')\n"
        "np.save('out.npy', m.predict(np.load('pictures.npy'), verbose=0))\n"
        "print(m.get_layer('augmentation').layers[0].y_factor)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    np.testing.assert_allclose(
        model.predict(pictures, verbose=0), np.load(tmp_path / "out.npy"), rtol=1e-6
    )
    # the shear of 0.2 degrees came back as it was saved
    assert "0.0034906" in done.stdout


@pytest.mark.processes
def test_the_recorded_ladder_resumes_after_being_killed_and_loses_nothing(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from test_folders import tutorial_folder

    root = tutorial_folder(tmp_path / "cd", train=16, test=4)
    out = tmp_path / "records"
    command = [
        sys.executable,
        "-m",
        "tools.ladder",
        "--data",
        str(root),
        "--steps",
        "0",
        "--seeds",
        "2",
        "--epochs",
        "12",
        "--batch",
        "8",
        "--out",
        str(out),
    ]
    env = {**os.environ, "COURSE_CACHE": str(tmp_path / "cache")}
    first = subprocess.Popen(
        command,
        cwd=config.ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    log = out / "in_progress" / "step-0_seed-2.csv"
    deadline = time.time() + 240
    while time.time() < deadline and first.poll() is None:  # kill seed 2 after 3 epochs
        if log.exists() and len(log.read_text().splitlines()) > 3:
            first.send_signal(signal.SIGKILL)
            break
        time.sleep(0.02)
    first.wait(timeout=60)
    assert first.returncode == -signal.SIGKILL, first.stdout.read()[-2000:]
    finished = recorder.run_path(out, "0", 1)
    kept = finished.read_text()
    assert not recorder.run_path(out, "0", 2).exists()
    again = subprocess.run(
        command, cwd=config.ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert (
        "step 0, seed 1: recorded in" in again.stdout and finished.read_text() == kept
    )
    runs = ladder.load_runs(out)
    assert [(r["seed"], r["resumed"]) for r in runs] == [(1, False), (2, True)]
    for r in runs:  # every epoch is in the record, the ones before the kill included
        assert r["epochs"] == len(r["val_accuracy_per_epoch"]) == 12
        assert r["train_images"] == 32 and r["val_images"] == 8 and r["wall_s"] > 0
    assert not log.exists()


def test_the_table_shows_a_source_speed_only_where_the_source_gave_one_and_ours_beside_it():
    rows = {
        step: {"runs": 1, "mean": 0.8, "spread": 0.0, "params": 1, "images_per_s": 10.0}
        for step in ladder.CHANGES
    }
    shown = ladder.table(rows).set_index("step")
    given = shown.index[shown["source V100"] != "—"]
    assert set(given) == set(published.LADDER_V100_SPEED) and "0" not in given
    assert (shown["img/s here"] == "10").all()


def test_the_recorded_ladder_is_named_as_the_share_of_the_blogs_training_it_is():
    # the blog: 25 epochs of 8,000 batches of 32 = 6,400,000 pictures a run
    short = {"epochs": 25, "train_images": 8000}
    assert ladder.share_of_blog(short) == 1 / 32
    assert ladder.share_of_blog({**short, "epochs": 100}) == 1 / 8
    rows = ladder.summary(
        [{**fake("2", 1, 0.8), **short}, {**fake("2", 2, 0.8), **short}]
    )
    assert ladder.table(rows, "recorded")["training"].tolist() == ["1/32 of the blog's"]


def test_the_recorded_ladder_is_the_tutorials_experiment_and_says_where_it_ran():
    runs = ladder.load_runs(ladder.RECORDED)
    assert runs, f"no records in {ladder.RECORDED}"
    for r in runs:
        name = f"step {r['step']}, seed {r['seed']}"
        assert (r["train_images"], r["val_images"], r["epochs"]) == (8000, 2000, 25), (
            name
        )
        assert (
            len(r["val_accuracy_per_epoch"]) == len(r["images_per_s_per_epoch"]) == 25
        ), name
        assert r["val_accuracy"] == r["val_accuracy_per_epoch"][-1], name
        assert r["image_size"] == (64 if r["step"] in ("0", "1", "2", "2b") else 128), (
            name
        )
        assert r["hardware"] and r["cpu_simd"] and r["dtype"] and r["date"], name
        assert {"tensorflow", "keras"} <= set(r["versions"]), name
        # recorded before the command moved from helpers/ to tools/
        assert r["command"].startswith(
            ("python -m helpers.ladder --data", "python -m tools.ladder --data")
        ), name
    # no run recorded twice
    assert len({(r["step"], r["seed"]) for r in runs}) == len(runs)
    seeds = {
        step: sorted(r["seed"] for r in runs if r["step"] == step)
        for step in ladder.CHANGES
    }
    # every step, three seeds
    assert seeds == {step: [1, 2, 3] for step in ladder.CHANGES}


def test_a_change_is_real_only_when_its_interval_excludes_zero():
    rows = ladder.summary(
        [
            fake("2", 1, 0.80),
            fake("2", 2, 0.82),
            fake("2", 3, 0.84),
            fake("2b", 1, 0.78),
            fake("2b", 2, 0.82),
            fake("2b", 3, 0.86),
            fake("3", 1, 0.86),
            fake("3", 2, 0.88),
            fake("3", 3, 0.90),
            fake("transfer", 1, 0.90),
        ]
    )
    gain, (low, high) = ladder.difference(rows["2"], rows["3"])
    # +6 points, standard error sqrt(2 * 2**2 / 3) = 1.633, t(0.975, 4) = 2.776
    assert (gain, low, high) == pytest.approx((6.0, 6.0 - 4.533, 6.0 + 4.533), abs=1e-3)
    *pairs, finding = ladder.verdicts(rows)
    lines = {line.split()[2]: line.split(maxsplit=3)[3] for line in pairs}
    assert numbers(lines["3"]) == [6.0, 95, 1.5, 10.5, 4] and lines["3"].endswith(
        "real); source +4 points"
    )
    # unequal spreads (2 and 4 points): Welch's 2.9 degrees of freedom widen the interval
    assert numbers(lines["2b"]) == [0.0, 95, -8.3, 8.3, -5]
    assert "not told apart from seed luck" in lines["2b"]
    assert numbers(lines["transfer"]) == [2.0] and "no interval" in lines["transfer"]
    real, unclear = finding.split(". Not told apart from seed luck: ")
    assert real == "Real: 2 -> 3 (+6.0 points)" and unclear.startswith("2 -> 2b (+0.0")
    assert ladder.verdicts({"2": rows["2"]}) == [
        "No pair of steps with two or more seeds each: no finding."
    ]


def curve(step, val, train):
    return {
        "step": step,
        "epochs": len(val),
        "val_accuracy_per_epoch": val,
        "train_accuracy_per_epoch": train,
    }


def test_longer_training_is_judged_against_the_seed_spread_of_the_step():
    flat, rising = [0.80] * 20 + [0.82] * 80, [0.80] * 25 + [0.86] * 75
    runs = [
        curve("1", flat, [0.9] * 100),
        curve("2", rising, [0.85] * 25 + [0.95] * 75),
        curve("2b", [0.80] * 25 + [0.76] * 75, [0.9] * 25 + [0.99] * 75),
    ]
    spreads = {"1": {"spread": 0.03}, "2": {"spread": 0.02}, "2b": {"spread": 0.004}}
    means = ladder.window_means(runs[0], (25, 100))
    assert means[25] == pytest.approx((90, 82)) and means[100] == pytest.approx(
        (90, 82)
    )
    lines = ladder.longer_training(runs, spreads)
    assert "(+0.0 points: held, tolerance ±3.0)" in lines[0]
    assert (
        "(+6.0 points: rose, tolerance ±2.0)" in lines[1]
        and "best 86.0 % at epoch 26" in lines[1]
    )
    # a spread below one point still allows one point of epoch-to-epoch noise
    assert "(-4.0 points: fell, tolerance ±1.0)" in lines[2]
    assert lines[2].endswith("gap to training +10.0 -> +23.0 points")
    assert ladder.longer_training([curve("2", [0.8] * 20, [0.9] * 20)], spreads) == []


def test_the_long_runs_table_and_plot_show_every_step_and_epoch():
    from helpers import plots

    runs = [
        {
            **curve("2", [0.80] * 50 + [0.84] * 50, [0.9] * 100),
            "seed": 1,
            "train_images": 8000,
        },
        {**curve("1", [0.8] * 60, [0.95] * 60), "seed": 1, "train_images": 8000},
    ]
    shown = ladder.epochs_table(runs).set_index("step")
    assert shown.loc["2", "training"] == "1/8 of the blog's"
    assert shown.loc["2", "epoch 100"] == "84.0 % (train 90.0 %)"
    assert shown.loc["2", "epoch 50"] == "80.0 % (train 90.0 %)"
    assert shown.loc["1"].isna()["epoch 75"]  # a run of 60 epochs has no figure at 75
    fig = plots.long_runs(runs, reference={"2": 90}, mark=25)
    ax = fig.axes[0]
    # two curves per run, the blog's 90 %, the mark
    assert len(ax.lines) == 2 * 2 + 1 + 1
    assert ax.lines[0].get_ydata()[-1] == pytest.approx(84.0)


@pytest.mark.processes
def test_a_mixed_precision_ladder_records_its_dtype_and_never_mixes_with_float32(
    tmp_path, capsys, monkeypatch
):
    from helpers import hardware

    from test_folders import tutorial_folder

    root = tutorial_folder(tmp_path / "cd", train=8, test=4)
    out = tmp_path / "bf16"
    common = [
        "--data",
        str(root),
        "--steps",
        "2",
        "--seeds",
        "1",
        "--epochs",
        "1",
        "--batch",
        "8",
        "--out",
        str(out),
    ]
    # as on an AMX Xeon whose oneDNN is capped below AMX: the warning, and the cap recorded
    monkeypatch.setattr(hardware, "amx_bfloat16", lambda: True)
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16")
    try:
        recorder.main([*common, "--dtype", "mixed_bfloat16"])
        assert "This CPU has AMX" in capsys.readouterr().err
        [run] = ladder.load_runs(out)
        assert run["dtype"] == "mixed_bfloat16" and 0 <= run["val_accuracy"] <= 1
        assert run["onednn_max_cpu_isa"] == "AVX512_CORE_BF16"
        assert run["command"].startswith(
            "ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 python -m"
        )
        with pytest.raises(SystemExit):
            recorder.main([*common, "--dtype", "float32", "--seeds", "2"])
        err = capsys.readouterr().err
        # float32: no warning
        assert "holds runs in mixed_bfloat16" in err and "AMX" not in err
    finally:
        keras.config.set_dtype_policy("float32")


XEON = "Intel Xeon (2 cores usable, AMX), no GPU"
AMX_SIMD = ["avx512f", "avx512_bf16", "amx_bf16", "amx_tile"]


def run_on(hardware, accuracy, dtype="float32", cap=None, nonfinite=(0,), seed=1):
    return {
        "step": "3",
        "seed": seed,
        "val_accuracy": accuracy,
        "dtype": dtype,
        "hardware": hardware,
        "cpu_simd": AMX_SIMD,
        "onednn_max_cpu_isa": cap,
        "nonfinite_weights_per_epoch": list(nonfinite),
        "params": 1,
        "images_per_s": 1.0,
    }


def test_a_run_is_named_by_its_policy_and_whether_amx_computed_it():
    assert ladder.setting(run_on(XEON, 0.8)) == "float32"
    assert (
        ladder.setting(run_on(XEON, 0.8, "mixed_bfloat16")) == "mixed_bfloat16 on AMX"
    )
    capped = run_on(XEON, 0.8, "mixed_bfloat16", cap="AVX512_CORE_BF16")
    assert ladder.setting(capped) == (
        "mixed_bfloat16, AMX off (ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16)"
    )
    no_amx = {**run_on("AMD EPYC", 0.8, "mixed_bfloat16"), "cpu_simd": ["avx512_bf16"]}
    assert ladder.setting(no_amx) == "mixed_bfloat16"


def test_a_run_collapsed_when_its_weights_broke_or_it_answers_one_class():
    assert not ladder.collapsed(run_on(XEON, 0.62))
    assert ladder.collapsed(run_on(XEON, 0.62, nonfinite=(0, 0, 13068)))
    # older records: no counts
    assert ladder.collapsed(run_on(XEON, 0.505, nonfinite=()))
    assert ladder.collapsed({**run_on(XEON, 0.5), "nonfinite_weights_per_epoch": None})


def test_fishers_exact_test_counts_every_split_at_least_as_uneven():
    # 3 of 3 against 0 of 3: two splits of 20 are this uneven, (3, 0) and (0, 3)
    assert ladder.fisher_exact(3, 3, 0, 3) == pytest.approx(0.1)
    assert ladder.fisher_exact(0, 3, 0, 3) == 1.0
    assert ladder.fisher_exact(6, 6, 0, 6) == pytest.approx(2 / 924)
    with pytest.raises(ValueError, match="within their runs"):
        ladder.fisher_exact(4, 3, 0, 3)


def test_settings_are_compared_within_one_machine_by_counts_and_the_others_accuracy():
    base = [run_on(XEON, a, seed=s) for s, a in ((1, 0.86), (2, 0.88), (3, 0.87))]
    broken = [
        run_on(XEON, a, "mixed_bfloat16", seed=s, nonfinite=n)
        for s, a, n in ((1, 0.5, (0, 9)), (2, 0.5, (0,)), (3, 0.5, (0,)))
    ]
    counts, accuracy = ladder.compare_settings(base, broken)
    assert counts.startswith("mixed_bfloat16 on AMX: ") and counts.endswith(
        "not told apart from float32"
    )
    # float32's 32 too
    assert numbers(counts.split(": ", 1)[1])[:6] == [3, 3, 32, 0, 3, 0.1]
    assert accuracy.startswith("accuracy not compared")
    fine = [
        run_on(XEON, a, "mixed_bfloat16", seed=s, cap="AVX512_CORE_BF16")
        for s, a in ((1, 0.85), (2, 0.87), (3, 0.86))
    ]
    counts, accuracy = ladder.compare_settings(base, fine)
    assert numbers(counts.split("): ", 1)[1])[:5] == [0, 3, 32, 0, 3]
    assert accuracy.endswith("the accuracy holds")
    with pytest.raises(ValueError, match="one machine only"):
        ladder.compare_settings(base, [run_on("AMD EPYC", 0.86)])
    table = ladder.by_setting(base + broken + fine)
    assert list(table["collapsed"]) == [0, 3, 0]
    # no run of the broken setting is left
    assert np.isnan(table["mean of the others"][1])


# --- notebook 06's pictures and saved models: loading, checking, training when missing


def test_out_of_dataset_pictures_load_as_0_255_batches():
    paths = data.sample_pictures()
    batch = data.load_pictures(paths, 64)
    assert batch.shape == (len(paths), 64, 64, 3) and batch.dtype == np.float32
    assert batch.max() > 1.0 and batch.min() >= 0.0


def test_a_broken_picture_is_named_in_the_error(tmp_path):
    broken = tmp_path / "holiday.jpg"
    broken.write_text("<html>not a picture</html>")
    with pytest.raises(ValueError, match="holiday.jpg cannot be used"):
        data.load_pictures([broken], 64)


def test_a_model_saved_in_one_profile_is_never_loaded_in_another(profile):
    profile("smoke")
    smoke = ladder.model_path()
    profile("sample")
    assert ladder.model_path() != smoke and ladder.model_path().parent == smoke.parent


def test_a_missing_model_is_trained_saved_and_then_loaded(
    profile, monkeypatch, tmp_path, capsys
):
    profile("smoke")
    monkeypatch.setattr(config, "BUILD_DIR", tmp_path)
    model = ladder.trained_cats_dogs()
    assert ladder.model_path().exists() and "is missing" in capsys.readouterr().out
    again = ladder.trained_cats_dogs()
    assert "Loaded" in capsys.readouterr().out
    assert again.count_params() == model.count_params() == 813_217


# Keras 3.15 converts MobileNet's variables with np.array(copy=False) while saving
@pytest.mark.processes
@pytest.mark.filterwarnings(
    "ignore:__array__ implementation doesn't accept a copy keyword"
)
def test_a_missing_transfer_model_is_trained_saved_and_loads_with_plain_keras(
    profile, monkeypatch, tmp_path, capsys
):
    profile("smoke")
    monkeypatch.setattr(config, "BUILD_DIR", tmp_path)
    model = ladder.trained_transfer()
    path = ladder.model_path(ladder.TRANSFER)
    assert (
        path == tmp_path / "models" / "cats_dogs_transfer_smoke.keras" and path.exists()
    )
    assert "is missing (run notebook 03 for it)" in capsys.readouterr().out
    plain = keras.saving.load_model(path)  # no course code needed to read it back
    pictures = data.load_pictures(data.sample_pictures(), model.input_shape[1])
    np.testing.assert_allclose(
        plain.predict(pictures, verbose=0),
        model.predict(pictures, verbose=0),
        atol=1e-6,
    )
    ladder.trained_transfer()
    assert "Loaded" in capsys.readouterr().out
