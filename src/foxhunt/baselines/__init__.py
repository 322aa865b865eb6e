"""The baselines a TFT must beat: fitted on the training split while a run's data is prepared,
forecast when it is evaluated.

``fit.py`` fits every baseline of a run (``fit_baselines``: the empirical quantiles of recent
returns and the classical volatility models of ``classical.py`` — EWMA, GARCH(1,1),
time-of-week x EWMA — whose variance paths and standardised quantiles are in ``vol_paths.py``);
the record is written as ``baselines.json``, whose format is :mod:`foxhunt.artifacts.baselines`.
``empirical.py`` reads it back (zero return, empirical quantiles) and ``forecasts.py`` turns
it into each window's quantile forecasts for ``evaluate`` and ``backtest``. Sits above
``data/`` and ``artifacts/``, below ``train/`` and ``infer/``.
"""
