"""The known VSN's outputs of the bar times a symbol's calendar schedules next, kept per symbol.

The known-input VSN's output at a bar (``known_vsn(x_k, c_s)``) depends on that bar's known
inputs (calendar features of its time) and the symbol's selection context only. Live bars
arrive at the times projected for the previous forecast, so an update's decoder rows (and its
new encoder row) are, but for the newest decoder bar, the rows the previous update computed.
:class:`KnownRows` keeps, per symbol slot (and per member of a seed ensemble), the known inputs
of the slot's projected times (:meth:`foxhunt.infer.incremental.stream.LiveState.known_ahead`:
the origin and up to :data:`~foxhunt.infer.incremental.stream.AHEAD` bars after it) and their
VSN outputs, computed together in one call when a row is wanted that is not held. In steady
state an update calls the known VSN about once per ``AHEAD - H`` updates instead of every time.

Rows are found by their inputs, not their times: equal inputs with the same context give the
same output, so a row found is the row the VSN would compute (to float rounding: the VSN runs
over another batch shape). A row is looked up by a key (an integer weighted sum of its inputs'
float32 bits: exact, whatever the order of the sum), then its inputs are compared in full, so a
shared key can cost a recomputation, never a wrong row. Unused positions hold NaN inputs, which
equal nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor

from foxhunt.model.vsn import VariableSelectionNetwork

Ahead = Callable[[np.ndarray], np.ndarray]
"""Slots (b,) -> (b, A, V_k) float32 scaled known inputs of their projected times, NaN-padded."""


class KnownRows:
    """Known-VSN outputs of each slot's projected bar times, found by their inputs.

    Args:
        members: Models (ensemble members) kept apart.
        width: A, the rows kept per slot.
        n_known: V_k.
        d: The VSN's output width.
        device: Where the rows are kept.
    """

    def __init__(self, members: int, width: int, n_known: int, d: int, device: torch.device):
        self.M, self.A, self.V, self.d = members, width, n_known, d
        self.device = device
        self.x = torch.full((members, 0, width, n_known), float("nan"), device=device)
        self.y = torch.zeros(members, 0, width, d, device=device)
        self.key = torch.zeros(members, 0, width, dtype=torch.int64, device=device)
        # odd multipliers below 2**27: ten products of 32-bit values sum below 2**63
        self._w = (2 * torch.arange(n_known, device=device) + 1) * 1_000_003 % (1 << 27)

    def _keys(self, x: Tensor) -> Tensor:
        """(..., V_k) float32 -> (...) int64 keys."""
        return (x.float().contiguous().view(torch.int32).long() * self._w).sum(dim=-1)

    @property
    def tensors(self) -> tuple[Tensor, Tensor, Tensor]:
        return self.x, self.y, self.key

    def reserve(self, slots: int) -> None:
        """Grow the slot axis to ``slots`` (new slots hold nothing)."""
        extra = slots - self.x.shape[1]
        if extra > 0:
            nan = self.x.new_full((self.M, extra, self.A, self.V), float("nan"))
            self.x = torch.cat([self.x, nan], dim=1)
            self.y = torch.cat([self.y, self.y.new_zeros(self.M, extra, self.A, self.d)], dim=1)
            self.key = torch.cat([self.key, self.key.new_zeros(self.M, extra, self.A)], dim=1)

    def clear(self) -> None:
        """Forget every row (the contexts they were computed with may have changed)."""
        self.x.fill_(float("nan"))

    def rows(
        self,
        m: int,
        vsn: VariableSelectionNetwork,
        vsn_call: Callable[[VariableSelectionNetwork, Tensor, Tensor], tuple[Tensor, Tensor]],
        x: Tensor,
        at: Tensor,
        slots: np.ndarray,
        context: Tensor,
        ahead: Ahead,
    ) -> Tensor:
        """``vsn(x, context[at])`` for (n, V_k) rows ``x`` of the windows ``at`` (n,).

        Args:
            m: The member.
            vsn: Its known VSN; ``vsn_call(vsn, x, c)`` runs it.
            x: (n, V_k) the rows' known inputs.
            at: (n,) each row's window (index into ``slots``).
            slots: (B,) the windows' slots.
            context: (B, d) the windows' selection contexts.
            ahead: The known inputs of slots' projected times (refills a slot that misses).

        Returns:
            (n, d).
        """
        if self.device.type == "cpu":  # the common case, every row held, in numpy views
            held = self._held_on_host(m, x, at, slots)
            if held is not None:
                return held
        s = torch.from_numpy(slots).to(self.device)[at]  # (n,) each row's slot
        hit = self.key[m, s] == self._keys(x)[:, None]  # (n, A) candidates
        pos = hit.to(torch.uint8).argmax(dim=1)  # (n,) the first candidate
        found = hit.any(dim=1) & (self.x[m, s, pos] == x).all(dim=-1)  # its inputs, in full
        out = self.y[m, s, pos]  # (n, d): garbage where missed
        if bool(found.all()):
            return out
        miss = ~found
        refill = torch.unique(at[miss])  # windows with a row not held: their slots refilled
        rb = refill.cpu().numpy()
        ax = torch.from_numpy(ahead(slots[rb])).to(self.device)  # (b, A, V_k)
        valid = ~torch.isnan(ax).any(dim=-1)  # (b, A)
        ctx_ahead = context[refill][:, None].expand(-1, self.A, -1)[valid]
        inputs = torch.cat([ax[valid], x[miss]])
        computed, _ = vsn_call(vsn, inputs, torch.cat([ctx_ahead, context[at[miss]]]))
        n_ahead = int(valid.sum())
        ay = self.y.new_zeros(len(rb), self.A, self.d)
        ay[valid] = computed[:n_ahead].to(ay.dtype)
        rs = torch.from_numpy(slots[rb]).to(self.device)
        self.x[m, rs], self.y[m, rs] = ax.to(self.x.dtype), ay
        self.key[m, rs] = self._keys(ax)
        out[miss] = computed[n_ahead:].to(out.dtype)
        return out

    def _held_on_host(self, m: int, x: Tensor, at: Tensor, slots: np.ndarray) -> Tensor | None:
        """:meth:`rows` when every row is held (the same lookup, in numpy views of the CPU
        tensors: several times faster for the few rows of a live update), else None."""
        xn = x.detach().numpy()
        s = slots[at.numpy()]  # (n,) each row's slot
        # _keys in numpy: the same bits, weights and sum
        keys = (xn.astype(np.float32).view(np.int32).astype(np.int64) * self._w.numpy()).sum(-1)
        hit = self.key[m].numpy()[s] == keys[:, None]  # (n, A) candidates
        pos = hit.argmax(axis=1)  # (n,) the first candidate
        held_x = self.x[m].numpy()[s, pos]
        if not (hit.any(axis=1) & (held_x == xn).all(axis=-1)).all():
            return None
        return torch.from_numpy(self.y[m].numpy()[s, pos])
