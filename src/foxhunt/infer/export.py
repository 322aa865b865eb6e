"""``foxhunt export --format onnx``: the TFT as an ONNX model for onnxruntime.

The graph takes three float32 inputs, already scaled exactly as ``foxhunt predict`` scales
them (the run directory's ``features.json`` holds the names and the scaler), and returns the
scaled quantiles::

    static      [batch, S]              static features at the origin
    historical  [batch, T_enc, V_h]     observed features of the encoder bars
    known       [batch, T_enc + T_dec, V_k]   known-future features
    quantiles   [batch, T_dec, Q]       standardised: + calibration, x target scale, sort (docs/inference.md)

The batch axis is dynamic; the encoder length and horizon are fixed by the model.

Exporters: the TorchScript exporter (``dynamo=False``, opset 17) first, then, where it fails or
its graph does not run or match, ``torch.onnx.export(dynamo=True)`` (the torch.export-based
exporter, the default since torch 2.9; opset 20). Both lower the LSTMs to ONNX ``LSTM`` and the
boolean-masked attention to MatMul/Softmax, and onnxruntime matches PyTorch to about 1e-6 on
TFT-225 with either; the TorchScript one takes about 5 s on TFT-225 where torch.export takes
about 40 s, and its graph runs as fast (batch 64, one thread: 683-766 against 765-851 ms). It is
deprecated, and it writes a ``Tensor.split`` whose last part is smaller (the VSN's chunks of
variables: 210 in chunks of 32) as equal parts, a Split onnxruntime refuses; the VSN makes those
views with ``narrow`` while traced (:func:`foxhunt.model.variable_grn.split_views`). Every export
is checked against PyTorch (:data:`ATOL`/:data:`RTOL`) before the command returns.

Quantised model directories are not exported: their int8 layers call ``torch._int_mm``, which
has no ONNX lowering; export the fp32 run and quantise with onnxruntime's own tools instead.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import logging
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch
from torch import Tensor, nn

from foxhunt.artifacts.rundir import load_model_dir
from foxhunt.data.read.scan import first_line
from foxhunt.errors import InputError
from foxhunt.model.batch import TFTBatch
from foxhunt.runtime import atomic_path

log = logging.getLogger(__name__)

INPUT_NAMES = ("static", "historical", "known")
OUTPUT_NAME = "quantiles"
ATOL = 1e-4
"""Parity tolerance, absolute, on scaled quantiles (O(1) values)."""
RTOL = 1e-4
"""Parity tolerance, relative."""


class QuantileGraph(nn.Module):
    """The TFT as a function of three tensors (what an ONNX graph can take).

    Args:
        tft: The model (eval mode).
    """

    def __init__(self, tft: nn.Module) -> None:
        super().__init__()
        self.tft = tft

    def forward(self, static: Tensor, historical: Tensor, known: Tensor) -> Tensor:
        """(B, S), (B, T_enc, V_h), (B, T_enc + T_dec, V_k) -> (B, T_dec, Q) scaled quantiles."""
        return self.tft(TFTBatch(static, historical, known)).quantiles


EXPORTER_LOGGERS = ("torch.onnx", "torch.export", "onnxscript", "onnx_ir")
"""Loggers of the exporter's passes ("Skipping constant folding ...", "torchvision is not
installed"): about 150 lines per export, silenced below ERROR while it runs."""


@contextlib.contextmanager
def _quiet_exporter() -> Iterator[None]:
    """Raise the exporter's loggers to ERROR for the block, then restore their levels."""
    loggers = [logging.getLogger(name) for name in EXPORTER_LOGGERS]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def export_onnx(model: nn.Module, example: TFTBatch, out: Path, *, legacy: bool = False) -> None:
    """Write ``model`` as ONNX to ``out`` (one self-contained file, written atomically).

    Args:
        model: A float TFT.
        example: A batch with the model's shapes (values unused; batch size >= 2 so the
            exporter does not specialise the batch axis to 1).
        out: Target ``.onnx`` path.
        legacy: The TorchScript exporter instead of ``torch.export`` (:func:`write_onnx`).
    """
    args = (example.static, example.historical, example.known)
    write_onnx(QuantileGraph(model).eval(), args, INPUT_NAMES, OUTPUT_NAME, out, legacy=legacy)


T = TypeVar("T")


def checked_export(attempt: Callable[[bool], T], out: Path) -> T:
    """``attempt(True)`` (the TorchScript exporter: seconds), and where it raises,
    ``attempt(False)`` (torch.export: tens of seconds); a failed attempt's ``out`` is removed.

    Args:
        attempt: Exports to ``out`` with the exporter ``legacy`` names and checks the graph,
            raising where it is not usable; returns what the caller keeps.
        out: The file the attempts write.

    Returns:
        The first result.

    Raises:
        Exception: the second attempt's error, the first's as its ``__cause__``.
    """
    try:
        return attempt(True)
    except Exception as first:  # the exporters and onnxruntime raise their own types
        out.unlink(missing_ok=True)
        log.info(
            "TorchScript export not usable (%s); exporting with torch.export", first_line(first)
        )
        try:
            return attempt(False)
        except Exception as second:
            out.unlink(missing_ok=True)
            raise second from first


def write_onnx(
    module: nn.Module,
    args: tuple[Tensor, ...],
    input_names: Sequence[str],
    output_name: str,
    out: Path,
    *,
    legacy: bool = False,
) -> None:
    """Export ``module(*args)`` to ``out`` with axis 0 of every input dynamic (one ``batch``
    dimension), as one self-contained file written atomically; the exporter's logging and
    warnings are kept quiet.

    Args:
        module: A float module in eval mode.
        args: Example inputs (axis 0 of size >= 2: the exporter specialises a size of 1).
        input_names: One name per input: the names of ``module.forward``'s parameters.
        output_name: The single output's name.
        out: Target ``.onnx`` path.
        legacy: Use the deprecated TorchScript exporter (``dynamo=False``, opset 17): a few
            seconds where the default takes 10-20 s for an LSTM, but it mis-exports the VSN's
            chunk splits (module docstring); callers check its graphs and fall back.
    """
    batch = torch.export.Dim("batch", min=1)
    with atomic_path(out) as tmp, _quiet_exporter():
        with warnings.catch_warnings():
            # nn.LSTM re-assigns its flat weight list while being traced: harmless here.
            warnings.filterwarnings("ignore", message=".*were assigned during export.*")
            # One "batch" name on several inputs is reported as a rename it skips: harmless.
            warnings.filterwarnings("ignore", message=".*axis name.*will not be used.*")
            warnings.filterwarnings("ignore", category=DeprecationWarning)
            warnings.filterwarnings("ignore", category=FutureWarning)
            warnings.filterwarnings("ignore", category=UserWarning, module="torch")
            if legacy:
                # nn.LSTM's shape checks, traced as constants: the shapes are fixed but batch
                warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
                torch.onnx.export(
                    module,
                    args,
                    str(tmp),
                    dynamo=False,
                    input_names=list(input_names),
                    output_names=[output_name],
                    dynamic_axes={name: {0: "batch"} for name in input_names},
                    opset_version=17,
                )
                return
            program = torch.onnx.export(
                module,
                args,
                dynamo=True,
                input_names=list(input_names),
                output_names=[output_name],
                dynamic_shapes={name: {0: batch} for name in input_names},
                verbose=False,
            )
            assert program is not None
            program.save(str(tmp), external_data=False)


def onnx_parity(model: nn.Module, onnx_path: Path, batch: TFTBatch) -> dict[str, Any]:
    """Run ``batch`` through PyTorch and onnxruntime and compare.

    Args:
        model: The PyTorch TFT.
        onnx_path: Its ONNX export.
        batch: Inputs.

    Returns:
        ``max_abs_diff``, ``max_abs_value``, ``ok`` (within :data:`ATOL`/:data:`RTOL`),
        ``batch_size``.
    """
    import onnxruntime as ort

    with torch.inference_mode():
        ref = model(batch).quantiles.float().numpy()
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    feeds = {n: getattr(batch, n).float().numpy() for n in INPUT_NAMES}
    got = session.run([OUTPUT_NAME], feeds)[0]
    diff = np.abs(got - ref)
    return {
        "batch_size": batch.size,
        "max_abs_diff": float(diff.max()),
        "max_abs_value": float(np.abs(ref).max()),
        "ok": bool(np.all(diff <= ATOL + RTOL * np.abs(ref))),
    }


def export_model(model_dir: Path, out: Path, *, fmt: str = "onnx") -> dict[str, Any]:
    """Write the model as ONNX and check it against PyTorch (``foxhunt export``).

    Args:
        model_dir: An fp32 run directory.
        out: Target ``.onnx`` file.
        fmt: Only ``onnx``.

    Returns:
        ``out``, its ``bytes``, the input/output ``shapes``, the parity check at batch 1 and 3
        (see :func:`onnx_parity`) and the worst absolute difference ``max_abs_diff``.

    Raises:
        InputError: Bad arguments, a quantised model directory, or an export that does not
            match PyTorch within tolerance (nothing is written then, and a file already at
            ``out`` is left as it was).
    """
    from foxhunt.model.batch import random_batch
    from foxhunt.quantize.model import is_quantized_dir

    if fmt != "onnx":
        raise InputError(f"--format {fmt!r}: only onnx is supported")
    out = Path(out)
    if out.suffix.lower() != ".onnx":
        raise InputError(f"--out {out}: the file name must end in .onnx")
    if not out.parent.is_dir():
        raise InputError(f"--out {out}: directory {out.parent} does not exist")
    if is_quantized_dir(Path(model_dir)):
        raise InputError(
            f"--model {model_dir}: a quantised model directory cannot be exported (int8 "
            "matmuls have no ONNX lowering); export the fp32 run directory"
        )
    missing = [
        m for m in ("onnx", "onnxruntime", "onnxscript") if importlib.util.find_spec(m) is None
    ]
    if missing:
        raise InputError(f"foxhunt export needs {', '.join(missing)}: pip install 'foxhunt[onnx]'")
    loaded = load_model_dir(Path(model_dir), "cpu")
    cfg = loaded.config.model
    model = loaded.model

    def attempt(path: Path, legacy: bool) -> list[dict[str, Any]]:
        export_onnx(model, random_batch(cfg, 2), path, legacy=legacy)
        try:
            checks = [onnx_parity(model, path, random_batch(cfg, b, seed=b)) for b in (1, 3)]
        except Exception as e:  # onnxruntime raises its own types for graphs it cannot run
            raise InputError(
                f"ONNX export of {model_dir} does not run in onnxruntime ({first_line(e)})"
            ) from e
        if not all(c["ok"] for c in checks):
            worst = max(c["max_abs_diff"] for c in checks)
            raise InputError(
                f"ONNX export of {model_dir} does not match PyTorch (max abs diff {worst:.3g} > "
                f"{ATOL:g} + {RTOL:g} x |value|)"
            )
        return checks

    # written beside ``out`` and renamed over it once checked: a failed export leaves a file
    # already at ``out`` (an earlier export) as it was
    with atomic_path(out) as staged:
        checks = checked_export(functools.partial(attempt, staged), staged)
    worst = max(c["max_abs_diff"] for c in checks)
    shapes = {
        "static": ["batch", cfg.n_static],
        "historical": ["batch", cfg.encoder_length, cfg.n_historical],
        "known": ["batch", cfg.total_length, cfg.n_known],
        "quantiles": ["batch", cfg.horizon, cfg.n_quantiles],
    }
    return {
        "out": str(out),
        "bytes": out.stat().st_size,
        "shapes": shapes,
        "parity": checks,
        "max_abs_diff": worst,
    }
