"""WindowDataset contracts that `make mutate` found unguarded (mutation/mutate.py, windows).

A hand-made table of two symbols (5 and 7 one-minute bars, every value its own row number so a
gathered window names the rows it came from) and the documented window arithmetic: origins
``L-1 .. n-H-1`` of each symbol every ``stride`` rows, encoder rows ``t-L+1 .. t``, decoder rows
``t+1 .. t+H``, the target row ``t``.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.windows.dataset import WindowDataset, collate
from foxhunt.errors import DataError
from foxhunt.model.batch import TFTBatch

SPEC = FeatureSpec(
    historical=("obs__a", "obs__b"),
    known=("known__tod_sin",),
    static=("static__s",),
    targets=("target__h1", "target__h2"),
    warmup=0,
)
L, H = 2, 2
SIZES = {"AA": 5, "BB": 7}


@functools.cache
def _frame() -> pl.DataFrame:
    """Built on first use, not at import: mutmut forks each mutant's tests from a process that
    imported this file, and polars started there would leave its thread pool locked."""
    start = datetime(2024, 3, 5, 15, 0, tzinfo=UTC)  # a Tuesday afternoon: globex is open
    parts = []
    row = 0
    for symbol, n in SIZES.items():
        r = np.arange(row, row + n, dtype=np.float64)
        parts.append(
            pl.DataFrame(
                {
                    "symbol": [symbol] * n,
                    "ts": [start + timedelta(minutes=i) for i in range(n)],
                    "obs__a": r,
                    "obs__b": 100 + r,
                    "known__tod_sin": 200 + r,
                    "static__s": 300 + r,
                    "target__h1": 400 + r,
                    "target__h2": 500 + r,
                }
            )
        )
        row += n
    return pl.concat(parts)


ORIGINS = [1, 2, 6, 7, 8, 9]  # AA rows 0-4: 1, 2; BB rows 5-11: 6..9


def test_origins_per_symbol_and_stride() -> None:
    ds = WindowDataset(_frame(), SPEC, L, H)
    assert len(ds) == 6 and ds.origin_rows().tolist() == ORIGINS
    assert ds.symbols == ("AA", "BB")
    o = ds.origins()
    assert o["symbol"].to_list() == ["AA", "AA", "BB", "BB", "BB", "BB"]
    assert o["ts"].dtype == pl.Datetime("us", "UTC")
    assert o["ts"].to_list() == _frame()["ts"].gather(ORIGINS).to_list()
    strided = WindowDataset(_frame(), SPEC, L, H, stride=3)
    assert strided.origin_rows().tolist() == [1, 6, 9]
    longer = WindowDataset(_frame(), SPEC, 4, H)  # AA (5 rows) has no window of 4 + 2
    assert longer.origin_rows().tolist() == [8, 9] and longer.origins()["symbol"].to_list() == [
        "BB",
        "BB",
    ]


def test_batch_gathers_the_documented_rows() -> None:
    ds = WindowDataset(_frame(), SPEC, L, H)
    b = ds.batch([2, 0])
    assert b.historical[:, :, 0].tolist() == [[5.0, 6.0], [0.0, 1.0]]
    assert b.historical[:, :, 1].tolist() == [[105.0, 106.0], [100.0, 101.0]]
    assert b.known[:, :, 0].tolist() == [[205.0, 206.0, 207.0, 208.0], [200.0, 201.0, 202.0, 203.0]]
    assert b.static.tolist() == [[306.0], [301.0]]
    assert b.target.tolist() == [[406.0, 506.0], [401.0, 501.0]]
    assert ds.calendar_windows == 0
    last = ds.batch(torch.tensor([-1]))  # negative indices count from the end
    assert last.static.tolist() == [[309.0]]
    assert ds.batch(np.array([-6])).static.tolist() == [[301.0]]
    assert ds.batch([]).historical.shape == (0, L, 2)
    for bad in ([6], [-7], [0, 6]):
        with pytest.raises(IndexError, match="window index out of range for 6 windows"):
            ds.batch(bad)
    one = ds[3]
    assert one.size == 1 and one.static.tolist() == [[307.0]]
    assert torch.equal(ds.__getitems__([3, 1]).static, ds.batch([3, 1]).static)


def test_rows_returned_are_a_copy() -> None:
    ds = WindowDataset(_frame(), SPEC, L, H)
    rows = ds.origin_rows()
    rows[:] = 0
    assert ds.origin_rows().tolist() == ORIGINS


def test_inference_dataset_has_no_targets() -> None:
    ds = WindowDataset(_frame().drop(SPEC.targets), SPEC, L, H, with_target=False)
    assert ds.with_target is False and ds.target is None and ds.batch([0]).target is None
    with pytest.raises(DataError, match="feature table lacks column 'target__h1'"):
        WindowDataset(_frame().drop(SPEC.targets), SPEC, L, H)
    with pytest.raises(DataError, match="feature table lacks column 'obs__b'"):
        WindowDataset(_frame().drop("obs__b"), SPEC, L, H, with_target=False)


def test_sizes_are_checked() -> None:
    for args in ((0, H, 1), (L, 0, 1), (L, H, 0)):
        with pytest.raises(ValueError, match=r"need L, H, stride >= 1, got \d+, \d+, \d+"):
            WindowDataset(_frame(), SPEC, args[0], args[1], stride=args[2])
    with pytest.raises(DataError, match="spec has 2 targets but horizon is 3"):
        WindowDataset(_frame(), SPEC, L, 3)
    WindowDataset(_frame().drop(SPEC.targets), SPEC, L, 3, with_target=False)  # no targets: any H
    shuffled = pl.concat([_frame().head(3), _frame().tail(7), _frame().slice(3, 2)])
    with pytest.raises(
        DataError, match=r"^feature table is not grouped by symbol \(sort by symbol, ts\)$"
    ):
        WindowDataset(shuffled, SPEC, L, H)


def test_nbytes_counts_every_array() -> None:
    ds = WindowDataset(_frame(), SPEC, L, H)
    n = _frame().height
    want = n * (2 + 1 + 1 + 2) * 4 + len(ds) * 8 + n * 8 + len(ds) * 4
    assert ds.nbytes == want
    no_target = WindowDataset(_frame().drop(SPEC.targets), SPEC, L, H, with_target=False)
    assert no_target.nbytes == want - n * 2 * 4


def test_from_arrays_equals_the_frame_built_dataset() -> None:
    ds = WindowDataset(_frame(), SPEC, L, H, stride=2)
    ts = _frame()["ts"].dt.epoch("us").to_numpy()
    same = WindowDataset.from_arrays(
        SPEC, L, H, historical=ds.historical, known=ds.known, static=ds.static,
        target=ds.target, ts=ts, symbols=["AA", "BB"], lengths=[5, 7], stride=2,
    )  # fmt: skip
    assert same.origin_rows().tolist() == ds.origin_rows().tolist() == [1, 6, 8]
    assert same.with_target and same.target_scale is None and same.symbols == ("AA", "BB")
    assert same.origins().equals(ds.origins())
    for name in ("static", "historical", "known", "target"):
        assert torch.equal(getattr(same.batch([0, 2]), name), getattr(ds.batch([0, 2]), name))
    assert same.nbytes == ds.nbytes
    bare = WindowDataset.from_arrays(
        SPEC, L, H, historical=ds.historical, known=ds.known, static=ds.static, target=None,
        ts=ts, symbols=["AA", "BB"], lengths=np.array([5, 7]),
    )  # fmt: skip
    assert bare.with_target is False and bare.batch([0]).target is None and len(bare) == 6


def test_from_arrays_refuses_mismatched_shapes() -> None:
    ds = WindowDataset(_frame(), SPEC, L, H)
    ts = _frame()["ts"].dt.epoch("us").to_numpy()
    kw = {
        "historical": ds.historical, "known": ds.known, "static": ds.static, "target": ds.target,
        "ts": ts, "symbols": ["AA", "BB"], "lengths": [5, 7],
    }  # fmt: skip
    for name, bad in (
        ("historical", ds.historical[:, :1]),
        ("known", ds.known[:-1]),
        ("static", torch.zeros(12, 2)),
        ("target", ds.target[:, :1]),
    ):
        with pytest.raises(DataError, match=rf"^{name} rows have shape \(\d+, \d+\), need \("):
            WindowDataset.from_arrays(SPEC, L, H, **{**kw, name: bad})  # type: ignore[arg-type]
    with pytest.raises(DataError, match=r"2 symbols, 2 lengths, \(11,\) times"):
        WindowDataset.from_arrays(SPEC, L, H, **{**kw, "ts": ts[:-1]})  # type: ignore[arg-type]
    with pytest.raises(DataError, match=r"1 symbols, 2 lengths, \(12,\) times"):
        WindowDataset.from_arrays(SPEC, L, H, **{**kw, "symbols": ["AA"]})  # type: ignore[arg-type]
    with pytest.raises(DataError, match="spec has 2 targets but horizon is 3"):
        WindowDataset.from_arrays(SPEC, L, 3, **kw)  # type: ignore[arg-type]


def test_from_arrays_refuses_no_symbols() -> None:
    """Zero blocks of rows is a one-line DataError, not a bare ValueError from zip()."""
    empty = {
        "historical": torch.zeros(0, 2), "known": torch.zeros(0, 1), "static": torch.zeros(0, 1),
        "target": torch.zeros(0, 2), "ts": np.zeros(0, np.int64), "symbols": [], "lengths": [],
    }  # fmt: skip
    with pytest.raises(
        DataError, match=r"^no symbols: from_arrays needs at least one block of rows$"
    ):
        WindowDataset.from_arrays(SPEC, L, H, **empty)  # type: ignore[arg-type]


def test_gap_windows_get_scheduled_and_scaled_decoder_rows() -> None:
    """BB loses its bar at minute 4 (row 9 of the table): the windows whose next H rows jump
    it read their decoder known inputs from the calendar, scaled like the table when a scaler
    is given; from_arrays with the same scaler gives the same rows."""
    holed = _frame().filter(~((pl.col("symbol") == "BB") & (pl.col("obs__a") == 9.0)))
    raw = WindowDataset(holed, SPEC, L, H)
    assert raw.calendar_windows > 0
    scaler = ScalerParams(
        columns=SPEC.inputs,
        mean=(0.0, 0.0, 0.5, 0.0),
        std=(1.0, 1.0, 4.0, 1.0),
        target_std=(1.0, 1.0, 99.0),  # one more horizon than kept: sliced to H
    )
    scaled = WindowDataset(holed, SPEC, L, H, scaler=scaler)
    hit = int(np.flatnonzero(raw._decoder_slot.numpy() >= 0)[0])  # noqa: SLF001
    got_raw = raw.batch([hit]).known[0, L:, 0]
    got_scaled = scaled.batch([hit]).known[0, L:, 0]
    assert raw._decoder_slot[hit] == 0  # noqa: SLF001 - the first side-array row
    assert bool((got_raw.abs() <= 1).all())  # tod_sin of the scheduled times, not 200 + row
    torch.testing.assert_close(got_scaled, (got_raw - 0.5) / 4.0)
    n, m = holed.height, raw.calendar_windows
    base = n * (2 + 1 + 1 + 2) * 4 + len(raw) * 8 + n * 8 + len(raw) * 4
    assert scaled.nbytes == raw.nbytes == base + m * H * 1 * 4 + len(raw) * 4  # + side arrays
    ts = holed["ts"].dt.epoch("us").to_numpy()
    again = WindowDataset.from_arrays(
        SPEC, L, H, historical=scaled.historical, known=scaled.known, static=scaled.static,
        target=scaled.target, ts=ts, symbols=["AA", "BB"], lengths=[5, 6], scaler=scaler,
    )  # fmt: skip
    torch.testing.assert_close(again.batch([hit]).known, scaled.batch([hit]).known)
    assert again.calendar_windows == scaled.calendar_windows


def test_with_target_scale_shares_arrays_and_leaves_the_original() -> None:
    from foxhunt.data.scale.target import TargetScale

    ds = WindowDataset(_frame(), SPEC, L, H)
    scale = TargetScale.__new__(TargetScale)
    calls = []

    def standardise(
        target: torch.Tensor, historical: torch.Tensor, known: torch.Tensor
    ) -> torch.Tensor:
        calls.append(historical.shape)
        return target / 2

    object.__setattr__(scale, "standardise", standardise)
    scaled = ds.with_target_scale(scale)
    assert scaled is not ds and scaled.historical is ds.historical and ds.target_scale is None
    assert scaled.batch([0]).target.tolist() == [[200.5, 250.5]]
    assert calls == [(1, L, 2)]
    assert ds.batch([0]).target.tolist() == [[401.0, 501.0]]


def test_collate() -> None:
    ds = WindowDataset(_frame(), SPEC, L, H)
    items = [ds[4], ds[0], ds[2]]
    both = collate(items)
    assert both.static.tolist() == [[308.0], [301.0], [306.0]]
    assert both.target.tolist() == [[408.0, 508.0], [401.0, 501.0], [406.0, 506.0]]
    assert collate([items[0]]) is items[0]
    no_target = TFTBatch(static=ds[1].static, historical=ds[1].historical, known=ds[1].known)
    mixed = collate([items[0], no_target])
    assert mixed.target is None and mixed.size == 2
    assert torch.equal(mixed.known, torch.cat([items[0].known, no_target.known]))
    assert torch.equal(mixed.historical, torch.cat([items[0].historical, no_target.historical]))


def test_a_one_bar_encoder_and_horizon_are_allowed() -> None:
    ds = WindowDataset(_frame().drop(SPEC.targets), SPEC, 1, 1, with_target=False)
    assert ds.origin_rows().tolist() == [0, 1, 2, 3, 5, 6, 7, 8, 9, 10]
    b = ds.batch([4])
    assert b.historical[0, :, 0].tolist() == [5.0] and b.known[0, :, 0].tolist() == [205.0, 206.0]
