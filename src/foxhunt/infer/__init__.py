"""Inference: load a run, predict, stream, follow a feed, evaluate, export."""
