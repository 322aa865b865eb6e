"""The live forward's costly parts as onnxruntime graphs (``--engine onnx``).

A live update forwards one window per symbol: at one symbol that is a batch of 1, where eager
PyTorch spends its time dispatching ~100-200 small ops, not computing them. The two parts the
update runs every time — the historical VSN over the new bar's 210 observed inputs, and
:meth:`~foxhunt.model.tft.TFT.temporal` (LSTMs, gates, enrichment, attention, head) over the
window's selected embeddings — are exported once per model to ONNX (``torch.onnx.export``,
the same exporter as ``foxhunt export``) and run in onnxruntime, whose per-op cost is a few
microseconds. What stays in PyTorch is cheap or rare: the static contexts (once per symbol),
the known VSN (rows kept per symbol, :class:`~foxhunt.infer.incremental.known_rows.KnownRows`),
gathering the kept rows.

The graphs are built at the first use of a model and cached beside it (``RUN/live/``), named by
a key over the model's weights, its config and the torch/onnxruntime versions: a later start
loads them in well under a second. Every graph, built or loaded, is checked against PyTorch
(:data:`foxhunt.infer.export.ATOL` / ``RTOL``) on a few random windows before it is used; a
cached one that fails is built again. As in ``foxhunt export``, the TorchScript exporter is
tried first (about 3 s for both graphs; deprecated), then ``torch.export`` (10-20 s per graph,
mostly tracing the LSTMs) where it fails or its graph differs.
Only float CPU models are exported (a quantised model's int8 matmuls have no ONNX lowering).

``engine``: ``torch`` (eager PyTorch, the default of :class:`~foxhunt.infer.forecaster.
Forecaster`), ``onnx`` (these graphs; an error if they cannot be built) or ``auto`` (these graphs
when onnxruntime and onnxscript are installed and the model is a float model on the CPU, else
PyTorch with one log line saying why: the default of ``foxhunt serve`` and ``predict --follow``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn.utils import parametrize

from foxhunt.data.read.scan import first_line
from foxhunt.errors import InputError
from foxhunt.model.static_encoder import StaticContexts
from foxhunt.model.tft import TFT

log = logging.getLogger(__name__)

FORMAT = 1
"""Version of the graphs' inputs and outputs (part of the cache key)."""

ENGINES = ("auto", "torch", "onnx")

_CONTEXTS = ("enrichment", "cell", "hidden")
"""The static contexts ``TFT.temporal`` reads (``selection`` is the VSNs')."""

_ROW_VALUES = 1 << 17
"""Rows x variables x per-variable width of one historical-VSN call (as
:data:`foxhunt.infer.incremental.selected._CHUNK_VALUES`): a backlog's many rows go in slices,
so the graph's (rows, V, d_var) states stay small."""


class TemporalGraph(nn.Module):
    """``tft.temporal`` as a function of tensors: (B, T, d) selected embeddings and the three
    (B, d) static contexts it reads -> (B, H, Q) standardised quantiles."""

    def __init__(self, tft: TFT) -> None:
        super().__init__()
        self.tft = tft

    def forward(self, selected: Tensor, enrichment: Tensor, cell: Tensor, hidden: Tensor) -> Tensor:
        ctx = StaticContexts(hidden.new_zeros(()), enrichment, cell, hidden)  # no selection
        return self.tft.temporal(selected, ctx)[0]


class HistoricalGraph(nn.Module):
    """The historical VSN of (N, V) observed inputs with (N, d) selection contexts -> (N, d),
    all variables in one chunk (a forward without gradients)."""

    def __init__(self, tft: TFT) -> None:
        super().__init__()
        self.vsn = tft.historical_vsn

    def forward(self, x: Tensor, context: Tensor) -> Tensor:
        return self.vsn(x, context, chunk=self.vsn.n_vars)[0]


def unsupported(tft: nn.Module, device: torch.device) -> str | None:
    """Why ``tft`` on ``device`` cannot run in these graphs (None: it can)."""
    missing = [m for m in ("onnxruntime", "onnxscript") if importlib.util.find_spec(m) is None]
    if missing:
        return f"{' and '.join(missing)} not installed (pip install 'foxhunt[onnx]')"
    if device.type != "cpu":
        return f"the model is on {device}, the graphs run on the CPU"
    quantised = any(
        parametrize.is_parametrized(m) or type(m).__module__.startswith("foxhunt.quantize")
        for m in tft.modules()
    )
    if quantised or any(p.dtype != torch.float32 for p in tft.parameters()):
        return "a quantised or non-float32 model (int8 matmuls have no ONNX lowering)"
    return None


def graph_key(tft: TFT) -> str:
    """A key over what the graphs depend on: weights, config, versions (16 hex digits)."""
    import onnxruntime

    h = hashlib.sha256()
    meta = {
        "format": FORMAT,
        "config": repr(tft.config),
        "torch": torch.__version__,
        "onnxruntime": onnxruntime.__version__,
    }
    h.update(json.dumps(meta, sort_keys=True).encode())
    for name, t in sorted(tft.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


@dataclass
class LiveGraphs:
    """onnxruntime sessions of one model's :class:`TemporalGraph` and :class:`HistoricalGraph`.

    Attributes:
        temporal_session: The temporal graph's session.
        historical_session: The historical VSN's session.
        rows_per_call: Rows per historical-VSN call (a backlog goes in slices of this many).
    """

    temporal_session: Any
    historical_session: Any
    rows_per_call: int

    def temporal(self, selected: Tensor, ctx: StaticContexts) -> Tensor:
        """What ``tft.temporal(selected, ctx)[0]`` gives, to float rounding."""
        feeds = {"selected": _array(selected)} | {
            name: _array(getattr(ctx, name)) for name in _CONTEXTS
        }
        return torch.from_numpy(self.temporal_session.run(None, feeds)[0])

    def historical(self, x: Tensor | np.ndarray, context: Tensor | np.ndarray) -> Tensor:
        """What ``tft.historical_vsn(x, context)[0]`` gives, to float rounding."""
        x, context = _array(x), _array(context)
        step = self.rows_per_call
        parts = [
            self.historical_session.run(
                None, {"x": x[i : i + step], "context": context[i : i + step]}
            )[0]
            for i in range(0, len(x), step)
        ]
        return torch.from_numpy(parts[0] if len(parts) == 1 else np.concatenate(parts))


def _array(t: Tensor | np.ndarray) -> np.ndarray:
    if isinstance(t, np.ndarray):
        return np.ascontiguousarray(t, np.float32)
    return np.ascontiguousarray(t.detach().float().numpy())


def _session(path: Path, threads: int) -> Any:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = max(1, threads)
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no busy-waiting
    so.log_severity_level = 3
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def _examples(tft: TFT) -> tuple[tuple[Tensor, ...], tuple[Tensor, ...]]:
    c = tft.config
    g = torch.Generator().manual_seed(0)
    b, t, d = 3, c.encoder_length + c.horizon, c.hidden
    temporal = (
        torch.randn(b, t, d, generator=g),
        *(torch.randn(b, d, generator=g) for _ in _CONTEXTS),
    )
    n = tft.historical_vsn.n_vars
    historical = (torch.randn(b, n, generator=g), torch.randn(b, d, generator=g))
    return temporal, historical


def _check(module: nn.Module, session: Any, args: tuple[Tensor, ...], what: str) -> None:
    """Refuse a graph whose output differs from PyTorch's beyond the export tolerance."""
    from foxhunt.infer.export import ATOL, RTOL

    with torch.inference_mode():
        ref = module(*args).numpy()
    names = [i.name for i in session.get_inputs()]
    got = session.run(None, {n: a.numpy() for n, a in zip(names, args, strict=True)})[0]
    diff = np.abs(got - ref)
    if not np.all(diff <= ATOL + RTOL * np.abs(ref)):
        raise InputError(
            f"the {what} graph does not match PyTorch (max abs diff {diff.max():.3g}); "
            "use --engine torch"
        )


def _export(
    module: nn.Module,
    args: tuple[Tensor, ...],
    names: Sequence[str],
    path: Path,
    threads: int,
    what: str,
) -> Any:
    """Export ``module`` to ``path`` and load it, checked against PyTorch: with the TorchScript
    exporter first (about 3 s), and where it fails or does not match, with ``torch.export``
    (10-20 s); a graph neither gives is refused. The graph is written under a name of this
    process's own and renamed to ``path`` only once checked: two processes building the same
    graph at once each rename a whole, checked file."""
    from foxhunt.infer.export import checked_export, write_onnx

    own = path.with_name(f"{path.name}.{os.getpid()}")

    def attempt(legacy: bool) -> Any:
        write_onnx(module, args, names, "out", own, legacy=legacy)
        session = _session(own, threads)
        _check(module, session, args, what)
        return session

    try:
        session = checked_export(attempt, own)
    except Exception as e:  # noqa: BLE001 - the exporters and onnxruntime raise their own
        both = f"{first_line(e.__cause__ or e)}; {first_line(e)}"
        raise InputError(f"{path}: the live {what} graph cannot be built ({both})") from e
    os.replace(own, path)
    return session


def build_graphs(tft: TFT, cache: Path, threads: int) -> LiveGraphs:
    """Load ``tft``'s graphs from ``cache``, exporting (and checking) those not there yet.

    Args:
        tft: A float TFT on the CPU (see :func:`unsupported`).
        cache: Directory of the cached graphs (created when missing).
        threads: onnxruntime intra-op threads.

    Returns:
        The graphs.

    Raises:
        InputError: a graph that does not run or does not match PyTorch.
        OSError: ``cache`` cannot be written.
    """
    key = graph_key(tft)
    cache.mkdir(parents=True, exist_ok=True)
    temporal_args, historical_args = _examples(tft)
    graphs = {
        "temporal": (TemporalGraph(tft).eval(), temporal_args, ("selected", *_CONTEXTS)),
        "historical": (HistoricalGraph(tft).eval(), historical_args, ("x", "context")),
    }
    sessions = {}
    for what, (module, args, names) in graphs.items():
        path = cache / f"{key}.{what}.onnx"
        if path.exists():
            try:  # checked at every load too: a cache file that went bad is built again
                sessions[what] = _session(path, threads)
                _check(module, sessions[what], args, what)
                continue
            except Exception as e:  # noqa: BLE001 - onnxruntime raises its own types
                log.warning("%s: cannot be loaded (%s); building it again", path, e)
        log.info("building the live %s graph into %s (once per model)", what, cache)
        sessions[what] = _export(module, args, names, path, threads, what)
    vsn = tft.historical_vsn
    rows = max(1, _ROW_VALUES // max(1, vsn.n_vars * vsn.d_var))
    return LiveGraphs(sessions["temporal"], sessions["historical"], rows)


def check_engine(engine: str) -> str:
    """``engine`` if it is one of :data:`ENGINES`.

    Raises:
        InputError: another name.
    """
    if engine not in ENGINES:
        raise InputError(f"--engine {engine!r}: choose from {', '.join(ENGINES)}")
    return engine


def live_graphs(
    models: Sequence[TFT], engine: str, device: torch.device, cache: Path
) -> list[LiveGraphs] | None:
    """The graphs of each of ``models`` for ``engine``, or None to run them in PyTorch.

    Args:
        models: The TFT, or a seed ensemble's members.
        engine: One of :data:`ENGINES`.
        device: Where the models are.
        cache: Where the graphs are cached (the run directory's ``live/``).

    Raises:
        InputError: an unknown engine; with ``onnx``, a model these graphs cannot run.
    """
    if check_engine(engine) == "torch":
        return None
    why = next((w for w in (unsupported(m, device) for m in models) if w), None)
    if why is not None:
        if engine == "onnx":
            raise InputError(f"--engine onnx: {why}")
        log.info("live forward in PyTorch: %s", why)
        return None
    try:
        return [build_graphs(m, cache, torch.get_num_threads()) for m in models]
    except (InputError, OSError) as e:
        if engine == "onnx":
            raise InputError(f"--engine onnx: {e}") from e
        log.warning("live forward in PyTorch: the onnxruntime graphs could not be built (%s)", e)
        return None
