"""tools/nan_hunt.py: the step-by-step NaN hunt and its replay (issue 46), shown with an injected
fault, so without AMX: the hunt stops where the fault is and names it, the state it saves
replays finite and bit-identical, a state saved after the fault replays non-finite, and bad
input gets an error that says what is wrong and what to do."""

import ast
import contextlib
import io
import json
from pathlib import Path

from helpers import ladder
from tools import nan_hunt

import numpy as np
import pytest

# Ladder step 2 on the smoke pictures: 64 px, with augmentation and dropout, so every kind of
# state a step changes (weights, Adam's, seed generators) in a network that trains in ms.
STEP, SEED = "2", 1


def _hunt(path, **args):
    """A float32 hunt of STEP, its printed report kept: (result, text)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        done = nan_hunt.hunt(STEP, SEED, dtype="float32", save=path, **args)
    return done, printed.getvalue()


@pytest.fixture(scope="module")
def hunted(tmp_path_factory):
    """A hunt with a fault injected after its third step."""
    return _hunt(tmp_path_factory.mktemp("hunt") / "state.npz", steps=10, inject=3)


def _rewrite(source, target, **changes):
    """A copy of a saved state with its description changed."""
    arrays, batch, meta = nan_hunt.load_state(source)
    return nan_hunt.save_state(target, arrays, batch, {**meta, **changes})


def test_the_amx_flags_come_from_cpuinfo_and_say_none_or_unknown(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nflags\t\t: fpu avx512f amx_tile amx_bf16 amx_int8\n"
        "processor\t: 1\nflags\t\t: fpu avx512f amx_tile amx_bf16 amx_int8\n"
    )
    assert nan_hunt.amx_flags(cpuinfo, "Linux") == "amx_bf16 amx_int8 amx_tile"
    cpuinfo.write_text("flags\t\t: fpu avx2 avx512f avx512_bf16\n")
    assert nan_hunt.amx_flags(cpuinfo, "Linux") == "none"
    assert nan_hunt.amx_flags(tmp_path / "missing", "Linux").startswith("unknown")
    assert nan_hunt.amx_flags(cpuinfo, "Darwin").startswith("unknown (Darwin")


def test_every_report_starts_with_the_amx_flags_onednn_settings_and_versions(
    monkeypatch,
):
    import keras
    import tensorflow as tf

    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16")
    monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
    amx, onednn, versions = nan_hunt.environment()
    assert amx.startswith("CPU AMX flags: ")
    assert (
        onednn == "ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16, TF_ENABLE_ONEDNN_OPTS=default"
    )
    assert (
        f"Keras {keras.__version__}" in versions
        and f"TensorFlow {tf.__version__}" in versions
    )


def test_the_hunt_compiles_a_step_as_the_ladders_training_does():
    tree = ast.parse(Path(ladder.__file__).read_text())
    train = next(
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "train"
    )
    compiles = [
        {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        for call in ast.walk(train)
        if isinstance(call, ast.Call) and getattr(call.func, "attr", None) == "compile"
    ]
    assert compiles == [nan_hunt.COMPILE]


def test_the_copied_state_holds_every_seed_generator_and_adams_variables():
    import keras

    with nan_hunt.policy("float32"):
        model = nan_hunt.network(STEP, SEED)
    paths = [v.path for v in nan_hunt.state_variables(model)]
    # RandomShear, RandomZoom, RandomFlip and Dropout each draw from their own generator
    assert sum(p.endswith("seed_generator_state") for p in paths) == 4
    # Keras names the optimizer adam, adam_1, ... by how many came before it in the process
    assert {p.split("/", 1)[1] for p in paths if p.startswith("adam")} >= {
        "iteration",
        "learning_rate",
    }
    assert (
        len(paths)
        == len(model.variables) + len(model.optimizer.variables)
        == len(set(paths))
    )
    assert keras.config.dtype_policy().name == "float32"  # the policy is set back after


def test_the_hunt_stops_at_the_injected_step_and_names_the_variable_and_count(hunted):
    done, printed = hunted
    assert done.step == 3
    assert [
        (label.endswith("/kernel (Conv2D 2 of 3)"), count, shape)
        for label, count, shape in done.found
    ] == [(True, nan_hunt.INJECTED, (3, 3, 32, 32))]
    assert done.path.is_file() and done.meta["step"] == 3
    assert printed.splitlines()[0].startswith("CPU AMX flags: ")
    assert "Non-finite weights after step 3" in printed
    assert (
        f"(Conv2D 2 of 3): {nan_hunt.INJECTED} of 9,216 values, shape (3, 3, 32, 32)"
        in printed
    )
    assert all(np.isfinite(a).all() for a in done.before if a.dtype.kind == "f")
    # written after the update, the fault leaves Adam's moments finite (a non-finite gradient
    # would have made the moments of those 64 values non-finite too)
    assert "0 optimizer values non-finite" in printed and "  optimizer " not in printed


def test_the_saved_state_replays_finite_and_bit_identical(hunted, capsys):
    done, _ = hunted
    replayed = nan_hunt.replay(done.path, times=10)
    assert (replayed.nonfinite, replayed.distinct, replayed.as_hunted) == (0, 1, 0)
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].startswith("CPU AMX flags: ")
    assert "0 of 10 replays non-finite; 1 distinct result" in printed


def test_a_finite_step_replays_to_exactly_what_the_hunt_computed(tmp_path):
    done, printed = _hunt(tmp_path / "unused.npz", steps=3)
    assert (
        not done.found
        and done.path is None
        and "No non-finite weight in 3 steps" in printed
    )
    path = nan_hunt.save_state(
        tmp_path / "finite.npz", done.before, done.batch, done.meta
    )
    replayed = nan_hunt.replay(path, times=2)
    # every variable the step depends on was restored: the seed generators' states included
    assert (replayed.nonfinite, replayed.distinct, replayed.as_hunted) == (0, 1, 2)


def test_a_state_saved_after_the_fault_replays_nonfinite_naming_the_weights(
    hunted, tmp_path, capsys
):
    done, _ = hunted
    wrong = nan_hunt.save_state(
        tmp_path / "after.npz", done.after, done.batch, done.meta
    )
    replayed = nan_hunt.replay(wrong, times=3)
    assert replayed.nonfinite == 3 and min(replayed.counts) >= nan_hunt.INJECTED
    printed = capsys.readouterr().out
    assert "3 of 3 replays non-finite" in printed
    assert [
        line.startswith("  replay ") and "(Conv2D 2 of 3)" in line
        for line in printed.splitlines()[-3:]
    ] == [True] * 3


def test_a_missing_or_foreign_file_is_refused_saying_what_to_do(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        nan_hunt.main(["replay", str(tmp_path / "missing.npz")])
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert (
        "missing.npz does not exist" in error
        and "python -m tools.nan_hunt hunt" in error
    )
    other = tmp_path / "other.npz"
    np.savez(other, weights=np.zeros(3))
    with pytest.raises(
        nan_hunt.StateError, match="is not a state saved by .* hunt again"
    ):
        nan_hunt.load_state(other)


def test_a_state_from_another_network_is_refused_saying_what_differs(hunted, tmp_path):
    done, _ = hunted
    foreign = _rewrite(done.path, tmp_path / "foreign.npz", ladder_step="0")
    with pytest.raises(
        nan_hunt.StateError, match=r"does not fit ladder step 0 .* hunt again"
    ):
        nan_hunt.replay(foreign, times=1)
    assert json.loads(str(np.load(foreign)["meta"]))["ladder_step"] == "0"
    unknown = _rewrite(done.path, tmp_path / "unknown.npz", ladder_step="9")
    with pytest.raises(nan_hunt.StateError, match="ladder step '9'"):
        nan_hunt.replay(unknown, times=1)


def test_the_command_line_replays_and_refuses_counts_below_one(hunted, capsys):
    done, _ = hunted
    nan_hunt.main(["replay", str(done.path), "--times", "2"])
    printed = capsys.readouterr().out
    assert "ONEDNN_MAX_CPU_ISA=" in printed and "0 of 2 replays non-finite" in printed
    for wrong in (["hunt", "--steps", "0"], ["replay", str(done.path), "--times", "0"]):
        with pytest.raises(SystemExit):
            nan_hunt.main(wrong)
    assert "must be 1 or more" in capsys.readouterr().err
