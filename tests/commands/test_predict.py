"""``foxhunt predict`` end to end on the shared demo run: target times, realised values, --long."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from demo_run import QUANTILES, DemoRun
from foxhunt.cli import main
from foxhunt.data.read.bars import read_bars
from foxhunt.data.sources.demo import write_demo_bars


@pytest.fixture(scope="module")
def bars(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("predict") / "ES_new.parquet"
    write_demo_bars(path, n_bars=300, seed=5)
    return path


def _predict(run: Path, bars: Path, out: Path, *extra: str) -> None:
    assert (
        main(["predict", "--model", str(run), "--bars", str(bars), "--out", str(out), *extra]) == 0
    )


@pytest.mark.slow
def test_forecasts_name_their_target_bar_and_its_realised_value(
    demo_run: DemoRun, bars: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "f.parquet"
    _predict(demo_run.run, bars, out)
    fc = pl.read_parquet(out)
    n = fc.select(pl.struct("symbol", "origin_ts").n_unique()).item()
    assert f"wrote {fc.height:,} rows ({n:,} origins x 4 horizons, a column per quantile)" in (
        " ".join(capsys.readouterr().err.split())
    )
    assert fc.height == n * 4
    # The h-th target is the h-th bar after the origin wherever the bars run without a gap.
    frame = read_bars(bars)
    ts = frame["ts"]
    nxt = {
        ts[i]: [ts[i + h] if i + h < len(ts) else None for h in range(1, 5)] for i in range(len(ts))
    }
    expected = [nxt[o][h - 1] for o, h in zip(fc["origin_ts"], fc["horizon"], strict=True)]
    known = [e is not None for e in expected]
    assert sum(known) == fc.height - (1 + 2 + 3 + 4)  # the last 4 origins run past the bars
    agree = [t == e for t, e, k in zip(fc["target_ts"], expected, known, strict=True) if k]
    assert np.mean(agree) > 0.95  # demo bars skip the daily halt and weekends, as the calendar
    assert (fc["target_ts"] > fc["origin_ts"]).all()
    # Realised: the close at the target time, null past the end; return = log(realised / close).
    closes = dict(zip(frame["ts"], frame["close"], strict=True))
    assert fc["realised_close"].to_list() == [closes.get(t) for t in fc["target_ts"]]
    last = fc.filter(pl.col("origin_ts") == ts.max())
    assert last["realised_close"].null_count() == 4 and last["target_ts"].is_sorted()
    seen = fc.drop_nulls("realised_close")
    np.testing.assert_allclose(
        seen["realised_return"].to_numpy(),
        np.log(seen["realised_close"].to_numpy() / seen["close"].to_numpy()),
    )


@pytest.mark.slow
def test_long_writes_one_row_per_quantile(
    demo_run: DemoRun, bars: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "long.parquet"
    _predict(demo_run.run, bars, out, "--long")
    fc = pl.read_parquet(out)
    n = fc.select(pl.struct("symbol", "origin_ts").n_unique()).item()
    assert fc.height == n * 4 * len(QUANTILES)
    assert f"({n:,} origins x 4 horizons x {len(QUANTILES)} quantiles)" in (
        " ".join(capsys.readouterr().err.split())
    )
    assert set(fc["quantile"].unique()) == set(QUANTILES)
    assert {"return", "price", "target_ts", "realised_return"} <= set(fc.columns)


@pytest.mark.slow
def test_long_is_refused_with_follow(demo_run: DemoRun, tmp_path: Path) -> None:
    argv = ["predict", "--model", str(demo_run.run), "--follow", str(tmp_path / "feed.csv")]
    assert main([*argv, "--out", str(tmp_path / "f.csv"), "--long"]) == 2
