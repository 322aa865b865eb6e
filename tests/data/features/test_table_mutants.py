"""compute_features / write_features contracts that mutation testing found unguarded (issue 18).

Per-calendar known features and session VWAP in a three-calendar panel, worked out by hand
from the bar times; the Globex rule without an instrument table; the non-finite check's
message (first feature, first row, null or NaN); unsorted input; the user's instrument table;
``write_features``' defaults (horizon 10, naive times are UTC, outliers refused); and
``read_bars_for_features``' bounds. ``mutation/mutate.py features`` maps this file.
"""

from __future__ import annotations

import logging
import math
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from foxhunt.data.features.table import (
    FeatureSpec,
    compute_features,
    feature_spec,
    read_bars_for_features,
    write_features,
)
from foxhunt.data.market.instrument import Instrument
from foxhunt.data.market.instrument_table import load_instruments
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError, InputError

H = 4
ZONES = {"ES": "America/Chicago", "EURUSD": "America/New_York", "BTCUSD": "UTC"}


def _bars(symbol: str, n: int = 320, seed: int = 3) -> pl.DataFrame:
    """Demo ES bars (5-minute, from Monday 2024-01-01 23:00 UTC) under another symbol."""
    return demo_bars(n, seed=seed).with_columns(
        pl.lit(symbol).alias("symbol"), pl.col("volume").cast(pl.Float64)
    )


def _tod_sin(ts: datetime, zone: str) -> float:
    local = ts.astimezone(ZoneInfo(zone))
    return math.sin(2.0 * math.pi * (local.hour * 60 + local.minute) / 1440.0)


def _rows(out: pl.DataFrame, symbol: str) -> pl.DataFrame:
    return out.filter(pl.col("symbol") == symbol)


def test_each_symbol_gets_its_own_calendars_clock_and_session() -> None:
    """With an instrument table ({} will do), known features and the session VWAP follow each
    symbol's calendar: cme_equity (CT), fx_24x5 (New York), 24x7 (UTC) in one panel."""
    panel = pl.concat([_bars(s, seed=i) for i, s in enumerate(ZONES)])
    out = compute_features(panel, H, instruments={})
    for symbol, zone in ZONES.items():
        rows = _rows(out, symbol)
        want = [_tod_sin(t, zone) for t in rows["ts"].to_list()]
        np.testing.assert_allclose(rows["known__tod_sin"].to_numpy(), want, atol=1e-6)
        alone = compute_features(_bars(symbol, seed=list(ZONES).index(symbol)), H, instruments={})
        assert_frame_equal(rows, alone)
    # BTCUSD's trading day starts at 00:00 UTC (bar 288: 2024-01-03 00:00): the session VWAP
    # there is that one bar's typical price; on the CT clock the session began an hour before.
    btc = _bars("BTCUSD", seed=2)
    bar = btc.row(288, named=True)
    assert bar["ts"].hour == 0 and bar["ts"].minute == 0
    tp = (bar["high"] + bar["low"] + bar["close"]) / 3.0
    got = _rows(out, "BTCUSD").filter(pl.col("ts") == bar["ts"])["obs__vwap_dist_session"]
    assert got.item() == pytest.approx(math.log(bar["close"] / tp), rel=1e-5, abs=1e-7)
    es_rule = compute_features(btc, H)  # no table: the Globex rule, CT session
    assert es_rule.filter(pl.col("ts") == bar["ts"])["obs__vwap_dist_session"].item() != (
        pytest.approx(got.item(), abs=1e-6)
    )


def test_without_an_instrument_table_every_symbol_follows_globex() -> None:
    out = compute_features(_bars("BTCUSD"), H)
    want = [_tod_sin(t, "America/Chicago") for t in out["ts"].to_list()]
    np.testing.assert_allclose(out["known__tod_sin"].to_numpy(), want, atol=1e-6)


def test_the_users_instrument_table_sets_the_static_features() -> None:
    table = {"ES": Instrument("ES", 0.5, 20.0, "USD", "energy", "cme_equity")}
    out = compute_features(_bars("ES"), H, instruments=table)
    assert out["static__log10_tick_size"].unique().to_list() == [pytest.approx(math.log10(0.5))]
    assert out["static__log10_point_value"].unique().to_list() == [pytest.approx(math.log10(20))]


def test_unsorted_bars_give_the_sorted_result() -> None:
    panel = pl.concat([_bars("ES", seed=1), _bars("NQ", n=300, seed=2)])
    want = compute_features(panel, H)
    swapped = pl.concat([panel.slice(1, 1), panel.slice(0, 1), panel.slice(2)])
    assert_frame_equal(compute_features(swapped, H), want)
    assert_frame_equal(compute_features(panel.sort("ts", descending=True), H), want)
    # bars interleaved by time (a live feed's order) are grouped by symbol too
    assert_frame_equal(compute_features(panel.sort(["ts", "symbol"]), H), want)


def test_default_horizon_is_ten() -> None:
    out = compute_features(_bars("ES", n=260))
    assert [c for c in out.columns if c.startswith("target__")] == [
        f"target__h{h}" for h in range(1, 11)
    ]
    assert out.height == 260 - 200 - 10


@pytest.mark.parametrize(("bad", "shown"), [(-1.0, "nan"), (None, "None")])
def test_a_non_finite_feature_names_the_first_feature_symbol_and_time(
    bad: float | None, shown: str
) -> None:
    bars = _bars("ES", n=300)
    bars = bars.with_columns(
        pl.when(pl.int_range(pl.len()) == 250).then(bad).otherwise(pl.col("close")).alias("close")
    )
    ts = bars["ts"][250]
    message = (
        f"feature 'obs__ret1_lag0' is {shown} for symbol 'ES' at {ts}: "
        "the bars are degenerate there"
    )
    with pytest.raises(DataError) as caught:
        compute_features(bars, H)
    assert str(caught.value) == message


def test_missing_columns_are_named() -> None:
    with pytest.raises(DataError, match=r"^bars lack column 'volume'$"):
        compute_features(_bars("ES").drop("volume"), H)


def test_a_custom_feature_set_is_computed_as_chosen() -> None:
    from foxhunt.config import DataConfig

    inputs = DataConfig(features="custom", feature_lines=("ret_5", "twice = close * 2"))
    out = compute_features(_bars("ES"), H, inputs=inputs)
    spec = feature_spec(H, inputs)
    assert spec.historical == ("obs__ret_5", "obs__twice")
    assert out.columns == ["ts", "symbol", *spec.inputs, *spec.targets]
    bars = _bars("ES")
    np.testing.assert_allclose(out["obs__twice"].to_numpy(), 2.0 * bars["close"][200:-H], rtol=1e-6)


def test_feature_spec_from_dict_errors() -> None:
    good = feature_spec(2).to_dict()
    with pytest.raises(DataError, match=r"^invalid feature spec: KeyError\('known'\)$"):
        FeatureSpec.from_dict({k: v for k, v in good.items() if k != "known"})
    bad = {**good, "historical": ["obs__a", "x_b", "y_c"]}
    with pytest.raises(DataError, match=r"^invalid feature spec: 'x_b' should start with 'obs__'$"):
        FeatureSpec.from_dict(bad)


def _write_csv(bars: pl.DataFrame, path: Path) -> Path:
    bars.with_columns(pl.col("ts").dt.replace_time_zone(None)).write_csv(path)
    return path


def test_write_features_defaults(tmp_path: Path) -> None:
    """Horizon 10, naive times read as UTC, the built-in static table without --instruments."""
    bars = _bars("ES", n=260)
    rows, spec = write_features(_write_csv(bars, tmp_path / "b.csv"), tmp_path / "f.parquet")
    out = pl.read_parquet(tmp_path / "f.parquet")
    assert rows == out.height == 260 - 200 - 10 and spec.horizon == 10
    assert out["ts"].to_list() == bars["ts"][200:250].to_list()
    assert out["static__log10_tick_size"][0] == pytest.approx(math.log10(0.25))


def test_write_features_reads_the_instrument_table(tmp_path: Path) -> None:
    table = tmp_path / "i.toml"
    table.write_text(
        '[ES]\ntick_size = 0.5\npoint_value = 20\nasset_class = "energy"\ncalendar = "24x7"\n'
    )
    bars = _bars("ES", n=260)
    path = _write_csv(bars, tmp_path / "b.csv")
    write_features(path, tmp_path / "f.parquet", 2, instruments=table)
    out = pl.read_parquet(tmp_path / "f.parquet")
    assert out["static__log10_tick_size"][0] == pytest.approx(math.log10(0.5))
    want = [_tod_sin(t, "UTC") for t in out["ts"].to_list()]  # the table's 24x7 calendar
    np.testing.assert_allclose(out["known__tod_sin"].to_numpy(), want, atol=1e-6)


def test_write_features_refuses_outliers_unless_allowed(tmp_path: Path) -> None:
    bars = _bars("ES", n=260).with_columns(
        pl.when(pl.int_range(pl.len()) == 230).then(pl.col(c) * 10.0).otherwise(pl.col(c)).alias(c)
        for c in ("open", "high", "low", "close")
    )
    path = _write_csv(bars, tmp_path / "b.csv")
    with pytest.raises(DataError, match="implausible|outlier"):
        write_features(path, tmp_path / "f.parquet", 2)
    rows, _ = write_features(path, tmp_path / "f.parquet", 2, allow_outliers=True)
    assert rows == 260 - 200 - 2


def test_read_bars_for_features_bounds(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^--horizon must be >= 1, got 0$"):
        read_bars_for_features(tmp_path / "none.csv", 0)
    path = _write_csv(_bars("ES", n=202), tmp_path / "b.csv")
    frame, spec = read_bars_for_features(path, 1)
    assert frame.height == 202 and spec.horizon == 1
    assert frame["ts"].dtype == pl.Datetime("us", "UTC")
    with pytest.raises(
        DataError, match=r"has 202 bars; need at least 203 \(warm-up 200 \+ horizon 2 \+ 1\)"
    ):
        read_bars_for_features(path, 2)


def test_too_short_symbols_are_named_first_by_symbol() -> None:
    short = pl.concat([_bars("NQ", n=205), _bars("ES", n=203), _bars("CL", n=400)])
    with pytest.raises(DataError) as caught:
        compute_features(short, 10)
    assert str(caught.value) == (
        "symbol 'ES' has 203 bars; features need at least 211 (warm-up 200 + horizon 10 + 1)"
    )
    with pytest.raises(DataError) as caught:
        compute_features(_bars("ES", n=200), 10, with_targets=False)
    assert (
        str(caught.value)
        == "symbol 'ES' has 200 bars; features need at least 201 (warm-up 200 + 1)"
    )
    assert compute_features(_bars("ES", n=201), 10, with_targets=False).height == 1


def test_feature_spec_horizon() -> None:
    assert feature_spec().targets == tuple(f"target__h{h}" for h in range(1, 11))
    assert feature_spec(1).targets == ("target__h1",)
    with pytest.raises(ValueError, match=r"^horizon must be >= 1, got 0$"):
        feature_spec(0)


def test_write_features_reads_naive_times_in_the_given_zone(tmp_path: Path) -> None:
    bars = _bars("ES", n=205)
    local = bars.with_columns(pl.col("ts").dt.convert_time_zone("America/Chicago"))
    path = _write_csv(local, tmp_path / "b.csv")  # naive Chicago clock times
    write_features(path, tmp_path / "f.parquet", 2, tz="America/Chicago")
    out = pl.read_parquet(tmp_path / "f.parquet")
    assert out["ts"].to_list() == bars["ts"][200:203].to_list()


def test_read_bars_for_features_refuses_outliers_by_default(tmp_path: Path) -> None:
    bars = _bars("ES", n=205).with_columns(
        pl.when(pl.int_range(pl.len()) == 150).then(pl.col(c) * 10.0).otherwise(pl.col(c)).alias(c)
        for c in ("open", "high", "low", "close")
    )
    path = _write_csv(bars, tmp_path / "b.csv")
    with pytest.raises(DataError, match="implausible|outlier"):
        read_bars_for_features(path, 2)
    assert read_bars_for_features(path, 2, allow_outliers=True)[0].height == 205


def test_missing_input_columns_are_named() -> None:
    from foxhunt.config import DataConfig

    inputs = DataConfig(observed_cols=("spread", "imbalance"))
    with pytest.raises(DataError, match=r"^bars lack the input column 'spread'$"):
        compute_features(_bars("ES"), H, inputs=inputs)


def _weekend_file(tmp_path: Path) -> Path:
    """300 ES 5-minute bars from Friday noon UTC through Saturday: closed hours on Globex."""
    start = datetime(2024, 1, 5, 12, tzinfo=ZoneInfo("UTC"))
    bars = _bars("ES", n=300).with_columns(
        ts=pl.datetime_range(
            start,
            start + timedelta(minutes=5 * 299),
            "5m",
            eager=True,
            time_zone="UTC",
            time_unit="us",
        )  # fmt: skip
    )
    return _write_csv(bars, tmp_path / "b.csv")


def test_the_instrument_table_and_the_read_options_reach_the_reader(tmp_path: Path) -> None:
    """Bars on a Saturday are refused on ES's Globex calendar; the table's 24x7 calendar, or
    ``allow_odd_times``, lets the reader keep them."""
    path = _weekend_file(tmp_path)
    table = tmp_path / "i.toml"
    table.write_text(
        '[ES]\ntick_size = 0.25\npoint_value = 50\nasset_class = "equity_index"\ncalendar = "24x7"\n'
    )
    with pytest.raises(DataError, match="fall in the closed hours of calendar cme_equity"):
        write_features(path, tmp_path / "f.parquet", 2)
    assert write_features(path, tmp_path / "f.parquet", 2, instruments=table)[0] == 98
    odd = ReadOptions(allow_odd_times=True)
    assert write_features(path, tmp_path / "g.parquet", 2, options=odd)[0] == 98
    assert read_bars_for_features(path, 2, table=load_instruments(table))[0].height == 300
    assert read_bars_for_features(path, 2, options=odd)[0].height == 300


def test_symbols_in_reverse_order_with_later_times_are_sorted() -> None:
    """NQ's bars, then ES's starting after NQ's last: each row's time is later than the one
    before, yet the symbols are out of order."""
    nq = _bars("NQ", n=260, seed=2)
    es = _bars("ES", n=260, seed=1).with_columns(pl.col("ts") + timedelta(days=5))
    want = compute_features(pl.concat([es, nq]).sort(["symbol", "ts"]), H)
    assert_frame_equal(compute_features(pl.concat([nq, es]), H), want)


def test_the_first_of_several_non_finite_rows_is_named() -> None:
    bars = _bars("ES", n=300)
    bad = pl.int_range(pl.len()).is_in([250, 260])
    bars = bars.with_columns(pl.when(bad).then(-1.0).otherwise(pl.col("close")).alias("close"))
    with pytest.raises(DataError) as caught:
        compute_features(bars, H)
    assert f"at {bars['ts'][250]}:" in str(caught.value)


def test_the_log_counts_the_rows_dropped(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="foxhunt"):
        out = compute_features(_bars("ES", n=260), H)
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("features:"))
    assert line.endswith(f"dropped, {260 - out.height} total)")
