"""Config files, message by message: every kind of field's type error word for word, list items
checked one by one, the preset key anywhere in the file, the base preset's spellings, unreadable
files, the text ``config_text`` writes, and a JSON file holding exactly the first config's
fields read as stored (with its warning naming the file)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from foxhunt.config import RunConfig, demo, tft_225
from foxhunt.config_files import FIRST_FIELDS, config_text, read_config_file
from foxhunt.errors import ConfigError


def _refused(path: Path, text: str) -> str:
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        read_config_file(path)
    return str(caught.value).removeprefix(f"{path}: ")


@pytest.mark.parametrize(
    ("section", "key", "value", "kind"),
    [
        ("model", "hidden", "x", "an integer"),
        ("train", "lr", "x", "a number"),
        ("train", "checkpointing", 1, "true or false"),
        ("train", "device", 5, "a string"),
        ("train", "max_steps", "x", "an integer or null (JSON only)"),
        ("data", "tz", 5, "a string or null (JSON only)"),
        ("data", "embargo", 1.5, "an integer or null (JSON only)"),
        ("train", "max_minutes", "x", "a number or null (JSON only)"),
        ("train", "precision", "fp8", "one of 'auto', 'fp32', 'bf16', 'fp16'"),
        ("model", "vsn_mode", "wide", "one of 'fused', 'faithful'"),
        ("model", "quantiles", ["a"], "a list of a number"),
        ("model", "quantiles", [0.1, "x"], "a list of a number"),
        ("model", "quantiles", 0.5, "a list of a number"),
        ("data", "observed_cols", [1], "a list of a string"),
    ],
)
def test_each_kind_of_field_names_its_type(
    tmp_path: Path, section: str, key: str, value: object, kind: str
) -> None:
    text = json.dumps({section: {key: value}})
    assert _refused(tmp_path / "c.json", text) == (f"{section}.{key} must be {kind}, got {value!r}")


def test_a_value_of_the_right_type_passes_the_type_check(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps(
            {
                "preset": "demo",
                "model": {"quantiles": [0.1, 0.5, 0.9]},
                "data": {"tz": None, "observed_cols": ["spread"], "embargo": 3},
                "train": {"max_steps": None, "max_minutes": 2, "device": "cpu"},
            }
        )
    )
    got = read_config_file(path)
    assert got.model.quantiles == (0.1, 0.5, 0.9) and got.data.observed_cols == ("spread",)
    assert got.data.embargo == 3 and got.train.max_minutes == 2 and got.train.max_steps is None


def test_top_level_keys_word_for_word(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    assert _refused(path, "preset = 3\n") == "preset must be a string, got 3"
    # the preset first does not end the check of the keys after it
    assert _refused(path, 'preset = "demo"\nmodle = 1\n') == (
        "unknown key 'modle' (known top-level keys: preset, model, data, train)"
    )
    message = _refused(path, 'preset = "demo"\n[train]\nlrr = 1\n')
    assert message.startswith("unknown key 'train.lrr' (known in [train]: batch_size, ")
    assert message.endswith(", cpu_allocator, log_every)")


def test_the_base_preset_in_its_spellings(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('preset = "tft_225"\n')
    assert read_config_file(path, "TFT-225") == tft_225()  # the same preset, spelt two ways
    path.write_text('preset = "demo"\n')
    with pytest.raises(ConfigError) as caught:
        read_config_file(path, "fast")
    assert str(caught.value) == (
        f"{path}: the file's preset 'demo' contradicts --preset fast; drop one of them"
    )
    assert _refused(path, 'preset = "big"\n') == (
        "unknown preset 'big'; choose from demo, tft-225, fast, custom"
    )
    path.write_text('preset = "custom"\n[model]\nhidden = 32\nn_heads = 4\n')
    custom = read_config_file(path)
    assert custom.preset == "custom" and custom.model.hidden == 32
    assert custom.train == RunConfig().train  # the dataclass defaults


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    missing = tmp_path / "none.toml"
    with pytest.raises(ConfigError) as caught:
        read_config_file(missing)
    assert str(caught.value) == f"{missing}: no such config file"
    folder = tmp_path / "folder.toml"
    folder.mkdir()
    with pytest.raises(ConfigError) as caught:
        read_config_file(folder)
    assert str(caught.value).startswith(f"{folder}: cannot read config file ([Errno 21] ")
    plain = tmp_path / "config"
    with pytest.raises(ConfigError) as caught:
        read_config_file(plain)
    assert str(caught.value) == (
        f"{plain}: unknown config format '(no extension)'; use .toml or .json"
    )


def test_config_text_toml_by_default_json_indented_two(tmp_path: Path) -> None:
    cfg = demo().replace(train={"max_steps": None, "seed": 3})
    toml = config_text(cfg)
    assert toml.startswith('preset = "demo"\n\n[model]\n')
    assert "# max_steps: unset (None; TOML has no null)" in toml
    assert "# seed:" not in toml and "\nseed = 3\n" in toml
    assert "\n\n\n" not in toml and toml.endswith("\n") and not toml.endswith("\n\n")
    assert config_text(cfg, "json") == json.dumps(cfg.to_dict(), indent=2) + "\n"
    path = tmp_path / "c.toml"
    path.write_text(toml)
    assert read_config_file(path) == cfg


def test_exactly_the_first_configs_fields_make_a_stored_config(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A JSON file with every field of the first config and no other is read as its run
    stored it: a newer field takes the dataclass default, not the preset's, and one warning
    names the file."""
    full = demo().to_dict()
    first = {s: {k: full[s][k] for k in FIRST_FIELDS[s]} for s in FIRST_FIELDS}
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"preset": "demo", **first}))
    with caplog.at_level(logging.WARNING, logger="foxhunt.config_files"):
        got = read_config_file(path)
    assert got.model.monotone_quantiles is False  # the default; demo today sets True
    (warning,) = [r.getMessage() for r in caplog.records]
    assert warning.startswith(f"{path}: read as the run stored it")
    assert "model.monotone_quantiles = False (preset demo: True)" in warning
    one_short = {**first, "train": {k: v for k, v in first["train"].items() if k != "seed"}}
    path.write_text(json.dumps({"preset": "demo", **one_short}))
    assert read_config_file(path).model.monotone_quantiles is True  # partial: over the preset
