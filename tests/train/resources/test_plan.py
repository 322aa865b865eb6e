"""The memory plan counts the data preparation (issue 27): a budgeted CPU run prepares its data
in a child only when the child's estimated peak fits beside this process, else in this process,
else it refuses before reading the bars."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from foxhunt.config import demo
from foxhunt.data.sources.demo import write_demo_bars
from foxhunt.errors import InputError
from foxhunt.memory.preparation import preparation_peak
from foxhunt.train.resources.plan import (
    CPU_PLAN_MARGIN,
    check_child_peak,
    child_fits_budget,
    warn_large_preparation,
)

MB = 10**6
BASELINE = 270 * MB


@pytest.fixture(scope="module")
def bars(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plan") / "ES.parquet"
    write_demo_bars(path, n_bars=4000, seed=0)
    return path


def test_the_child_counts_beside_this_process(bars: Path) -> None:
    cfg = demo()
    m = cfg.model
    peak = preparation_peak(4000, m.n_static + m.n_historical + m.n_known, m.horizon)
    both = BASELINE + peak
    fits = f"{int(both / CPU_PLAN_MARGIN) + 1}"
    assert child_fits_budget(cfg, fits, bars, BASELINE)
    # Child and parent together do not fit, the preparation alone does: this process prepares.
    alone = f"{int(peak / CPU_PLAN_MARGIN) + 1}"
    assert not child_fits_budget(cfg, alone, bars, BASELINE)
    with pytest.raises(InputError) as e:
        child_fits_budget(cfg, "400MB", bars, BASELINE)
    msg = str(e.value)
    assert msg.startswith("memory budget 400MB: preparing the data (4,000 bars) needs")
    assert "raise --memory-budget to at least" in msg and "\n" not in msg


def test_a_measured_child_peak_over_the_budget_is_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        check_child_peak("800MB", BASELINE, 500 * MB)
        assert not caplog.records
        check_child_peak("700MB", BASELINE, 500 * MB)
    (r,) = caplog.records
    assert "its child process peaked at 500 MB" in r.getMessage()
    assert "770 MB together" in r.getMessage()


def test_a_preparation_over_half_the_memory_is_one_warning_naming_the_store(
    bars: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = demo()
    m = cfg.model
    peak = preparation_peak(4000, m.n_static + m.n_historical + m.n_known, m.horizon)
    with caplog.at_level(logging.WARNING):
        assert warn_large_preparation(cfg, bars, total_memory=2 * peak) == peak  # at half: fine
        assert not caplog.records
        warn_large_preparation(cfg, bars, total_memory=2 * peak - 1)
    (r,) = caplog.records
    msg = r.getMessage()
    assert msg.startswith("preparing 4,000 bars in memory needs an estimated")
    assert "--shards --out DIR" in msg and "\n" not in msg
    caplog.clear()
    custom = cfg.replace(data={"target": "return:volume"})  # a store cannot hold it
    with caplog.at_level(logging.WARNING):
        warn_large_preparation(custom, bars, total_memory=peak)
    (r,) = caplog.records
    assert "--shards" not in r.getMessage() and "fewer bars" in r.getMessage()
    assert warn_large_preparation(cfg, bars.parent / "missing", total_memory=1) == 0
    five = cfg.replace(data={"bar_minutes": 5})  # counted as the 800 bars it reads as
    assert warn_large_preparation(five, bars, total_memory=10**15) == preparation_peak(
        800, m.n_static + m.n_historical + m.n_known, m.horizon
    )


def test_the_largest_file_stands_for_the_largest_symbol(tmp_path: Path) -> None:
    write_demo_bars(tmp_path / "ES.parquet", n_bars=3000, seed=0)
    write_demo_bars(tmp_path / "NQ.parquet", n_bars=1000, seed=1, symbol="NQ")
    cfg = demo()
    m = cfg.model
    n_inputs = m.n_static + m.n_historical + m.n_known
    want = preparation_peak(4000, n_inputs, m.horizon, 3000)
    assert want < preparation_peak(4000, n_inputs, m.horizon)
    assert warn_large_preparation(cfg, tmp_path, total_memory=10**15) == want
