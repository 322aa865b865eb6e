"""The Temporal Fusion Transformer, block by block."""

from foxhunt.model.batch import TFTBatch, TFTOutput

__all__ = ["TFTBatch", "TFTOutput"]
