"""The conformal calibration a run fits on its validation split when training ends
(``calibrate.py``) and how much of it to serve, a shrinkage chosen by cross-fitting
(``choice.py``); the file it is written to is :mod:`foxhunt.artifacts.calibration`."""
