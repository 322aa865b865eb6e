"""The live forecaster's kept per-bar VSN rows and static contexts give the full forward's
quantiles, over many updates, some symbols at a time, and across a save and restore."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch

from demo_run import DemoRun
from foxhunt.data.sources.demo import demo_bars
from foxhunt.infer.forecaster import Forecaster

SYMBOLS = ["ES", "NQ", "YM"]


def _full_and_kept(
    fc: Forecaster, symbols: list[str], ahead: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """The full forward's and the kept rows' standardised quantiles of the held windows
    (``ahead``: with the known rows of the projected times kept too, as ``update`` runs)."""
    live = fc._live
    batch = live.batch(symbols)
    slots = np.array([live.engine.slots[s] for s in symbols], np.int64)
    count = live.engine.count[slots]
    with torch.inference_mode():
        full = fc.loaded.model(batch).quantiles
        known = live.known_ahead if ahead else None
        kept = fc._selected.outputs(fc.loaded.model, batch, slots, count, known)
    return full, kept


@pytest.mark.slow
def test_kept_rows_give_the_full_forward_over_many_updates_and_a_restart(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    parts = [demo_bars(262, seed=60 + i, symbol=s) for i, s in enumerate(SYMBOLS)]
    bars = pl.concat(parts).sort(["ts", "symbol"])
    fc = Forecaster.load(demo_run.run, symbols=SYMBOLS)
    backlog = fc.warmup + fc.encoder_length + 2
    times = bars["ts"].unique().sort()
    fc.update(bars.filter(pl.col("ts") < times[backlog]), forecast=False)
    for i, t in enumerate(times[backlog:].to_list()):
        step = bars.filter(pl.col("ts") == t)
        if i % 4 == 1:
            step = step.head(1)  # one symbol only: the others' rows wait
        out = fc.update(step)
        assert out.height == step.height * fc.horizon
        for ahead in (False, True):
            full, kept = _full_and_kept(fc, SYMBOLS, ahead)
            torch.testing.assert_close(kept, full, rtol=1e-5, atol=1e-6)
        if i == 20:  # restart halfway: the rows come back with the state
            held = fc._selected.rows.clone()
            fc = Forecaster.load(demo_run.run, symbols=SYMBOLS, state=fc.save(tmp_path / "s"))
            assert torch.equal(fc._selected.rows, held)
    # every window was computed one new bar at a time: each slot's ring holds its last L bars
    live = fc._live
    slots = [live.engine.slots[s] for s in SYMBOLS]
    for slot in slots:
        count = int(live.engine.count[slot])
        want = sorted(range(count - fc.encoder_length, count))
        assert sorted(fc._selected.bar[0, slot].tolist()) == want


@pytest.mark.slow
def test_a_state_without_rows_computes_them_again(demo_run: DemoRun, tmp_path: Path) -> None:
    bars = pl.concat([demo_bars(120, seed=70 + i, symbol=s) for i, s in enumerate(SYMBOLS)])
    fc = Forecaster.load(demo_run.run, symbols=SYMBOLS)
    first = fc.update(bars.sort(["ts", "symbol"]))
    path = fc.save(tmp_path / "s.npz")
    arrays = {k: v for k, v in np.load(path).items() if not k.startswith("selected.")}
    arrays["forecaster"] = np.array([1])  # what the format before the kept rows wrote
    np.savez(tmp_path / "old.npz", **arrays)
    resumed = Forecaster.load(demo_run.run, symbols=SYMBOLS, state=tmp_path / "old.npz")
    assert resumed._selected.bar.size == 0
    again = resumed.forecast()
    ret = [c for c in first.columns if c.startswith("return_q")]
    np.testing.assert_allclose(
        again.select(ret).to_numpy(), first.select(ret).to_numpy(), rtol=1e-5, atol=1e-8
    )


@pytest.mark.slow
def test_the_torch_indexing_of_other_devices_gives_the_numpy_views_forecasts(
    demo_run: DemoRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the CPU the held rows are indexed through numpy views; on other devices (a GPU)
    with torch's indexing. Both ways, run here on the CPU, give the same forecasts."""
    from foxhunt.infer.incremental import known_rows, selected

    bars = pl.concat([demo_bars(280, seed=80 + i, symbol=s) for i, s in enumerate(SYMBOLS)])
    bars = bars.sort(["ts", "symbol"])
    times = bars["ts"].unique().sort()

    def run() -> pl.DataFrame:
        fc = Forecaster.load(demo_run.run, symbols=SYMBOLS)
        cut = times[fc.warmup + fc.encoder_length + 2]
        fc.update(bars.filter(pl.col("ts") < cut), forecast=False)
        steps = [bars.filter(pl.col("ts") == t) for t in times.filter(times >= cut)]
        return pl.concat([fc.update(step) for step in steps])

    host = run()
    original = selected._Index.__init__

    def on_device(self: selected._Index, device: torch.device) -> None:
        original(self, device)
        self.host = False  # torch's indexing, as on a GPU

    monkeypatch.setattr(selected._Index, "__init__", on_device)
    monkeypatch.setattr(known_rows.KnownRows, "_held_on_host", lambda *a: None)
    device = run()
    assert host.height >= 15 * len(SYMBOLS) * 10
    ret = [c for c in host.columns if c.startswith("return_q")]
    np.testing.assert_allclose(
        device.select(ret).to_numpy(), host.select(ret).to_numpy(), rtol=1e-6, atol=1e-9
    )
