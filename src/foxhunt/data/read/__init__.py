"""Reading bar files: from whatever a vendor wrote to validated UTC bars.

A bars path (file, directory or glob; parquet, CSV in any dialect, DBN) is opened lazily
(``scan.py``, ``csv_dialect.py``, ``dbn.py``), its columns named (``columns.py``), its timestamps
parsed into UTC (``timestamps.py``, ``zones.py``, ``vendors.py``), optionally aggregated
(``resample.py``), then checked: validity row by row (``validate.py``), plausibility of the series
(``plausibility.py``) and of the time axis (``time_axis.py``). ``bars.py`` is the entry point
(``read_bars``); ``inspection.py`` is ``foxhunt data inspect``; ``fingerprint.py`` is the bars'
identity stored with a run. Nothing here computes features.
"""
