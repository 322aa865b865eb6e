"""Scaling fitted on the training split: the inputs' z-scores and the targets' scale.

``scaler.py`` fits and applies the per-column z-score of inputs (``ScalerParams``, plain JSON);
``target.py`` is the scale a window's targets are divided by (global per horizon, or per window
from a causal volatility estimate, ``volatility.py``); ``choice.py`` chooses the window target
scale's decay and mean reversion on the training split. Nothing here is fitted on validation or
test rows.
"""
