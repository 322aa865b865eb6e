"""foxhunt: a memory-lean Temporal Fusion Transformer for futures bars.

The Python API (loaded on first use, so ``import foxhunt`` and the CLI stay light)::

    import foxhunt
    bars = foxhunt.read_bars("ES_FUT.parquet")          # path, pandas or polars DataFrame
    model = foxhunt.TFTForecaster("demo").fit(bars)
    forecast = model.predict(bars)                      # origin and target times, quantiles
    model.evaluate(bars); model.save("runs/es"); foxhunt.TFTForecaster.load("runs/es")
    live = model.stream(); live.update(new_bars)        # streaming Forecaster, pandas too

Importing or calling it changes nothing process-wide (allocator, logging, torch threads).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from foxhunt.version import __version__

__all__ = ["Forecaster", "TFTForecaster", "__version__", "read_bars"]

if TYPE_CHECKING:
    from foxhunt.api import Forecaster, TFTForecaster, read_bars


def __getattr__(name: str) -> Any:
    """The API names, imported on first access (PEP 562)."""
    if name in ("Forecaster", "TFTForecaster", "read_bars"):
        from foxhunt import api

        return getattr(api, name)
    raise AttributeError(f"module 'foxhunt' has no attribute {name!r}")
