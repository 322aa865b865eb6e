"""The VSN's and the LSTM's backward transients, written out by hand for small shapes: the
selection weighting's two gradients (docs/memory.md, session 33) and oneDNN's LSTM backward
scratch."""

from __future__ import annotations

import pytest

from foxhunt.memory.activation_formulas import Shape, lstm_backward_scratch_bytes, vsn_bytes


def _shape(f: int) -> Shape:
    return Shape(b=4, t_enc=5, t_dec=2, d=32, d_v=8, nh=4, layers=1, q=3, dropout=True, f=f,
                 device="cpu")  # fmt: skip


# 50 variables at 20 rows, chunks of 16. Per variable and row the chunk keeps (fused) (5 d_v + 2)
# fp32 values and d_v mask bytes = 176 (the weight-scaled states, not kept, are one of the two
# weighting tensors: model/weighted_lift.py); in half precision it keeps 12 d_v + 6 + d_v = 110
# (the product among them); (faithful, fp32, d_h = 8) (2 d_h + 4 d) x 4 + 2 x 4 + d_h = 592.
# The weighting's gradients: 2 x width x f per variable and row, width d_v (fused) or d
# (faithful). Streamed, the last chunk also has the 34 other variables' selection-weight
# gradients beside it (34 x 20 x f).
@pytest.mark.parametrize(
    ("mode", "f", "streamed", "whole"),
    [
        ("fused", 4, 16 * 20 * (176 + 2 * 8 * 4) + 34 * 20 * 4, 50 * 2 * 20 * 8 * 4),
        ("fused", 2, 16 * 20 * (110 + 2 * 8 * 2) + 34 * 20 * 2, 50 * 2 * 20 * 8 * 2),
        ("faithful", 4, 16 * 20 * (592 + 2 * 32 * 4) + 34 * 20 * 4, 50 * 2 * 20 * 32 * 4),
    ],
)
def test_vsn_backward_transient_holds_the_weighting_gradients(
    mode: str, f: int, streamed: int, whole: int
) -> None:
    s = _shape(f)
    common = {"mode": mode, "chunk": 16, "context_rows": 0}
    _, t_streamed = vsn_bytes(50, 20, s, streaming=True, **common)
    _, t_whole = vsn_bytes(50, 20, s, streaming=False, **common)
    assert (t_streamed, t_whole) == (streamed, whole)
    assert isinstance(t_streamed, int) and isinstance(t_whole, int)


@pytest.mark.parametrize(
    ("batch", "steps", "hidden", "expected"),
    [
        # gates' gradients: 51 x 32 x 1040 (4H padded) x 4 bytes, rounded up to 4 KiB pages
        # (1,658 pages); weight gradients 4H x (H + H) x 4
        (32, 50, 256, 1658 * 4096 + 4 * 256 * 512 * 4),
        (32, 50, 128, 842 * 4096 + 4 * 128 * 256 * 4),  # 51 x 32 x 528 x 4: 841.5 pages
    ],
)
def test_lstm_backward_scratch_by_hand(batch: int, steps: int, hidden: int, expected: int) -> None:
    assert lstm_backward_scratch_bytes(batch, steps, hidden, hidden) == expected
