"""The follower's record, a small JSON file beside its output (``OUT.follow.json``).

It says how far the followed file has been processed, what was skipped and which origins have
forecasts, so that a restart neither re-judges old lines nor writes a forecast twice::

    {
      "source": "/abs/path/ES_live.csv",   the followed file
      "unit": "bytes",                     CSV: byte offset (header included); parquet: "rows"
      "position": 183342,                  processed up to here (complete lines / rows)
      "bars": 2291,                        bars taken (fed to the forecaster), this file
      "forecast_rows": 40,                 forecast rows written
      "skipped": {"malformed": 1, "invalid": 0, "unknown_symbol": 1, "duplicate": 1,
                  "out_of_order": 1},
      "last_origin": {"ES": "2024-01-05T13:35:00+00:00"},   latest origin written, per symbol
      "last_errors": [{"line": 2280, "reason": "duplicate", "detail": "..."}, ...]  (newest 20)
    }

Written atomically (:func:`foxhunt.runtime.atomic_write_json`) after each poll that changed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from foxhunt import runtime
from foxhunt.errors import InputError
from foxhunt.infer.bar_input import iso_us
from foxhunt.infer.screen import REASONS, Reject

MAX_ERRORS = 20
"""Skipped lines kept in ``last_errors``."""


def sidecar_path(out: Path) -> Path:
    """The record of the follower writing to ``out``: ``out`` + ``.follow.json``."""
    out = Path(out)
    return out.with_name(out.name + ".follow.json")


@dataclass
class FollowState:
    """What a follower has done so far (see the module docstring).

    Attributes:
        path: The sidecar file, or None to keep the record in memory only.
        source: The followed file (absolute).
        unit: ``bytes`` (CSV) or ``rows`` (parquet).
        position: Processed up to here.
        bars: Bars taken.
        forecast_rows: Forecast rows written.
        skipped: Lines skipped, per reason.
        last_origin: Latest origin written per symbol (epoch µs UTC).
        last_errors: The newest skipped lines (``line``/``row``, ``reason``, ``detail``).
    """

    path: Path | None
    source: str
    unit: str
    position: int = 0
    bars: int = 0
    forecast_rows: int = 0
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REASONS, 0))
    last_origin: dict[str, int] = field(default_factory=dict)
    last_errors: list[dict[str, object]] = field(default_factory=list)

    @classmethod
    def open(cls, path: Path | None, source: Path, unit: str) -> FollowState:
        """The record at ``path`` (a fresh one when there is none yet).

        Raises:
            InputError: The record is corrupt, or it follows another file.
        """
        source_name = str(Path(source).resolve())
        if path is None or not Path(path).exists():
            return cls(path, source_name, unit)
        d = runtime.read_json(path, "follow record")
        try:
            state = cls(
                Path(path),
                str(d["source"]),
                str(d["unit"]),
                position=int(d["position"]),
                bars=int(d.get("bars", 0)),
                forecast_rows=int(d.get("forecast_rows", 0)),
                skipped={r: int(d.get("skipped", {}).get(r, 0)) for r in REASONS},
                last_origin={
                    s: _epoch_us(datetime.fromisoformat(t)) for s, t in d["last_origin"].items()
                },
                last_errors=list(d.get("last_errors", [])),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InputError(f"{path}: follow record is corrupt ({e!r})") from e
        if state.source != source_name or state.unit != unit:
            raise InputError(
                f"{path}: this output's follow record is for {state.source}, not {source_name}; "
                "use another --out (or remove the record to start over)"
            )
        return state

    def record(self, reject: Reject) -> None:
        """Count a skipped line."""
        self.skipped[reject.reason] += 1
        key = "row" if self.unit == "rows" else "line"
        self.last_errors.append(
            {key: reject.where, "reason": reject.reason, "detail": reject.detail}
        )
        del self.last_errors[:-MAX_ERRORS]

    def save(self) -> None:
        """Write the record atomically (nothing when it has no path)."""
        if self.path is None:
            return
        runtime.atomic_write_json(
            self.path,
            {
                "source": self.source,
                "unit": self.unit,
                "position": self.position,
                "bars": self.bars,
                "forecast_rows": self.forecast_rows,
                "skipped": self.skipped,
                "last_origin": {s: iso_us(t) for s, t in sorted(self.last_origin.items())},
                "last_errors": self.last_errors,
            },
        )


def _epoch_us(t: datetime) -> int:
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return (t - _EPOCH) // timedelta(microseconds=1)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
