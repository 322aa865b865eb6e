"""What a finished run shows: ``report.md`` and its plots (``report.py``), the report's evaluation
section (``evaluation.py``) and what it says about the trained model — the last validation
window's forecast, attention and variable weights (``interpret.py``)."""
