"""The identity of a bars table: a sha256 over its content, stored with every run so that
``--resume`` and ``evaluate`` know whether they see the bars a model was trained on."""

from __future__ import annotations

import hashlib

import numpy as np
import polars as pl


def bars_fingerprint(bars: pl.DataFrame) -> str:
    """sha256 over a validated bars frame's content: symbols, timestamps and OHLCV values, and
    the user's input columns kept by the reader (their names and values; none: as before)."""
    h = hashlib.sha256()
    counts = bars.group_by("symbol", maintain_order=True).len()
    for sym, n in counts.iter_rows():
        h.update(f"{sym}\x00{n}\x00".encode())
    h.update(np.ascontiguousarray(bars["ts"].dt.epoch("us").to_numpy()).tobytes())
    for c in ("open", "high", "low", "close", "volume"):
        h.update(np.ascontiguousarray(bars[c].to_numpy()).tobytes())
    for c in bars.columns:
        if c not in ("ts", "symbol", "open", "high", "low", "close", "volume", "contract"):
            h.update(f"\x00{c}\x00".encode())
            h.update(np.ascontiguousarray(bars[c].cast(pl.Float64).to_numpy()).tobytes())
    return h.hexdigest()
