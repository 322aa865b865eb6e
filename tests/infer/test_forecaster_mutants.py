"""The streaming Forecaster's documented contract, pinned for mutation testing (issue 18).

Fast checks of what the minutes-long streaming-equals-batch tests of ``test_forecaster.py``
cover only in bulk: the history bound, the state accessors, ``forecast=False`` and
``forecast()``, the numbers of one forecast against ``foxhunt predict`` at the same origin
(close, origin, horizons, price = close · exp(return)), the per-calendar trading session the
tail is extended to, and the input errors. ``mutation/mutate.py forecaster`` maps this file.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl
import pytest
import torch

from demo_run import QUANTILES, DemoRun
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError
from foxhunt.infer.bartail import ROW_BYTES
from foxhunt.infer.forecaster import Forecaster
from foxhunt.infer.predict import predict_to_file
from foxhunt.quantize.model import load_inference_model

RETURNS = [f"return_q{q:g}" for q in QUANTILES]
PRICES = [f"price_q{q:g}" for q in QUANTILES]
MINIMUM = 200 + 16  # the demo run's warm-up + encoder


def _epoch_us(ts: datetime) -> int:
    return int(ts.timestamp() * 1_000_000)


@pytest.mark.slow
def test_history_must_cover_warm_up_plus_encoder(demo_run: DemoRun) -> None:
    fc = Forecaster.load(demo_run.run, history=MINIMUM)
    assert (fc.warmup, fc.encoder_length, fc.horizon, fc.history) == (200, 16, 4, MINIMUM)
    with pytest.raises(
        ValueError, match=rf"history must be >= warm-up \+ encoder = {MINIMUM}, got {MINIMUM - 1}$"
    ):
        Forecaster.load(demo_run.run, history=MINIMUM - 1)


@pytest.mark.slow
def test_state_accessors_follow_the_bars_given(demo_run: DemoRun) -> None:
    """On the bar-tail path (held bytes are its rows; the incremental state's accessors:
    tests/infer/test_forecaster_state.py)."""
    fc = Forecaster.load(demo_run.run, symbols=["ES", "NQ"], incremental=False)
    assert fc.symbols == () and fc.held_bytes == 0
    assert fc.held_bars("ES") == 0 and fc.last_ts("ES") is None and not fc.ready("ES")
    nq, es = demo_bars(MINIMUM, seed=4, symbol="NQ"), demo_bars(MINIMUM - 1, seed=5)
    out = fc.update(pl.concat([nq, es]), forecast=False)
    assert out.height == 0 and out.columns[:4] == ["symbol", "origin_ts", "horizon", "close"]
    assert fc.symbols == ("ES", "NQ")  # sorted, whatever the order given
    assert (fc.held_bars("NQ"), fc.held_bars("ES")) == (MINIMUM, MINIMUM - 1)
    assert fc.held_bytes == (2 * MINIMUM - 1) * ROW_BYTES
    assert fc.last_ts("NQ") == _epoch_us(nq["ts"][-1])
    assert fc.ready("NQ") and not fc.ready("ES")  # exactly warm-up + encoder is enough
    assert fc.ready("NQ") and fc.forecast()["symbol"].unique().to_list() == ["NQ"]
    assert fc.forecast(["ES", "ZZ"]).height == 0  # not ready / never seen: left out
    fc.update(demo_bars(MINIMUM, seed=5).tail(1), forecast=False)
    both = fc.forecast()
    assert both["symbol"].to_list() == ["ES"] * 4 + ["NQ"] * 4
    assert fc.forecast(["NQ"])["symbol"].to_list() == ["NQ"] * 4


@pytest.mark.slow
def test_one_forecast_equals_batch_predict_at_its_origin(demo_run: DemoRun, tmp_path: Path) -> None:
    bars = demo_bars(MINIMUM + 20, seed=8)
    fc = Forecaster.load(demo_run.run)
    assert fc.update(bars.head(MINIMUM + 10)).height == 4
    out = fc.update(bars.tail(10))
    last = bars.row(-1, named=True)
    assert out["symbol"].to_list() == ["ES"] * 4
    assert out["origin_ts"].to_list() == [last["ts"]] * 4
    assert out.schema["origin_ts"] == pl.Datetime("us", "UTC")
    assert out["horizon"].to_list() == [1, 2, 3, 4] and out.schema["horizon"] == pl.Int16
    assert out["close"].to_list() == [last["close"]] * 4
    returns, prices = out.select(RETURNS).to_numpy(), out.select(PRICES).to_numpy()
    np.testing.assert_allclose(prices, last["close"] * np.exp(returns), rtol=1e-12)
    assert (np.diff(returns, axis=1) >= 0).all()

    path, batch_path = tmp_path / "bars.parquet", tmp_path / "batch.parquet"
    bars.write_parquet(path)
    predict_to_file(demo_run.run, path, batch_path, batch_size=64, device="cpu")
    batch = pl.read_parquet(batch_path).filter(pl.col("origin_ts") == last["ts"])
    assert batch["horizon"].to_list() == [1, 2, 3, 4]
    # the streaming tolerance of docs/inference.md (a tail, not the whole history)
    np.testing.assert_allclose(returns, batch.select(RETURNS).to_numpy(), rtol=1e-4, atol=1e-8)


def _session_start(ts: list[datetime], row: int, zone: str, roll_hour: int) -> int:
    """First row of the trading day of ``ts[row]``: local date, +1 day from ``roll_hour`` on."""

    def day(t: datetime) -> object:
        local = t.astimezone(ZoneInfo(zone))
        return (local.date(), local.hour >= roll_hour)

    def trading_day(t: datetime) -> object:
        date, rolled = day(t)
        return date.toordinal() + int(rolled)

    target = trading_day(ts[row])
    return next(i for i, t in enumerate(ts) if trading_day(t) == target)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("symbol", "zone", "roll_hour", "held"),
    [
        ("ES", "America/Chicago", 17, 298),  # the run's instrument: cme_equity, 17:00 CT
        ("EURUSD", "America/New_York", 17, MINIMUM),  # spot FX (inferred): 17:00 New York
        ("BTCUSD", "UTC", 0, 286),  # crypto (inferred): 24x7, midnight UTC
    ],
)
def test_tail_reaches_back_to_the_session_start_on_the_symbols_calendar(
    demo_run: DemoRun, symbol: str, zone: str, roll_hour: int, held: int
) -> None:
    """The tail keeps ``history`` bars, extended back to the first bar of the trading day of
    the first encoder bar, on the symbol's own calendar (docstring of ``BarTail.extended``).

    Round-the-clock 5-minute bars whose first encoder bar is at 22:30 UTC (Wednesday): the CT
    day began 23.5 h before, the New York one 30 min before, the UTC one 22.5 h before."""
    first = datetime(2024, 1, 2, 21, 10, tzinfo=UTC)
    times = pl.datetime_range(first, first + timedelta(minutes=5 * 319), "5m", eager=True)
    bars = demo_bars(320, seed=2).with_columns(
        ts=times.dt.cast_time_unit("us"), symbol=pl.lit(symbol)
    )
    ts = bars["ts"].to_list()
    fc = Forecaster.load(demo_run.run, history=MINIMUM, symbols=[symbol])
    fc.update(bars, forecast=False)
    first_encoder = len(ts) - fc.encoder_length
    assert ts[first_encoder] == datetime(2024, 1, 3, 22, 30, tzinfo=UTC)
    start = min(len(ts) - MINIMUM, _session_start(ts, first_encoder, zone, roll_hour))
    assert fc.held_bars(symbol) == len(ts) - start == held


@pytest.mark.slow
def test_input_errors_name_the_problem(demo_run: DemoRun) -> None:
    fc = Forecaster.load(demo_run.run)
    bars = demo_bars(3, seed=0)
    with pytest.raises(DataError, match=r"^Forecaster.update: column 'ts' must be a datetime"):
        fc.update(bars.with_columns(pl.col("ts").dt.epoch("us")))
    with pytest.raises(DataError, match=r"^Forecaster.update: cannot read the bars \("):
        fc.update(bars.with_columns(pl.lit("many").alias("volume")))
    assert fc.symbols == ()
    local = bars.with_columns(pl.col("ts").dt.convert_time_zone("America/Chicago"))
    fc.update(local.to_pandas(), forecast=False)  # pandas, another zone: the same instants
    assert fc.last_ts("ES") == _epoch_us(bars["ts"][-1])


@pytest.mark.slow
def test_the_first_refused_symbol_in_input_order_is_named(demo_run: DemoRun) -> None:
    fc = Forecaster.load(demo_run.run)  # serves ES only (run.json)
    names = ["ZZ", "YY", "XX", "AA", "MM", "BB", "QQ", "CC"]
    bars = pl.concat([demo_bars(2, seed=0).with_columns(symbol=pl.lit(s)) for s in names]).sort(
        "ts", maintain_order=True
    )
    with pytest.raises(DataError, match=r"symbol 'ZZ' is not one this forecaster serves \(ES\)"):
        fc.update(bars)


def _round_the_clock(symbol: str) -> pl.DataFrame:
    """320 five-minute bars, the first encoder bar at Wednesday 2024-01-03 22:30 UTC."""
    first = datetime(2024, 1, 2, 21, 10, tzinfo=UTC)
    times = pl.datetime_range(first, first + timedelta(minutes=5 * 319), "5m", eager=True)
    return demo_bars(320, seed=2).with_columns(
        ts=times.dt.cast_time_unit("us"), symbol=pl.lit(symbol)
    )


@pytest.mark.slow
def test_the_runs_stored_instruments_are_kept_and_matched_by_root(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    """A symbol the run never saw is resolved against the run's own table first (its root ES
    here, stored on the 24x7 calendar), and resolving it keeps the stored ones."""
    run = tmp_path / "run"
    shutil.copytree(demo_run.run, run)
    table = json.loads((run / "instruments.json").read_text())
    table["ES"]["calendar"] = "24x7"
    (run / "instruments.json").write_text(json.dumps(table))
    fc = Forecaster.load(run, history=MINIMUM, symbols=["ES", "ESH5"])
    for symbol in ("ESH5", "ES"):  # the new contract first, then the stored symbol
        fc.update(_round_the_clock(symbol), forecast=False)
        assert fc.held_bars(symbol) == 286, symbol  # the UTC day: 24x7, not Globex (298)


@pytest.mark.slow
def test_a_run_without_instruments_json_streams_on_globex(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(demo_run.run, run)
    (run / "instruments.json").unlink()
    fc = Forecaster.load(run, history=MINIMUM, symbols=["ES"])
    fc.update(_round_the_clock("ES"), forecast=False)
    assert fc.held_bars("ES") == 298  # the CT trading day


@pytest.mark.slow
def test_direct_construction_defaults(demo_run: DemoRun) -> None:
    loaded = load_inference_model(demo_run.run, "cpu")
    fc = Forecaster(loaded)
    assert fc.device == torch.device("cpu") and fc.allowed is None
    fc.update(demo_bars(3, seed=0, symbol="NQ"), forecast=False)  # any symbol, no list given
    assert fc.symbols == ("NQ",)


@pytest.mark.slow
def test_refusal_messages_name_the_allowed_symbols_the_row_and_the_held_bar(
    demo_run: DemoRun,
) -> None:
    fc = Forecaster.load(demo_run.run, symbols=["NQ", "ES"])
    bars = demo_bars(6, seed=0)
    with pytest.raises(
        DataError, match=r"symbol 'ZZ' is not one this forecaster serves \(ES, NQ\)$"
    ):
        fc.update(bars.with_columns(symbol=pl.lit("ZZ")))
    shuffled = pl.concat([bars.slice(1, 1), bars.slice(0, 1), bars.slice(3, 1), bars.slice(2, 1)])
    with pytest.raises(DataError, match=r"^Forecaster.update: row 1, symbol 'ES', ts "):
        fc.update(shuffled)
    fc.update(bars.head(4), forecast=False)
    held = bars["ts"][3]
    with pytest.raises(DataError) as caught:
        fc.update(bars.slice(3, 1))
    assert str(caught.value).endswith(f"(the last bar already given for 'ES' is at {held})")
    stale = pl.concat([demo_bars(2, seed=1, symbol="NQ"), bars.slice(3, 1)])
    fc.update(stale.head(2), forecast=False)
    with pytest.raises(DataError, match=r"symbol 'NQ'.*duplicate bar"):
        fc.update(pl.concat([stale.slice(1, 1), bars.slice(2, 1)]))


@pytest.mark.slow
def test_unreadable_values_quote_the_reason(demo_run: DemoRun) -> None:
    fc = Forecaster.load(demo_run.run)
    bars = demo_bars(3, seed=0).with_columns(pl.lit("many").alias("volume"))
    with pytest.raises(DataError) as caught:
        fc.update(bars)
    message = str(caught.value)
    assert "conversion from `str` to `f64` failed" in message and "\n" not in message
    with pytest.raises(DataError) as caught:
        fc.update(demo_bars(3, seed=0).drop("volume"))
    assert str(caught.value).endswith("(columns: ts, symbol, open, high, low, close)")


@pytest.mark.slow
def test_bars_that_are_not_a_frame_are_refused_by_name(demo_run: DemoRun) -> None:
    fc = Forecaster.load(demo_run.run)
    with pytest.raises(DataError, match=r"^Forecaster.update: bars must be a polars or pandas"):
        fc.update([1, 2, 3])
