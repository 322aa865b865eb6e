"""What a run reads of its bars file (:func:`read_run_bars`): future rows only with known
covariates, the extra columns its inputs and target read, the user's instrument table, the
minimum bar count with its reason, the outlier screen; and which runs a feature store serves
(:func:`is_standard`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from foxhunt.config import DataConfig
from foxhunt.data.features.inputs import is_standard, read_run_bars
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError


def _read(path: Path, data: DataConfig, **kw: object) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    args = {"min_bars": 10, "reason": "the test's minimum", "allow_outliers": False, **kw}
    return read_run_bars(path, data, **args)  # type: ignore[arg-type]


def _bars(n: int = 80, symbol: str = "ES") -> pl.DataFrame:
    bars = demo_bars(n, seed=2).with_columns(symbol=pl.lit(symbol))
    rng = np.random.default_rng(2)
    return bars.with_columns(event=pl.Series(rng.integers(0, 2, n).astype(float)), r=pl.lit(0.01))


def test_future_rows_are_split_off_only_for_known_covariates(tmp_path: Path) -> None:
    bars = _bars()
    step = bars["ts"][-1] - bars["ts"][-2]
    ahead = bars.tail(2).with_columns(
        ts=pl.col("ts") + 2 * step, **{c: None for c in ("open", "high", "low", "close")}
    )
    path = tmp_path / "bars.parquet"
    pl.concat([bars, ahead]).write_parquet(path)
    frame, future = _read(path, DataConfig(known_cols=("event",)))
    assert frame.height == 80 and "event" in frame.columns
    assert future is not None and future["event"].to_list() == ahead["event"].to_list()
    bars.write_parquet(path)
    frame, future = _read(path, DataConfig())
    assert future is None and frame.height == 80
    assert "event" not in frame.columns and "r" not in frame.columns  # not inputs: not kept


def test_the_target_and_covariate_columns_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "bars.csv"
    _bars().write_csv(path)
    frame, _ = _read(path, DataConfig(target="return:r", observed_cols=("event",)))
    assert {"r", "event"} <= set(frame.columns)
    assert frame["r"].to_list() == [0.01] * 80


def test_the_minimum_names_its_reason_and_outliers_are_refused_unless_allowed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bars.csv"
    bars = _bars(300)
    bars.write_csv(path)
    with pytest.raises(DataError, match="the test's minimum"):
        _read(path, DataConfig(), min_bars=1000)
    spiked = bars.with_columns(
        pl.when(pl.int_range(pl.len()) == 150).then(pl.col(c) * 50).otherwise(pl.col(c)).alias(c)
        for c in ("open", "high", "low", "close")
    )
    spiked.write_csv(path)
    with pytest.raises(DataError, match=r"row 150 .* 50 times the median close"):
        _read(path, DataConfig())
    frame, _ = _read(path, DataConfig(), allow_outliers=True)
    assert frame.height == 300


def test_the_users_instrument_table_decides_the_calendar(tmp_path: Path) -> None:
    """FOO looks like a stock (NYSE hours): its Globex-hours bars are refused unless the run's
    instrument table puts it on CME equity hours."""
    path = tmp_path / "bars.csv"
    _bars(220, symbol="FOO").write_csv(path)
    with pytest.raises(DataError, match="closed hours of calendar xnys"):
        _read(path, DataConfig())
    table = tmp_path / "instruments.toml"
    table.write_text(
        '[FOO]\ntick_size = 0.25\npoint_value = 50\nasset_class = "equity_index"\n'
        'calendar = "cme_equity"\n'
    )
    frame, _ = _read(path, DataConfig(instruments=str(table)))
    assert frame.height == 220


def test_a_feature_store_serves_only_default_features_close_target_no_covariates() -> None:
    assert is_standard(DataConfig())
    assert not is_standard(DataConfig(features="minimal"))
    assert not is_standard(DataConfig(observed_cols=("event",)))
    assert not is_standard(DataConfig(known_cols=("event",)))
    assert not is_standard(DataConfig(target="high"))


def test_a_trained_runs_calendar_judges_its_symbols_new_bars(tmp_path: Path) -> None:
    """One Tokyo session of ``SONY`` (a bare ticker, taken for a US stock): one day cannot show
    the calendar it keeps, so read alone its bars are refused as all in the NYSE's closed hours;
    a run whose training gave ``SONY`` Tokyo's calendar (its ``instruments.json``) reads them on
    it (until session 56 ``predict`` and ``evaluate`` judged new bars on the name's guess)."""
    from datetime import datetime, timedelta
    from zoneinfo import ZoneInfo

    from foxhunt.data.market.instrument import Instrument

    start = datetime(2024, 3, 5, 9, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
    times = [start + timedelta(minutes=5 * i) for i in range(30)]  # 09:00-11:25
    n = len(times)
    path = tmp_path / "SONY.csv"
    pl.DataFrame(
        {"ts": [t.isoformat() for t in times], "open": [13000.0] * n, "high": [13010.0] * n,
         "low": [12990.0] * n, "close": [13000.0 + i % 9 for i in range(n)], "volume": [100] * n}
    ).write_csv(path)  # fmt: skip
    with pytest.raises(DataError, match="closed hours of calendar xnys"):
        _read(path, DataConfig())
    sony = Instrument("SONY", 1.0, 1.0, "JPY", "stock", "xtks")
    frame, _ = _read(path, DataConfig(), instruments={"SONY": sony})
    assert frame.height == n


def test_a_short_symbol_is_refused_in_training_and_left_out_where_asked(tmp_path: Path) -> None:
    """Training (the default) refuses a symbol of fewer than the minimum bars, naming it;
    ``drop_short`` (``predict``, ``evaluate``) leaves it out and keeps the others."""
    path = tmp_path / "bars.parquet"
    pl.concat([_bars(300, "ES"), _bars(40, "NQ")]).write_parquet(path)
    with pytest.raises(DataError, match="NQ"):
        _read(path, DataConfig(), min_bars=100)
    frame, _ = _read(path, DataConfig(), min_bars=100, drop_short=True)
    assert frame["symbol"].unique().to_list() == ["ES"]
