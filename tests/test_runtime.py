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
