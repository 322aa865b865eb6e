"""The run directory's refusals word for word, its instrument and read-flag overlays, and what
``clear`` and ``model_files`` name (``make mutate``'s map of ``artifacts.rundir``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foxhunt import __version__, runtime
from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.rundir import (
    ENSEMBLE_FILE,
    FEATURES_FORMAT,
    RunDir,
    features_record,
    load_model_dir,
    model_weights,
    read_config,
    read_features,
    read_instruments,
    trained_symbols,
    with_read_flags,
    with_user_instruments,
)
from foxhunt.data.features.table import feature_spec
from foxhunt.data.market.instruments import Instrument, instruments_to_dict
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.errors import ModelDirError

from .test_rundir import _model_dir

ES = Instrument("ES", 0.25, 50.0, "USD", "equity_index", "cme_equity")


def _refused(path: Path) -> str:
    with pytest.raises(ModelDirError) as e:
        load_model_dir(path)
    return str(e.value)


def test_features_record_names_its_fields() -> None:
    spec = feature_spec(2)
    scaler = ScalerParams(spec.inputs, (0.0,) * len(spec.inputs), (1.0,) * len(spec.inputs), (1.0,))
    rec = features_record(spec, scaler, "fp")
    assert rec["format"] == FEATURES_FORMAT and rec["fingerprint"] == "fp"
    assert rec["foxhunt_version"] == __version__
    assert set(rec) == {"format", "foxhunt_version", "fingerprint", "spec", "scaler"}


def test_a_seed_ensemble_names_a_member_to_give_instead(tmp_path: Path) -> None:
    run, _ = _model_dir(tmp_path)
    (run.root / ENSEMBLE_FILE).write_text("{}")
    assert _refused(run.root) == (
        f"{run.root}: a seed ensemble (ensemble.json), which this command cannot take; "
        f"give it one member's run directory, e.g. {run.root / 'members' / '0'}"
    )


def test_no_such_directory_and_no_checkpoint(tmp_path: Path) -> None:
    assert _refused(tmp_path / "nope") == f"{tmp_path / 'nope'}: no such run directory"
    run, _ = _model_dir(tmp_path)
    for p in run.checkpoints.iterdir():
        p.unlink()
    with pytest.raises(ModelDirError) as e:
        model_weights(run)
    assert str(e.value) == f"{run.checkpoints}: no checkpoint (no epoch of training completed)"


def test_weights_missing_a_tensor_are_refused_naming_the_first_problem(tmp_path: Path) -> None:
    """strict loading: a weights file without one of the net's tensors does not load with the
    tensor left at its random start."""
    run, model = _model_dir(tmp_path)
    state = model.state_dict()
    dropped = next(iter(state))
    state.pop(dropped)
    final = ckpt.final_weights(run.checkpoints)
    ckpt.save_weights(final, state, {"epoch": 1})
    message = _refused(run.root)
    assert message.startswith(f"{final}: weights do not fit config.json (Error(s) in loading")
    assert "\n" not in message and message.endswith(")")


def test_feature_file_refusals_word_for_word(tmp_path: Path) -> None:
    run, _ = _model_dir(tmp_path)
    cfg = read_config(run)
    good = json.loads(run.features.read_text())
    run.features.write_text(json.dumps({**good, "format": 99}))
    with pytest.raises(ModelDirError) as e:
        read_features(run, cfg)
    assert str(e.value) == (
        f"{run.features}: format 99 is not {FEATURES_FORMAT} (written by another foxhunt version?)"
    )
    run.features.write_text("[1, 2]")  # JSON, but not a record
    with pytest.raises(ModelDirError) as e:
        read_features(run, cfg)
    assert str(e.value).startswith(f"{run.features}: format None is not {FEATURES_FORMAT}")
    run.features.write_text(json.dumps({**good, "scaler": {"columns": 3}}))
    with pytest.raises(ModelDirError) as e:
        read_features(run, cfg)
    assert str(e.value).startswith(f"{run.features}: unreadable feature spec or scaler (")
    run.features.write_text(json.dumps({k: v for k, v in good.items() if k != "fingerprint"}))
    assert read_features(run, cfg)[2] == ""


def test_feature_names_that_differ_are_named_per_group(tmp_path: Path) -> None:
    run, _ = _model_dir(tmp_path)
    cfg = read_config(run)
    good = json.loads(run.features.read_text())
    spec = good["spec"]
    hist = list(spec["historical"])
    renamed = {**spec, "historical": ["obs__gone_1", "obs__gone_2", *hist[2:]]}
    run.features.write_text(json.dumps({**good, "spec": renamed, "foxhunt_version": "0.0.1"}))
    with pytest.raises(ModelDirError) as e:
        read_features(run, cfg)
    assert str(e.value) == (
        f"{run.features}: the model's historical features do not match what foxhunt "
        f"{__version__} computes (model-only: ['obs__gone_1', 'obs__gone_2'], "
        f"new: {hist[:2]!r}, order differs: False); model written by foxhunt 0.0.1"
    )
    many = {**spec, "historical": [f"obs__gone_{i}" for i in range(5)] + hist[5:]}
    unversioned = {k: v for k, v in good.items() if k != "foxhunt_version"}
    run.features.write_text(json.dumps({**unversioned, "spec": many}))
    with pytest.raises(ModelDirError) as e:
        read_features(run, cfg)
    assert "(model-only: ['obs__gone_0', 'obs__gone_1', 'obs__gone_2'], new: " in str(e.value)
    assert f"new: {hist[:3]!r}, order differs: False); model written by foxhunt None" in str(
        e.value
    )
    longer = {**spec, "historical": [*hist, "obs__model_only"]}  # one more, none new
    run.features.write_text(json.dumps({**good, "spec": longer}))
    with pytest.raises(ModelDirError) as e:
        read_features(run, cfg)
    assert "(model-only: ['obs__model_only'], new: none, order differs: False)" in str(e.value)
    swapped = {**spec, "historical": [hist[1], hist[0], *hist[2:]]}
    run.features.write_text(json.dumps({**good, "spec": swapped}))
    with pytest.raises(ModelDirError) as e:
        read_features(run, cfg)
    assert "(model-only: none, new: none, order differs: True)" in str(e.value)


def test_the_feature_spec_follows_the_runs_data_config(tmp_path: Path) -> None:
    """A run trained on the minimal feature set is checked against that set (not the default)."""
    run, _ = _model_dir(tmp_path)
    cfg = read_config(run).replace(data={"features": "minimal"})
    spec = feature_spec(cfg.model.horizon, cfg.data)
    cfg = cfg.replace(model={"n_historical": len(spec.historical)})
    scaler = ScalerParams(
        spec.inputs, (0.0,) * len(spec.inputs), (1.0,) * len(spec.inputs), (1e-3, 2e-3)
    )
    runtime.atomic_write_json(run.features, features_record(spec, scaler, "x"))
    assert read_features(run, cfg)[0] == spec


def test_instruments_stored_with_the_run(tmp_path: Path) -> None:
    run, _ = _model_dir(tmp_path)
    assert read_instruments(run) is None and load_model_dir(run.root).instruments is None
    runtime.atomic_write_json(run.instruments, instruments_to_dict({"ES": ES}))
    assert read_instruments(run) == {"ES": ES}
    assert load_model_dir(run.root).instruments == {"ES": ES}
    run.instruments.write_text("{")
    with pytest.raises(ModelDirError) as e:
        read_instruments(run)
    assert str(e.value) == f"{run.instruments}: instruments.json is corrupt (not valid JSON)"
    run.instruments.write_text(json.dumps({"ES": {"tick_size": 0.25}}))
    with pytest.raises(ModelDirError) as e:
        read_instruments(run)
    assert str(e.value).startswith(f"{run.instruments}: instrument 'ES': ")


def test_trained_symbols_name_the_file_they_cannot_read(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    run.run_info.write_text("{")
    with pytest.raises(ModelDirError) as e:
        trained_symbols(run)
    assert str(e.value) == f"{run.run_info}: run.json is corrupt (not valid JSON)"
    run.run_info.write_text(json.dumps(["ES"]))  # not a record: the instruments decide
    runtime.atomic_write_json(run.instruments, {"NQ": {}})
    assert trained_symbols(run) == ["NQ"]
    run.run_info.write_text(json.dumps({"symbols": []}))  # empty: the instruments decide
    assert trained_symbols(run) == ["NQ"]
    run.run_info.write_text(json.dumps({"symbols": "ES"}))  # not a list
    assert trained_symbols(run) == ["NQ"]
    run.instruments.write_text(json.dumps([]))
    assert trained_symbols(run) is None
    run.instruments.write_text(json.dumps(["ES"]))  # not a table of instruments
    assert trained_symbols(run) is None
    run.instruments.write_text("{")
    with pytest.raises(ModelDirError) as e:
        trained_symbols(run)
    assert str(e.value) == f"{run.instruments}: instruments.json is corrupt (not valid JSON)"


def test_the_users_instruments_add_to_the_stored_ones(tmp_path: Path) -> None:
    run, _ = _model_dir(tmp_path)
    table = tmp_path / "instruments.toml"
    table.write_text(
        "[ES]\ntick_size = 1.0\npoint_value = 5\nasset_class = 'equity_index'\n"
        "calendar = 'cme_equity'\n"
        "[NQ]\ntick_size = 0.25\npoint_value = 20\ncurrency = 'USD'\n"
        "asset_class = 'equity_index'\ncalendar = 'cme_equity'\n"
    )
    bare = load_model_dir(run.root)
    assert with_user_instruments(bare, table) is bare  # a run without a table keeps none
    runtime.atomic_write_json(run.instruments, instruments_to_dict({"ES": ES}))
    loaded = load_model_dir(run.root)
    assert with_user_instruments(loaded, None) is loaded
    both = with_user_instruments(loaded, table)
    assert both.instruments is not None and set(both.instruments) == {"ES", "NQ"}
    assert both.instruments["ES"] == ES  # the stored one wins over the user's tick 1.0
    assert both.instruments["NQ"].point_value == 20.0
    assert both.model is loaded.model and both.config == loaded.config


def test_read_flags_replace_how_files_are_read_only(tmp_path: Path) -> None:
    run, _ = _model_dir(tmp_path)
    loaded = load_model_dir(run.root)
    assert with_read_flags(loaded, None) is loaded and with_read_flags(loaded, {}) is loaded
    flagged = with_read_flags(loaded, {"tz": "America/Chicago", "symbol": "ES"})
    assert (flagged.config.data.tz, flagged.config.data.symbol) == ("America/Chicago", "ES")
    assert flagged.config.model == loaded.config.model and flagged.model is loaded.model
    assert loaded.config.data.tz is None  # the loaded run is not changed


def test_clear_and_model_files_include_the_quantized_model(tmp_path: Path) -> None:
    run, _ = _model_dir(tmp_path)
    (run.root / "quantization.json").write_text("{}")
    assert run.root / "quantization.json" in run.model_files()
    (run.root / "members" / "0").mkdir(parents=True)
    (run.root / "members" / "0" / "config.json").write_text("{}")
    run.clear()
    assert sorted(p.name for p in run.root.iterdir()) == []
    run.clear()  # nothing left to clear: no error
