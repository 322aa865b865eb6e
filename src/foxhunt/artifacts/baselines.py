"""``baselines.json``: the baselines a run fits while its data is prepared (on the training
split, :mod:`foxhunt.baselines.fit`), so evaluation needs no training data. Its format is
defined here; read by :mod:`foxhunt.baselines.empirical`.

Schema (format 2; format 1 is the same without ``classical``, and is still read)::

    {"format": 2, "quantiles": [Q floats], "horizon": H, "recent_windows": N,
     "per_symbol": {"ES": [[Q floats] x H], ...}, "pooled": [[Q floats] x H],
     "classical": {"ewma": {"per_symbol": {"ES": {"decay", "initial", "z": [[Q] x H], ...}},
                            "fallback": "ES"},
                   "garch": {... "omega", "alpha", "beta", "nu", "initial", "z"},
                   "tow_ewma": {... "decay", "initial", "z", "profile", "slot_minutes",
                                "interval_s", "calendar"}}}

``per_symbol``/``pooled`` are the empirical quantiles; ``classical`` the volatility models of
:mod:`foxhunt.baselines.classical`.
"""

from __future__ import annotations

BASELINES_FORMAT = 2
"""Version of the ``baselines.json`` schema written now."""

BASELINE_LABELS: dict[str, str] = {
    "zero": "zero return",
    "empirical": "empirical quantiles",
    "ewma": "EWMA (RiskMetrics)",
    "garch": "GARCH(1,1)",
    "tow_ewma": "time-of-week x EWMA",
}
"""Display name of every baseline (tables, report)."""

READABLE_FORMATS = (1, 2)
"""Versions still read (1: empirical quantiles only, from before the classical baselines)."""
