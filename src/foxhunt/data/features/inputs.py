"""The model's input shape from the user's choice of inputs (``DataConfig``), without bars.

``n_historical``, ``n_known`` and ``n_static`` of the network follow the feature set and the
covariates; :func:`with_input_shape` sets them, so the memory estimate, the model and the
checkpoint agree with the features. :func:`input_columns` lists the bars' extra columns a run
reads (the reader keeps them).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import polars as pl

from foxhunt.config import DataConfig, RunConfig
from foxhunt.data.features.covariates import covariate_columns, covariate_names
from foxhunt.data.features.sets import expression_columns, feature_names
from foxhunt.data.features.static import STATIC_FEATURES
from foxhunt.data.features.targets import target_extra_columns
from foxhunt.data.market.calendar import KNOWN_FEATURES
from foxhunt.data.market.instrument import Instrument
from foxhunt.data.market.instrument_table import load_instruments
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.options import options_of
from foxhunt.data.read.validate import VALUE_COLUMNS
from foxhunt.errors import InputError


def input_shape(data: DataConfig) -> tuple[int, int, int]:
    """``(n_static, n_historical, n_known)`` of the features ``data`` chooses."""
    obs, known, static = covariate_names(data)
    n_hist = len(feature_names(data.features, data.feature_lines)) + len(obs)
    return len(STATIC_FEATURES) + len(static), n_hist, len(KNOWN_FEATURES) + len(known)


def with_input_shape(cfg: RunConfig) -> RunConfig:
    """``cfg`` with the model's input counts set from its data config (:func:`input_shape`)."""
    n_static, n_hist, n_known = input_shape(cfg.data)
    return cfg.replace(model={"n_static": n_static, "n_historical": n_hist, "n_known": n_known})


def is_standard(data: DataConfig) -> bool:
    """The default features, no covariate and the close target (what a feature store holds)."""
    return data.features == "default" and not covariate_columns(data) and data.target == "close"


def input_columns(data: DataConfig | None) -> tuple[str, ...]:
    """The bars' extra columns the run reads: covariates, columns named in feature
    expressions and the target's column, each once, bar columns left out."""
    if data is None:
        return ()
    cols = (
        *covariate_columns(data),
        *expression_columns(data.feature_lines),
        *target_extra_columns(data.target),
    )
    return tuple(c for c in dict.fromkeys(cols) if c not in VALUE_COLUMNS)


def check_input_shape(cfg: RunConfig) -> None:
    """Refuse a model config whose input counts differ from its features' (:func:`input_shape`).

    Raises:
        InputError: naming both counts and the fix.
    """
    m = cfg.model
    have = (m.n_static, m.n_historical, m.n_known)
    want = input_shape(cfg.data)
    if have != want:
        raise InputError(
            f"the model takes {have} static/historical/known inputs but the chosen features "
            f"give {want}; set them with foxhunt.data.features.inputs.with_input_shape(config)"
        )


def read_run_bars(
    bars: Path,
    data: DataConfig,
    *,
    min_bars: int,
    reason: str,
    allow_outliers: bool,
    drop_short: bool = False,
    instruments: Mapping[str, Instrument] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """Read bars the way the run ``data`` needs them: its read options (zone, symbol, columns,
    timestamp format, ``bar_minutes``, ``allow_odd_times``), its extra input columns kept and,
    with known-future covariates, rows with empty prices taken as future rows. With
    ``drop_short`` symbols of fewer than ``min_bars`` bars are left out with a warning.

    ``instruments``: a trained run's (``instruments.json``, the user's table beside it), whose
    calendars the time-axis checks judge its symbols' bars on: the calendar a symbol's bars
    gave it in training, which a week of new bars may not show again; None: the user's table
    of ``data`` alone (training).

    Returns:
        ``(bars, future rows or None)``.
    """
    future: list[pl.DataFrame] | None = [] if data.known_cols else None
    table = load_instruments(Path(data.instruments)) if data.instruments else None
    if instruments is not None:
        table = {**(table or {}), **instruments}
    frame = read_bars(
        bars,
        min_bars=min_bars,
        min_bars_reason=reason,
        options=options_of(data),
        allow_outliers=allow_outliers,
        keep=input_columns(data),
        future=future,
        future_cols=data.known_cols,
        instruments=table,
        drop_short=drop_short,
    )
    return frame, (future[0] if future else None)
