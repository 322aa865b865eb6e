"""Scaled feature tables to training windows, never materialised.

``splits.py`` cuts each symbol's rows into train / validation / test with an embargo;
``row_arrays.py`` lays a table out as contiguous float32 arrays; ``dataset.py`` is the
``WindowDataset`` that gathers encoder and decoder windows from them into a ``TFTBatch``;
``scope.py`` is which windows ``evaluate`` scores (``--windows new|test|all``).
"""
