from __future__ import annotations

import pytest
import torch

from foxhunt import runtime


@pytest.mark.parametrize(("native", "expected"), [(True, "bf16"), (False, "fp32")])
def test_auto_precision_follows_native_bf16(
    monkeypatch: pytest.MonkeyPatch, native: bool, expected: str
) -> None:
    monkeypatch.delenv(runtime.FORCE_FP32_ENV, raising=False)
    monkeypatch.setattr(runtime, "_cpu_has_native_bf16", lambda: native)
    cpu = torch.device("cpu")
    assert runtime.native_bf16(cpu) is native
    assert runtime.resolve_precision("auto", cpu) == expected
    for explicit in ("fp32", "bf16"):  # an explicit choice is kept as it is
        assert runtime.resolve_precision(explicit, cpu) == explicit


def test_force_fp32_env_makes_auto_fp32_and_keeps_explicit_choices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runtime, "_cpu_has_native_bf16", lambda: True)
    cpu = torch.device("cpu")
    monkeypatch.setenv(runtime.FORCE_FP32_ENV, "1")
    assert runtime.resolve_precision("auto", cpu) == "fp32"
    assert runtime.resolve_precision("bf16", cpu) == "bf16"
    with runtime.autocast(cpu, "auto"):
        assert not torch.is_autocast_enabled("cpu")
    monkeypatch.setenv(runtime.FORCE_FP32_ENV, "0")  # only "1" forces
    assert runtime.resolve_precision("auto", cpu) == "bf16"


def test_autocast_resolves_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(runtime.FORCE_FP32_ENV, raising=False)
    cpu = torch.device("cpu")
    monkeypatch.setattr(runtime, "_cpu_has_native_bf16", lambda: True)
    with runtime.autocast(cpu, "auto"):
        assert torch.is_autocast_enabled("cpu")
        assert torch.get_autocast_dtype("cpu") == torch.bfloat16
    monkeypatch.setattr(runtime, "_cpu_has_native_bf16", lambda: False)
    with runtime.autocast(cpu, "auto"):
        assert not torch.is_autocast_enabled("cpu")


@pytest.mark.parametrize("native", [True, False])
def test_bf16_emulated_on_cpu_warns(monkeypatch: pytest.MonkeyPatch, native: bool) -> None:
    """Issue 27: bf16 on a CPU without native bf16 runs ~3.5x slower; say so (only there)."""
    monkeypatch.setattr(runtime, "_cpu_has_native_bf16", lambda: native)
    cpu = torch.device("cpu")
    warning = runtime.emulated_precision_warning("bf16", cpu)
    assert (warning is None) is native
    if warning is not None:
        assert "emulated through fp32" in warning and "--precision auto" in warning
    for other in ("fp32", "auto"):
        assert runtime.emulated_precision_warning(other, cpu) is None


@pytest.mark.parametrize(
    ("cap", "bf16", "avx512"),
    [
        (None, True, True),
        ("ALL", True, True),
        ("default", True, True),
        ("AVX2", False, False),
        ("avx2_vnni_2", False, False),
        ("AVX512_CORE", False, True),
        ("AVX512_CORE_VNNI", False, True),
        ("AVX512_CORE_BF16", True, True),
        ("AVX512_CORE_AMX", True, True),
        ("AVX10_1_512", True, True),
        ("AVX512", True, True),  # not a name oneDNN knows: it ignores it, and so do we
        ("FOO", True, True),
    ],
)
@pytest.mark.parametrize("env", runtime.ONEDNN_ISA_ENVS)
def test_a_onednn_isa_cap_is_read_as_the_cpu_oneDNN_will_use(
    monkeypatch: pytest.MonkeyPatch, env: str, cap: str | None, bf16: bool, avx512: bool
) -> None:
    """ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512 BF16 CPU: no native bf16 (oneDNN then refuses its
    bf16 LSTM) and no AVX-512 (the AVX2 process overhead)."""
    for name in runtime.ONEDNN_ISA_ENVS:
        monkeypatch.delenv(name, raising=False)
    if cap is not None:
        monkeypatch.setenv(env, cap)
    monkeypatch.setattr(runtime, "_cpu_flags", lambda: frozenset({"avx512f", "avx512_bf16"}))
    assert runtime.native_bf16(torch.device("cpu")) is bf16
    assert runtime.cpu_has_avx512() is avx512
    monkeypatch.setattr(runtime, "_cpu_flags", lambda: frozenset({"avx2", "fma"}))
    assert runtime.native_bf16(torch.device("cpu")) is False  # a cap never adds an ISA
    assert runtime.cpu_has_avx512() is False


def test_the_first_onednn_variable_set_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ONEDNN_MAX_CPU_ISA=ALL`` wins over an older ``DNNL_MAX_CPU_ISA=AVX2``, as in oneDNN."""
    monkeypatch.setattr(runtime, "_cpu_flags", lambda: frozenset({"avx512f", "avx512_bf16"}))
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "ALL")
    monkeypatch.setenv("DNNL_MAX_CPU_ISA", "AVX2")
    assert runtime.native_bf16(torch.device("cpu")) and runtime.cpu_has_avx512()
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    monkeypatch.setenv("DNNL_MAX_CPU_ISA", "ALL")
    assert not runtime.native_bf16(torch.device("cpu")) and not runtime.cpu_has_avx512()


def test_json_safe_makes_every_non_finite_float_null_and_keeps_the_rest() -> None:
    import json
    import math

    obj = {"a": math.nan, "b": [1.5, math.inf, (-math.inf, 0)], "c": {"d": "NaN", "e": None}}
    safe = runtime.json_safe(obj)
    assert safe == {"a": None, "b": [1.5, None, [None, 0]], "c": {"d": "NaN", "e": None}}
    assert json.loads(json.dumps(safe, allow_nan=False)) == safe  # strict JSON
    assert runtime.json_safe(True) is True and runtime.json_safe(3) == 3
