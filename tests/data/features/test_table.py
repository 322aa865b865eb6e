"""compute_features: counts, hand-computed values, TA-Lib oracle, causality, no NaN/inf."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import polars_talib as plta
import pytest
import talib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from foxhunt.cli import main
from foxhunt.data.features.observed import MAX_LOOKBACK, WARMUP
from foxhunt.data.features.static import CONTRACTS, ContractSpec
from foxhunt.data.features.table import FeatureSpec, compute_features, feature_spec
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError


def test_group_counts_and_names() -> None:
    spec = feature_spec(10)
    assert (len(spec.historical), len(spec.known), len(spec.static)) == (210, 10, 5)
    assert spec.targets == tuple(f"target__h{h}" for h in range(1, 11))
    assert all(n.startswith("obs__") for n in spec.historical)
    assert all(n.startswith("known__") for n in spec.known)
    assert all(n.startswith("static__") for n in spec.static)
    assert len(set(spec.inputs)) == 225
    assert spec.warmup == WARMUP and MAX_LOOKBACK < WARMUP <= 200
    assert FeatureSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    assert len(feature_spec(3).targets) == 3


def test_output_columns_and_no_nonfinite(es_bars: pl.DataFrame, es_features: pl.DataFrame) -> None:
    spec = feature_spec(10)
    assert es_features.columns == ["ts", "symbol", *spec.inputs, *spec.targets]
    assert es_features.height == es_bars.height - WARMUP - 10
    assert es_features["ts"][0] == es_bars["ts"][WARMUP]
    values = es_features.select(pl.exclude("ts", "symbol")).to_numpy()
    assert np.isfinite(values).all()
    assert all(es_features.schema[c] == pl.Float32 for c in spec.inputs)
    assert all(es_features.schema[c] == pl.Float64 for c in spec.targets)


def test_returns_and_targets_by_hand(es_bars: pl.DataFrame, es_features: pl.DataFrame) -> None:
    c = es_bars["close"].to_numpy()
    row = 300  # bar index in es_bars
    f = es_features.row(row - WARMUP, named=True)
    assert f["obs__ret1_lag0"] == pytest.approx(np.log(c[row] / c[row - 1]), rel=1e-6)
    assert f["obs__ret1_lag3"] == pytest.approx(np.log(c[row - 3] / c[row - 4]), rel=1e-6)
    assert f["obs__ret_20"] == pytest.approx(np.log(c[row] / c[row - 20]), rel=1e-6)
    for h in (1, 4, 10):
        assert f[f"target__h{h}"] == pytest.approx(np.log(c[row + h] / c[row]), rel=1e-12)
    r = np.diff(np.log(c))[row - 20 : row]
    assert f["obs__rv_cc_20"] == pytest.approx(np.std(r, ddof=1), rel=1e-5)


def _wilder(x: np.ndarray, n: int) -> np.ndarray:
    """Wilder smoothing as TA-Lib seeds it: mean of the first n values, then recursive."""
    out = np.full(x.shape, np.nan)
    out[n - 1] = x[:n].mean()
    for t in range(n, len(x)):
        out[t] = (out[t - 1] * (n - 1) + x[t]) / n
    return out


def test_rsi_and_atr_hand_computed_small_series() -> None:
    close = np.array([44.0, 44.3, 44.1, 44.6, 45.2, 45.0, 45.4, 45.9, 45.5, 46.1, 46.0, 45.6, 46.3])
    high = close + np.array([0.3, 0.2, 0.4, 0.5, 0.1, 0.3, 0.2, 0.6, 0.2, 0.3, 0.4, 0.2, 0.1])
    low = close - np.array([0.2, 0.4, 0.1, 0.3, 0.5, 0.2, 0.3, 0.1, 0.4, 0.2, 0.3, 0.5, 0.2])
    df = pl.DataFrame({"close": close, "high": high, "low": low})
    n = 5
    got = df.select(
        plta.rsi(pl.col("close"), timeperiod=n).alias("rsi"),
        plta.atr(pl.col("high"), pl.col("low"), pl.col("close"), timeperiod=n).alias("atr"),
    )
    d = np.diff(close)
    avg_gain = _wilder(np.maximum(d, 0.0), n)
    avg_loss = _wilder(np.maximum(-d, 0.0), n)
    rsi = 100.0 * avg_gain / (avg_gain + avg_loss)
    np.testing.assert_allclose(got["rsi"].to_numpy()[n:], rsi[n - 1 :], rtol=1e-10)
    # First value by hand: moves +.3 -.2 +.5 +.6 -.2 -> gains 1.4, losses 0.4 (simple means).
    assert got["rsi"][n] == pytest.approx(100.0 * 1.4 / (1.4 + 0.4))
    tr = np.maximum(
        high[1:] - low[1:], np.maximum(abs(high[1:] - close[:-1]), abs(low[1:] - close[:-1]))
    )
    atr = _wilder(tr, n)
    np.testing.assert_allclose(got["atr"].to_numpy()[n:], atr[n - 1 :], rtol=1e-10)


def test_indicators_match_talib_oracle(es_bars: pl.DataFrame, es_features: pl.DataFrame) -> None:
    h, lo, c = (es_bars[x].to_numpy() for x in ("high", "low", "close"))
    rows = slice(WARMUP, WARMUP + es_features.height)
    oracle = {
        "obs__rsi_14": (talib.RSI(c, 14) - 50.0) / 50.0,
        "obs__natr_14": talib.NATR(h, lo, c, 14) / 100.0,
        "obs__adx_28": talib.ADX(h, lo, c, 28) / 100.0,
        "obs__macd_12_26_9": talib.MACD(c, 12, 26, 9)[0] / c,
        "obs__stoch_k_14_3_3": talib.STOCH(h, lo, c, 14, 3, 0, 3, 0)[0] / 100.0 - 0.5,
    }
    for name, want in oracle.items():
        np.testing.assert_allclose(
            es_features[name].to_numpy(),
            want[rows].astype(np.float32),
            rtol=1e-5,
            atol=1e-7,
            err_msg=name,
        )


@pytest.mark.slow
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cut=st.integers(min_value=WARMUP + 11, max_value=799))
def test_causality_truncated_bars_match_full_run(panel_bars: pl.DataFrame, cut: int) -> None:
    """Features on bars truncated at a random time equal the full computation before it."""
    t_cut = panel_bars.filter(pl.col("symbol") == "ES")["ts"][cut]
    bars = panel_bars.filter(pl.col("ts") < t_cut)
    long_enough = bars.group_by("symbol").len().filter(pl.col("len") > WARMUP + 10)["symbol"]
    bars = bars.filter(pl.col("symbol").is_in(long_enough.implode()))
    for with_targets in (False, True):
        full = compute_features(panel_bars, 10, with_targets=with_targets)
        part = compute_features(bars, 10, with_targets=with_targets)
        expect = full.join(part.select("ts", "symbol"), on=["ts", "symbol"], how="semi")
        assert part.height > 0
        assert_frame_equal(part, expect, check_exact=True)


def test_symbols_do_not_leak_into_each_other(panel_bars: pl.DataFrame) -> None:
    both = compute_features(panel_bars, 10)
    alone = compute_features(panel_bars.filter(pl.col("symbol") == "ES"), 10)
    assert_frame_equal(both.filter(pl.col("symbol") == "ES"), alone, check_exact=True)


def test_features_are_scale_free(es_bars: pl.DataFrame, es_features: pl.DataFrame) -> None:
    # Volatility percentiles are left out: exact ties between window volatilities (common on a
    # tick grid) break either way under float noise, so a rank can move by one.
    cols = [c for c in feature_spec(10).historical if "_pctile_" not in c]
    scaled = es_bars.with_columns(pl.col("open", "high", "low", "close") * 7.0)
    got = compute_features(scaled, 10)
    a = got.select(cols).to_numpy().astype(np.float64)
    b = es_features.select(cols).to_numpy().astype(np.float64)
    np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)


def test_flat_market_and_zero_volume_stay_finite() -> None:
    bars = (
        demo_bars(260, seed=0)
        .with_columns(pl.lit(4750.0).alias(c) for c in ("open", "high", "low", "close"))
        .with_columns(pl.lit(0.0).alias("volume"))
    )
    out = compute_features(bars, 5)
    assert np.isfinite(out.select(pl.exclude("ts", "symbol")).to_numpy()).all()


def test_without_targets_keeps_last_rows(es_bars: pl.DataFrame) -> None:
    out = compute_features(es_bars, 10, with_targets=False)
    assert out.height == es_bars.height - WARMUP
    assert not any(c.startswith("target__") for c in out.columns)
    assert out["ts"][-1] == es_bars["ts"][-1]


def test_static_table_and_unknown_symbol(
    es_bars: pl.DataFrame, caplog: pytest.LogCaptureFixture
) -> None:
    # An unknown symbol never stops a run: tick from the data, one warning naming the option.
    with caplog.at_level("WARNING"):
        out = compute_features(es_bars.with_columns(symbol=pl.lit("XYZ9")), 10)
    assert out["static__log10_tick_size"][0] == pytest.approx(np.log10(0.25))
    assert out["static__log10_point_value"][0] == 0.0
    warned = [r.getMessage() for r in caplog.records if "XYZ9" in r.getMessage()]
    assert len(warned) == 1 and "--instruments FILE" in warned[0]
    with pytest.raises(DataError, match="symbol 'XYZ9'"):
        compute_features(
            es_bars.with_columns(symbol=pl.lit("XYZ9")), 10, static_table={"ES": CONTRACTS["ES"]}
        )
    table = {"XYZ": ContractSpec(0.5, 10.0, 5, 20.0, 100.0)}
    out = compute_features(es_bars.with_columns(symbol=pl.lit("XYZH5")), 10, static_table=table)
    assert out["static__log10_tick_value"][0] == pytest.approx(np.log10(5.0))
    assert out["static__session_hours"][0] == 20.0


def test_too_short_symbol_raises(es_bars: pl.DataFrame) -> None:
    with pytest.raises(DataError, match=r"has 205 bars; features need at least 211"):
        compute_features(es_bars.head(205), 10)


def test_features_cli_writes_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bars = tmp_path / "ES_FUT_small.parquet"
    assert main(["data", "demo", "--bars", "400", "--seed", "1", "--out", str(bars)]) == 0
    out = tmp_path / "features.parquet"
    assert main(["features", "--bars", str(bars), "--out", str(out), "--horizon", "5"]) == 0
    df = pl.read_parquet(out)
    assert df.shape == (400 - WARMUP - 5, 2 + 225 + 5)
    assert df.columns[:2] == ["ts", "symbol"]
    assert "wrote 195 rows" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "ES_FUT_small.parquet",
        "features.parquet",
    ]


def test_docs_list_every_feature_family() -> None:
    docs = (Path(__file__).parents[3] / "docs" / "features.md").read_text()
    spec = feature_spec(10)
    for name in (*spec.historical, *spec.known, *spec.static):
        family = re.sub(r"(_lag\d+|(_\d+)+)$", "", name)
        assert f"`{family}" in docs, name
    assert "**210**" in docs


@pytest.mark.slow
def test_real_market_bars_prefix_matches_full_run() -> None:
    """Real daily S&P 500 bars (shipped in the arch wheel): finite features, prefix == full run."""
    from foxhunt.data.sources.index_daily import index_daily_bars

    bars = index_daily_bars().filter(pl.col("symbol") == "ES")
    assert bars.height == 5031
    full = compute_features(bars, 10)
    assert np.isfinite(full.select(pl.exclude("ts", "symbol")).to_numpy()).all()
    for cut in (260, 2345):
        part = compute_features(bars.head(cut), 10)
        expect = full.join(part.select("ts", "symbol"), on=["ts", "symbol"], how="semi")
        assert_frame_equal(part, expect, check_exact=True)
