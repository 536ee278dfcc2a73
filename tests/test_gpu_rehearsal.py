"""The helpers' GPU branches, run on a CPU under the rehearsal (tests/gpu_rehearsal.py): two
Tesla T4s in nvidia-smi and in TensorFlow's device lists, their work placed on the CPU. What
a CPU cannot rehearse (a GPU's speed, float16 Tensor Cores, a GPU allocator's memory figures,
NCCL's all-reduce) is not asserted here."""

from helpers import benchmark, hardware, plots, roofs, timing

import numpy as np
import page_source
import pytest
import tensorflow as tf
from gpu_rehearsal import fake_gpu, fake_nvidia_smi, one_fake_gpu  # noqa: F401  (fixtures)


@pytest.mark.usefixtures("fake_gpu")
def test_the_hardware_table_and_mixed_precision_support_name_both_t4s():
    gpus = [d for d in hardware.tensorflow_devices() if d["type"] == "GPU"]
    assert [(g["gpu_name"], g["compute_capability"]) for g in gpus] == [
        ("Tesla T4", (7, 5))
    ] * 2
    support = hardware.mixed_precision_support()
    # Turing: no bf16
    assert support["gpu_float16_tensor_cores"] and not support["gpu_bfloat16"]
    assert list(hardware.table()["this machine"].filter(like="GPU").index) == [
        "GPU 0",
        "GPU 1",
    ]


@pytest.mark.usefixtures("fake_gpu")
def test_a_t4_is_offered_float16_but_not_bfloat16_and_work_placed_on_it_runs():
    assert hardware.devices()[-2:] == ["gpu:0", "gpu:1"]
    assert roofs.supported_dtypes("gpu:0") == ["float32", "float16"]
    assert roofs.matmul_flops(128, "float16", device="gpu:1", repeats=1) > 0


@pytest.mark.usefixtures("one_fake_gpu")
def test_with_one_gpu_the_mirrored_strategy_mirrors_over_the_cpus_not_a_lone_replica():
    import keras

    namespace = {"tf": tf}  # notebook 10's function, run as its page runs it
    exec(
        page_source.defined_on_page("10_multi_device_training", "mirrored_strategy"),
        namespace,
    )
    strategy = namespace["mirrored_strategy"]()
    assert all("CPU" in d for d in strategy.extended.worker_devices)
    with strategy.scope():
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        model.compile("sgd", "mse")
    before = model.get_weights()[0].copy()
    model.fit(np.ones((8, 3)), np.ones((8, 1)), batch_size=4, epochs=1, verbose=0)
    assert not np.allclose(model.get_weights()[0], before)  # the step ran


@pytest.mark.usefixtures("fake_gpu")
def test_the_monitor_samples_each_gpu_and_the_plot_draws_a_line_for_each():
    with timing.Utilization(interval=0.05) as watch:
        np.linalg.inv(np.random.default_rng(1).random((300, 300)) + np.eye(300))
        watch.mark("inverse")
    assert {"gpu0_pct", "gpu1_pct", "gpu0_power_w"} <= set(watch.samples[-1])
    legend = [
        t.get_text() for t in plots.utilization(watch).axes[0].get_legend().get_texts()
    ]
    assert legend == [
        "CPU % (all programs)",
        "CPU % (this process)",
        "GPU0 %",
        "GPU1 %",
    ]


@pytest.mark.usefixtures("fake_gpu")
def test_the_gpu_rules_each_print_a_prediction_a_measurement_and_a_verdict():

    # on the CPU here: the verdicts mean nothing
    found = benchmark.gpu_rules("gpu:0", "Tesla T4")
    assert [r["rule"] for r in found] == [
        "tensor-core shapes",
        "NHWC vs NCHW",
        "uint8 vs float32 over PCIe",
    ]
    for r in found:
        lines = benchmark.rule_lines(r)
        assert [x.split(":")[0].strip() for x in lines[1:]] == [
            "predict",
            "measure",
            "verdict",
        ]
        assert r["verdict"] in ("faster", "slower", "same", "inconclusive")
    assert "8.0x (the T4 datasheet's float16 over float32" in found[0]["prediction"]
    limits = {"matmul_gflops": {"gpu:0 float16": ([512], [65.0])}, "bandwidth_gbs": {}}
    assert hardware.gpu_roof_shares(hardware.describe(), limits)[1] == (
        "  float16: measured 0.1 TFLOP/s, 0% of the datasheet's 65.0"
    )
