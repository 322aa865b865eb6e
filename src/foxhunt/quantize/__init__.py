"""INT8 (and bf16) weight quantisation: tensors, layers, the quantised model, the recipe."""
