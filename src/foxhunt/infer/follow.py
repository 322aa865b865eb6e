"""``foxhunt predict --follow FILE``: forecast as bars are appended to a parquet or CSV file.

Every ``poll_seconds`` the rows appended since the last poll are read
(:class:`~foxhunt.infer.feed.BarFileReader`), judged row by row in file order
(:func:`~foxhunt.infer.screen.screen`) and the good bars fed to a
:class:`~foxhunt.infer.forecaster.Forecaster`; then every symbol whose latest bar has no
forecast yet gets one, written to the output (:class:`~foxhunt.infer.sink.ForecastSink`).
A backlog is taken whole on the first poll and forecast once, from its latest bar.

**A bad line does not stop the follower** (an append-only feed would die on it at every
restart): a malformed line, an invalid bar, a duplicate, a bar out of time order or a symbol
the model does not serve is skipped with one warning naming the file line (parquet: row) and
the reason, and counted in the record beside the output (``OUT.follow.json``,
:mod:`~foxhunt.infer.follow_state`). Out-of-order bars are skipped the same way in a backlog
and live. With ``strict`` the first bad line stops the loop instead (:class:`DataError`).

**A restart continues**: the record says how far the file was processed. The forecaster needs
its history back, so the file is read again from the start, silently up to that point (bad lines
there were logged and counted already), and no origin that already has a forecast in the output
(or the record) is written again. A file that shrinks or no longer matches (replaced) stops the
loop rather than forecast from wrong history.

Memory stays bounded: one piece of the file, plus the forecaster's per-symbol tails, plus the
latest forecast per symbol.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl

from foxhunt.data.read.bars import symbol_from_filename
from foxhunt.data.read.options import options_of
from foxhunt.errors import DataError, InputError
from foxhunt.infer.bar_interval import end_stamp_shift
from foxhunt.infer.feed import BarFileReader, Piece
from foxhunt.infer.follow_state import FollowState, sidecar_path
from foxhunt.infer.forecaster import Forecaster
from foxhunt.infer.screen import WHERE, Reject, screen
from foxhunt.infer.sink import ForecastSink

__all__ = ["BarFileReader", "ForecastSink", "follow", "follow_path"]

log = logging.getLogger(__name__)


def follow(
    forecaster: Forecaster,
    reader: BarFileReader,
    sink: ForecastSink,
    *,
    state: FollowState | None = None,
    strict: bool = False,
    poll_seconds: float = 5.0,
    max_polls: int | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Poll ``reader`` and forecast from new bars until ``max_polls`` (or forever).

    Args:
        forecaster: The forecaster (possibly already holding bars).
        reader: The followed file.
        sink: Where forecasts go.
        state: The follower's record (default: a fresh one kept in memory); saved after every
            poll that changed it.
        strict: Stop at the first bad line (DataError) instead of skipping it.
        poll_seconds: Wait between polls.
        max_polls: Stop after this many polls (None: until interrupted).
        sleep: The wait function (tests pass a fake).
        read: read flags (``DataConfig`` fields: ``tz``, ``symbol`` ...) over the run's own;
            the rows are read with them (``bar_minutes`` aside: one warning, the feed's bars
            are taken as they come).

    Returns:
        Forecast rows written.

    Raises:
        DataError: A shrinking or replaced file; with ``strict``, the first bad line.
    """
    if state is None:
        state = FollowState(None, str(reader.path), reader.unit)
    for sym, t in sink.last_origins().items():  # the output wins over a record a kill left behind
        state.last_origin[sym] = max(t, state.last_origin.get(sym, t))
    written = 0
    polls = 0
    while max_polls is None or polls < max_polls:
        before = state.position
        for piece in reader.new_pieces():  # a backlog may come in many pieces: take them all
            _take(forecaster, reader, piece, state, strict)
        forecasts = _new_forecasts(forecaster, state.last_origin)
        if forecasts.height:
            sink.write(forecasts)
            written += forecasts.height
            state.forecast_rows += forecasts.height
            for sym, t in (
                forecasts.group_by("symbol")
                .agg(pl.col("origin_ts").dt.epoch("us").max())
                .iter_rows()
            ):
                state.last_origin[str(sym)] = int(t)
            last = forecasts["origin_ts"].max()
            log.info("forecast %d symbols at %s", forecasts["symbol"].n_unique(), last)
        if forecasts.height or state.position != before:
            state.save()
        polls += 1
        if max_polls is None or polls < max_polls:
            sleep(poll_seconds)
    return written


def _take(
    forecaster: Forecaster, reader: BarFileReader, piece: Piece, state: FollowState, strict: bool
) -> None:
    """Judge one piece, feed its good bars to the forecaster, log and count the rest."""
    symbols = piece.rows["symbol"].drop_nulls().unique().to_list()
    held = {s: t for s in symbols if (t := forecaster.last_ts(s)) is not None}
    good, rejects = screen(piece.rows, held, forecaster.allowed)
    rejects = sorted(piece.rejects + rejects, key=lambda r: r.where)
    live = not piece.replay
    if strict and live and rejects:
        raise DataError(_message(reader, rejects[0]))
    if live and state.bars == 0 and good.height == 0:
        _refuse_a_foreign_file(reader, piece.rows, rejects, forecaster.allowed)
    refused = _ingest(forecaster, good)
    if strict and live and refused:
        raise DataError(_message(reader, refused[0]))
    if live:
        for r in sorted(rejects + refused, key=lambda r: r.where):
            log.warning("%s (skipped)", _message(reader, r))
            state.record(r)
        state.bars += good.height - len(refused)
        # taken bars where their calendar is shut are said, as serve answers them
        gone = [r.where for r in refused]
        for line in forecaster.closed_bars(good.filter(~pl.col(WHERE).is_in(gone))):
            log.warning("%s: %s", reader.path, line)
    state.position = piece.end


def _refuse_a_foreign_file(
    reader: BarFileReader,
    rows: pl.DataFrame,
    rejects: list[Reject],
    allowed: frozenset[str] | None,
) -> None:
    """Stop (exit 2) on a file without a symbol column whose symbol, taken from its name, the
    model does not serve: ``live_EURUSD.csv`` read as symbol ``LIVE`` was skipped line by line
    for ever, exit 0 and no forecast. A symbol column's rows of another symbol are skipped."""
    symbols = rows["symbol"].drop_nulls().unique().to_list()
    if allowed is None or len(symbols) != 1 or not rejects:
        return
    given = reader.options.symbol if reader.options is not None else None
    if given is not None or reader.symbol_column or symbols[0] != symbol_from_filename(reader.path):
        return  # a symbol column's row of another symbol: skipped, as any such row
    if any(r.reason != "unknown_symbol" for r in rejects):
        return
    served = sorted(allowed)
    remedy = f"--symbol {served[0]}" if len(served) == 1 else "--symbol NAME"
    raise DataError(
        f"{reader.path}: its rows are of symbol {symbols[0]!r} (from the file's name), which "
        f"the model does not serve ({', '.join(served)}): {remedy} reads them as that symbol"
    )


def _message(reader: BarFileReader, r: Reject) -> str:
    """``FILE line N: reason: detail``."""
    return f"{reader.where(r.where)}: {r.reason.replace('_', ' ')}: {r.detail}"


def _ingest(forecaster: Forecaster, rows: pl.DataFrame) -> list[Reject]:
    """Feed screened rows; a row the forecaster still refuses (a check the screen does not
    make) is found by halving and rejected as ``invalid``. Updates are all or nothing, so the
    halves go in file order."""
    if rows.height == 0:
        return []
    try:
        forecaster.update(rows.drop(WHERE), forecast=False)
        return []
    except DataError as e:
        if rows.height == 1:
            detail = str(e).removeprefix("Forecaster.update: ").replace("row 0, ", "")
            return [Reject(int(rows[WHERE][0]), "invalid", detail)]
    h = rows.height // 2
    return _ingest(forecaster, rows.head(h)) + _ingest(forecaster, rows.slice(h))


def _new_forecasts(forecaster: Forecaster, last_origin: dict[str, int]) -> pl.DataFrame:
    """Forecasts from the latest bar of every symbol that has none yet."""
    pending = [
        s
        for s in forecaster.symbols
        if forecaster.ready(s) and (forecaster.last_ts(s) or 0) > last_origin.get(s, -(2**62))
    ]
    return forecaster.forecast(pending) if pending else forecaster.forecast([])


def follow_path(
    model_dir: Path,
    path: Path,
    out: Path,
    *,
    poll_seconds: float = 5.0,
    max_polls: int | None = None,
    strict: bool = False,
    device: str = "cpu",
    sleep: Callable[[float], None] = time.sleep,
    read: Mapping[str, Any] | None = None,
    engine: str = "torch",
) -> int:
    """Forecast as bars arrive in ``path`` (``foxhunt predict --follow FILE``).

    Args:
        model_dir: Any model directory (fp32 or quantised).
        path: The growing bars file (``.parquet``/``.pq``/``.csv``).
        out: ``.csv`` (every forecast appended) or ``.parquet`` (latest per symbol); the record
            ``OUT.follow.json`` goes beside it.
        poll_seconds: Wait between polls.
        max_polls: Stop after this many polls (None: until interrupted).
        strict: Stop at the first bad line instead of skipping it.
        device: Torch device string.
        engine: The live forward's engine (:class:`~foxhunt.infer.forecaster.Forecaster`).
        sleep: The wait function (tests pass a fake).
        read: read flags (``DataConfig`` fields: ``tz``, ``symbol`` ...) over the run's own;
            the rows are read with them (``bar_minutes`` aside: one warning, the feed's bars
            are taken as they come).

    Returns:
        Forecast rows written.

    Raises:
        InputError: Bad arguments; DataError/ModelDirError for a bad file (or, with ``strict``,
            line) or model directory.
    """
    from foxhunt.runtime import parse_device

    if poll_seconds < 0:
        raise InputError(f"--poll-seconds must be >= 0, got {poll_seconds}")
    if max_polls is not None and max_polls < 1:
        raise InputError(f"--max-polls must be >= 1, got {max_polls}")
    sink = ForecastSink(Path(out))
    reader = BarFileReader(Path(path))
    state = FollowState.open(sidecar_path(Path(out)), Path(path), reader.unit)
    reader.resume_at = state.position
    forecaster = Forecaster.load(model_dir, device=parse_device(device), engine=engine)
    data = forecaster.loaded.config.replace(data=dict(read or {})).data
    reader.options = options_of(data)
    if data.stamps == "end":  # each row moved by the run's interval, not one inferred per piece
        reader.stamp_shift = end_stamp_shift(forecaster.loaded.run)
        reader.options = replace(reader.options, stamps="start")
    if data.bar_minutes is not None:
        log.warning(
            "the run reads bars as %d-minute bars (--bar-minutes); --follow takes the feed's "
            "bars as they come: feed %d-minute bars",
            data.bar_minutes,
            data.bar_minutes,
        )
    if state.position:
        log.info(
            "resuming %s after %s %d (%s): earlier lines are re-read as history only",
            path,
            "byte" if reader.unit == "bytes" else "row",
            state.position,
            sidecar_path(Path(out)),
        )
    log.info("following %s (every %gs); forecasts to %s", path, poll_seconds, out)
    return follow(
        forecaster,
        reader,
        sink,
        state=state,
        strict=strict,
        poll_seconds=poll_seconds,
        max_polls=max_polls,
        sleep=sleep,
    )
