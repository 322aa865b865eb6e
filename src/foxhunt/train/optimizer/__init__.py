"""The optimizer of a training run: AdamW with decoupled weight decay on matrices only
(``optim.py``; the update itself in ``adamw.py``, without ``torch.optim``) and the learning-rate
schedule, a pure function of the step (``schedule.py``)."""
