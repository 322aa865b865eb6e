"""The incremental ``Forecaster``: many symbols in one forward, and a saved state that resumes
exactly where an uninterrupted run would be."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from demo_run import DemoRun
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError
from foxhunt.infer.forecaster import Forecaster
from foxhunt.infer.predict import predict_to_file

SYMBOLS = ["ES", "NQ", "YM"]


def _bars(n: int = 260) -> pl.DataFrame:
    parts = [demo_bars(n - 5 * i, seed=40 + i, symbol=s) for i, s in enumerate(SYMBOLS)]
    return pl.concat(parts).sort(["ts", "symbol"])


def _batch(run: Path, bars: pl.DataFrame, tmp_path: Path) -> pl.DataFrame:
    path = tmp_path / "bars.parquet"
    bars.write_parquet(path)
    out = tmp_path / "batch.parquet"
    predict_to_file(run, path, out, batch_size=512, device="cpu")
    return pl.read_parquet(out)


@pytest.mark.slow
def test_an_update_of_many_symbols_is_one_forward_and_equals_predict(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    bars = _bars()
    last = bars.group_by("symbol").tail(3).sort(["ts", "symbol"])
    backlog = bars.join(last, on=["symbol", "ts"], how="anti")
    fc = Forecaster.load(demo_run.run, symbols=SYMBOLS)
    assert fc.incremental and fc.symbols == () and fc.held_bytes == 0
    fc.update(backlog, forecast=False)
    assert fc.symbols == tuple(SYMBOLS) and fc.held_bars("YM") == 250 - 3
    per_symbol = fc.held_bytes // 3
    assert fc.held_bytes == 3 * per_symbol > 0
    calls = []  # one batched forward: one run of the encoder LSTM over all windows
    hook = fc.loaded.model.lstm_encoder.register_forward_hook(lambda *_: calls.append(1))
    try:
        out = fc.update(last)  # 3 bars of each of 3 symbols, in one update
    finally:
        hook.remove()
    assert len(calls) == 1
    assert out["symbol"].unique().sort().to_list() == SYMBOLS
    assert out.height == 3 * fc.horizon  # from each symbol's latest bar
    batch = _batch(demo_run.run, bars, tmp_path)
    key = ["symbol", "origin_ts", "horizon"]
    joined = out.join(batch, on=key, how="left", suffix="_b")
    assert joined["close_b"].null_count() == 0
    ret = [c for c in out.columns if c.startswith("return_q")]
    np.testing.assert_allclose(
        joined.select(ret).to_numpy(),
        joined.select([f"{c}_b" for c in ret]).to_numpy(),
        rtol=1e-4,
        atol=1e-8,
    )


@pytest.mark.slow
def test_a_restart_from_the_saved_state_gives_the_uninterrupted_forecasts(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    bars = _bars()
    cut = bars.height - 30
    backlog, live = bars.head(cut), bars.slice(cut)

    straight = Forecaster.load(demo_run.run, symbols=SYMBOLS)
    straight.update(backlog, forecast=False)
    expected = [straight.update(live.slice(i, 1)) for i in range(live.height)]

    first = Forecaster.load(demo_run.run, symbols=SYMBOLS)
    first.update(backlog, forecast=False)
    path = first.save(tmp_path / "stream.state")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stream.state"]  # no temp left
    resumed = Forecaster.load(demo_run.run, symbols=SYMBOLS, state=path)
    assert resumed.symbols == tuple(SYMBOLS)
    assert all(resumed.last_ts(s) == first.last_ts(s) for s in SYMBOLS)
    got = [resumed.update(live.slice(i, 1)) for i in range(live.height)]
    for a, b in zip(got, expected, strict=True):
        assert a.equals(b)  # bit for bit
    with pytest.raises(DataError, match="duplicate bar"):
        resumed.update(live.tail(1))  # the restored state knows what it has seen


@pytest.mark.slow
def test_a_bad_or_foreign_state_is_refused(demo_run: DemoRun, tmp_path: Path) -> None:
    bad = tmp_path / "bad.state"
    bad.write_bytes(b"not numpy")
    with pytest.raises(DataError, match="not a forecaster state"):
        Forecaster.load(demo_run.run, state=bad)
    fc = Forecaster.load(demo_run.run, symbols=SYMBOLS)
    fc.update(_bars(230), forecast=False)
    path = fc.save(tmp_path / "ok.state")
    arrays = dict(np.load(path))
    arrays["model"] = np.array("another model")
    np.savez(tmp_path / "foreign.npz", **arrays)
    with pytest.raises(DataError, match="another model"):
        Forecaster.load(demo_run.run, state=tmp_path / "foreign.npz")
    arrays["model"] = np.array(fc._identity())
    arrays["forecaster"] = np.array([99])
    np.savez(tmp_path / "future.npz", **arrays)
    with pytest.raises(DataError, match="format"):
        Forecaster.load(demo_run.run, state=tmp_path / "future.npz")


@pytest.mark.slow
def test_a_rejected_update_changes_nothing(demo_run: DemoRun) -> None:
    bars = _bars(230)
    fc = Forecaster.load(demo_run.run, symbols=SYMBOLS)
    fc.update(bars, forecast=False)
    before = {s: (fc.held_bars(s), fc.last_ts(s)) for s in SYMBOLS}
    new = demo_bars(231, seed=40, symbol="ES").tail(1)
    broken = pl.concat([new, new.with_columns(pl.col("high") * 0.5)])  # 2nd row: high < low
    with pytest.raises(DataError, match="row 1"):
        fc.update(broken)
    assert {s: (fc.held_bars(s), fc.last_ts(s)) for s in SYMBOLS} == before


def test_a_normalised_frame_skips_normalise_and_forecasts_as_any_spelling(
    demo_run: DemoRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bars of held symbols handed over in the normalised layout are read without building the
    normalised copy (``bar_input.fast_arrays``), and forecast exactly as the same bars under
    another spelling, which ``normalise`` reads."""
    import foxhunt.infer.forecaster as forecaster_module

    bars = _bars(240)
    last = bars.group_by("symbol").tail(1).sort(["ts", "symbol"])  # one bar of each
    backlog = bars.join(last, on=["symbol", "ts"], how="anti")
    fast = Forecaster.load(demo_run.run, symbols=SYMBOLS)
    slow = Forecaster.load(demo_run.run, symbols=SYMBOLS)
    fast.update(backlog, forecast=False)
    slow.update(backlog, forecast=False)
    calls: list[int] = []
    real = forecaster_module.normalise

    def counted(frame: object, tz: str | None = None) -> pl.DataFrame:
        calls.append(1)
        return real(frame, tz)

    monkeypatch.setattr(forecaster_module, "normalise", counted)
    a = fast.update(last)
    assert calls == []  # held symbols, normalised layout: no normalise
    spelled = last.rename({"ts": "timestamp", "open": "Open", "close": "Close"}).with_columns(
        pl.col("timestamp").dt.replace_time_zone(None)
    )
    b = slow.update(spelled)
    assert calls == [1]
    assert a.height == 3 * fast.horizon
    assert a.equals(b)


def test_a_state_without_a_format_or_from_the_bar_tail_path_is_refused(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    """Mutants of `make mutate` (forecaster): a file with no format entry reads as format 0
    (refused, not taken as 1), format 1 is still read, and the bar-tail forecaster, which has
    no state, says so when asked to save one."""
    fc = Forecaster.load(demo_run.run, symbols=SYMBOLS)
    fc.update(_bars(230), forecast=False)
    arrays = dict(np.load(fc.save(tmp_path / "ok.state")))
    del arrays["forecaster"]
    np.savez(tmp_path / "none.npz", **arrays)
    with pytest.raises(DataError, match=r"none\.npz: forecaster state format is not 2"):
        Forecaster.load(demo_run.run, state=tmp_path / "none.npz")
    arrays["forecaster"] = np.array([1])  # the first format is still read
    np.savez(tmp_path / "one.npz", **arrays)
    again = Forecaster.load(demo_run.run, state=tmp_path / "one.npz", symbols=SYMBOLS)
    assert again.held_bars("ES") == fc.held_bars("ES")
    tail = Forecaster.load(demo_run.run, history=1000, symbols=SYMBOLS)
    assert not tail.incremental
    with pytest.raises(ValueError, match="^only the incremental forecaster saves its state$"):
        tail.save(tmp_path / "tail.state")
    assert not (tmp_path / "tail.state").exists()
