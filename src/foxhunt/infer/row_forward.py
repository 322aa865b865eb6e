"""The batch forward of ``evaluate``: each encoder row's variable selection computed once.

A window's encoder bar has a selected embedding (the observed VSN over its 210 inputs plus the
known VSN over its 10, with the selection context of the static inputs) that depends on that
bar's inputs and the symbol's static inputs only, not on the window around it
(:mod:`foxhunt.infer.incremental.selected`, which keeps them between live updates). Scoring
every window of a period (stride 1), the plain forward computes each bar's VSNs once for each of
the ``L`` windows that hold it: at ``L`` = 48 and 225 inputs about three quarters of the
forward's time. :func:`row_forward` gives :func:`~foxhunt.infer.quantiles.tft_quantiles` a
forward for one batch of windows that runs the VSNs over the rows the batch spans once each,
gathers each window's encoder from them, and runs the decoder's known VSN, the LSTMs,
attention and head (:meth:`~foxhunt.model.tft.TFT.temporal`) as the plain forward does. The
quantiles equal the plain forward's to float rounding (the VSNs run over other shapes):
``tests/infer/test_row_forward.py``.

It applies when the batch's windows overlap (their rows number under half of ``B x L``) and
each window's static inputs are the same on all its encoder rows (true of every built-in static
feature, which describe the instrument); otherwise :func:`row_forward` returns None and the
plain forward runs.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.infer.quantiles import Forward, plain_forward
from foxhunt.model.batch import TFTBatch
from foxhunt.model.tft import TFT

SHARED_SHARE = 0.5
"""Rows under this share of the windows' ``B x L`` encoder positions: worth sharing."""


def row_forward(windows: WindowDataset, origins: Tensor) -> Forward | None:
    """A forward for the windows whose origins are rows ``origins`` of ``windows``' arrays
    that computes each spanned row's VSNs once; None where it would not help or not be exact.

    Args:
        windows: The dataset the batch was gathered from.
        origins: (B,) int64 origin rows of the batch's windows, in the batch's order.
    """
    L = windows.encoder_length
    if origins.numel() == 0:
        return None
    r0, r1 = int(origins.min()) - L + 1, int(origins.max()) + 1
    if (r1 - r0) >= SHARED_SHARE * origins.numel() * L:
        return None
    local = origins.long() - r0  # (B,) origin rows within the span
    index = local[:, None] + torch.arange(-L + 1, 1)  # (B, L) encoder rows within the span
    static = windows.row_range("static", r0, r1)
    if not torch.equal(static[index], static[local][:, None].expand(-1, L, -1)):
        return None  # a static input changes inside a window: its context is not the row's
    historical, known = windows.row_range("historical", r0, r1), windows.row_range("known", r0, r1)

    def forward(model: nn.Module, batch: TFTBatch) -> Tensor:
        if not isinstance(model, TFT):
            return plain_forward(model, batch)
        dev = batch.static.device
        rows_ctx, _ = model.contexts(static.to(dev))  # (R, d) each row's symbol's contexts
        hist, _ = model.historical_vsn(historical.to(dev), rows_ctx.selection)  # (R, d)
        past, _ = model.known_vsn(known.to(dev), rows_ctx.selection)  # (R, d)
        ctx, _ = model.contexts(batch.static)  # (B, ...) the windows' contexts
        future, _ = model.known_vsn(batch.known[:, L:], ctx.selection)  # (B, H, d)
        idx, at = index.to(dev), local.to(dev)
        selected = model.join_selected(past[idx] + hist[idx], future, hist[at][:, None])
        return model.temporal(selected, ctx)[0]

    return forward
