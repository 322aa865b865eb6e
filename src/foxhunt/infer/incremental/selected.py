"""What the TFT computes from one bar alone, kept per symbol so an update computes it once.

In :meth:`foxhunt.model.tft.TFT.forward` an encoder bar's selected embedding (the observed VSN
over its 210 inputs plus the known VSN over its 10, with the selection context ``c_s``) depends
on that bar's inputs and the symbol's static inputs only: not on the window around it. The
window slides by one bar per update, so a full forward recomputes the VSNs of ``L - 1`` bars it
computed last time; at the demo preset that is nearly all of a 500-window forward's time
(docs/inference.md, "Cost"). Likewise the four static contexts depend on the static inputs.

:class:`SelectedRows` keeps, per symbol slot (and per member of a seed ensemble):

* the static contexts, computed at the symbol's first forecast;
* a ring of ``L`` encoder rows ``known_vsn(x_k) + historical_vsn(x_h)``, row ``b mod L`` holding
  bar number ``b`` (``bar`` records which bar each row holds, so a row is used only for the
  bar it was computed for);
* the origin's observed embedding (``decoder_origin_inputs`` adds it to every decoder bar).

A forecast computes the rows of the window's bars not held yet (one new bar per symbol in
steady state; the whole window after a backlog) in one VSN call over all symbols, then the
decoder's known VSN (``H`` rows), the LSTMs, attention and head
(:meth:`~foxhunt.model.tft.TFT.temporal`) as the full forward does. The quantiles equal the full
forward's to float rounding (the VSN runs over other batch shapes): ``tests/infer/incremental/
test_selected.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn.utils import parametrize

from foxhunt.infer.incremental.graphs import LiveGraphs
from foxhunt.infer.incremental.known_rows import Ahead, KnownRows
from foxhunt.model.batch import TFTBatch
from foxhunt.model.static_encoder import StaticContexts
from foxhunt.model.tft import TFT
from foxhunt.model.vsn import VariableSelectionNetwork

FORMAT = 1
"""Version of :meth:`SelectedRows.state_dict`'s layout."""


_CHUNK_VALUES = 1 << 17
"""Rows x variables x width of one VSN chunk here (512 KiB of fp32 per per-variable tensor:
the chunk stays in cache; one chunk of all 210 variables for one row, of 32 for 500 rows)."""


def _vsn(vsn: VariableSelectionNetwork, x: Tensor, context: Tensor) -> tuple[Tensor, Tensor]:
    """``vsn(x, context)`` over (N, V) rows, in as few chunks of variables as fit
    :data:`_CHUNK_VALUES` (all V at once for one new bar per symbol)."""
    fit = _CHUNK_VALUES // max(1, x.shape[0] * vsn.d_var)
    return vsn(x, context, chunk=max(vsn.chunk, min(vsn.n_vars, fit)))


class _Index:
    """Gathers from and writes to held tensors: through numpy views of them on the CPU (no
    copy: a view shares the tensor's memory), with torch's indexing on other devices."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.host = device.type == "cpu"

    def view(self, t: Tensor) -> Any:
        """``t`` as this call indexes it."""
        if not self.host:
            return t
        return (t.detach() if t.requires_grad else t).numpy()

    def at(self, a: np.ndarray) -> Any:
        """An index array for :meth:`view`'s arrays."""
        return a if self.host else torch.from_numpy(a).to(self.device)

    def tensor(self, a: Any) -> Tensor:
        """A viewed array back as a tensor (for the modules)."""
        return torch.from_numpy(a) if self.host else a

    def cat(self, parts: Sequence[Any]) -> Any:
        return np.concatenate(parts) if self.host else torch.cat(list(parts))

    def like(self, value: Any, held: Any) -> Any:
        """``value`` in ``held``'s dtype (numpy casts on assignment; torch does not)."""
        return value if self.host else value.to(held.dtype)


class SelectedRows:
    """The per-bar and per-symbol parts of the forward of ``models``, kept per symbol slot.

    Args:
        models: The TFT, or a seed ensemble's members (each keeps its own rows).
        device: Where the models are (the rows are kept there).
    """

    def __init__(self, models: Sequence[TFT], device: torch.device, known_width: int = 0) -> None:
        self.models = list(models)
        self.known_width = known_width
        c = self.models[0].config
        self.L, self.H, self.d = c.encoder_length, c.horizon, c.hidden
        self.device = device
        n = len(self.models)
        self.rows = torch.zeros(n, 0, self.L, self.d, device=device)  # (M, slots, L, d)
        self.bar = np.full((n, 0, self.L), -1, np.int64)  # bar number held by each row
        self.origin = torch.zeros(n, 0, self.d, device=device)  # (M, slots, d)
        self.origin_bar = np.full((n, 0), -1, np.int64)
        self.contexts = torch.zeros(n, 0, 4, self.d, device=device)  # (M, slots, 4, d)
        self.has_contexts = np.zeros((n, 0), bool)
        self.known = KnownRows(n, known_width, c.n_known, self.d, device)
        self.graphs: list[LiveGraphs] | None = None
        """Each model's onnxruntime graphs (:mod:`~foxhunt.infer.incremental.graphs`), or None:
        the historical VSN and the temporal layers run in PyTorch."""

    @property
    def nbytes(self) -> int:
        """Bytes held for the symbols forecast so far (slots allocated ahead not counted)."""
        tensors = (self.rows, self.origin, self.contexts, *self.known.tensors)
        arrays = (self.bar, self.origin_bar, self.has_contexts)
        total = sum(t.numel() * t.element_size() for t in tensors) + sum(a.nbytes for a in arrays)
        slots = self.bar.shape[1]
        return 0 if slots == 0 else total // slots * int(self.has_contexts.any(axis=0).sum())

    def _reserve(self, slots: np.ndarray) -> None:
        """Grow the slot axis to hold ``slots`` (doubling)."""
        have = self.bar.shape[1]
        need = int(slots.max()) + 1 if len(slots) else 0
        if need <= have:
            return
        extra = max(need, 2 * have) - have
        n = len(self.models)

        def grow(t: Tensor) -> Tensor:
            return torch.cat([t, t.new_zeros(n, extra, *t.shape[2:])], dim=1)

        self.rows, self.origin, self.contexts = map(grow, (self.rows, self.origin, self.contexts))
        self.bar = np.concatenate([self.bar, np.full((n, extra, self.L), -1, np.int64)], axis=1)
        self.origin_bar = np.concatenate([self.origin_bar, np.full((n, extra), -1)], axis=1)
        self.has_contexts = np.concatenate([self.has_contexts, np.zeros((n, extra), bool)], 1)
        self.known.reserve(have + extra)

    def outputs(
        self,
        model: nn.Module,
        batch: TFTBatch,
        slots: np.ndarray,
        count: np.ndarray,
        ahead: Ahead | None = None,
    ) -> Tensor:
        """The model's standardised quantiles of ``batch``, reusing what is held.

        Args:
            model: One of ``models`` (by identity).
            batch: The last window of each slot (:meth:`LiveState.batch`), on ``device``.
            slots: (B,) the windows' symbol slots.
            count: (B,) bars seen per slot: the window holds bars ``count - L .. count - 1``.
            ahead: The known inputs of slots' projected bar times
                (:meth:`~foxhunt.infer.incremental.stream.LiveState.known_ahead`): known-VSN
                rows are then kept per slot (:class:`KnownRows`, which needs ``known_width``)
                and computed only when not held; None computes them every call.

        Returns:
            (B, H, Q) what ``model(batch).quantiles`` gives, to float rounding.
        """
        m = next(i for i, x in enumerate(self.models) if x is model)
        tft = self.models[m]
        g = None if self.graphs is None else self.graphs[m]
        self._reserve(slots)
        # On the CPU the held tensors are gathered and written through numpy views of them:
        # one bar per symbol makes these tiny, and numpy indexes them several times faster
        # than torch's advanced indexing (docs/inference.md, "Cost").
        ix = _Index(self.device)
        with parametrize.cached():  # a quantised model dequantises each weight once per call
            ctx = self._contexts(m, tft, slots, batch.static)
            bars = count[:, None] - self.L + np.arange(self.L)  # (B, L) bar numbers
            ring = bars % self.L
            missing = self.bar[m, slots[:, None], ring] != bars  # (B, L)
            missing[:, -1] |= self.origin_bar[m, slots] != count - 1
            b, j = np.nonzero(missing)
            selection, known_in = ix.view(ctx.selection), ix.view(batch.known)
            c_s = selection[ix.at(b)]  # (M, d): the missing rows' contexts
            # the new rows' known inputs and the decoder's, in one call of the known VSN
            h = self.H
            dec_known = known_in[:, self.L :].reshape(-1, known_in.shape[-1])  # (B*H, V_k)
            known_x = ix.cat([known_in[ix.at(b), ix.at(j)], dec_known])
            if ahead is not None and self.known_width:
                at = np.concatenate([b, np.repeat(np.arange(len(slots)), h)])
                known = self.known.rows(
                    m, tft.known_vsn, _vsn, ix.tensor(known_x),
                    torch.from_numpy(at).to(self.device), slots, ctx.selection, ahead,
                )  # fmt: skip
            else:
                dec_ctx = selection[ix.at(np.repeat(np.arange(len(slots)), h))]
                contexts = ix.tensor(ix.cat([c_s, dec_ctx]))
                known, _ = _vsn(tft.known_vsn, ix.tensor(known_x), contexts)
            known = ix.view(known)
            future = known[len(b) :].reshape(len(slots), h, -1)  # (B, H, d)
            rows = ix.view(self.rows[m])  # (slots, L, d)
            origin = ix.view(self.origin[m])  # (slots, d)
            if len(b):
                x_h = ix.view(batch.historical)[ix.at(b), ix.at(j)]
                if g is not None:
                    hist = ix.view(g.historical(x_h, c_s))
                else:
                    hist = ix.view(_vsn(tft.historical_vsn, ix.tensor(x_h), ix.tensor(c_s))[0])
                rows[ix.at(slots[b]), ix.at(ring[b, j])] = ix.like(known[: len(b)] + hist, rows)
                self.bar[m, slots[b], ring[b, j]] = bars[b, j]
                last = j == self.L - 1
                origin[ix.at(slots[b[last]])] = ix.like(hist[ix.at(last)], origin)
                self.origin_bar[m, slots[b[last]]] = count[b[last]] - 1
            encoder = rows[ix.at(slots[:, None]), ix.at(ring)]  # (B, L, d)
            selected = tft.join_selected(
                ix.tensor(encoder), ix.tensor(future), ix.tensor(origin[ix.at(slots)][:, None])
            )
            return g.temporal(selected, ctx) if g else tft.temporal(selected, ctx)[0]

    def _contexts(self, m: int, tft: TFT, slots: np.ndarray, static: Tensor) -> StaticContexts:
        """The static contexts of ``slots`` (computed for those without)."""
        new = np.flatnonzero(~self.has_contexts[m, slots])
        if len(new):
            ctx, _ = tft.contexts(static[torch.from_numpy(new).to(self.device)])
            at = torch.from_numpy(slots[new]).to(self.device)
            self.contexts[m, at] = torch.stack(list(ctx), dim=1).to(self.contexts.dtype)
            self.has_contexts[m, slots[new]] = True
        ix = _Index(self.device)
        held = ix.view(self.contexts[m])[ix.at(slots)]  # (B, 4, d)
        return StaticContexts(*(ix.tensor(held[:, i]) for i in range(held.shape[1])))

    # --- persistence -------------------------------------------------------------------------

    def state_dict(self) -> dict[str, np.ndarray]:
        """Every array, for ``np.savez`` (keys ``selected.*``)."""
        out = {
            "format": np.array([FORMAT, len(self.models), self.L, self.d], np.int64),
            "rows": self.rows.cpu().numpy(),
            "bar": self.bar,
            "origin": self.origin.cpu().numpy(),
            "origin_bar": self.origin_bar,
            "contexts": self.contexts.cpu().numpy(),
            "has_contexts": self.has_contexts,
        }
        return {f"selected.{k}": v for k, v in out.items()}

    def load_state_dict(self, d: Mapping[str, np.ndarray]) -> None:
        """Replace what is held by a :meth:`state_dict`; with no ``selected.*`` keys (a state
        saved before them) hold nothing, and compute the rows again at the next forecast.

        Raises:
            ValueError: another format or shape.
        """
        if "selected.format" not in d:
            fresh = SelectedRows(self.models, self.device, self.known_width)
            fresh.graphs = self.graphs
            self.__dict__.update(fresh.__dict__)
            return
        fmt = [int(x) for x in d["selected.format"]]
        expected = [FORMAT, len(self.models), self.L, self.d]
        if fmt != expected:
            raise ValueError(
                f"selected rows format {fmt} (format, models, L, d), expected {expected}"
            )

        def tensor(key: str) -> Tensor:
            return torch.from_numpy(np.array(d[key], np.float32)).to(self.device)

        self.rows, self.origin = tensor("selected.rows"), tensor("selected.origin")
        self.contexts = tensor("selected.contexts")
        self.bar = np.array(d["selected.bar"], np.int64)
        self.origin_bar = np.array(d["selected.origin_bar"], np.int64)
        self.has_contexts = np.array(d["selected.has_contexts"], bool)
        n_known = self.models[0].config.n_known
        self.known = KnownRows(len(self.models), self.known_width, n_known, self.d, self.device)
        self.known.reserve(self.bar.shape[1])
