"""Bars to the model's feature table: observed, known-future and static inputs and the targets.

``table.py`` builds the table (``FeatureSpec``, ``compute_features``) from the causal observed
expressions (``observed.py``), the static per-symbol numbers (``static.py``), the user's
covariates (``covariates.py``), the chosen feature set (``sets.py``) and target (``targets.py``);
``inputs.py`` gives the network's input shape from the config alone; ``calendar_decoder.py``
makes a window's decoder inputs from the calendar. Every feature reads the current and earlier
bars only.
"""
