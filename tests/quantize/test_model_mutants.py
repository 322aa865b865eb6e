"""``foxhunt.quantize.model`` on a random-init demo run (no training): the recipe, the written
directory (marker, sidecar, refusals) and the loader's refusals of broken weights, each named."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import torch

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.rundir import load_model_dir
from foxhunt.config import preset
from foxhunt.errors import InputError, ModelDirError
from foxhunt.model.batch import random_batch
from foxhunt.quantize.bench import write_random_run
from foxhunt.quantize.layers import QuantLinear, QuantLSTM
from foxhunt.quantize.model import (
    FLOAT_ACTIVATION_LAYERS,
    MARKER,
    QUANT_FORMAT,
    SCALE,
    build_quantized_model,
    load_inference_model,
    quantizable_tensors,
    quantize_tensors,
    write_quantized_dir,
)
from foxhunt.version import __version__


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201 - LoadedModel
    run = write_random_run(preset("demo"), tmp_path_factory.mktemp("q") / "fp32", seed=3)
    (run / "instruments.json").write_text("{}")  # absent by default: read back when present
    return load_model_dir(run)


@pytest.fixture(scope="module")
def int8(source, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:  # noqa: ANN001
    tensors, recipe = quantize_tensors(source.model, "int8")
    out = tmp_path_factory.mktemp("q") / "int8"
    weights = write_quantized_dir(source, out, tensors, recipe)
    return weights, recipe


def test_the_recipe_names_every_choice(source) -> None:  # noqa: ANN001
    kinds = quantizable_tensors(source.model)
    _, recipe = quantize_tensors(source.model, "int8")  # dynamic by default
    assert recipe["format"] == QUANT_FORMAT and recipe["precision"] == "int8"
    assert recipe["mode"] == "dynamic" and recipe["tensors"] == kinds
    assert recipe["foxhunt_version"] == __version__
    assert recipe["torch_version"] == torch.__version__
    linears = {k.removesuffix(".weight") for k, v in kinds.items() if v == "linear"}
    assert set(recipe["activations"]) == linears
    for module, act in recipe["activations"].items():
        assert act == ("none" if module in FLOAT_ACTIVATION_LAYERS else "dynamic"), module
    _, bf16 = quantize_tensors(source.model, "bf16")
    assert bf16["mode"] is None and set(bf16["activations"].values()) == {"none"}


def test_the_directory_holds_the_marker_and_the_sidecar(source, int8) -> None:  # noqa: ANN001
    weights, recipe = int8
    out = weights.parent.parent
    assert weights == out / "checkpoints" / source.weights.name and weights.is_file()
    marker = json.loads((out / MARKER).read_text())
    assert marker == {
        "precision": "int8",
        "mode": "dynamic",
        "source": str(source.run.root.resolve()),
        "source_weights": source.weights.name,
        "weights": f"checkpoints/{weights.name}",
    }
    _, sidecar = ckpt.load_weights(weights)
    assert sidecar["quantization"] == json.loads(json.dumps(recipe))
    assert sidecar["source_weights"] == str(source.weights)
    assert sidecar["epoch"] == source.sidecar["epoch"]  # the source's own record is carried
    assert sidecar["weights_sha256"] != source.sidecar["weights_sha256"]  # of the new file


def test_an_existing_or_parentless_out_is_refused(source, tmp_path: Path) -> None:  # noqa: ANN001
    tensors, recipe = quantize_tensors(source.model, "bf16")
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out in (full, afile):
        with pytest.raises(InputError) as err:
            write_quantized_dir(source, out, tensors, recipe)
        assert str(err.value) == f"--out {out}: already exists; choose a new directory"
    orphan = tmp_path / "no" / "such" / "q"
    with pytest.raises(InputError) as err:
        write_quantized_dir(source, orphan, tensors, recipe)
    assert str(err.value) == f"--out {orphan}: directory {orphan.parent} does not exist"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert write_quantized_dir(source, empty, tensors, recipe).is_file()  # empty is fine


def test_the_loaded_directory_carries_its_sidecar_and_instruments(source, int8) -> None:  # noqa: ANN001
    weights, _ = int8
    loaded = load_inference_model(weights.parent.parent)
    _, sidecar = ckpt.load_weights(weights)
    assert loaded.sidecar == sidecar and loaded.weights == weights
    assert loaded.instruments == {}  # the run's instruments.json, read back
    assert not loaded.model.training
    batch = random_batch(preset("demo").model, 2, seed=1)
    with torch.inference_mode():
        out = loaded.model(batch)
    assert out.attention is None  # not asked for
    assert loaded.model(batch, return_attention=True).attention is not None
    on_meta = load_inference_model(weights.parent.parent, "meta")
    assert all(p.is_meta for p in on_meta.model.parameters())


def _broken(int8, tmp_path: Path, change) -> Path:  # noqa: ANN001
    """A copy of the int8 directory whose weights ``change`` edits (tensors, sidecar)."""
    weights, _ = int8
    copy = tmp_path / "broken"
    shutil.copytree(weights.parent.parent, copy)
    target = copy / "checkpoints" / weights.name
    tensors, sidecar = ckpt.load_weights(target)
    change(tensors, sidecar)
    ckpt.save_weights(target, tensors, sidecar)
    return target


def test_broken_quantised_weights_are_refused_naming_the_file(int8, tmp_path: Path) -> None:  # noqa: ANN001
    weights, recipe = int8
    linear = next(k for k, v in recipe["tensors"].items() if v == "linear")

    def drop(t: dict, s: dict) -> None:
        del t[linear + SCALE]

    def extra(t: dict, s: dict) -> None:
        t["surplus.weight"] = torch.zeros(2)

    def reshape(t: dict, s: dict) -> None:
        t[linear] = t[linear][:1].contiguous()

    def old_format(t: dict, s: dict) -> None:
        s["quantization"]["format"] = 99

    def no_recipe(t: dict, s: dict) -> None:
        del s["quantization"]

    cases = [
        (drop, rf"tensor '{linear}{SCALE}' is missing$"),
        (extra, r"unexpected tensor 'surplus.weight'$"),
        (reshape, rf"{linear} has shape \(1, \d+\), config says \(\d+, \d+\)$"),
        (old_format, r"quantisation recipe format 99 is not 1 \(written by another foxhunt"),
        (no_recipe, r"quantisation recipe format None is not 1"),
    ]
    for n, (change, why) in enumerate(cases):
        target = _broken(int8, tmp_path / str(n), change)
        with pytest.raises(ModelDirError) as err:
            load_inference_model(target.parent.parent)
        message = str(err.value)
        assert message.startswith(str(target.with_suffix(""))), message  # weights or sidecar
        assert re.search(why, message), message


def test_an_unknown_kind_or_a_misfit_is_refused(source) -> None:  # noqa: ANN001
    tensors, recipe = quantize_tensors(source.model, "int8")
    where = Path("w.safetensors")
    linear = next(k for k, v in recipe["tensors"].items() if v == "linear")
    odd = {**recipe, "tensors": {**recipe["tensors"], linear: "cubic"}}
    with pytest.raises(
        ModelDirError, match=rf"^w.safetensors: unknown tensor kind 'cubic' for {linear}$"
    ):
        build_quantized_model(preset("demo").model, tensors, odd, where)
    wrong = preset("demo").model
    wrong = type(wrong)(**{**wrong.__dict__, "hidden": wrong.hidden * 2})
    with pytest.raises(ModelDirError, match=r"^w.safetensors: .*(shape|do not fit)"):
        build_quantized_model(wrong, tensors, recipe, where)


def test_each_linear_layer_is_loaded_with_its_recipe_s_activations(int8) -> None:  # noqa: ANN001
    weights, recipe = int8
    model = load_inference_model(weights.parent.parent).model
    layers = {name: m for name, m in model.named_modules() if isinstance(m, QuantLinear)}
    assert set(layers) == set(recipe["activations"])
    for name, layer in layers.items():
        assert layer.activations == recipe["activations"][name], name
    assert {layer.activations for layer in layers.values()} == {"dynamic", "none"}
    # every quantised tensor is held as int8 codes with its per-row scales
    assert all(layer.weight.dtype == torch.int8 for layer in layers.values())
    assert all(layer.weight_scale.shape[0] == layer.out_features for layer in layers.values())


def test_static_mode_needs_a_scale_for_every_quantised_linear(source) -> None:  # noqa: ANN001
    kinds = quantizable_tensors(source.model)
    linears = sorted(k.removesuffix(".weight") for k, v in kinds.items() if v == "linear")
    quantised = [m for m in linears if m not in FLOAT_ACTIVATION_LAYERS]
    with pytest.raises(ValueError, match=r"^static quantisation needs a calibrated scale for "):
        quantize_tensors(source.model, "int8", "static")
    partial = {m: 0.5 for m in quantised[1:]}
    with pytest.raises(ValueError) as err:
        quantize_tensors(source.model, "int8", "static", partial)
    assert str(err.value) == f"static quantisation needs a calibrated scale for {quantised[0]}"
    tensors, recipe = quantize_tensors(source.model, "int8", "static", {m: 0.5 for m in linears})
    assert all(recipe["activations"][m] == "static" for m in quantised)
    assert all(tensors[m + ".__act_scale"].tolist() == [0.5] for m in quantised)


def test_codes_carry_one_scale_per_row_or_variable_and_the_loader_keeps_them(  # noqa: ANN001
    source, int8
) -> None:
    """Per output row (linear, LSTM gates) or per variable (the VSN's stacks), and the loaded
    layers dequantise with the stored scales: the int8 net forecasts what the fp32 net does."""
    weights, recipe = int8
    tensors, _ = ckpt.load_weights(weights)
    fresh, _ = quantize_tensors(source.model, "int8")  # called here, not only in the fixture
    assert fresh.keys() == tensors.keys()
    assert all(torch.equal(fresh[k], tensors[k]) for k in tensors)
    expected = {"linear": lambda s: (s[0], 1), "lstm": lambda s: (s[0], 1)}
    expected["per_variable"] = lambda s: (s[0], 1, 1)
    for name, kind in recipe["tensors"].items():
        codes, scale = tensors[name], tensors[name + SCALE]
        assert codes.dtype == torch.int8, name
        assert tuple(scale.shape) == expected[kind](tuple(codes.shape)), name
    loaded = load_inference_model(weights.parent.parent)
    lstms = [m for m in loaded.model.modules() if isinstance(m, QuantLSTM)]
    assert lstms
    for lstm in lstms:
        prefix = next(n for n, m in loaded.model.named_modules() if m is lstm)
        for name in lstm._names:
            if name.startswith("weight_"):
                stored = tensors[f"{prefix}.{name}{SCALE}"]
                assert torch.equal(getattr(lstm, f"{name}_scale"), stored), (prefix, name)
    batch = random_batch(preset("demo").model, 16, seed=2)
    with torch.inference_mode():
        fp32 = source.model(batch).quantiles
        q = loaded.model(batch).quantiles
    assert (q - fp32).abs().max() <= 0.05 * fp32.abs().max()
