"""Scaled feature tables to training windows, never materialised.

``splits.py`` cuts each symbol's rows into train / validation / test with an embargo;
``row_arrays.py`` lays a table out as contiguous float32 arrays; ``dataset.py`` is the
``WindowDataset`` that gathers encoder and decoder windows from them into a ``TFTBatch``;
``by_symbol.py`` (evaluation, forecasting) and ``split_arrays.py`` (training) build those arrays
one symbol's feature table at a time;
``scope.py`` is which windows ``evaluate`` scores (``--windows new|test|all``).
"""
