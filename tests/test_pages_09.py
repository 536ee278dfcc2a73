"""Notebook 09b's recommendation (`advice`) lives on its page only, so the page is tested: what
it tells a learner on each kind of machine, from section 1's verdict and the timing record."""

import page_source
import pytest

AMX = {"simd": ["avx512f", "avx512_bf16", "amx_bf16", "amx_tile"]}
BF16 = {"simd": ["avx512f", "avx512_bf16"]}
TIMED = {
    "hardware": "Intel Xeon (2 cores usable, AMX), no GPU",
    "date": "2026-12-04T17:00",
    "verdicts": {
        "mixed_bfloat16": {
            "verdict": "faster",
            "text": "mixed_bfloat16 is 2.16x as fast",
        },
        "mixed_bfloat16, AMX off": {
            "verdict": "slower",
            "text": "float32 is 1.15x as fast",
        },
    },
}
OFF_FASTER = {
    **TIMED,
    "verdicts": {
        **TIMED["verdicts"],
        "mixed_bfloat16, AMX off": {
            "verdict": "faster",
            "text": "mixed_bfloat16, AMX off is 1.30x as fast",
        },
    },
}


@pytest.fixture(scope="module")
def advice():
    namespace = {}
    for name in ("advice_elsewhere", "amx_choice", "advice"):  # advice calls the two
        exec(page_source.defined_on_page("09b_bfloat16_in_depth", name), namespace)
    return namespace["advice"]


def test_on_an_amx_cpu_it_warns_names_the_alternatives_and_their_recorded_cost(advice):
    warning, *cost = advice(AMX, True, [], "faster", TIMED)
    # here bfloat16 without AMX was measured slower than float32: float32 is the advice
    assert "NaN at random" in warning and warning.endswith(
        "Use float32, as bfloat16 without AMX is not faster here."
    )
    assert cost == [
        "Recorded on Intel Xeon (2 cores usable, AMX), no GPU 2026-12-04:",
        "mixed_bfloat16 is 2.16x as fast",
        "float32 is 1.15x as fast",
    ]
    # where bfloat16 without AMX was measured faster, that is the advice, with the setting
    warning = advice(AMX, True, [], "faster", OFF_FASTER)[0]
    assert "bfloat16 with AMX off (ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16" in warning
    # not recorded for this machine: it says how to measure, and invents no figure
    warning, how = advice(AMX, True, [], "faster", None)
    assert warning.endswith("Use float32, or bfloat16 with AMX off.")
    assert how == "To time them: python -m tools.isa_timing --record."


def test_without_amx_it_follows_the_speed_measured_here(advice):
    assert advice(BF16, False, [], "faster", None) == [
        "No AMX here: mixed_bfloat16, measured faster in section 1."
    ]
    for verdict in ("slower", "same", "inconclusive", None):
        assert advice(BF16, False, [], verdict, None) == [
            "No AMX here: float32: section 1 did not measure mixed_bfloat16 faster."
        ]
    # AMX capped off by ONEDNN_MAX_CPU_ISA: no warning, the same rule
    [line] = advice(AMX, False, [], "faster", TIMED)
    assert line.startswith("AMX is capped off here") and "NaN" not in line


def test_on_a_gpu_bfloat16_is_as_usual(advice):
    [line] = advice(AMX, True, ["gpu:0"], "faster", TIMED)
    assert "as usual" in line and "NaN" not in line
