"""Write a feature store: features computed once per symbol, one parquet shard each, a manifest.

``foxhunt features --bars BARS --out DIR --shards`` calls :func:`write_feature_store`; the layout
and the manifest are in :mod:`foxhunt.data.store.manifest`. Symbols are computed one at a time, so
the peak is the bars plus one symbol's features, and every file is written as ``<name>.tmp`` and
renamed; the manifest is written last. Re-running skips a symbol whose bars have the fingerprint
its shard was made from, removes shards of symbols no longer in the bars, and drops the derived
cache when any shard changed. ``foxhunt train --bars DIR`` reads the store instead of bars (see
:mod:`foxhunt.data.store.cache`).
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from foxhunt.data.features.table import compute_features
from foxhunt.data.market.bars_market import resolve_bars
from foxhunt.data.market.instrument_table import load_instruments
from foxhunt.data.read.fingerprint import bars_fingerprint
from foxhunt.data.store.manifest import (
    CACHE_DIR,
    CLOSE,
    MANIFEST,
    META_FINGERPRINT,
    META_SYMBOL,
    SHARD_ROW_GROUP,
    Manifest,
    ShardInfo,
    check_shard,
    read_manifest,
    shard_file_name,
)
from foxhunt.errors import DataError, InputError
from foxhunt.runtime import atomic_path, atomic_write_text

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from foxhunt.data.read.options import ReadOptions


def _previous(root: Path, horizon: int) -> dict[str, ShardInfo]:
    """The shards of an earlier run that can be kept: same version, horizon and spec."""
    if not (root / MANIFEST).is_file():
        return {}
    try:
        old = read_manifest(root)
    except DataError as e:
        log.info("%s: recomputing every symbol (%s)", root, e)
        return {}
    if old.horizon != horizon:
        log.info("%s: recomputing every symbol (horizon %d -> %d)", root, old.horizon, horizon)
        return {}
    return {s.symbol: s for s in old.shards}


def _unchanged(
    root: Path, old: ShardInfo | None, fingerprint: str, n_bars: int, instrument: dict[str, Any]
) -> bool:
    if old is None or old.fingerprint != fingerprint or old.bars != n_bars:
        return False
    if old.instrument != instrument:  # another calendar or static values: other features
        log.info("%s: recomputing (its instrument changed)", old.symbol)
        return False
    try:
        check_shard(root, old)
    except DataError as e:
        log.info("%s: recomputing (%s)", old.symbol, e)
        return False
    return True


def _write_shard(frame: pl.DataFrame, path: Path, symbol: str, fingerprint: str) -> None:
    with atomic_path(path) as tmp:
        frame.write_parquet(
            tmp,
            compression="zstd",
            statistics=True,
            row_group_size=SHARD_ROW_GROUP,  # training reads the shard in blocks of this size
            metadata={META_FINGERPRINT: fingerprint, META_SYMBOL: symbol},
        )


def _write_manifest(root: Path, manifest: Manifest) -> None:
    atomic_write_text(root / MANIFEST, json.dumps(manifest.to_dict(), indent=1) + "\n")


def _check_out(bars: Path, out: Path) -> None:
    from foxhunt.data.read.files import resolve_table_paths

    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a directory (--shards writes a folder)")
    if not out.parent.exists():
        raise InputError(f"--out {out}: folder {out.parent} does not exist")
    inside = [f for f in resolve_table_paths(bars) if f.resolve().parent == out.resolve()]
    if inside:
        raise InputError(
            f"--out {out}: holds the bars file {inside[0].name}; write the store to its own folder"
        )


def write_feature_store(
    bars: Path,
    out: Path,
    horizon: int = 10,
    *,
    tz: str | None = None,
    allow_outliers: bool = False,
    options: ReadOptions | None = None,
    instruments: Path | None = None,
) -> tuple[Manifest, int]:
    """``foxhunt features --shards``: one feature shard per symbol plus ``manifest.json``.

    Args:
        bars: Bars file, directory or glob.
        out: The store directory (created if missing; its parent must exist).
        horizon: H, number of target horizons.
        tz: zone of naive timestamps in ``bars``.
        allow_outliers: keep implausible bars (one warning per file with their count).
        options: how to read the bar files (``--symbol``, ``--columns``, ...).
        instruments: the user's instrument table file (``--instruments``). Each symbol is
            resolved once, as ``foxhunt train`` resolves the bars (the table, the built-in
            one, then inference with one warning), its features computed on its instrument's
            calendar and static values, and the instrument kept in the manifest: a run trained
            from the store stores the same ``instruments.json`` as one trained from the bars.

    Returns:
        The manifest written, and how many symbols were computed (the others were unchanged).

    Raises:
        InputError/DataError: Bad bars, horizon or output path.
    """
    from foxhunt.data.features.table import read_bars_for_features

    if horizon < 1:
        raise InputError(f"--horizon must be >= 1, got {horizon}")
    bars, out = Path(bars), Path(out)
    _check_out(bars, out)
    frame, spec = read_bars_for_features(
        bars, horizon, tz=tz, allow_outliers=allow_outliers, options=options
    )
    table = load_instruments(Path(instruments)) if instruments else None
    resolved = resolve_bars(frame, table)
    out.mkdir(exist_ok=True)
    previous = _previous(out, horizon)
    counts = frame.group_by("symbol", maintain_order=True).len().rows()
    shards: list[ShardInfo] = []
    computed = 0
    offset = 0
    for k, (symbol, n) in enumerate(counts, start=1):
        sym_bars = frame.slice(offset, n)  # a view: bars are sorted by (symbol, ts)
        offset += n
        fingerprint = bars_fingerprint(sym_bars)
        instrument = asdict(resolved[symbol])
        old = previous.get(symbol)
        if _unchanged(out, old, fingerprint, n, instrument):
            assert old is not None
            log.info(
                "%s: bars unchanged (fingerprint %s), kept %s", symbol, fingerprint[:12], old.file
            )
            shards.append(old)
            continue
        name = shard_file_name(symbol)
        log.info("%s (%d/%d): features for %s bars", symbol, k, len(counts), f"{n:,}")
        feats = compute_features(sym_bars, horizon, instruments=resolved)
        closes = feats.select("ts").join(
            sym_bars.select("ts", CLOSE), on="ts", how="left", maintain_order="left"
        )
        feats = feats.with_columns(closes.get_column(CLOSE))
        _write_shard(feats, out / name, symbol, fingerprint)
        log.info("%s: %d feature rows from %d bars -> %s", symbol, feats.height, n, out / name)
        shards.append(ShardInfo(symbol, name, n, feats.height, fingerprint, instrument))
        computed += 1
        del feats
    manifest = Manifest(
        horizon=horizon,
        spec=spec,
        fingerprint=bars_fingerprint(frame),
        shards=tuple(shards),
        bars=str(bars),
    )
    _write_manifest(out, manifest)
    _drop_stale(out, previous, manifest, changed=computed > 0)
    return manifest, computed


def _drop_stale(
    root: Path, previous: dict[str, ShardInfo], manifest: Manifest, *, changed: bool
) -> None:
    """Remove shards of symbols no longer in the bars, and derived caches of older data."""
    keep = {s.file for s in manifest.shards}
    gone = [s for s in previous.values() if s.file not in keep]
    for s in gone:
        (root / s.file).unlink(missing_ok=True)
        log.info("%s: no longer in the bars, removed %s", s.symbol, s.file)
    cache = root / CACHE_DIR
    if (changed or gone) and cache.is_dir():
        shutil.rmtree(cache)
        log.info("%s: removed (made from the previous features)", cache)
