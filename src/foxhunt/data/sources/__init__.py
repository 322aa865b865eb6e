"""Bars that come with foxhunt: the deterministic synthetic demo bars (``demo.py``, ``foxhunt data
demo``) and the real daily index series shipped in the ``arch`` wheel (``index_daily.py``), for
tests, benchmarks and the demo without a download.
"""
