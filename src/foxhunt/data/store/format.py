"""A feature store: features computed once per symbol, one parquet shard each, and a manifest.

``foxhunt features --bars BARS --out DIR --shards`` writes::

    DIR/manifest.json        what the store is: format, foxhunt version, horizon, feature spec,
                             and per symbol its shard file, bar count, row count and the
                             fingerprint of its bars (written last)
    DIR/<SYMBOL>.parquet     that symbol's ``compute_features`` output, unscaled (ts, symbol,
                             observed, known, static, targets) plus the bar's ``close`` (for
                             the report's fan chart); the bars' fingerprint is in the parquet
                             key-value metadata

Symbols are computed one at a time, so the peak is the bars plus one symbol's features, and
every file is written as ``<name>.tmp`` and renamed. Re-running skips a symbol whose bars have
the fingerprint its shard was made from. ``foxhunt train --bars DIR`` reads the store instead
of bars (see :mod:`foxhunt.data.store.cache`).
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from foxhunt import __version__
from foxhunt.data.features import FeatureSpec, compute_features, feature_spec
from foxhunt.data.pipeline import bars_fingerprint
from foxhunt.errors import DataError, InputError
from foxhunt.runtime import atomic_path, atomic_write_text

log = logging.getLogger(__name__)

FORMAT = "foxhunt-feature-store"
"""``format`` field of every manifest."""

FORMAT_VERSION = 1
"""Layout version; a manifest with another is refused."""

MANIFEST = "manifest.json"
"""The manifest's file name inside a store directory."""

CLOSE = "close"
"""Extra shard column: the bar's close (the fan chart needs price levels, not only returns)."""

CACHE_DIR = "cache"
"""Sub-directory for derived data (training's window arrays); deleted when shards change."""

SHARD_ROW_GROUP = 32_768
"""Rows per parquet row group of a shard."""

_META_FINGERPRINT = "foxhunt.bars_fingerprint"
_META_SYMBOL = "foxhunt.symbol"
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_RERUN = "re-run `foxhunt features --bars BARS --out {root} --shards`"


@dataclass(frozen=True)
class ShardInfo:
    """One symbol's entry in the manifest.

    Attributes:
        symbol: The symbol.
        file: Shard file name inside the store directory.
        bars: Bars the features were computed from.
        rows: Feature rows in the shard (bars minus warm-up and the last H).
        fingerprint: :func:`foxhunt.data.pipeline.bars_fingerprint` of the symbol's bars.
    """

    symbol: str
    file: str
    bars: int
    rows: int
    fingerprint: str


@dataclass(frozen=True)
class Manifest:
    """The contents of ``manifest.json``.

    Attributes:
        horizon: H, the number of targets.
        spec: Feature names and warm-up.
        fingerprint: Fingerprint of all the bars together (what a run records, the same as
            training from the bars file gives).
        shards: One entry per symbol, in (symbol) table order.
        foxhunt_version: Version that computed the features.
        bars: Where the bars were read from (informational).
    """

    horizon: int
    spec: FeatureSpec
    fingerprint: str
    shards: tuple[ShardInfo, ...]
    foxhunt_version: str = __version__
    bars: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict."""
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "foxhunt_version": self.foxhunt_version,
            "horizon": self.horizon,
            "spec": self.spec.to_dict(),
            "fingerprint": self.fingerprint,
            "bars": self.bars,
            "symbols": [vars(s) for s in self.shards],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: Path) -> Manifest:
        """Inverse of :meth:`to_dict`.

        Args:
            d: The parsed JSON.
            where: The manifest's path, for error messages.

        Raises:
            DataError: Not a manifest, another format version, or a malformed field.
        """
        if not isinstance(d, Mapping) or d.get("format") != FORMAT:
            raise DataError(f"{where}: not a foxhunt feature-store manifest")
        if d.get("format_version") != FORMAT_VERSION:
            raise DataError(
                f"{where}: store format version {d.get('format_version')!r}, this foxhunt "
                f"reads {FORMAT_VERSION}; {_RERUN.format(root=where.parent)}"
            )
        try:
            shards = tuple(
                ShardInfo(
                    symbol=str(s["symbol"]),
                    file=str(s["file"]),
                    bars=int(s["bars"]),
                    rows=int(s["rows"]),
                    fingerprint=str(s["fingerprint"]),
                )
                for s in d["symbols"]
            )
            return cls(
                horizon=int(d["horizon"]),
                spec=FeatureSpec.from_dict(d["spec"]),
                fingerprint=str(d["fingerprint"]),
                shards=shards,
                foxhunt_version=str(d["foxhunt_version"]),
                bars=str(d.get("bars", "")),
            )
        except (KeyError, TypeError, ValueError, DataError) as e:
            raise DataError(f"{where}: malformed manifest ({e})") from e


def is_feature_store(path: str | Path) -> bool:
    """Whether ``path`` is a directory holding a feature-store ``manifest.json``."""
    p = Path(path)
    return p.is_dir() and (p / MANIFEST).is_file()


def shard_file_name(symbol: str) -> str:
    """``<SYMBOL>.parquet``; symbols with other characters than letters, digits, ``._-`` are
    percent-encoded so every symbol maps to one plain file name."""
    name = symbol if _SAFE_NAME.fullmatch(symbol) else urllib.parse.quote(symbol, safe="")
    return f"{name}.parquet"


def read_manifest(root: Path) -> Manifest:
    """Read ``root/manifest.json`` and check it was written by this foxhunt.

    Args:
        root: The store directory.

    Returns:
        The manifest.

    Raises:
        DataError: Missing or unreadable manifest, another format or foxhunt version, or a
            feature spec this version does not compute.
    """
    path = Path(root) / MANIFEST
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError as e:
        raise DataError(f"{path}: no such file (not a feature store)") from e
    except (OSError, ValueError) as e:
        raise DataError(f"{path}: cannot read ({e})") from e
    m = Manifest.from_dict(raw, path)
    if m.foxhunt_version != __version__:
        raise DataError(
            f"{path}: features computed by foxhunt {m.foxhunt_version}, this is {__version__}; "
            f"{_RERUN.format(root=root)}"
        )
    if m.spec != feature_spec(m.horizon):
        raise DataError(
            f"{path}: feature spec differs from this foxhunt's at horizon {m.horizon}; "
            f"{_RERUN.format(root=root)}"
        )
    return m


def check_store(root: Path, horizon: int | None = None) -> Manifest:
    """Read the manifest and check every shard against it (parquet footers only).

    Args:
        root: The store directory.
        horizon: The H the caller needs, or None for any.

    Returns:
        The manifest.

    Raises:
        DataError: See :func:`read_manifest`; another horizon; a shard missing, unreadable,
            made from other bars than the manifest records, or with another row count.
    """
    root = Path(root)
    m = read_manifest(root)
    if horizon is not None and m.horizon != horizon:
        raise DataError(
            f"{root / MANIFEST}: features have horizon {m.horizon}, the model needs {horizon}; "
            f"re-run `foxhunt features ... --shards --horizon {horizon}`"
        )
    if not m.shards:
        raise DataError(f"{root / MANIFEST}: the store lists no symbols")
    for info in m.shards:
        _check_shard(root, info)
    return m


def _check_shard(root: Path, info: ShardInfo) -> None:
    path = root / info.file
    if not path.is_file():
        raise DataError(
            f"{path}: shard of symbol {info.symbol!r} listed in {root / MANIFEST} is missing; "
            f"{_RERUN.format(root=root)}"
        )
    try:
        meta = pl.read_parquet_metadata(path)
        rows = pl.scan_parquet(path).select(pl.len()).collect().item()
    except Exception as e:  # polars raises several types for unreadable files
        raise DataError(f"{path}: cannot read shard ({str(e).splitlines()[0]})") from e
    found = meta.get(_META_FINGERPRINT)
    if found != info.fingerprint:
        raise DataError(
            f"{path}: shard was computed from other bars than {root / MANIFEST} records "
            f"(fingerprint {str(found)[:12]} vs {info.fingerprint[:12]}); "
            f"{_RERUN.format(root=root)}"
        )
    if rows != info.rows:
        raise DataError(
            f"{path}: shard has {rows} rows, {root / MANIFEST} records {info.rows}; "
            f"{_RERUN.format(root=root)}"
        )


def read_store_closes(root: Path, manifest: Manifest) -> pl.DataFrame:
    """``symbol``, ``ts``, ``close`` of every feature row in the store (for the fan chart).

    Args:
        root: The store directory.
        manifest: Its manifest.

    Returns:
        The three columns, sorted by (symbol, ts).
    """
    scans = [
        pl.scan_parquet(Path(root) / s.file).select("symbol", "ts", CLOSE) for s in manifest.shards
    ]
    return pl.concat(scans).collect()


# --- writing ---------------------------------------------------------------------------------


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


def _unchanged(root: Path, old: ShardInfo | None, fingerprint: str, n_bars: int) -> bool:
    if old is None or old.fingerprint != fingerprint or old.bars != n_bars:
        return False
    try:
        _check_shard(root, old)
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
            metadata={_META_FINGERPRINT: fingerprint, _META_SYMBOL: symbol},
        )


def _write_manifest(root: Path, manifest: Manifest) -> None:
    atomic_write_text(root / MANIFEST, json.dumps(manifest.to_dict(), indent=1) + "\n")


def _check_out(bars: Path, out: Path) -> None:
    from foxhunt.data.files import resolve_table_paths

    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a directory (--shards writes a folder)")
    if not out.parent.exists():
        raise InputError(f"--out {out}: folder {out.parent} does not exist")
    inside = [f for f in resolve_table_paths(bars) if f.resolve().parent == out.resolve()]
    if inside:
        raise InputError(
            f"--out {out}: holds the bars file {inside[0].name}; write the store to its own folder"
        )


def write_feature_store(bars: Path, out: Path, horizon: int = 10) -> Manifest:
    """``foxhunt features --shards``: one feature shard per symbol plus ``manifest.json``.

    Args:
        bars: Bars file, directory or glob.
        out: The store directory (created if missing; its parent must exist).
        horizon: H, number of target horizons.

    Returns:
        The manifest written.

    Raises:
        InputError/DataError: Bad bars, horizon or output path.
    """
    from rich.console import Console

    from foxhunt.data.features import read_bars_for_features

    if horizon < 1:
        raise InputError(f"--horizon must be >= 1, got {horizon}")
    bars, out = Path(bars), Path(out)
    _check_out(bars, out)
    console = Console(stderr=True)  # progress on stderr, the result on stdout
    frame, spec = read_bars_for_features(bars, horizon, console)
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
        old = previous.get(symbol)
        if _unchanged(out, old, fingerprint, n):
            assert old is not None
            log.info(
                "%s: bars unchanged (fingerprint %s), kept %s", symbol, fingerprint[:12], old.file
            )
            shards.append(old)
            continue
        name = shard_file_name(symbol)
        with console.status(f"{symbol} ({k}/{len(counts)}): features for {n:,} bars"):
            feats = compute_features(sym_bars, horizon)
            closes = feats.select("ts").join(
                sym_bars.select("ts", CLOSE), on="ts", how="left", maintain_order="left"
            )
            feats = feats.with_columns(closes.get_column(CLOSE))
            _write_shard(feats, out / name, symbol, fingerprint)
        log.info("%s: %d feature rows from %d bars -> %s", symbol, feats.height, n, out / name)
        shards.append(ShardInfo(symbol, name, n, feats.height, fingerprint))
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
    rows = sum(s.rows for s in shards)
    Console().print(
        f"wrote {out / MANIFEST}: {len(shards)} symbols ({computed} computed, "
        f"{len(shards) - computed} unchanged), {rows:,} rows x ({len(spec.historical)} observed "
        f"+ {len(spec.known)} known + {len(spec.static)} static features, "
        f"{len(spec.targets)} targets)",
        soft_wrap=True,
        highlight=False,
    )
    return manifest


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
