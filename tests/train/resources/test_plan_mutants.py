"""A run's memory plan, pinned down exactly (mutation testing): the planner's margin on CPU and
CUDA, ``apply_budget`` (one rank's batch, the baseline it plans with, the config it returns,
its refusals), the preparation estimate's bar counts, and the boundaries and messages of the
preparation checks.

Bars here are small CSV files of known line counts (their rows are counted, never read), and
the process's RSS is pinned (``rss_bytes``), so every figure is deterministic."""

from __future__ import annotations

import logging
import math
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from foxhunt.config import RunConfig, preset
from foxhunt.errors import InputError
from foxhunt.memory.preparation import preparation_peak
from foxhunt.memory.units import format_bytes
from foxhunt.train.resources import plan

MB = 10**6
RSS = 700 * MB
"""The RSS the tests pin for this process (``resident_before_training`` measures it)."""
DATA = 50 * MB
"""The prepared data's bytes given to ``apply_budget``."""
STORE_HINT = (
    "`foxhunt features --bars BARS --shards --out DIR` and then `foxhunt train --bars DIR` "
    "prepare one symbol at a time and memory-map the windows"
)
FEWER_HINT = (
    "a feature store holds only the default features, so fewer bars or symbols per run is the "
    "way down"
)


def _cfg(device: str = "cpu") -> RunConfig:
    """The demo preset (batch 64) at micro-batch 16, fp32 (not ``auto``: the same on every
    machine)."""
    return preset("demo").replace(
        train={"precision": "fp32", "micro_batch_size": 16, "device": device}
    )


def _n_inputs(cfg: RunConfig) -> int:
    m = cfg.model
    return m.n_static + m.n_historical + m.n_known


@pytest.fixture
def bars(tmp_path: Path) -> Path:
    """Two files of 3,001 and 1,001 rows (4,002 bars, the largest symbol 3,001)."""
    (tmp_path / "ES.csv").write_text("1\n" * 3001)
    (tmp_path / "NQ.csv").write_text("1\n" * 1001)
    return tmp_path


@pytest.fixture
def pinned_rss(monkeypatch: pytest.MonkeyPatch) -> None:
    """``resident_before_training`` as it is (tests/conftest.py pins the plan's to a constant),
    on an RSS of :data:`RSS` and without importing pandas and arch (slow, and they would not
    change the pinned RSS)."""
    import foxhunt.memory.counters
    import foxhunt.memory.process

    monkeypatch.setattr(
        plan, "resident_before_training", foxhunt.memory.process.resident_before_training
    )
    monkeypatch.setattr(foxhunt.memory.counters, "rss_bytes", lambda: RSS)
    monkeypatch.setattr(foxhunt.memory.process, "RUN_IMPORTS", ())


@pytest.fixture
def planned(monkeypatch: pytest.MonkeyPatch, pinned_rss: None) -> list[dict[str, Any]]:
    """Each ``plan_budget`` call of ``apply_budget``: its arguments and the plan it returned."""
    calls: list[dict[str, Any]] = []
    real = plan.plan_budget

    def spy(cfg: RunConfig, budget_bytes: int, **kwargs: Any) -> Any:
        out = real(cfg, budget_bytes, **kwargs)
        calls.append({"cfg": cfg, "budget_bytes": budget_bytes, "kwargs": kwargs, "plan": out})
        return out

    monkeypatch.setattr(plan, "plan_budget", spy)
    return calls


# --- plan_margin --------------------------------------------------------------------------------


def test_the_planner_fills_the_whole_budget_on_cuda_and_its_cpu_share_elsewhere() -> None:
    assert plan.CPU_PLAN_MARGIN == 0.9
    assert plan.plan_margin(_cfg("cpu")) == 0.9
    assert plan.plan_margin(_cfg("cuda")) == 1.0
    assert plan.plan_margin(_cfg("cuda:1")) == 1.0


# --- apply_budget -------------------------------------------------------------------------------


def test_apply_budget_plans_one_ranks_batch_on_what_the_process_holds(
    planned: list[dict[str, Any]],
) -> None:
    from foxhunt.memory.process import resident_before_training

    cfg = _cfg()
    out = plan.apply_budget(cfg, "886MB", False, 32, DATA, 100 * MB)
    held = resident_before_training(DATA, prepared_here=True)
    assert held == RSS - DATA  # this process prepared the data: its windows are in the RSS
    (call,) = planned
    assert call["cfg"] == cfg.replace(train={"batch_size": 32, "micro_batch_size": 16})
    assert call["budget_bytes"] == 886 * MB
    assert call["kwargs"] == {
        "allow_precision_change": False,
        "data_bytes": DATA,
        "baseline": held,
        "margin": 0.9,
    }
    # 886 MB x 0.9 over 650 MB held and 50 MB of data: micro-batch 8 of the rank's 32, and
    # validation batches of 128. The same plan with and without AVX-512 (whose process
    # overheads differ by a few MB): 886-887 MB give it on both (887-892 before the fused
    # VSN stopped keeping its weighted states, session 48; with AVX-512 884 MB gives
    # validation batches of 64, without it 888 MB gives micro-batch 16), 870 MB gave
    # micro-batch 4 with AVX-512 and 8 without once the VSN's backward counted the
    # weighting's gradients.
    assert out == call["plan"].apply(cfg)
    t = out.train
    assert (t.batch_size, t.micro_batch_size, t.validation_batch_size) == (64, 8, 128)
    assert (t.checkpointing, t.recompute, t.precision, t.cpu_allocator) == (
        False,
        False,
        "fp32",
        "balanced",
    )
    assert out.model == cfg.model and out.data == cfg.data


def test_apply_budget_keeps_the_configured_micro_batch_when_it_fits(
    planned: list[dict[str, Any]],
) -> None:
    """The walk starts at the configured micro-batch (16), not at the rank's batch (32),
    though 32 would fit 2 GB too: the planner only ever makes the step smaller."""
    cfg = _cfg()
    out = plan.apply_budget(cfg, "2GB", True, 32, DATA, 100 * MB)
    (call,) = planned
    assert call["kwargs"]["allow_precision_change"] is True
    assert out == call["plan"].apply(cfg)
    t = out.train
    assert (t.batch_size, t.micro_batch_size, t.validation_batch_size) == (64, 16, 256)
    whole = plan.apply_budget(cfg.replace(train={"micro_batch_size": None}), "2GB", True, 32,
                              DATA, 100 * MB)  # fmt: skip
    assert whole.train.micro_batch_size == 32  # none configured: the rank's whole batch
    assert (t.precision, t.recompute, t.checkpointing) == ("fp32", False, False)


def test_a_rank_batch_below_the_micro_batch_is_the_micro_batch(
    planned: list[dict[str, Any]],
) -> None:
    cfg = _cfg()
    out = plan.apply_budget(cfg, "2GB", False, 8, DATA, 100 * MB)
    (call,) = planned
    assert call["cfg"] == cfg.replace(train={"batch_size": 8, "micro_batch_size": 8})
    assert (out.train.batch_size, out.train.micro_batch_size) == (64, 8)


def test_a_child_prepared_data_plans_on_the_rss_without_the_windows(
    planned: list[dict[str, Any]],
) -> None:
    from foxhunt.memory.process import resident_before_training

    cfg = _cfg()
    plan.apply_budget(cfg, "2GB", False, 32, DATA, 100 * MB, data_process=False)
    plan.apply_budget(cfg, "2GB", False, 32, DATA, 100 * MB)  # the default: prepared here
    child, here = planned
    assert child["kwargs"]["baseline"] == resident_before_training(DATA, prepared_here=False)
    assert child["kwargs"]["baseline"] == RSS
    assert here["kwargs"]["baseline"] == resident_before_training(DATA, prepared_here=True)
    assert here["kwargs"]["baseline"] == RSS - DATA


def test_a_baseline_above_what_the_process_holds_is_kept(
    planned: list[dict[str, Any]],
) -> None:
    plan.apply_budget(_cfg(), "2GB", False, 32, DATA, 800 * MB)
    (call,) = planned
    assert call["kwargs"]["baseline"] == 800 * MB


def test_on_cuda_the_plan_takes_the_given_baseline_and_the_whole_budget(
    planned: list[dict[str, Any]],
) -> None:
    cfg = _cfg("cuda")
    out = plan.apply_budget(cfg, "200MB", False, 32, DATA, 123)
    (call,) = planned
    assert call["cfg"] == cfg.replace(train={"batch_size": 32, "micro_batch_size": 16})
    assert call["budget_bytes"] == 200 * MB
    assert call["kwargs"] == {
        "allow_precision_change": False,
        "data_bytes": DATA,
        "baseline": 123,
        "margin": 1.0,
    }
    assert out == call["plan"].apply(cfg)
    assert (out.train.batch_size, out.train.micro_batch_size) == (64, 16)  # as configured


def test_a_budget_below_what_the_process_holds_is_refused(pinned_rss: None) -> None:
    want = (
        "memory budget 600 MB is too small: below what the process holds before training, an "
        "import baseline of 650 MB (torch, polars, foxhunt) plus 50.0 MB of prepared data; the "
        "budget bounds the whole process's peak RSS"
    )
    with pytest.raises(InputError, match=f"^{re.escape(want)}$"):
        plan.apply_budget(_cfg(), "600MB", False, 32, DATA, 100 * MB)


@pytest.mark.parametrize(
    ("allow", "hint"), [(False, " or allow bf16 with --allow-precision-change"), (True, "")]
)
def test_a_budget_nothing_fits_is_refused_with_the_margin(
    pinned_rss: None, allow: bool, hint: str
) -> None:
    from foxhunt.memory.budget import plan_budget

    cfg = _cfg()
    rank = cfg.replace(train={"batch_size": 32, "micro_batch_size": 16})
    with pytest.raises(InputError) as direct:
        plan_budget(
            rank,
            800 * MB,
            allow_precision_change=allow,
            data_bytes=DATA,
            baseline=RSS - DATA,
            margin=plan.CPU_PLAN_MARGIN,
        )
    want = str(direct.value)
    assert want.startswith("memory budget 800 MB is too small for this model: even micro-batch 1")
    assert want.endswith(f" (with the planner's 10 % margin){hint}")
    with pytest.raises(InputError, match=f"^{re.escape(want)}$"):
        plan.apply_budget(cfg, "800MB", allow, 32, DATA, 100 * MB)


# --- the preparation estimate -------------------------------------------------------------------


def test_aggregated_bars_count_whole_bars(bars: Path) -> None:
    cfg = _cfg().replace(data={"bar_minutes": 5})
    m = cfg.model
    peak, n = plan._preparation_estimate(cfg, bars)
    assert n == 800 and type(n) is int  # 4,002 // 5
    assert peak == preparation_peak(800, _n_inputs(cfg), m.horizon, 600)  # largest 3,001 // 5
    assert type(peak) is int
    assert plan.warn_large_preparation(cfg, bars, total_memory=10**15) == peak


def test_one_minute_bars_count_every_row(bars: Path) -> None:
    cfg = _cfg()
    peak, n = plan._preparation_estimate(cfg, bars)
    assert (peak, n) == (preparation_peak(4002, _n_inputs(cfg), cfg.model.horizon, 3001), 4002)


def test_no_files_counted_is_no_bars(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(plan, "estimate_file_rows", lambda path: [])
    for cfg in (_cfg(), _cfg().replace(data={"bar_minutes": 5})):
        assert plan._preparation_estimate(cfg, tmp_path) == (
            preparation_peak(0, _n_inputs(cfg), cfg.model.horizon, 0),
            0,
        )


# --- child_fits_budget ----------------------------------------------------------------------------


def test_the_child_fits_at_exactly_the_limit(bars: Path) -> None:
    cfg = _cfg("cuda")  # margin 1: the limit is the budget, to the byte
    peak = preparation_peak(4002, _n_inputs(cfg), cfg.model.horizon, 3001)
    baseline = 100 * MB
    assert plan.child_fits_budget(cfg, str(baseline + peak), bars, baseline) is True
    assert plan.child_fits_budget(cfg, str(baseline + peak - 1), bars, baseline) is False
    assert plan.child_fits_budget(cfg, str(peak), bars, baseline) is False  # alone, exactly
    want = (
        f"memory budget {peak - 1}: preparing the data (4,002 bars) needs an estimated "
        f"{format_bytes(peak)} on its own (docs/memory.md); raise --memory-budget to at least "
        f"{format_bytes(peak)}"
    )
    with pytest.raises(InputError, match=f"^{re.escape(want)}$"):
        plan.child_fits_budget(cfg, str(peak - 1), bars, baseline)


def test_on_cpu_the_child_gets_only_the_planners_share(bars: Path) -> None:
    cfg = _cfg()
    peak = preparation_peak(4002, _n_inputs(cfg), cfg.model.horizon, 3001)
    # Both fill the whole budget: over 90 % of it, so this process prepares (it fits alone).
    assert plan.child_fits_budget(cfg, str(2 * peak), bars, peak) is False
    assert plan.child_fits_budget(cfg, str(math.ceil(2 * peak / 0.9) + 1), bars, peak) is True


def test_a_preparation_over_the_cpu_share_names_the_budget_that_fits(bars: Path) -> None:
    cfg = _cfg()
    peak = preparation_peak(4002, _n_inputs(cfg), cfg.model.horizon, 3001)
    need = format_bytes(math.ceil(peak / 0.9))
    assert need != format_bytes(peak) and need != format_bytes(math.ceil(peak * 0.9))
    want = (
        f"memory budget {peak}: preparing the data (4,002 bars) needs an estimated "
        f"{format_bytes(peak)} on its own (docs/memory.md); raise --memory-budget to at least "
        f"{need}"
    )
    with pytest.raises(InputError, match=f"^{re.escape(want)}$"):
        plan.child_fits_budget(cfg, str(peak), bars, 0)


# --- warn_large_preparation -----------------------------------------------------------------------


def _warning(peak: int, total: int, hint: str) -> str:
    return (
        f"preparing 4,002 bars in memory needs an estimated {format_bytes(peak)}, 50 % of this "
        f"machine's {format_bytes(total)}; {hint} (docs/memory.md)"
    )


def test_the_large_preparation_warning_names_the_store(
    bars: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = _cfg()
    peak = preparation_peak(4002, _n_inputs(cfg), cfg.model.horizon, 3001)
    with caplog.at_level(logging.WARNING, logger=plan.__name__):
        assert plan.warn_large_preparation(cfg, bars, total_memory=2 * peak - 1) == peak
    assert [r.getMessage() for r in caplog.records] == [_warning(peak, 2 * peak - 1, STORE_HINT)]


def test_the_large_preparation_warning_without_a_store_says_fewer_bars(
    bars: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = _cfg().replace(data={"target": "return:volume"})  # a store cannot hold it
    peak = preparation_peak(4002, _n_inputs(cfg), cfg.model.horizon, 3001)
    with caplog.at_level(logging.WARNING, logger=plan.__name__):
        assert plan.warn_large_preparation(cfg, bars, total_memory=2 * peak - 1) == peak
    assert [r.getMessage() for r in caplog.records] == [_warning(peak, 2 * peak - 1, FEWER_HINT)]


def test_the_machines_memory_is_the_default(
    bars: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psutil

    cfg = _cfg()
    peak = preparation_peak(4002, _n_inputs(cfg), cfg.model.horizon, 3001)
    total = 2 * peak
    monkeypatch.setattr(psutil, "virtual_memory", lambda: SimpleNamespace(total=total))
    with caplog.at_level(logging.WARNING, logger=plan.__name__):
        assert plan.warn_large_preparation(cfg, bars) == peak  # at half: no warning
        assert not caplog.records
        total = 2 * peak - 1
        assert plan.warn_large_preparation(cfg, bars) == peak
    assert [r.getMessage() for r in caplog.records] == [_warning(peak, total, STORE_HINT)]


# --- check_child_peak -----------------------------------------------------------------------------


def test_a_child_peak_at_exactly_the_budget_is_no_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger=plan.__name__):
        plan.check_child_peak("1000MB", 400 * MB, 600 * MB)
        plan.check_child_peak("1000MB", 2000 * MB, 0)  # no peak measured
        assert not caplog.records
        plan.check_child_peak("1000MB", 400 * MB, 600 * MB + 1)
    assert [r.getMessage() for r in caplog.records] == [
        "memory budget 1000MB exceeded while preparing the data: its child process peaked at "
        "600 MB beside this process's 400 MB (1.00 GB together); the estimate was low "
        "(docs/memory.md)"
    ]
