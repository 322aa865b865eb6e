"""A seed ensemble's directory without training one: the plan file (``ensemble.json``), member
directories, :class:`EnsembleTFT` and :func:`load_ensemble_dir`, pinned field by field and
message by message. Members are tiny TFTs saved with the package's own writers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from foxhunt.artifacts.ensemble import (
    EnsemblePlan,
    EnsembleTFT,
    is_ensemble_dir,
    load_ensemble_dir,
    member_root,
    read_plan,
    write_plan,
)
from foxhunt.errors import ModelDirError

_COMBINE = "mean of the members' calibrated log-return quantiles, then sorted"
_SEED = 7


def _exact(message: str) -> str:
    return f"^{re.escape(message)}$"


# --- plan ----------------------------------------------------------------------------------


def test_plan_of_names_members_in_order_with_consecutive_seeds() -> None:
    assert EnsemblePlan.of(7, 3) == EnsemblePlan(("members/0", "members/1", "members/2"), (7, 8, 9))
    assert EnsemblePlan.of(0, 1) == EnsemblePlan(("members/0",), (0,))
    assert EnsemblePlan.of(-2, 2).seeds == (-2, -1)
    assert EnsemblePlan.of(5, 0) == EnsemblePlan((), ())


def test_plan_record_holds_format_members_seeds_and_how_they_combine() -> None:
    rec = EnsemblePlan(("members/0", "elsewhere/b"), (11, 4)).to_dict()
    assert rec == {
        "format": 1,
        "members": ["members/0", "elsewhere/b"],
        "seeds": [11, 4],
        "combine": _COMBINE,
    }
    assert list(rec) == ["format", "members", "seeds", "combine"]
    assert type(rec["members"]) is list and type(rec["seeds"]) is list


def test_write_plan_writes_ensemble_json_and_read_plan_reads_it_back(tmp_path: Path) -> None:
    plan = EnsemblePlan.of(3, 2)
    write_plan(tmp_path, plan)
    assert [p.name for p in tmp_path.iterdir()] == ["ensemble.json"]
    text = (tmp_path / "ensemble.json").read_text()
    assert json.loads(text) == {
        "format": 1,
        "members": ["members/0", "members/1"],
        "seeds": [3, 4],
        "combine": _COMBINE,
    }
    assert text == json.dumps(json.loads(text), indent=2) + "\n"
    assert read_plan(tmp_path) == plan
    assert read_plan(str(tmp_path)) == plan  # type: ignore[arg-type]
    write_plan(str(tmp_path), EnsemblePlan.of(9, 3))  # type: ignore[arg-type]
    assert read_plan(tmp_path) == EnsemblePlan(("members/0", "members/1", "members/2"), (9, 10, 11))


def test_read_plan_converts_members_to_str_and_seeds_to_int(tmp_path: Path) -> None:
    (tmp_path / "ensemble.json").write_text(
        json.dumps({"format": 1, "members": ["a", 2, "c/d"], "seeds": ["5", 6.0, 7]})
    )
    plan = read_plan(tmp_path)
    assert plan == EnsemblePlan(("a", "2", "c/d"), (5, 6, 7))
    assert type(plan.members) is tuple and type(plan.seeds) is tuple
    assert [type(s) for s in plan.seeds] == [int, int, int]


def test_read_plan_allows_a_dotted_name_that_stays_inside(tmp_path: Path) -> None:
    (tmp_path / "ensemble.json").write_text(
        json.dumps(
            {"format": 1, "members": ["members/..0", "./members/1", "a..b"], "seeds": [1, 2, 3]}
        )
    )
    assert read_plan(tmp_path).members == ("members/..0", "./members/1", "a..b")


def test_read_plan_refuses_a_missing_or_corrupt_file(tmp_path: Path) -> None:
    path = tmp_path / "ensemble.json"
    with pytest.raises(ModelDirError, match=_exact(f"{path}: ensemble.json is missing")):
        read_plan(tmp_path)
    path.write_text("{not json")
    with pytest.raises(
        ModelDirError, match=_exact(f"{path}: ensemble.json is corrupt (not valid JSON)")
    ):
        read_plan(tmp_path)


@pytest.mark.parametrize(
    ("rec", "why"),
    [
        ({"format": 2, "members": ["m"], "seeds": [1]}, "format 2 is not 1"),
        ({"format": "1", "members": ["m"], "seeds": [1]}, "format '1' is not 1"),
        ({"format": None, "members": ["m"], "seeds": [1]}, "format None is not 1"),
        ({"members": ["m"], "seeds": [1]}, "'format'"),
        ({"format": 1, "seeds": [1]}, "'members'"),
        ({"format": 1, "members": ["m"]}, "'seeds'"),
        ({"format": 1, "members": 5, "seeds": [1]}, "'int' object is not iterable"),
        ({"format": 1, "members": ["m"], "seeds": [None]}, None),
        (
            {"format": 1, "members": ["m"], "seeds": ["x"]},
            "invalid literal for int() with base 10: 'x'",
        ),
        ([1, 2], "list indices must be integers or slices, not str"),
    ],
)
def test_read_plan_refuses_an_unreadable_record_saying_why(
    tmp_path: Path, rec: Any, why: str | None
) -> None:
    path = tmp_path / "ensemble.json"
    path.write_text(json.dumps(rec))
    if why is None:  # the wording of int(None)'s TypeError is Python's
        try:
            int(None)  # type: ignore[arg-type]
        except TypeError as e:
            why = str(e)
    with pytest.raises(ModelDirError, match=_exact(f"{path}: unreadable ensemble record ({why})")):
        read_plan(tmp_path)


@pytest.mark.parametrize(
    ("members", "seeds"),
    [([], []), (["m"], [1, 2]), (["m", "n"], [1]), ([], [1])],
)
def test_read_plan_refuses_no_members_or_a_seed_count_that_differs(
    tmp_path: Path, members: list[str], seeds: list[int]
) -> None:
    path = tmp_path / "ensemble.json"
    path.write_text(json.dumps({"format": 1, "members": members, "seeds": seeds}))
    expected = f"{path}: {len(members)} members but {len(seeds)} seeds"
    with pytest.raises(ModelDirError, match=_exact(expected)):
        read_plan(tmp_path)


@pytest.mark.parametrize(
    "bad", ["/abs/member", "../other", "members/../../x", "members/0/..", ".."]
)
def test_read_plan_refuses_a_member_outside_the_ensemble(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "ensemble.json"
    path.write_text(json.dumps({"format": 1, "members": ["members/0", bad], "seeds": [1, 2]}))
    expected = f"{path}: member {bad!r} is not a directory inside the ensemble"
    with pytest.raises(ModelDirError, match=_exact(expected)):
        read_plan(tmp_path)


# --- paths ---------------------------------------------------------------------------------


def test_member_root_is_members_k_under_the_root(tmp_path: Path) -> None:
    assert member_root(tmp_path, 0) == tmp_path / "members" / "0"
    assert member_root(tmp_path, 12) == tmp_path / "members" / "12"
    assert member_root(str(tmp_path), 3) == tmp_path / "members" / "3"  # type: ignore[arg-type]
    assert isinstance(member_root(str(tmp_path), 3), Path)  # type: ignore[arg-type]


def test_is_ensemble_dir_needs_an_ensemble_json_file(tmp_path: Path) -> None:
    assert is_ensemble_dir(tmp_path) is False
    assert is_ensemble_dir(tmp_path / "absent") is False
    (tmp_path / "config.json").write_text("{}")
    assert is_ensemble_dir(tmp_path) is False
    (tmp_path / "ensemble.json").mkdir()  # a directory of that name is not the file
    assert is_ensemble_dir(tmp_path) is False
    (tmp_path / "ensemble.json").rmdir()
    write_plan(tmp_path, EnsemblePlan.of(0, 2))
    assert is_ensemble_dir(tmp_path) is True
    assert is_ensemble_dir(str(tmp_path)) is True  # type: ignore[arg-type]


# --- EnsembleTFT ---------------------------------------------------------------------------


def test_ensemble_tft_holds_its_members_and_maps() -> None:
    from torch import nn

    members = [nn.Linear(2, 1), nn.Linear(2, 1)]
    maps = [object(), object()]
    ens = EnsembleTFT(members, maps)  # type: ignore[arg-type]
    assert isinstance(ens.members, nn.ModuleList)
    assert list(ens.members) == members
    assert ens.members[0] is members[0] and ens.members[1] is members[1]
    assert type(ens.maps) is tuple and ens.maps == tuple(maps)
    assert ens.maps[0] is maps[0] and ens.maps[1] is maps[1]
    # registered as submodules: their parameters are the ensemble's
    assert len(list(ens.parameters())) == 4
    assert set(dict(ens.named_parameters())) == {
        "members.0.weight",
        "members.0.bias",
        "members.1.weight",
        "members.1.bias",
    }
    one = EnsembleTFT((members[0],), (maps[0],))  # type: ignore[arg-type]
    assert list(one.members) == [members[0]] and one.maps == (maps[0],)


@pytest.mark.parametrize(("n_members", "n_maps"), [(0, 0), (1, 0), (0, 1), (2, 1), (1, 2)])
def test_ensemble_tft_refuses_no_members_or_a_map_count_that_differs(
    n_members: int, n_maps: int
) -> None:
    from torch import nn

    members = [nn.Linear(1, 1) for _ in range(n_members)]
    maps = [object() for _ in range(n_maps)]
    expected = f"{n_members} members but {n_maps} quantile maps"
    with pytest.raises(ValueError, match=_exact(expected)):
        EnsembleTFT(members, maps)  # type: ignore[arg-type]


def test_ensemble_tft_has_no_forward_of_its_own() -> None:
    import torch
    from torch import nn

    ens = EnsembleTFT([nn.Linear(2, 1)], [object()])  # type: ignore[list-item]
    expected = "an ensemble has no forward of its own; use foxhunt.infer.quantiles.tft_quantiles"
    with pytest.raises(TypeError, match=_exact(expected)):
        ens(torch.zeros(1, 2))
    with pytest.raises(TypeError, match=_exact(expected)):
        ens.forward()
    with pytest.raises(TypeError, match=_exact(expected)):
        ens.forward(torch.zeros(1, 2), torch.zeros(1, 2), None)


# --- load_ensemble_dir ---------------------------------------------------------------------


def _cfg(seed: int = _SEED) -> Any:
    from foxhunt.config import demo

    return demo().replace(
        model={"hidden": 8, "n_heads": 2, "encoder_length": 4, "horizon": 2, "variable_width": 2},
        train={"seed": seed},
    )


def _features(fingerprint: str = "abc", mean: float = 0.0) -> dict[str, Any]:
    from foxhunt.artifacts.rundir import features_record
    from foxhunt.data.features.table import feature_spec
    from foxhunt.data.scale.scaler import ScalerParams

    spec = feature_spec(2)
    n = len(spec.inputs)
    scaler = ScalerParams(spec.inputs, (mean,) * n, (1.0,) * n, (1e-3, 2e-3))
    return features_record(spec, scaler, fingerprint)


def _member(root: Path, k: int) -> dict[str, Any]:
    """Member k: a finished run directory with its own weights (seed k) and, for k = 1, its
    own calibration. Returns its state dict."""
    import torch

    from foxhunt import runtime
    from foxhunt.artifacts import checkpoints as ckpt
    from foxhunt.artifacts.rundir import RunDir
    from foxhunt.model.tft import TFT

    cfg = _cfg(_SEED + k)
    run = RunDir(member_root(root, k))
    run.create()
    cfg.save(run.config)
    runtime.atomic_write_json(run.features, _features())
    torch.manual_seed(100 + k)
    model = TFT(cfg.model)
    ckpt.save_weights(
        ckpt.final_weights_path(run.checkpoints, 2 + k), model.state_dict(), {"epoch": 2 + k}
    )
    runtime.atomic_write_json(run.run_info, {"stop_reason": "finished"})
    if k == 1:
        from foxhunt.artifacts.calibration import Calibration, write_calibration

        q = cfg.model.quantiles
        offsets = tuple(tuple(0.01 * (h + 1) for _ in q) for h in range(cfg.model.horizon))
        write_calibration(run.calibration, Calibration(tuple(q), offsets, 40))
    return {k: v.clone() for k, v in model.state_dict().items()}


def _ensemble(tmp_path: Path, n: int = 2) -> tuple[Path, list[dict[str, Any]]]:
    """A finished ensemble of n members, as train_ensemble leaves it."""
    from foxhunt import runtime
    from foxhunt.artifacts.rundir import RunDir
    from foxhunt.data.market.instruments import instruments_to_dict, resolve

    root = tmp_path / "ens"
    states = [_member(root, k) for k in range(n)]
    run = RunDir(root)
    _cfg().save(run.config)
    runtime.atomic_write_json(run.features, _features())
    runtime.atomic_write_json(
        run.instruments, instruments_to_dict({"ES": resolve("ES", warn=False)})
    )
    runtime.atomic_write_json(run.run_info, {"stop_reason": "finished", "symbols": ["ES"]})
    write_plan(root, EnsemblePlan.of(_SEED, n))
    return root, states


def test_load_ensemble_dir_loads_every_member_with_its_own_map(tmp_path: Path) -> None:
    import torch

    from foxhunt.artifacts import checkpoints as ckpt
    from foxhunt.artifacts.calibration import QuantileMap, quantile_map
    from foxhunt.artifacts.rundir import LoadedModel, RunDir, load_model_dir
    from foxhunt.config import RunConfig
    from foxhunt.data.features.table import feature_spec
    from foxhunt.data.market.instruments import resolve
    from foxhunt.model.tft import TFT

    root, states = _ensemble(tmp_path)
    loaded = load_ensemble_dir(root)
    assert isinstance(loaded, LoadedModel)
    assert loaded.run == RunDir(root)
    assert loaded.config == RunConfig.load(root / "config.json")
    assert loaded.config.train.seed == _SEED
    assert loaded.spec == feature_spec(2)
    assert loaded.scaler.target_std == (1e-3, 2e-3)
    assert loaded.fingerprint == "abc"
    assert loaded.weights == root / "ensemble.json"
    assert loaded.instruments == {"ES": resolve("ES", warn=False)}

    ens = loaded.model
    assert isinstance(ens, EnsembleTFT) and not ens.training
    assert len(ens.members) == 2 and len(ens.maps) == 2
    for member, state in zip(ens.members, states, strict=True):
        assert isinstance(member, TFT) and not member.training
        got = member.state_dict()
        assert set(got) == set(state)
        assert all(torch.equal(got[name], t) for name, t in state.items())
    assert not torch.equal(
        ens.members[0].state_dict()["output.weight"], ens.members[1].state_dict()["output.weight"]
    )

    for k, qmap in enumerate(ens.maps):
        alone = load_model_dir(member_root(root, k))
        assert isinstance(qmap, QuantileMap) and qmap == quantile_map(alone)
    assert ens.maps[0].calibration is None
    assert ens.maps[1].calibration is not None
    n_q = len(loaded.config.model.quantiles)
    assert ens.maps[1].calibration.offsets == ((0.01,) * n_q, (0.02,) * n_q)
    assert ens.maps[1].calibration.windows == 40

    expected = []
    for k in range(2):
        weights = member_root(root, k) / "checkpoints" / f"tft_final_epoch{2 + k}.safetensors"
        expected.append(
            {"member": f"members/{k}", "weights": weights.name, **ckpt.load_sidecar(weights)}
        )
    assert loaded.sidecar == {"ensemble": expected}
    assert [s["epoch"] for s in loaded.sidecar["ensemble"]] == [2, 3]


def test_load_ensemble_dir_puts_every_member_on_the_device(tmp_path: Path) -> None:
    root, _ = _ensemble(tmp_path)
    for device in ("meta", __import__("torch").device("meta")):
        ens = load_ensemble_dir(root, device).model
        assert {p.device.type for p in ens.parameters()} == {"meta"}
    ens = load_ensemble_dir(str(root)).model  # type: ignore[arg-type]
    assert {p.device.type for p in ens.parameters()} == {"cpu"}


def test_load_ensemble_dir_without_instruments_has_none(tmp_path: Path) -> None:
    root, _ = _ensemble(tmp_path, n=3)
    (root / "instruments.json").unlink()
    loaded = load_ensemble_dir(root)
    assert loaded.instruments is None
    assert [s["member"] for s in loaded.sidecar["ensemble"]] == [
        "members/0",
        "members/1",
        "members/2",
    ]
    assert len(loaded.model.members) == 3 and len(loaded.model.maps) == 3


def test_load_ensemble_dir_refuses_a_directory_without_a_plan(tmp_path: Path) -> None:
    root, _ = _ensemble(tmp_path)
    (root / "ensemble.json").unlink()
    expected = f"{root / 'ensemble.json'}: ensemble.json is missing"
    with pytest.raises(ModelDirError, match=_exact(expected)):
        load_ensemble_dir(root)


@pytest.mark.parametrize(
    "info",
    [None, {"stop_reason": "running"}, {"symbols": ["ES"]}, ["finished"], "finished"],
)
def test_load_ensemble_dir_refuses_an_unfinished_ensemble(tmp_path: Path, info: Any) -> None:
    root, _ = _ensemble(tmp_path)
    if info is None:
        (root / "run.json").unlink()
    else:
        (root / "run.json").write_text(json.dumps(info))
    expected = (
        f"{root}: the ensemble's training has not finished; "
        f"continue it with foxhunt train --resume {root}"
    )
    with pytest.raises(ModelDirError, match=_exact(expected)):
        load_ensemble_dir(root)


def test_load_ensemble_dir_names_a_corrupt_run_json(tmp_path: Path) -> None:
    root, _ = _ensemble(tmp_path)
    (root / "run.json").write_text('{"stop_reason": "fini')
    expected = f"{root / 'run.json'}: run.json is corrupt (not valid JSON)"
    with pytest.raises(ModelDirError, match=_exact(expected)):
        load_ensemble_dir(root)


def test_load_ensemble_dir_reads_its_own_config_and_features(tmp_path: Path) -> None:
    root, _ = _ensemble(tmp_path)
    (root / "features.json").unlink()
    expected = f"{root / 'features.json'}: features.json is missing"
    with pytest.raises(ModelDirError, match=_exact(expected)):
        load_ensemble_dir(root)
    (root / "config.json").unlink()
    expected = f"{root}: not a run directory (config.json is missing)"
    with pytest.raises(ModelDirError, match=_exact(expected)):
        load_ensemble_dir(root)


def test_load_ensemble_dir_names_a_missing_member(tmp_path: Path) -> None:
    import shutil

    root, _ = _ensemble(tmp_path)
    shutil.rmtree(member_root(root, 1))
    expected = f"{member_root(root, 1)}: no such run directory"
    with pytest.raises(ModelDirError, match=_exact(expected)):
        load_ensemble_dir(root)


def _differ(root: Path, k: int) -> str:
    return (
        f"{member_root(root, k)}: this member's model, features or data differ from the "
        f"ensemble's ({root / 'config.json'}, {root / 'features.json'})"
    )


def test_load_ensemble_dir_refuses_a_member_whose_model_differs(tmp_path: Path) -> None:
    root, _ = _ensemble(tmp_path)
    _cfg().replace(model={"dropout": 0.3}).save(root / "config.json")
    with pytest.raises(ModelDirError, match=_exact(_differ(root, 0))):
        load_ensemble_dir(root)


@pytest.mark.parametrize(
    "features", [{"fingerprint": "other"}, {"mean": 0.5}], ids=["data", "scaler"]
)
def test_load_ensemble_dir_refuses_members_whose_features_or_data_differ(
    tmp_path: Path, features: dict[str, Any]
) -> None:
    from foxhunt import runtime

    root, _ = _ensemble(tmp_path)
    runtime.atomic_write_json(root / "features.json", _features(**features))
    with pytest.raises(ModelDirError, match=_exact(_differ(root, 0))):
        load_ensemble_dir(root)


def test_load_ensemble_dir_checks_every_member_not_only_the_first(tmp_path: Path) -> None:
    from foxhunt import runtime

    root, _ = _ensemble(tmp_path, n=3)
    runtime.atomic_write_json(member_root(root, 2) / "features.json", _features("other"))
    with pytest.raises(ModelDirError, match=_exact(_differ(root, 2))):
        load_ensemble_dir(root)


def test_load_ensemble_dir_loads_members_where_the_plan_says(tmp_path: Path) -> None:
    import shutil

    import torch

    root, states = _ensemble(tmp_path)
    shutil.move(member_root(root, 0), root / "first")
    (root / "ensemble.json").write_text(
        json.dumps({"format": 1, "members": ["members/1", "first"], "seeds": [8, 7]})
    )
    loaded = load_ensemble_dir(root)
    assert [s["member"] for s in loaded.sidecar["ensemble"]] == ["members/1", "first"]
    got = [m.state_dict()["output.weight"] for m in loaded.model.members]
    assert torch.equal(got[0], states[1]["output.weight"])
    assert torch.equal(got[1], states[0]["output.weight"])
    assert loaded.model.maps[0].calibration is not None and loaded.model.maps[1].calibration is None
