from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from demo_run import QUANTILES, DemoRun
from foxhunt.data.features.table import compute_features, feature_spec
from foxhunt.data.market.calendar import project_bar_times
from foxhunt.data.sources.demo import demo_bars
from foxhunt.data.sources.index_daily import index_daily_bars
from foxhunt.errors import DataError
from foxhunt.infer.bartail import ROW_BYTES, BarTail, smoother_memory
from foxhunt.infer.forecaster import Forecaster
from foxhunt.infer.predict import predict_to_file

KEY = ["symbol", "origin_ts", "horizon"]
RETURNS = [f"return_q{q:g}" for q in QUANTILES]
PRICES = [f"price_q{q:g}" for q in QUANTILES]


def _batch_predict(run: Path, bars: pl.DataFrame, tmp_path: Path) -> pl.DataFrame:
    path = tmp_path / "bars.parquet"
    bars.write_parquet(path)
    out = tmp_path / "batch.parquet"
    predict_to_file(run, path, out, batch_size=512, device="cpu")
    return pl.read_parquet(out)


def assert_same_forecasts(stream: pl.DataFrame, batch: pl.DataFrame) -> None:
    """Streaming rows equal the batch rows at the same origins (log returns to 1e-8 + 1e-4 rel)."""
    joined = stream.join(batch, on=KEY, how="left", suffix="_batch")
    assert joined.height == stream.height and joined["close_batch"].null_count() == 0
    np.testing.assert_array_equal(joined["close"].to_numpy(), joined["close_batch"].to_numpy())
    a = joined.select(RETURNS).to_numpy()
    b = joined.select([f"{c}_batch" for c in RETURNS]).to_numpy()
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-8)
    p = joined.select(PRICES).to_numpy()
    np.testing.assert_allclose(
        p, joined.select([f"{c}_batch" for c in PRICES]).to_numpy(), rtol=1e-7
    )


def two_symbols(n_es: int, n_nq: int, seed: int) -> pl.DataFrame:
    bars = pl.concat(
        [demo_bars(n_es, seed=seed, symbol="ES"), demo_bars(n_nq, seed=seed + 1, symbol="NQ")]
    )
    return bars.sort(["ts", "symbol"])  # as a live feed delivers them


@pytest.mark.slow
def test_streaming_one_bar_at_a_time_equals_batch_predict(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    bars = two_symbols(250, 235, seed=11)
    fc = Forecaster.load(demo_run.run, symbols=["ES", "NQ"])  # trained on ES only
    need = fc.warmup + fc.encoder_length
    outs = []
    for i in range(bars.height):
        out = fc.update(bars.slice(i, 1))
        assert out.height in (0, 4)  # one symbol x 4 horizons, once ready
        outs.append(out)
    stream = pl.concat(outs)
    # Every bar from the first full window on produced a forecast for its symbol.
    assert stream.height == 4 * ((250 - need + 1) + (235 - need + 1))
    assert_same_forecasts(stream, _batch_predict(demo_run.run, bars, tmp_path))
    assert (np.diff(stream.select(RETURNS).to_numpy(), axis=1) >= 0).all()


@pytest.mark.slow
@pytest.mark.parametrize("incremental", [True, False])
def test_streaming_equals_batch_after_the_tail_is_trimmed(
    demo_run: DemoRun, tmp_path: Path, incremental: bool
) -> None:
    bars = two_symbols(2000, 1900, seed=21)
    fc = Forecaster.load(demo_run.run, symbols=["ES", "NQ"], incremental=incremental)
    head = bars.height - 10
    outs = [fc.update(bars.slice(a, min(500, head - a))) for a in range(0, head, 500)]
    held = fc.held_bytes
    outs += [fc.update(bars.slice(i, 1)) for i in range(head, bars.height)]  # then bar by bar
    if incremental:  # a fixed-size state: bars given are counted, nothing grows
        assert fc.held_bars("ES") == 2000 and fc.held_bytes == held
    else:
        assert fc.held_bars("ES") == fc.history < 2000  # trimmed
    assert_same_forecasts(pl.concat(outs), _batch_predict(demo_run.run, bars, tmp_path))


@pytest.mark.slow
def test_streaming_equals_batch_on_real_index_bars(demo_run: DemoRun, tmp_path: Path) -> None:
    """Real daily bars nobody here generated (S&P 500 / NASDAQ from the arch wheel), holidays
    and all: the last 12 bars per symbol fed one at a time, as a live feed interleaves them."""
    bars = index_daily_bars()
    last = bars.group_by("symbol").tail(12).sort(["ts", "symbol"])
    backlog = bars.join(last, on=["symbol", "ts"], how="anti")
    # the demo run learned 5-minute bars, and batch predict refuses daily ones: a copy that
    # says it learned daily bars (what is compared here is the arithmetic, not the forecast)
    run = tmp_path / "daily_run"
    shutil.copytree(demo_run.run, run)
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps(info | {"bar_interval_s": 86400.0}))
    fc = Forecaster.load(run, symbols=["ES", "NQ"])
    fc.update(backlog, forecast=False)
    stream = pl.concat([fc.update(last.slice(i, 1)) for i in range(last.height)])
    assert stream.height == 24 * 4
    assert_same_forecasts(stream, _batch_predict(run, bars, tmp_path))
    # The check has teeth: some streamed origins are followed by a holiday (Christmas 2018),
    # where the bars that came next are not the scheduled ones the decoder is fed.
    es = bars.filter(pl.col("symbol") == "ES")["ts"]
    origins = es.tail(12).head(8)
    scheduled = project_bar_times(origins, 4, timedelta(days=1))
    nxt = [es.tail(11 - i).head(4).to_list() for i in range(8)]
    assert any(list(row) != n for row, n in zip(scheduled.rows(), nxt, strict=True))


def test_tail_features_equal_full_history_features() -> None:
    """A tail of warm-up + encoder + smoother memory bars gives the full-history features."""
    bars = demo_bars(4000, seed=5)
    spec = feature_spec(4)
    tail_len = spec.warmup + 16 + smoother_memory()
    full = compute_features(bars, 4, with_targets=False).tail(16).select(spec.historical).to_numpy()
    tail = (
        compute_features(bars.tail(tail_len), 4, with_targets=False)
        .tail(16)
        .select(spec.historical)
        .to_numpy()
    )
    # Bit-equal but for rounding of polars' incrementally updated rolling moments: <= 2 ulp.
    np.testing.assert_allclose(tail, full, rtol=2.5e-7, atol=1e-12)
    short = compute_features(bars.tail(spec.warmup + 16 + 100), 4, with_targets=False)
    assert (
        np.abs(short.tail(16).select(spec.historical).to_numpy() - full).max() > 1e-6
    )  # the margin matters


def test_tail_keeps_the_whole_session_of_the_first_encoder_bar() -> None:
    ts = np.arange(300, dtype=np.int64)
    session = (ts // 100).astype(np.int32)  # sessions of 100 bars, longer than keep
    tail = BarTail().extended(ts, np.ones((300, 5)), session, keep=50, encoder_length=10)
    assert tail.ts[0] == 200 and len(tail) == 100  # bar 290's session starts at 200
    more = np.arange(300, 360, dtype=np.int64)
    tail = tail.extended(
        more, np.ones((60, 5)), np.full(60, 3, np.int32), keep=50, encoder_length=10
    )
    assert tail.ts[0] == 300 and tail.nbytes == 60 * ROW_BYTES  # trimmed to bar 350's session
    short = BarTail().extended(
        ts[:30], np.ones((30, 5)), np.zeros(30, np.int32), keep=50, encoder_length=10
    )
    assert len(short) == 30


@pytest.mark.slow
def test_memory_stays_bounded_over_100k_bars(demo_run: DemoRun) -> None:
    """The bar-tail path holds exactly its window (the incremental state's fixed size is
    checked in test_streaming_equals_batch_after_the_tail_is_trimmed)."""
    bars = demo_bars(100_000, seed=7)
    fc = Forecaster.load(demo_run.run, incremental=False)
    held = []
    for a in range(0, bars.height, 5_000):
        fc.update(bars.slice(a, 5_000), forecast=a >= 90_000)
        held.append(fc.held_bytes)
    assert fc.held_bars("ES") == fc.history
    assert fc.held_bytes == fc.history * ROW_BYTES  # exactly the window, nothing else
    assert held[2:] == [held[-1]] * len(held[2:])  # flat from the first trimmed update on
    out = fc.update(demo_bars(100_001, seed=7).tail(1))
    assert out["origin_ts"].n_unique() == 1 and out.height == 4


@pytest.mark.slow
def test_bad_input_is_refused_and_leaves_the_state_unchanged(demo_run: DemoRun) -> None:
    bars = demo_bars(260, seed=9)
    fc = Forecaster.load(demo_run.run, symbols=["ES", "NQ"])
    fc.update(bars.head(250))
    before = (fc.held_bars("ES"), fc.held_bytes)
    cases = [
        (bars.slice(249, 1), "duplicate bar .* last bar already given"),
        (bars.slice(200, 1), "out of time order .* last bar already given"),
        (
            pl.concat([bars.slice(251, 1), bars.slice(250, 1)]),
            "row 1, symbol 'ES'.*out of time order within the update",
        ),
        (pl.concat([bars.slice(250, 1), bars.slice(250, 1)]), "duplicate bar within the update"),
        (bars.slice(250, 1).with_columns(symbol=pl.lit("ZZZ")), "not one this forecaster serves"),
        (bars.slice(250, 1).with_columns(symbol=pl.lit("CL")), "not one this forecaster serves"),
        (
            bars.slice(250, 1).with_columns(high=pl.col("low") * 0.5),
            r"Forecaster.update: column 'high', row 0 .*: high .* < max\(open, close\)",
        ),
        (
            bars.slice(250, 1).with_columns(close=pl.lit(float("nan"))),
            r"column 'close', row 0 .*: close is nan \(must be finite\)",
        ),
        (bars.slice(250, 1).drop("volume"), "missing column 'volume'"),
    ]
    for chunk, message in cases:
        with pytest.raises(DataError, match=message):
            fc.update(chunk)
        assert (fc.held_bars("ES"), fc.held_bytes) == before
    assert fc.update(bars.slice(250, 10)).height == 4  # still works afterwards


@pytest.mark.slow
def test_training_symbols_recorded_in_run_json_are_enforced(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(demo_run.run, run)
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**info, "symbols": ["NQ"]}))
    with pytest.raises(DataError, match="'ES' is not one this forecaster serves \\(NQ\\)"):
        Forecaster.load(run).update(demo_bars(5, seed=0))
    assert Forecaster.load(run, symbols=["ES"]).update(demo_bars(5, seed=0)).height == 0


@pytest.mark.slow
def test_symbols_are_not_ready_until_warm_up_plus_encoder(demo_run: DemoRun) -> None:
    fc = Forecaster.load(demo_run.run)
    need = fc.warmup + fc.encoder_length
    bars = demo_bars(need, seed=1)
    empty = fc.update(bars.head(need - 1))
    assert empty.height == 0 and not fc.ready("ES")
    first = fc.update(bars.tail(1))
    assert first.height == 4 and fc.ready("ES") and first.schema == empty.schema
    naive = bars.tail(1).with_columns(pl.col("ts").dt.replace_time_zone(None).dt.offset_by("5m"))
    assert fc.update(naive).height == 4  # naive timestamps are UTC


@pytest.mark.slow
def test_held_history_is_the_documented_tail(demo_run: DemoRun) -> None:
    """docs/inference.md: warm-up + encoder + the full smoother memory (1,198 bars: the
    slowest EMA's weight below 1e-13); a shorter tail changes features by more than rounding."""
    fc = Forecaster.load(demo_run.run)
    spec_warmup, encoder = fc.warmup, fc.encoder_length
    assert smoother_memory() == 1198
    assert fc.history == spec_warmup + encoder + smoother_memory()


@pytest.mark.slow
def test_a_seasonal_target_scale_streams_as_it_predicts(demo_run: DemoRun, tmp_path: Path) -> None:
    """A run whose target scale has a time-of-day season (config.json's data.target_scale_season):
    the streaming Forecaster reads the forecast bars' half-hours from the calendar exactly as
    batch ``predict`` does, and the season changes the quantiles."""
    run = tmp_path / "seasonal"
    shutil.copytree(demo_run.run, run)
    cfg = json.loads((run / "config.json").read_text())
    assert cfg["data"]["target_scale"] == "window"
    season = [2.5 if 16 <= k < 24 else 0.5 for k in range(48)]  # busy 08:00-12:00 on the clock
    cfg["data"]["target_scale_season"] = season
    (run / "config.json").write_text(json.dumps(cfg))
    bars = two_symbols(300, 280, seed=31)
    fc = Forecaster.load(run, symbols=["ES", "NQ"])
    fc.update(bars.head(bars.height - 40), forecast=False)
    stream = pl.concat([fc.update(bars.slice(i, 1)) for i in range(bars.height - 40, bars.height)])
    assert stream.height > 0
    seasonal = _batch_predict(run, bars, tmp_path)
    assert_same_forecasts(stream, seasonal)
    plain = _batch_predict(demo_run.run, bars, tmp_path)  # (rewrites the files read above)
    joined = seasonal.join(plain, on=KEY, suffix="_plain")
    ratio = joined["return_q0.9"].abs() / joined["return_q0.9_plain"].abs()
    assert ratio.min() < 0.9 and ratio.max() > 1.1  # quiet and busy half-hours both moved


@pytest.mark.slow
def test_an_anchored_target_scale_streams_as_it_predicts(demo_run: DemoRun, tmp_path: Path) -> None:
    """A run whose target scale is anchored on the 120-bar volatility input (config.json's
    data.target_scale_anchor): the streaming Forecaster computes the anchor from its
    incremental features exactly as batch ``predict`` does from the pipeline's, and the anchor
    changes the quantiles."""
    runs = {}
    for anchor in (True, False):
        run = runs[anchor] = tmp_path / f"anchor_{anchor}"
        shutil.copytree(demo_run.run, run)
        cfg = json.loads((run / "config.json").read_text())
        assert cfg["data"]["target_scale"] == "window"
        cfg["data"]["target_scale_anchor"] = anchor
        cfg["data"]["target_scale_reversion"] = 0.5  # the level reverted to is the anchor's
        (run / "config.json").write_text(json.dumps(cfg))
    bars = two_symbols(300, 280, seed=32)
    fc = Forecaster.load(runs[True], symbols=["ES", "NQ"])
    fc.update(bars.head(bars.height - 30), forecast=False)
    stream = pl.concat([fc.update(bars.slice(i, 1)) for i in range(bars.height - 30, bars.height)])
    assert stream.height > 0
    anchored = _batch_predict(runs[True], bars, tmp_path)
    assert_same_forecasts(stream, anchored)
    plain = _batch_predict(runs[False], bars, tmp_path)  # (rewrites the files read above)
    joined = anchored.join(plain, on=KEY, suffix="_plain")
    ratio = joined["return_q0.9"].abs() / joined["return_q0.9_plain"].abs()
    assert (ratio - 1.0).abs().max() > 0.01
