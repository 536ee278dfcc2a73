from helpers import config

import pytest


def test_default_profile_is_sample(monkeypatch):
    monkeypatch.delenv("COURSE_PROFILE", raising=False)
    assert config.profile() == "sample"


def test_unknown_profile_names_the_valid_ones(profile):
    profile("fast")
    with pytest.raises(ValueError, match="smoke, sample, full"):
        config.profile()


def test_profile_is_case_and_space_tolerant(profile):
    profile(" Smoke ")
    assert config.profile() == "smoke"


def test_settings_follow_the_profile(profile):
    profile("smoke")
    smoke = config.settings("mnist")
    profile("sample")
    sample = config.settings("mnist")
    assert smoke.epochs < sample.epochs and smoke.train < sample.train
    assert sample.profile == "sample"


def test_every_setting_exists_in_every_profile():
    for name, per_profile in config.SETTINGS.items():
        assert set(per_profile) == set(config.PROFILES), name
        keys = [set(v) for v in per_profile.values()]
        assert all(k == keys[0] for k in keys), f"{name}: profiles have different keys"


def test_unknown_settings_name_lists_known_ones():
    with pytest.raises(KeyError, match="mnist"):
        config.settings("imagenet")


def test_root_holds_the_course():
    assert (config.ROOT / "notebooks").is_dir()
    assert (config.DATA_DIR / "MANIFEST.sha256").exists()


def test_seed_makes_keras_random_repeatable():
    import keras

    config.set_seed(3)
    a = keras.ops.convert_to_numpy(keras.random.uniform((4,)))
    config.set_seed(3)
    b = keras.ops.convert_to_numpy(keras.random.uniform((4,)))
    assert (a == b).all()


def test_a_build_folder_that_cannot_be_written_is_one_clear_message(tmp_path, monkeypatch):
    import os
    import subprocess
    import sys

    from helpers import models, training

    blocked = tmp_path / "file"
    blocked.write_text("a file where the build folder should be")
    problem = config.build_problem(blocked / "build")
    assert "cannot write into" in problem and "COURSE_BUILD" in problem
    assert config.build_problem(tmp_path / "fine") is None
    with pytest.raises(PermissionError, match="COURSE_BUILD"):
        training.save_model(models.mnist_cnn(), blocked / "models" / "m.keras")
    env = {**os.environ, "COURSE_BUILD": str(blocked / "build")}
    script = "from helpers import config; config.settings('mnist'); config.settings('mnist')"
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.count("Notice: The course cannot write") == 1
