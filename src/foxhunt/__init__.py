"""foxhunt: a memory-lean Temporal Fusion Transformer for futures bars."""

__version__ = "0.1.0"
