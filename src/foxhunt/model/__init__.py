"""The Temporal Fusion Transformer, block by block."""

from foxhunt.model.batch import TFTBatch, TFTOutput
from foxhunt.model.quantile import quantile_loss, quantile_loss_table
from foxhunt.model.recompute import is_checkpointing, set_checkpointing
from foxhunt.model.summary import parameter_table
from foxhunt.model.tft import BLOCK_NAMES, TFT

__all__ = [
    "BLOCK_NAMES",
    "TFT",
    "TFTBatch",
    "TFTOutput",
    "is_checkpointing",
    "parameter_table",
    "quantile_loss_table",
    "quantile_loss",
    "set_checkpointing",
]
