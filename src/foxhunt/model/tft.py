"""The Temporal Fusion Transformer, composed in the paper's order."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from foxhunt.config import TFTConfig
from foxhunt.model.attention import InterpretableMultiHeadAttention, causal_mask
from foxhunt.model.batch import TFTBatch, TFTOutput
from foxhunt.model.glu import GateAddNorm
from foxhunt.model.grn import GatedResidualNetwork
from foxhunt.model.lstm import LSTMBlock
from foxhunt.model.quantile import monotone_quantiles
from foxhunt.model.static_encoder import StaticContexts, StaticCovariateEncoders
from foxhunt.model.vsn import VariableSelectionNetwork

#: Top-level blocks in forward order. Stable names: memory attribution, checkpointing and the
#: summary table key on them.
BLOCK_NAMES: tuple[str, ...] = (
    "static_vsn",
    "static_encoders",
    "historical_vsn",
    "known_vsn",
    "lstm_encoder",
    "lstm_decoder",
    "post_lstm_gate",
    "static_enrichment",
    "attention",
    "post_attention_gate",
    "positionwise_grn",
    "pre_output_gate",
    "output",
)


class TFT(nn.Module):
    """Temporal Fusion Transformer (Lim et al. 2021) for real-valued inputs.

    Top-level blocks (attribute names are stable; forward order):

    ========================  ===============================================================
    ``static_vsn``            VSN over the S static inputs -> (B, d)
    ``static_encoders``       four GRNs -> contexts c_s, c_e, c_c, c_h, each (B, d)
    ``historical_vsn``        VSN over the V_h observed inputs, context c_s -> (B, T_enc, d)
    ``known_vsn``             VSN over the V_k known inputs, context c_s -> (B, T_enc+T_dec, d)
    ``lstm_encoder``          LSTM over T_enc, initial state (c_h, c_c) in every layer
    ``lstm_decoder``          LSTM over T_dec, initial state = the encoder's final state
    ``post_lstm_gate``        gate-add-norm: LSTM output + selected embedding -> φ̃ (B, T, d)
    ``static_enrichment``     GRN with context c_e -> θ (B, T, d)
    ``attention``             interpretable multi-head attention, decoder queries -> (B, T_dec, d)
    ``post_attention_gate``   gate-add-norm: attention output + θ -> δ
    ``positionwise_grn``      GRN -> ψ
    ``pre_output_gate``       gate-add-norm: ψ + φ̃ (decoder part) -> ψ̃
    ``output``                Linear(d, Q) -> quantiles (B, T_dec, Q)
    ========================  ===============================================================

    Departures from the paper (all deliberate; see docs/model.md):

    1. **Real-valued inputs only**: each variable's scalar is embedded by its own linear map to
       width ``variable_width`` (pytorch-forecasting's ``hidden_continuous_size``).
    2. **Selection weights from the raw inputs**: the selection GRN takes ``x`` (width V) instead
       of the flattened embeddings (width ``V * variable_width``). Its first layer and skip are
       affine in the embeddings, which are affine in ``x``, so this is an exact
       reparametrisation of the same function class at a fraction of the FLOPs.
    3. **Fused VSN (default ``vsn_mode="fused"``)**: per-variable GRNs at width
       ``variable_width`` (their LayerNorms without scale/shift, which the next map absorbs),
       each followed by a per-variable linear lift to ``d``; the lifts are fused into the
       selection-weighted sum (one matmul). ``vsn_mode="faithful"`` keeps the
       pytorch-forecasting form (per-variable GRN ``variable_width -> d``, linear skip, then the
       weighted sum). Both are batched over variables and, in training, streamed over chunks of
       ``vsn_chunk`` variables recomputed in backward (as is the selection GRN).
    4. **Past inputs in two VSNs**: the paper selects over all past inputs (observed and known)
       in one VSN and uses a separate VSN for the future known inputs. Here ``historical_vsn``
       selects over the observed inputs and ``known_vsn`` over the known inputs at all
       ``T_enc + T_dec`` positions (one network for past and future); the encoder input is the
       sum of the two selected embeddings, the decoder input is the known one. Each group's
       weights sum to 1 on their own, which is what ``TFTOutput`` reports.
    5. **Decoder queries only**: attention queries are the ``T_dec`` decoder positions (keys and
       values over all ``T_enc + T_dec``, causal), since only they reach the output — as in
       pytorch-forecasting.
    6. **Static context is per sample**: context projections are computed once per sample and
       broadcast over time (mathematically identical to expanding first).
    7. **Monotone quantiles** with ``monotone_quantiles`` (the presets): the head's Q outputs
       are the lowest quantile and Q-1 softplus steps up (``model/quantile.py``), so quantiles
       never cross. Without it (as in the paper, and runs trained before the option) the head
       is a plain linear map and consumers sort at inference. Either way the parameters are
       one ``Linear(d, Q)``, so the weights file has the same names and shapes.
    8. **Precision**: under CPU autocast the LSTMs run in fp32 unless the CPU computes bf16
       natively (see ``model/lstm.py``).
       In training the LSTMs recompute their forward in backward rather than keep oneDNN's
       workspace (the largest activation of the model otherwise); no change to the function.
    9. **Dropout** sits before every GLU and on the attention probabilities; not before the final
       pre-output gate (as in pytorch-forecasting).
    10. **Origin inputs at the decoder** with ``decoder_origin_inputs`` (the presets): every
        decoder position's input is the known embedding plus the origin bar's selected observed
        embedding, so the observed inputs reach the decoder directly rather than only through
        the LSTM state and attention (where, at initialisation, they explain about 0.002 % of
        the head input's variance; docs/recipe.md, *A network that learns*). No parameters.
    11. **A fixed median** with ``location = "fixed"``: the head's monotone quantiles are shifted
        so the level 0.5 is one constant (the start's standardised median, the buffer
        ``median``); the inputs move only the spread and skew around it.

    Args:
        config: The network's shape; kept as ``self.config``.
    """

    def __init__(self, config: TFTConfig) -> None:
        super().__init__()
        self.config = config
        c = config
        d, p = c.hidden, c.dropout

        def vsn(
            n_vars: int, d_context: int | None, streaming: bool = True
        ) -> VariableSelectionNetwork:
            return VariableSelectionNetwork(
                n_vars, c.variable_width, d, c.vsn_mode, p, d_context, c.vsn_chunk, streaming
            )

        self.static_vsn = vsn(c.n_static, None, streaming=False)  # B rows only: nothing to save
        self.static_encoders = StaticCovariateEncoders(d, p)
        self.historical_vsn = vsn(c.n_historical, d)
        self.known_vsn = vsn(c.n_known, d)
        self.lstm_encoder = LSTMBlock(d, d, c.lstm_layers, p)
        self.lstm_decoder = LSTMBlock(d, d, c.lstm_layers, p)
        self.post_lstm_gate = GateAddNorm(d, d, p)
        self.static_enrichment = GatedResidualNetwork(d, d, d, p, d_context=d)
        self.attention = InterpretableMultiHeadAttention(d, c.n_heads, p)
        self.post_attention_gate = GateAddNorm(d, d, p)
        self.positionwise_grn = GatedResidualNetwork(d, d, d, p)
        self.pre_output_gate = GateAddNorm(d, d, 0.0)
        self.output = nn.Linear(d, c.n_quantiles)
        # location "fixed": the median the head is pinned at (set at the start; saved with the
        # weights). Not a parameter: no gradient reaches it.
        self.register_buffer("median", torch.zeros(()), persistent=c.location == "fixed")

    def forward(self, batch: TFTBatch, return_attention: bool = False) -> TFTOutput:
        """Forecast quantiles for a batch of windows.

        Args:
            batch: static (B, S), historical (B, T_enc, V_h), known (B, T_enc + T_dec, V_k);
                ``target`` is ignored.
            return_attention: Also return the (B, nh, T_dec, T_enc + T_dec) attention weights.

        Returns:
            quantiles (B, T_dec, Q), variable selection weights, optional attention weights.

        Raises:
            ValueError: If the batch's shapes do not match the config.
        """
        self._check(batch)
        t_enc = self.config.encoder_length

        # Static covariate encoders (§4.3).
        ctx, static_w = self.contexts(batch.static)

        # Variable selection (§4.2).
        hist, hist_w = self.historical_vsn(batch.historical, ctx.selection)  # (B, T_enc, d)
        known, known_w = self.known_vsn(batch.known, ctx.selection)  # (B, T, d)
        selected = self.join_selected(known[:, :t_enc] + hist, known[:, t_enc:], hist[:, -1:])
        del hist, known  # saved by nothing: not held through the temporal layers
        quantiles, attn_w = self.temporal(selected, ctx, return_attention)
        return TFTOutput(
            quantiles=quantiles,  # (B, T_dec, Q)
            static_weights=static_w,
            historical_weights=hist_w,
            known_weights=known_w,
            attention=attn_w,
        )

    # The forward in three parts, for callers that keep some of it between calls (the live
    # forecaster keeps each symbol's contexts and each encoder bar's selected embedding, which
    # depend on that bar's inputs and the symbol's static inputs only: infer/incremental/).

    def contexts(self, static: Tensor) -> tuple[StaticContexts, Tensor]:
        """The static contexts (§4.3) and static selection weights of (B, S) static inputs."""
        emb, weights = self.static_vsn(static)  # (B, d), (B, S)
        return self.static_encoders(emb), weights

    def join_selected(self, encoder: Tensor, future: Tensor, origin: Tensor) -> Tensor:
        """The LSTM's input: the encoder bars' selected embeddings, then the decoder's.

        Args:
            encoder: (B, T_enc, d) each encoder bar's known plus observed selected embedding.
            future: (B, T_dec, d) the decoder bars' known selected embeddings.
            origin: (B, 1, d) the origin bar's observed selected embedding (added to every
                decoder bar with ``decoder_origin_inputs``).

        Returns:
            (B, T_enc + T_dec, d).
        """
        if self.config.decoder_origin_inputs:  # the origin's observed inputs, at every future bar
            future = future + origin
        return torch.cat([encoder, future], dim=1)

    def temporal(
        self, selected: Tensor, ctx: StaticContexts, return_attention: bool = False
    ) -> tuple[Tensor, Tensor | None]:
        """From the selected embeddings to the quantiles (§4.5-4.6).

        Args:
            selected: (B, T_enc + T_dec, d) from :meth:`join_selected`.
            ctx: The static contexts from :meth:`contexts`.
            return_attention: Also return the attention weights.

        Returns:
            ``(quantiles, attention)``: (B, T_dec, Q) and (B, nh, T_dec, T) or None.
        """
        t_enc = self.config.encoder_length
        layers = self.config.lstm_layers

        # Sequence-to-sequence layer (§4.5.1), seeded by the static context in every layer.
        h0 = ctx.hidden.unsqueeze(0).expand(layers, -1, -1)  # (L, B, d)
        c0 = ctx.cell.unsqueeze(0).expand(layers, -1, -1)
        enc, state = self.lstm_encoder(selected[:, :t_enc], (h0, c0))  # (B, T_enc, d)
        dec, _ = self.lstm_decoder(selected[:, t_enc:], state)  # (B, T_dec, d)
        lstm = torch.cat([enc, dec], dim=1).to(selected.dtype)  # (B, T, d)
        del enc, dec  # copied by the cat and saved by nothing
        temporal = self.post_lstm_gate(lstm, selected)  # φ̃ (B, T, d)
        del lstm  # with dropout the gate saves its mask and dropped copy, not this

        # Static enrichment (§4.5.2).
        enriched = self.static_enrichment(temporal, ctx.enrichment)  # θ (B, T, d)

        # Temporal self-attention (§4.5.3): decoder positions attend causally to all positions.
        query = enriched[:, t_enc:]  # (B, T_dec, d)
        mask = causal_mask(query.shape[1], enriched.shape[1], device=enriched.device)
        attn, attn_w = self.attention(query, enriched, mask, return_weights=return_attention)
        delta = self.post_attention_gate(attn, query)  # δ (B, T_dec, d)

        # Position-wise feed-forward (§4.5.4) and the skip around the whole decoder.
        psi = self.positionwise_grn(delta)  # ψ
        psi = self.pre_output_gate(psi, temporal[:, t_enc:])  # ψ̃ (B, T_dec, d)

        # Quantile outputs (§4.6).
        return self._head(self.output(psi)), attn_w  # (B, T_dec, Q)

    def _head(self, raw: Tensor) -> Tensor:
        """Quantiles from the linear head's outputs (monotone when configured; with a ``fixed``
        location, shifted so the level 0.5 sits at ``median`` whatever the inputs)."""
        if not self.config.monotone_quantiles:
            return raw
        q = monotone_quantiles(raw)
        if self.config.location == "fixed":
            m = self.config.quantiles.index(0.5)
            q = q - q[..., m : m + 1] + self.median.to(q.dtype)
        return q

    def _check(self, batch: TFTBatch) -> None:
        c = self.config
        b = batch.static.shape[0]
        expected = {
            "static": (b, c.n_static),
            "historical": (b, c.encoder_length, c.n_historical),
            "known": (b, c.total_length, c.n_known),
        }
        for name, shape in expected.items():
            got = tuple(getattr(batch, name).shape)
            if got != shape:
                raise ValueError(f"batch.{name} has shape {got}, the model expects {shape}")
