"""The Temporal Fusion Transformer, block by block."""

from foxhunt.model.batch import TFTBatch, TFTOutput
from foxhunt.model.quantile import pinball_per_quantile_horizon, quantile_loss
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
    "pinball_per_quantile_horizon",
    "quantile_loss",
    "set_checkpointing",
]
