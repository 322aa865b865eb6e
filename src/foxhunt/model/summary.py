"""Parameters and bytes per top-level block (``foxhunt model summary`` prints it)."""

from __future__ import annotations

from torch import nn


def parameter_table(model: nn.Module) -> list[tuple[str, int, int]]:
    """Parameters per top-level block.

    Args:
        model: Any module; its direct children are the blocks (for a TFT, the paper's blocks).

    Returns:
        ``(block name, parameters, bytes)`` per direct child with parameters, in definition order;
        parameters held directly by ``model`` appear under the name ``(own)``.
    """
    rows: list[tuple[str, int, int]] = []
    for name, child in model.named_children():
        params = list(child.parameters())
        if params:
            rows.append(
                (
                    name,
                    sum(p.numel() for p in params),
                    sum(p.numel() * p.element_size() for p in params),
                )
            )
    own = list(model.parameters(recurse=False))
    if own:
        rows.append(
            ("(own)", sum(p.numel() for p in own), sum(p.numel() * p.element_size() for p in own))
        )
    return rows
