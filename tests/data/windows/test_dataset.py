"""WindowDataset: window contents, targets = forward returns, O(rows x features) memory."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import torch
from torch.utils.data import BatchSampler, DataLoader, SequentialSampler

from foxhunt.data.features.table import compute_features, feature_spec
from foxhunt.data.market.calendar import known_features
from foxhunt.data.windows.dataset import WindowDataset, collate
from foxhunt.model.batch import TFTBatch

SPEC = feature_spec(10)
L, H = 16, 10


@pytest.fixture(scope="module")
def panel_features(panel_bars: pl.DataFrame) -> pl.DataFrame:
    return compute_features(panel_bars, H)


@pytest.fixture(scope="module")
def ds(panel_features: pl.DataFrame) -> WindowDataset:
    return WindowDataset(panel_features, SPEC, L, H)


def test_length_and_origins(ds: WindowDataset, panel_features: pl.DataFrame) -> None:
    counts = dict(panel_features.group_by("symbol").len().iter_rows())
    assert len(ds) == sum(n - L - H + 1 for n in counts.values())
    o = ds.origins()
    assert o.columns == ["symbol", "ts"] and o.height == len(ds)
    assert o.group_by("symbol", maintain_order=True).len().rows() == [
        (s, counts[s] - L - H + 1) for s in ("CLZ4", "ES")
    ]
    first_es = panel_features.filter(pl.col("symbol") == "ES")["ts"][L - 1]
    assert o.filter(pl.col("symbol") == "ES")["ts"][0] == first_es


def test_window_contents(ds: WindowDataset, panel_features: pl.DataFrame) -> None:
    i = len(ds) - 5
    t = int(ds.origin_rows()[i])
    b = ds[i]
    assert isinstance(b, TFTBatch) and b.size == 1
    assert b.static.shape == (1, 5) and b.historical.shape == (1, L, 210)
    assert b.known.shape == (1, L + H, 10) and b.target.shape == (1, H)
    hist = panel_features.select(SPEC.historical).to_numpy()[t - L + 1 : t + 1]
    known = panel_features.select(SPEC.known).to_numpy()[t - L + 1 : t + H + 1]
    np.testing.assert_array_equal(b.historical[0].numpy(), hist)
    np.testing.assert_array_equal(b.known[0].numpy(), known)
    assert panel_features["symbol"][t - L + 1] == panel_features["symbol"][t + H]


def test_targets_are_forward_returns_at_origin(ds: WindowDataset, panel_bars: pl.DataFrame) -> None:
    origins = ds.origins()
    bars = panel_bars.with_row_index("row")
    for i in (0, 123, len(ds) // 2, len(ds) - 1):
        sym, ts = origins.row(i)
        sb = bars.filter(pl.col("symbol") == sym)
        k = sb["ts"].to_list().index(ts)
        close = sb["close"].to_numpy()
        want = np.log(close[k + 1 : k + H + 1] / close[k])
        np.testing.assert_allclose(ds[i].target[0].numpy(), want, rtol=1e-6)


def test_batch_gather_matches_items_and_dataloader(ds: WindowDataset) -> None:
    idx = [3, 400, 7, len(ds) - 1]
    b = ds.batch(idx)
    one_by_one = collate([ds[i] for i in idx])
    for name in ("static", "historical", "known", "target"):
        assert torch.equal(getattr(b, name), getattr(one_by_one, name))
    assert collate(b) is b
    sampler = BatchSampler(SequentialSampler(range(len(ds))), batch_size=32, drop_last=False)
    loader = DataLoader(ds, sampler=sampler, batch_size=None, collate_fn=collate)
    first = next(iter(loader))
    assert torch.equal(first.historical, ds.batch(range(32)).historical)
    loader = DataLoader(ds, batch_size=8, shuffle=False, collate_fn=collate)
    assert next(iter(loader)).historical.shape == (8, L, 210)


def test_memory_is_rows_times_features(panel_features: pl.DataFrame) -> None:
    rows = panel_features.height
    per_row = (210 + 10 + 5 + H) * 4 + 8 + 8 + 4  # features + targets, ts, origin index, code
    small = WindowDataset(panel_features, SPEC, 8, H)
    big = WindowDataset(panel_features, SPEC, 128, H)
    for d in (small, big):
        assert d.nbytes <= rows * per_row
        assert d.historical.is_contiguous() and d.historical.dtype == torch.float32
        # Materialised windows would need len * L * 210 * 4 bytes.
    assert big.nbytes <= small.nbytes  # longer windows do not cost host memory
    assert len(big) * 128 * 210 * 4 > 20 * big.nbytes


def test_stride_and_inference_mode(panel_features: pl.DataFrame) -> None:
    strided = WindowDataset(panel_features, SPEC, L, H, stride=4)
    full = WindowDataset(panel_features, SPEC, L, H)
    assert (
        strided.origins()
        .filter(pl.col("symbol") == "ES")
        .equals(full.origins().filter(pl.col("symbol") == "ES").gather_every(4))
    )
    no_target = WindowDataset(panel_features.drop(SPEC.targets), SPEC, L, H, with_target=False)
    assert len(no_target) == len(full) and no_target.batch([0, 1]).target is None


def test_scaler_inside_equals_apply_scaler_first(panel_features: pl.DataFrame) -> None:
    from foxhunt.data.scale.scaler import apply_scaler, fit_scaler

    params = fit_scaler(panel_features, SPEC)
    a = WindowDataset(apply_scaler(panel_features, params), SPEC, L, H)
    b = WindowDataset(panel_features, SPEC, L, H, scaler=params)
    for name in ("historical", "known", "static", "target"):
        torch.testing.assert_close(getattr(a, name), getattr(b, name), rtol=1e-6, atol=1e-6)


def test_decoder_known_inputs_follow_the_calendar_not_the_next_rows(
    panel_features: pl.DataFrame,
) -> None:
    """A missing hour of bars (a holiday, a data gap): windows whose next H rows jump over it
    get the scheduled bar times' calendar features in the decoder, all others the next rows."""
    es = panel_features.filter(pl.col("symbol") == "ES")
    gap = es["ts"][400], es["ts"][411]  # drop 12 bars = one hour
    holed = es.filter((pl.col("ts") < gap[0]) | (pl.col("ts") > gap[1]))
    plain = WindowDataset(es, SPEC, L, H)
    ds = WindowDataset(holed, SPEC, L, H)
    assert plain.calendar_windows == 0
    # Origins at rows 390..399 of ``holed`` have the gap inside their next H rows.
    assert ds.calendar_windows == H
    origin_rows = ds.origin_rows()
    hit = int(np.flatnonzero(origin_rows == 395)[0])
    batch = ds.batch([hit, hit - 10])
    scheduled = es["ts"][396 : 396 + H]  # the bars that were dropped, on the 5-minute grid
    want = pl.DataFrame({"ts": scheduled}).select(known_features(pl.col("ts")))
    np.testing.assert_allclose(
        batch.known[0, L:].numpy(), want.select(SPEC.known).to_numpy(), rtol=1e-6, atol=1e-6
    )
    rows = holed.select(SPEC.known).to_numpy()
    np.testing.assert_array_equal(batch.known[0, :L].numpy(), rows[395 - L + 1 : 396])
    np.testing.assert_array_equal(batch.known[1].numpy(), rows[385 - L + 1 : 386 + H])


def test_thinned_keeps_every_kth_window_with_its_batch(ds: WindowDataset) -> None:
    n = len(ds)
    assert ds.thinned(n) is ds
    thin = ds.thinned(n // 3)
    k = -(-n // (n // 3))
    assert len(thin) == len(range(0, n, k)) <= n // 3
    assert thin.origins().equals(ds.origins()[::k])
    a, b = thin.batch([0, 1, len(thin) - 1]), ds.batch([0, k, (len(thin) - 1) * k])
    for x, y in zip(
        (a.static, a.historical, a.known, a.target),
        (b.static, b.historical, b.known, b.target),
        strict=True,
    ):
        assert torch.equal(x, y)
    assert len(ds) == n  # the original is untouched


def test_subset_keeps_the_masked_windows_with_their_batches(ds: WindowDataset) -> None:
    n = len(ds)
    keep = np.zeros(n, dtype=bool)
    keep[[0, 3, n - 1]] = True
    sub = ds.subset(keep)
    assert len(sub) == 3
    assert sub.origins().equals(ds.origins()[[0, 3, n - 1]])
    a, b = sub.batch([0, 1, 2]), ds.batch([0, 3, n - 1])
    for x, y in zip(
        (a.static, a.historical, a.known, a.target),
        (b.static, b.historical, b.known, b.target),
        strict=True,
    ):
        assert torch.equal(x, y)
    assert len(ds) == n
    with pytest.raises(ValueError, match="mask"):
        ds.subset(keep[:-1])
