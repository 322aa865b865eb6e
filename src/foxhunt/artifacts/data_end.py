"""Where a run's training bars end, per symbol (``data_end`` in ``run.json``).

``evaluate`` scores by default only windows whose forecast origin is at or after this end: the
windows before it are ones the model was fitted on, validated on, or (the test split) that
``--windows test`` scores from the training file itself.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import polars as pl

from foxhunt import runtime
from foxhunt.artifacts.rundir import RunDir
from foxhunt.errors import ModelDirError

__all__ = ["data_end", "data_start", "read_data_end"]


def data_end(closes: pl.DataFrame) -> dict[str, str]:
    """symbol -> the time of its last bar (ISO 8601, UTC), from ``symbol``/``ts`` columns."""
    return _per_symbol(closes, pl.col("ts").max())


def data_start(closes: pl.DataFrame) -> dict[str, str]:
    """symbol -> the time of its first bar (``data_start`` in ``run.json``: with ``data_end``
    the period the run was trained on, for the user's own out-of-time split)."""
    return _per_symbol(closes, pl.col("ts").min())


def _per_symbol(closes: pl.DataFrame, time: pl.Expr) -> dict[str, str]:
    found = closes.group_by("symbol").agg(time).sort("symbol")
    return {str(s): _utc(t).isoformat() for s, t in zip(found["symbol"], found["ts"], strict=True)}


def read_data_end(run: RunDir) -> dict[str, dt.datetime] | None:
    """The run's stored ``data_end``; None for a run that did not record it (trained before
    foxhunt stored it, an ensemble or a copied directory without ``run.json``).

    Raises:
        ModelDirError: ``run.json`` corrupt, or a ``data_end`` that is not symbol -> ISO time.
    """
    if not run.run_info.is_file():
        return None
    info: Any = runtime.read_json(run.run_info, "run.json")
    raw = info.get("data_end") if isinstance(info, dict) else None
    if raw is None:
        return None
    try:
        return {str(s): _utc(dt.datetime.fromisoformat(t)) for s, t in raw.items()}
    except (AttributeError, TypeError, ValueError) as e:
        raise ModelDirError(f"{run.run_info}: data_end is not symbol -> ISO time ({e})") from e


def _utc(t: dt.datetime) -> dt.datetime:
    return t.replace(tzinfo=dt.UTC) if t.tzinfo is None else t.astimezone(dt.UTC)
