"""``Forecaster.forget``: a symbol's state dropped, the others' kept exactly (``DELETE
/symbols/{symbol}`` of ``foxhunt serve``); a wrong first bar no longer locks a symbol out."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from demo_run import DemoRun
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError
from foxhunt.infer.forecaster import Forecaster
from foxhunt.infer.incremental.stream import without_symbol

pytestmark = pytest.mark.slow  # the shared trained demo run (built once, for the slow tier)

SYMBOLS = ["ES", "NQ", "YM"]


def _bars(symbol: str, seed: int, n: int = 240) -> pl.DataFrame:
    return demo_bars(n, seed=seed, symbol=symbol)


def _returns(out: pl.DataFrame) -> np.ndarray:
    return out.sort("symbol", "horizon").select(pl.selectors.starts_with("return_q")).to_numpy()


@pytest.mark.parametrize("incremental", [True, False])
def test_forgetting_a_symbol_keeps_the_others_exactly(demo_run: DemoRun, incremental: bool) -> None:
    es, nq, ym = (_bars(s, 50 + i) for i, s in enumerate(SYMBOLS))
    both = Forecaster.load(demo_run.run, symbols=SYMBOLS, incremental=incremental)
    both.update(pl.concat([es.head(235), nq.head(235), ym.head(235)]), forecast=False)
    alone = Forecaster.load(demo_run.run, symbols=SYMBOLS, incremental=incremental)
    alone.update(pl.concat([es.head(235), ym.head(235)]), forecast=False)

    assert both.forget("NQ") is True
    assert both.forget("NQ") is False and both.forget("CL") is False
    assert both.symbols == ("ES", "YM") and both.held_bars("NQ") == 0 and not both.ready("NQ")
    for i in range(235, 240):  # the kept symbols go on exactly as if NQ had never come
        new = pl.concat([es.slice(i, 1), ym.slice(i, 1)])
        np.testing.assert_array_equal(_returns(both.update(new)), _returns(alone.update(new)))
    # NQ starts afresh: its bars again from the first, at any level
    assert both.update(nq.head(5)).height == 0 and both.held_bars("NQ") == 5


def test_a_wrong_first_level_is_mended_by_forgetting_the_symbol(demo_run: DemoRun) -> None:
    nq = _bars("NQ", 7, 20)
    wrong = nq.head(3).with_columns(pl.col("open", "high", "low", "close") * 100)  # a unit slip
    fc = Forecaster.load(demo_run.run, symbols=SYMBOLS)
    fc.update(wrong, forecast=False)
    with pytest.raises(DataError, match="NQ"):
        fc.update(nq.slice(3, 1))  # the right level is now x100 off the held one: refused
    assert fc.forget("NQ")
    fc.update(nq.slice(3, 17), forecast=False)
    assert fc.held_bars("NQ") == 17


def test_without_symbol_drops_its_slot_and_moves_the_later_ones_up(demo_run: DemoRun) -> None:
    fc = Forecaster.load(demo_run.run, symbols=SYMBOLS)
    fc.update(pl.concat([_bars(s, 60 + i, 30 - 5 * i) for i, s in enumerate(SYMBOLS)]))
    d = fc._live.state_dict()
    gaps = {tuple(r) for r in d["gaps"].tolist()}
    out = without_symbol(d, "ES")
    meta = json.loads(str(out["meta"]))
    assert meta["symbols"] == ["NQ", "YM"] and out["engine.symbols"].tolist() == ["NQ", "YM"]
    assert len(meta["calendars"]) == 2
    np.testing.assert_array_equal(out["ts"], d["ts"][1:])
    np.testing.assert_array_equal(out["engine.count"], d["engine.count"][1:])
    assert out["engine.count"].tolist() == [25, 20]
    assert {tuple(r) for r in out["gaps"].tolist()} == {
        (slot - 1, g, c) for slot, g, c in gaps if slot > 0
    }
    with pytest.raises(KeyError):
        without_symbol(d, "CL")
