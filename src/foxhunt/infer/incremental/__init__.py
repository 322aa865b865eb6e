"""Incremental features for live forecasting: each symbol's state advances one bar at a time
(:mod:`~foxhunt.infer.incremental.engine`), equal to the batch pipeline's features."""
