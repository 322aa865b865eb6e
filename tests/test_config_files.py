from __future__ import annotations

import json

import pytest

from foxhunt.cli import build_parser, main
from foxhunt.config import ConfigError, RunConfig, demo, tft_225
from foxhunt.config_files import read_config_file, write_config_file

PARTIAL_TOML = """\
preset = "demo"

[train]
lr = 0.0005
epochs = 4

[model]
dropout = 0.2
"""


def test_toml_partial_builds_its_preset_with_only_its_fields_changed(tmp_path) -> None:
    path = tmp_path / "partial.toml"
    path.write_text(PARTIAL_TOML)
    cfg = read_config_file(path)
    assert cfg == demo().replace(train={"lr": 0.0005, "epochs": 4}, model={"dropout": 0.2})
    assert cfg.model.hidden == 32 and cfg.data.stride == 2 and cfg.preset == "demo"


def test_the_issue_case_partial_json_builds_the_demo_model(tmp_path) -> None:
    path = tmp_path / "partial.json"
    path.write_text(json.dumps({"preset": "demo", "train": {"batch_size": 16}}))
    cfg = read_config_file(path)
    assert cfg.model == demo().model  # was TFT-225's model before
    assert cfg == demo().replace(train={"batch_size": 16})
    # from_dict too: a missing section is the named preset's
    assert (
        RunConfig.from_dict({"preset": "demo", "train": {"batch_size": 16}}).model == demo().model
    )


@pytest.mark.parametrize(
    "cfg",
    [
        demo(),
        tft_225(),
        demo().replace(
            train={"micro_batch_size": 16, "max_steps": 7, "num_threads": 2, "lr": 1e-4},
            data={"embargo": 50, "instruments": "/x/table.toml"},
            model={"quantiles": (0.1, 0.5, 0.9)},
        ),
    ],
)
@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_full_configs_round_trip_exactly(tmp_path, cfg, suffix) -> None:
    path = tmp_path / f"config{suffix}"
    write_config_file(cfg, path)
    assert read_config_file(path) == cfg
    # and what a run directory stores (RunConfig.save) reads back too
    cfg.save(tmp_path / "config.json")
    assert read_config_file(tmp_path / "config.json") == cfg
    assert RunConfig.load(tmp_path / "config.json") == cfg


@pytest.mark.subprocess
def test_a_stored_run_config_missing_a_newer_field_takes_the_field_default(tmp_path) -> None:
    # demo's stride (2) differs from DataConfig's default (1): a run saved before `stride`
    # existed was built with the default, and must load as it was built.
    d = demo().replace(train={"lr": 0.01}).to_dict()
    del d["data"]["stride"], d["train"]["log_every"]
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps(d))
    as_built = demo().replace(train={"lr": 0.01}, data={"stride": 1})
    assert RunConfig.load(run / "config.json") == as_built  # how run directories are loaded
    (run / "run.json").write_text("{}")  # a run directory's config.json: read as stored
    assert read_config_file(run / "config.json") == as_built
    # a file without a first-version field (stride) is no stored config: over its preset
    (tmp_path / "config.json").write_text(json.dumps(d))
    assert read_config_file(tmp_path / "config.json") == demo().replace(train={"lr": 0.01})


def test_the_base_without_a_preset_in_the_file(tmp_path) -> None:
    path = tmp_path / "p.toml"
    path.write_text("[train]\nlr = 0.01\n")
    assert read_config_file(path) == tft_225().replace(train={"lr": 0.01})
    assert read_config_file(path, "demo") == demo().replace(train={"lr": 0.01})
    path.write_text('preset = "demo"\n')
    assert read_config_file(path, "demo") == demo()
    with pytest.raises(ConfigError, match="contradicts --preset tft-225"):
        read_config_file(path, "tft-225")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.toml", "[train]\nlrr = 1\n", "unknown key 'train.lrr'"),
        ("a.toml", "[trian]\nlr = 1\n", "unknown key 'trian'"),
        ("a.toml", '[train]\nlr = "fast"\n', "train.lr must be a number"),
        ("a.toml", "[train]\nepochs = true\n", "train.epochs must be an integer"),
        ("a.toml", '[train]\nprecision = "fp8"\n', "train.precision must be one of"),
        ("a.toml", "train = 3\n", "train must be a table"),
        ("a.toml", 'preset = "dmeo"\n', "unknown preset 'dmeo'"),
        ("a.toml", "[model]\nhidden = 30\n", "divisible by n_heads"),
        ("a.toml", "[train\n", "not valid TOML"),
        ("a.json", "{", "not valid JSON"),
        ("a.json", "[1]", "must be a table"),
        ("a.yaml", "train: {}", "unknown config format '.yaml'"),
    ],
)
def test_bad_files_are_one_line_naming_the_file(tmp_path, name, text, message) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as e:
        read_config_file(path)
    assert str(e.value).startswith(f"{path}: ") and "\n" not in str(e.value)


@pytest.mark.subprocess
def test_cli_print_config_and_exit_code(tmp_path, capsys) -> None:
    path = tmp_path / "p.toml"
    path.write_text(PARTIAL_TOML)
    assert main(["train", "--config", str(path), "--seed", "3", "--print-config"]) == 0
    printed = tmp_path / "printed.toml"
    printed.write_text(capsys.readouterr().out)
    expected = read_config_file(path).replace(train={"seed": 3})
    assert read_config_file(printed) == expected
    assert main(["train", "--preset", "demo", "--print-config", "json"]) == 0
    assert RunConfig.from_dict(json.loads(capsys.readouterr().out)) == demo()
    run = tmp_path / "run"
    run.mkdir()
    demo().replace(train={"lr": 0.02}).save(run / "config.json")
    (run / "run.json").write_text("{}")
    assert main(["train", "--resume", str(run), "--lr", "9", "--print-config", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["train"]["lr"] == 0.02  # the run's own config
    path.write_text("[train]\nlrr = 1\n")
    assert main(["train", "--config", str(path), "--print-config"]) == 2
    err = capsys.readouterr().err
    assert err == f"foxhunt: error: {path}: unknown key 'train.lrr'" + err.split("'train.lrr'")[1]
    assert err.count("\n") == 1


@pytest.mark.subprocess
def test_train_help_shows_defaults_without_none() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    text = " ".join(sub.choices["train"].format_help().split())
    assert (
        "samples per optimizer step (default: the preset's: demo 64 · tft-225 32 · fast 256)"
        in text
    )
    assert "(default: tft-225)" in text and "(default: toml)" not in text
    assert "default: None" not in text and "default: False" not in text


def test_fields_of_the_first_config_still_exist() -> None:
    import dataclasses

    from foxhunt.config_files import FIRST_FIELDS, SECTIONS

    for section, fields in FIRST_FIELDS.items():
        assert fields <= {f.name for f in dataclasses.fields(SECTIONS[section])}


def test_an_old_run_config_copied_out_of_its_run_reads_as_inside_it(tmp_path, caplog) -> None:
    import logging

    # an old run's config.json: every first-version field, none of those added since where
    # demo today differs from the default the run was built with
    d = demo().replace(train={"lr": 0.01}).to_dict()
    newer = {"model": ["monotone_quantiles", "decoder_origin_inputs"], "data": ["target_scale"]}
    for section, names in newer.items():
        for name in names:
            del d[section][name]
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps(d))
    (run / "run.json").write_text("{}")
    inside = read_config_file(run / "config.json")
    assert inside == RunConfig.load(run / "config.json")  # how the run directory loads it
    assert not inside.model.monotone_quantiles and inside.data.target_scale == "global"
    assert demo().model.monotone_quantiles and demo().data.target_scale == "window"

    copied = tmp_path / "elsewhere" / "config.json"
    copied.parent.mkdir()
    copied.write_text(json.dumps(d))
    with caplog.at_level(logging.WARNING):
        assert read_config_file(copied) == inside
    (warned,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "model.monotone_quantiles = False (preset demo: True)" in warned
    assert "data.target_scale = 'global' (preset demo: 'window')" in warned
    # renamed too: it is the content that says it is a stored config, not the name
    renamed = tmp_path / "old_run.json"
    renamed.write_text(json.dumps(d))
    assert read_config_file(renamed) == inside
    # a partial file is still read over its preset
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"preset": "demo", "model": {"hidden": 16}}))
    assert read_config_file(partial) == demo().replace(model={"hidden": 16})
