"""User covariates: the reader keeps them and names bad values; features, spec and scaling
carry them; known-future values come from future rows; static ones must be constant."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from foxhunt.config import DataConfig, RunConfig, demo
from foxhunt.data.features.inputs import check_input_shape, input_shape, with_input_shape
from foxhunt.data.features.table import compute_features, feature_spec
from foxhunt.data.pipeline import future_rows
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.fingerprint import bars_fingerprint
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError, InputError

COV = DataConfig(observed_cols=("spread",), known_cols=("event",), static_cols=("sector",))


def _bars(n: int = 300) -> pl.DataFrame:
    b = demo_bars(n, seed=4).with_columns(pl.col("volume").cast(pl.Float64))
    rng = np.random.default_rng(0)
    return b.with_columns(
        pl.Series("spread", rng.random(n) + 0.25),
        (pl.col("ts").dt.hour() == 14).cast(pl.Float64).alias("event"),
        pl.lit(3.0).alias("sector"),
    )


def _text(df: pl.DataFrame, row: int, col: str, value: str) -> pl.DataFrame:
    idx = pl.int_range(pl.len())
    return df.with_columns(
        pl.col("ts").dt.strftime("%Y-%m-%d %H:%M:%S"), pl.exclude("ts").cast(pl.String)
    ).with_columns(pl.when(idx == row).then(pl.lit(value)).otherwise(pl.col(col)).alias(col))


def test_reader_keeps_asked_columns_only(tmp_path) -> None:
    path = tmp_path / "ES.parquet"
    _bars().write_parquet(path)
    kept = read_bars(path, keep=("spread", "sector"))
    assert kept.columns[-2:] == ["spread", "sector"] and "event" not in kept.columns
    assert kept["spread"].to_list() == _bars()["spread"].to_list()
    assert "spread" not in read_bars(path).columns
    # The fingerprint covers kept columns: other covariate values are other bars.
    other = read_bars(path, keep=("spread",)).with_columns(pl.col("spread") * 2)
    assert bars_fingerprint(other) != bars_fingerprint(read_bars(path, keep=("spread",)))
    assert bars_fingerprint(read_bars(path)) == bars_fingerprint(kept.drop("spread", "sector"))


@pytest.mark.parametrize(
    ("value", "what"),
    [("abc", "not a number 'abc'"), ("", "missing value"), ("inf", "spread is inf")],
)
def test_bad_covariate_value_names_file_column_row(tmp_path, value, what) -> None:
    path = tmp_path / "ES.csv"
    _text(_bars(), 17, "spread", value).write_csv(path)
    with pytest.raises(DataError) as e:
        read_bars(path, keep=("spread",))
    msg = str(e.value)
    assert msg.startswith(f"{path}: column 'spread', row 17 (") and what in msg


def test_missing_covariate_column_is_named(tmp_path) -> None:
    path = tmp_path / "ES.parquet"
    _bars().drop("spread").write_parquet(path)
    with pytest.raises(DataError, match=r"column 'spread' is missing.*columns: ts, symbol"):
        read_bars(path, keep=("spread",))
    with pytest.raises(DataError, match="column 'close' is a bar field"):
        read_bars(path, keep=("close",))


def test_features_carry_the_covariates_in_spec_order() -> None:
    bars = _bars()
    feats = compute_features(bars, 3, inputs=COV)
    spec = feature_spec(3, COV)
    assert feats.columns == ["ts", "symbol", *spec.inputs, *spec.targets]
    assert (spec.historical[-1], spec.known[-1], spec.static[-1]) == (
        "obs__user_spread",
        "known__user_event",
        "static__user_sector",
    )
    # Value at the row's own bar, unscaled (scaling is the scaler's, fitted on train).
    row = feats.row(0, named=True)
    src = bars.filter(pl.col("ts") == row["ts"]).row(0, named=True)
    assert math.isclose(row["obs__user_spread"], src["spread"], rel_tol=1e-6)
    assert row["known__user_event"] == src["event"] and row["static__user_sector"] == 3.0
    # Without covariates the standard features are unchanged.
    std = compute_features(bars, 3)
    assert feats.select(std.columns).equals(std)


def test_static_covariate_must_be_constant() -> None:
    bars = _bars().with_columns(
        pl.when(pl.int_range(pl.len()) == 250).then(4.0).otherwise(pl.col("sector")).alias("sector")
    )
    with pytest.raises(DataError, match=r"static column 'sector' changes within symbol 'ES' at"):
        compute_features(bars, 3, inputs=COV)


def test_shape_follows_the_inputs() -> None:
    assert input_shape(DataConfig()) == (5, 210, 10)
    assert input_shape(COV) == (6, 211, 11)
    cfg = with_input_shape(demo().replace(data={"observed_cols": ("a", "b")}))
    assert (cfg.model.n_static, cfg.model.n_historical, cfg.model.n_known) == (5, 212, 10)
    check_input_shape(cfg)
    with pytest.raises(InputError, match=r"\(5, 210, 10\).*give \(5, 212, 10\)"):
        check_input_shape(demo().replace(data={"observed_cols": ("a", "b")}))


def test_config_round_trip_keeps_inputs(tmp_path) -> None:
    cfg = demo().replace(data={"observed_cols": ["a"], "known_cols": ("b",), "target": "high"})
    cfg.save(tmp_path / "c.json")
    back = RunConfig.load(tmp_path / "c.json")
    assert back == cfg and back.data.observed_cols == ("a",)
    with pytest.raises(ValueError, match="'a' is given twice as an input"):
        DataConfig(observed_cols=("a",), static_cols=("a",))


def test_future_rows_take_known_values_from_the_future_rows() -> None:
    bars = _bars().select("ts", "symbol", "open", "high", "low", "close", "volume", "event")
    spec = feature_spec(3, DataConfig(known_cols=("event",)))
    cols = ["ts", "symbol", *spec.inputs]
    step = bars["ts"][-1] - bars["ts"][-2]
    times = [bars["ts"][-1] + step * k for k in (1, 2, 3)]
    future = pl.DataFrame({"ts": times, "symbol": ["ES"] * 3, "event": [5.0, 6.0, 7.0]})
    got = future_rows(bars, spec, 3, cols, future=future)
    assert got["known__user_event"].to_list() == [5.0, 6.0, 7.0]
    with pytest.raises(DataError, match=r"no future row for symbol 'ES' at .*known-future"):
        future_rows(bars, spec, 3, cols, future=future.head(2))
    with pytest.raises(DataError, match=r"two future rows for symbol 'ES' at"):
        future_rows(bars, spec, 3, cols, future=pl.concat([future, future.tail(1)]))
    with pytest.raises(DataError, match="need future rows: add rows after each symbol's last"):
        future_rows(bars, spec, 3, cols)


def test_reader_splits_off_future_rows(tmp_path) -> None:
    bars = _bars(60).drop("spread", "sector")
    step = bars["ts"][-1] - bars["ts"][-2]
    ahead = pl.DataFrame(
        {"ts": [bars["ts"][-1] + step, bars["ts"][-1] + 2 * step], "symbol": ["ES", "ES"]}
    ).with_columns(pl.lit(None, dtype=pl.Float64).alias(c) for c in bars.columns[2:])
    path = tmp_path / "ES.parquet"
    pl.concat([bars, ahead.with_columns(event=pl.lit(1.0))]).write_parquet(path)
    future: list[pl.DataFrame] = []
    got = read_bars(path, keep=("event",), future=future, future_cols=("event",))
    assert got.height == 60 and future[0]["event"].to_list() == [1.0, 1.0]
    pl.concat([bars, ahead]).write_parquet(path)  # a future row without its known value
    with pytest.raises(DataError, match=r"column 'event', row 60 \(.*\): missing value"):
        read_bars(path, keep=("event",), future=[], future_cols=("event",))
    # not asked for future rows: rows with a time and no value at all are dropped (a vendor's
    # 'null' rows), rows with a known value and no prices are refused (not bars either)
    assert read_bars(path, keep=("event",)).height == 60
    pl.concat([bars, ahead.with_columns(event=pl.lit(1.0))]).write_parquet(path)
    with pytest.raises(DataError, match="row 60.*missing value"):
        read_bars(path, keep=("event",))
    gap = bars.with_columns(  # empty prices in the middle: a missing bar, not a future row
        pl.when(pl.int_range(pl.len()) == 30).then(None).otherwise(pl.col(c)).alias(c)
        for c in ("open", "high", "low", "close", "volume")
    )
    gap.write_parquet(path)
    with pytest.raises(DataError, match=r"row 30 \(.*missing value \(a row with empty prices"):
        read_bars(path, keep=("event",), future=[], future_cols=("event",))


def test_feature_store_is_refused_with_user_inputs(tmp_path) -> None:
    from foxhunt.data.pipeline import prepare_training_data

    (tmp_path / "manifest.json").write_text("{}")
    cfg = with_input_shape(demo().replace(data={"features": "minimal"}))
    with pytest.raises(DataError, match="feature store holds the default features"):
        prepare_training_data(tmp_path, cfg)


def test_training_refuses_a_model_shape_that_does_not_match(tmp_path) -> None:
    from foxhunt.data.pipeline import prepare_training_data

    cfg = demo().replace(data={"observed_cols": ("spread",)})  # n_historical still 210
    with pytest.raises(InputError, match="with_input_shape"):
        prepare_training_data(tmp_path / "none.parquet", cfg)
