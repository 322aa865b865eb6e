"""Symbols a model never saw: forecasting them is allowed, but never silently.

A model learns per-symbol behaviour through its static features and the scaler fitted on its
training bars; bars of another symbol (NQ into an ES model) still produce numbers, and nothing
in them says they are extrapolation. ``predict`` and ``evaluate`` therefore name such symbols in
one warning, or refuse them with ``--strict``. The streaming :class:`~foxhunt.infer.forecaster.
Forecaster` refuses them already (it accepts only the training symbols by default).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from foxhunt.artifacts.rundir import LoadedModel, trained_symbols
from foxhunt.errors import InputError

log = logging.getLogger(__name__)


def check_trained_symbols(
    loaded: LoadedModel, symbols: Iterable[str], *, strict: bool = False
) -> list[str]:
    """Warn about (or, ``strict``, refuse) symbols the model was not trained on.

    Args:
        loaded: The model directory; its training symbols come from ``run.json`` or
            ``instruments.json`` (a directory that records neither is not checked).
        symbols: The symbols of the bars about to be forecast or scored.
        strict: Raise instead of warning.

    Returns:
        The untrained symbols, sorted (empty when all were trained on).

    Raises:
        InputError: ``strict`` and some symbol is untrained (one line naming them).
    """
    trained = trained_symbols(loaded.run)
    if trained is None:
        return []
    symbols = set(symbols)
    absent = sorted(set(trained) - symbols)
    if absent and symbols:  # a folder that misses some: say so, the pooled numbers cover fewer
        log.warning(
            "no bars of %s to score or forecast (%d of the %d symbols %s was trained on)",
            ", ".join(absent[:10]) + (", ..." if len(absent) > 10 else ""),
            len(absent),
            len(trained),
            loaded.run.root,
        )
    unknown = sorted(symbols - set(trained))
    if not unknown:
        return []
    msg = (
        f"{loaded.run.root} was not trained on {', '.join(unknown)} "
        f"(trained on {', '.join(sorted(trained))})"
    )
    if strict:
        raise InputError(f"{msg}; --strict refuses untrained symbols")
    log.warning("%s: forecasts for them are extrapolation (--strict refuses them)", msg)
    return unknown
