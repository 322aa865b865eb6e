"""Quantised model directories: fp32 TFT -> int8/bf16 tensors -> safetensors, and back.

A quantised model directory is a run directory (``config.json``, ``features.json``,
``baselines.json``, ``checkpoints/tft_final_epoch{N}.safetensors`` + sidecar) plus a
``quantization.json`` marker. Loading it executes no code: the weights file holds plain int8,
bf16 and float32 tensors, and the recipe (which tensor is quantised how, and which linear
layers quantise their activations) is JSON in the weights' sidecar. At load the TFT is built on
the meta device (no fp32 weights are ever materialised), its layers are swapped for the
quantised ones of :mod:`foxhunt.quantize.layers` and filled from the file.

Stored tensor names: a quantised tensor keeps its state-dict name and holds the int8 codes (or
the bf16 weight); its scales are ``<name>.__scale``; a static activation scale of linear layer
``<module>`` is ``<module>.__act_scale``.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import torch
from torch import Tensor, nn
from torch.nn.utils import parametrize

from foxhunt import runtime
from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.ensemble import is_ensemble_dir, load_ensemble_dir
from foxhunt.artifacts.rundir import (
    LoadedModel,
    RunDir,
    load_model_dir,
    model_weights,
    read_config,
    read_features,
    read_instruments,
)
from foxhunt.artifacts.served import served_weights
from foxhunt.config import TFTConfig
from foxhunt.errors import InputError, ModelDirError
from foxhunt.model.batch import TFTBatch, TFTOutput
from foxhunt.model.tft import TFT
from foxhunt.quantize.layers import Activations, DequantizeWeight, QuantLinear, QuantLSTM
from foxhunt.quantize.tensors import quantize_int8
from foxhunt.version import __version__

log = logging.getLogger(__name__)

WeightFormat = Literal["int8", "bf16"]
"""Stored weight format of a quantised directory (not the training ``config.Precision``)."""
Mode = Literal["dynamic", "static"]
Kind = Literal["linear", "lstm", "per_variable"]

QUANT_FORMAT = 1
"""Version of the quantisation recipe schema."""
MARKER = "quantization.json"
"""File at the root of a quantised model directory."""
SCALE = ".__scale"
ACT_SCALE = ".__act_scale"

REDUCE_DIMS: dict[str, tuple[int, ...]] = {
    "linear": (1,),  # (out, in): one scale per output row
    "lstm": (1,),  # (4 * hidden, in): one scale per gate row
    "per_variable": (1, 2),  # (V, d_in, d_out): one scale per variable
}
"""Dimensions that share a scale, per kind of tensor (see :mod:`foxhunt.quantize.tensors`)."""

FLOAT_ACTIVATION_LAYERS: tuple[str, ...] = ("output",)
"""Linear layers whose inputs stay float (weight-only INT8): the quantile head, whose outputs
are the forecast itself."""

COPIED_FILES = (
    "config.json",
    "features.json",
    "baselines.json",
    "instruments.json",
    "calibration.json",
    "run.json",
    "metrics.jsonl",
)
"""Files copied from the source run directory (the ones a model directory is loaded and
evaluated with, plus the training log for the report)."""


def quantizable_tensors(model: nn.Module) -> dict[str, Kind]:
    """State-dict names of the matmul weights that get quantised, with their kind.

    ``nn.Linear`` weights, ``nn.LSTM`` weights (not biases) and every 3-D parameter (the
    per-variable weight stacks of the variable selection networks). Biases, layer norms and the
    per-variable embeddings stay float32: they are a few percent of the bytes.
    """
    kinds: dict[str, Kind] = {}
    for mname, mod in model.named_modules():
        prefix = f"{mname}." if mname else ""
        if isinstance(mod, nn.Linear):
            kinds[f"{prefix}weight"] = "linear"
        elif isinstance(mod, nn.LSTM):
            for n in mod._flat_weights_names:
                if n.startswith("weight_"):
                    kinds[f"{prefix}{n}"] = "lstm"
        else:
            for pname, p in mod.named_parameters(recurse=False):
                if p.dim() == 3:
                    kinds[f"{prefix}{pname}"] = "per_variable"
    return kinds


def check_finite_weights(model: nn.Module) -> None:
    """Refuse a model whose weights to quantise hold NaN or inf: their int8 codes are undefined
    (the scale is NaN), and calibrating such a model first would only waste the time.

    Raises:
        ModelDirError: naming the first such tensor.
    """
    kinds = quantizable_tensors(model)
    for name, t in model.state_dict().items():
        if name in kinds and not bool(torch.isfinite(t).all()):
            raise ModelDirError(
                f"cannot quantise {name}: it holds non-finite values (NaN or inf); the model's "
                "weights are broken, quantise a checkpoint from before they diverged"
            )


def quantize_tensors(
    model: nn.Module,
    precision: WeightFormat,
    mode: Mode = "dynamic",
    act_scales: Mapping[str, float] | None = None,
) -> tuple[dict[str, Tensor], dict[str, Any]]:
    """Quantise a float model's weights into storable tensors and a JSON recipe.

    Args:
        model: The fp32 TFT (any device; read only).
        precision: ``int8`` (codes + scales) or ``bf16`` (weights cast to bfloat16).
        mode: For int8, how linear layers treat their inputs at run time: ``dynamic`` (per-row
            scales computed per call) or ``static`` (``act_scales``, calibrated).
        act_scales: Linear module name -> activation scale (``static`` only).

    Returns:
        ``(tensors, recipe)``: every state-dict tensor (quantised ones replaced, scales added)
        on CPU, and the JSON-able recipe for :func:`build_quantized_model`.

    Raises:
        ValueError: ``static`` without a scale for some activation-quantised linear layer.
        ModelDirError: a weight to quantise holds NaN or inf.
    """
    check_finite_weights(model)
    kinds = quantizable_tensors(model)
    tensors: dict[str, Tensor] = {}
    for name, t in model.state_dict().items():
        t = t.detach().cpu()
        kind = kinds.get(name)
        if kind is None:
            tensors[name] = t.contiguous()
        elif precision == "bf16":
            tensors[name] = t.to(torch.bfloat16).contiguous()
        else:
            codes, scale = quantize_int8(t, REDUCE_DIMS[kind])
            tensors[name] = codes
            tensors[name + SCALE] = scale
    activations: dict[str, Activations] = {}
    for name, kind in kinds.items():
        if kind != "linear":
            continue
        module = name.removesuffix(".weight")
        act: Activations = (
            "none" if precision == "bf16" or module in FLOAT_ACTIVATION_LAYERS else mode
        )
        if act == "static":
            if act_scales is None or module not in act_scales:
                raise ValueError(f"static quantisation needs a calibrated scale for {module}")
            tensors[module + ACT_SCALE] = torch.tensor([float(act_scales[module])])
        activations[module] = act
    recipe = {
        "format": QUANT_FORMAT,
        "precision": precision,
        "mode": mode if precision == "int8" else None,
        "tensors": kinds,
        "activations": activations,
        "foxhunt_version": __version__,
        "torch_version": torch.__version__,
    }
    return tensors, recipe


class QuantizedTFT(TFT):
    """A TFT whose per-variable weights are dequantised once per forward, not once per read.

    The variable selection network reads each per-variable weight stack once per chunk of
    variables; under ``parametrize.cached()`` the dequantised copy is made on the first read
    and dropped when the forward returns.
    """

    def forward(self, batch: TFTBatch, return_attention: bool = False) -> TFTOutput:
        """:meth:`TFT.forward` with parametrisations cached for the call."""
        with parametrize.cached():
            return super().forward(batch, return_attention)


def _replace(model: nn.Module, path: str, new: nn.Module) -> None:
    parent, _, attr = path.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, attr, new)


def build_quantized_model(
    config: TFTConfig, tensors: Mapping[str, Tensor], recipe: Mapping[str, Any], where: Path
) -> nn.Module:
    """Build a TFT with quantised layers from stored tensors (no fp32 weights materialised).

    Args:
        config: The network's shape.
        tensors: What :func:`quantize_tensors` produced (read back from safetensors).
        recipe: Its recipe.
        where: The weights file, for error messages.

    Returns:
        The TFT (CPU, eval mode) with ``QuantLinear``/``QuantLSTM`` layers and dequantising
        parametrisations on the per-variable weights.

    Raises:
        ModelDirError: A tensor is missing, unexpected or of the wrong shape or kind.
    """
    rest = dict(tensors)

    def take(key: str) -> Tensor:
        if key not in rest:
            raise ModelDirError(f"{where}: tensor {key!r} is missing")
        return rest.pop(key)

    def take_quantized(key: str) -> tuple[Tensor, Tensor | None]:
        """Codes and scales (int8), or a bf16 weight and None."""
        stored = take(key)
        return stored, take(key + SCALE) if stored.dtype == torch.int8 else None

    with torch.device("meta"):
        model = QuantizedTFT(config)
    kinds: dict[str, str] = dict(recipe.get("tensors", {}))
    activations: dict[str, Activations] = dict(recipe.get("activations", {}))
    lstms: set[str] = set()
    try:
        for key, kind in kinds.items():
            mpath, _, attr = key.rpartition(".")
            owner = model.get_submodule(mpath)
            if kind == "linear":
                if not isinstance(owner, nn.Linear):
                    raise ModelDirError(f"{where}: {mpath} is not a linear layer in this TFT")
                bias = take(f"{mpath}.bias") if owner.bias is not None else None
                act = activations.get(mpath, "none")
                act_scale = rest.pop(mpath + ACT_SCALE, None)
                weight, scale = take_quantized(key)
                if tuple(weight.shape) != tuple(owner.weight.shape):
                    raise ModelDirError(
                        f"{where}: {key} has shape {tuple(weight.shape)}, config says {tuple(owner.weight.shape)}"
                    )
                _replace(model, mpath, QuantLinear(weight, scale, bias, act, act_scale))
            elif kind == "lstm":
                lstms.add(mpath)
            elif kind == "per_variable":
                codes, scale = take_quantized(key)
                current = getattr(owner, attr)
                if tuple(codes.shape) != tuple(current.shape):
                    raise ModelDirError(
                        f"{where}: {key} has shape {tuple(codes.shape)}, config says {tuple(current.shape)}"
                    )
                delattr(owner, attr)
                owner.register_parameter(attr, nn.Parameter(codes, requires_grad=False))
                parametrize.register_parametrization(
                    owner, attr, DequantizeWeight(scale), unsafe=True
                )
            else:
                raise ModelDirError(f"{where}: unknown tensor kind {kind!r} for {key}")
        for mpath in sorted(lstms):
            lstm = model.get_submodule(mpath)
            if not isinstance(lstm, nn.LSTM):
                raise ModelDirError(f"{where}: {mpath} is not an LSTM in this TFT")
            names = lstm._flat_weights_names
            stored = {n: take_quantized(f"{mpath}.{n}") for n in names if n.startswith("weight_")}
            weights = {n: w for n, (w, _) in stored.items()}
            scales = {n: s for n, (_, s) in stored.items() if s is not None}
            biases = {n: take(f"{mpath}.{n}") for n in names if n.startswith("bias_")}
            new = QuantLSTM(
                lstm.input_size,
                lstm.hidden_size,
                lstm.num_layers,
                lstm.dropout,
                lstm.batch_first,
                weights,
                scales,
                biases,
            )
            _replace(model, mpath, new)
        result = model.load_state_dict(rest, strict=False, assign=True)
    except (ValueError, RuntimeError, AttributeError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ModelDirError(f"{where}: quantised weights do not fit config.json ({first})") from e
    if result.unexpected_keys:
        raise ModelDirError(f"{where}: unexpected tensor {result.unexpected_keys[0]!r}")
    for module in model.modules():  # buffers the weights file does not hold start at zero
        for key in module._non_persistent_buffers_set:
            buffer = module._buffers[key]
            if buffer is not None and buffer.is_meta:
                module._buffers[key] = torch.zeros(buffer.shape, dtype=buffer.dtype)
    for name, t in [*model.named_parameters(), *model.named_buffers()]:
        if t.is_meta:
            raise ModelDirError(f"{where}: tensor {name!r} is missing")
    return model.eval()


def held_bytes(model: nn.Module) -> int:
    """Bytes of every parameter and buffer the model holds (each storage counted once)."""
    seen: dict[int, int] = {}
    for t in [*model.parameters(), *model.buffers()]:
        seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    return sum(seen.values())


# --- directories -----------------------------------------------------------------------------


def write_quantized_dir(
    source: LoadedModel, out: Path, tensors: Mapping[str, Tensor], recipe: Mapping[str, Any]
) -> Path:
    """Write a quantised model directory next to nothing else, atomically.

    Everything goes into ``<out>.tmp/`` first, which is renamed to ``out`` at the end, so a crash
    never leaves a half-written model directory under the final name.

    Args:
        source: The fp32 model directory it was made from.
        out: The new directory (must not exist, or be empty).
        tensors: From :func:`quantize_tensors`.
        recipe: Likewise.

    Returns:
        The weights file written.

    Raises:
        InputError: ``out`` exists and is not empty, or its parent does not exist.
    """
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(f"--out {out}: already exists; choose a new directory")
    if not out.parent.is_dir():
        raise InputError(f"--out {out}: directory {out.parent} does not exist")
    try:
        return _write_quantized_dir(source, out, tensors, recipe)
    except OSError as e:  # another quantize finished the same --out first: keep its directory
        if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
        raise InputError(f"--out {out}: already exists; choose a new directory") from e


def _write_quantized_dir(
    source: LoadedModel, out: Path, tensors: Mapping[str, Tensor], recipe: Mapping[str, Any]
) -> Path:
    with runtime.atomic_dir(out, replace=False) as tmp:
        run = RunDir(tmp)
        run.create()
        for name in COPIED_FILES:
            src = source.run.root / name
            if src.is_file():
                shutil.copy2(src, tmp / name)
        sidecar = {k: v for k, v in source.sidecar.items() if k not in ("format", "weights_sha256")}
        sidecar["quantization"] = dict(recipe)
        sidecar["source_weights"] = str(source.weights)
        if Path(source.weights).parent == source.run.checkpoints:  # which weights, and why
            with contextlib.suppress(ModelDirError):
                sidecar["served"] = served_weights(source.run.checkpoints, Path(source.weights))
        weights = run.checkpoints / source.weights.name
        ckpt.save_weights(weights, tensors, sidecar)
        marker = {
            "precision": recipe["precision"],
            "mode": recipe["mode"],
            "source": str(source.run.root.resolve()),
            "source_weights": source.weights.name,
            "weights": f"checkpoints/{weights.name}",
        }
        runtime.atomic_write_json(tmp / MARKER, marker)
    return out / "checkpoints" / weights.name


def is_quantized_dir(path: Path) -> bool:
    """Whether ``path`` is a quantised model directory (has ``quantization.json``)."""
    return (Path(path) / MARKER).is_file()


def load_inference_model(path: Path, device: torch.device | str = "cpu") -> LoadedModel:
    """Load any model directory for inference: fp32 run directories, quantised ones and seed
    ensembles (``foxhunt train --ensemble N``).

    Without a ``quantization.json`` this is :func:`foxhunt.artifacts.rundir.load_model_dir`.

    Args:
        path: The model directory.
        device: Where to put the model.

    Returns:
        The loaded model (eval mode) and what turns bars into its inputs.

    Raises:
        ModelDirError: Missing, corrupt or inconsistent directory.
    """
    run = RunDir(Path(path))
    if is_ensemble_dir(run.root):  # a seed ensemble: foxhunt.artifacts.ensemble
        return load_ensemble_dir(run.root, device)
    if not is_quantized_dir(run.root):
        return load_model_dir(run.root, device)
    cfg = read_config(run)
    spec, scaler, fingerprint = read_features(run, cfg)
    weights = model_weights(run)
    tensors, sidecar = ckpt.load_weights(weights)
    recipe = sidecar.get("quantization")
    if not isinstance(recipe, dict) or recipe.get("format") != QUANT_FORMAT:
        fmt = recipe.get("format") if isinstance(recipe, dict) else None
        raise ModelDirError(
            f"{ckpt.sidecar_path(weights)}: quantisation recipe format {fmt!r} is not "
            f"{QUANT_FORMAT} (written by another foxhunt version?)"
        )
    model = build_quantized_model(cfg.model, tensors, recipe, weights)
    model.to(device).eval()
    instruments = read_instruments(run)
    return LoadedModel(run, cfg, spec, scaler, fingerprint, model, weights, sidecar, instruments)  # type: ignore[arg-type]
