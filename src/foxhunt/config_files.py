"""Config files: TOML or JSON (by extension), full or partial.

A config file has up to four top-level keys: ``preset`` (the base) and the tables ``model``,
``data`` and ``train``, whose keys are the fields of :class:`~foxhunt.config.TFTConfig`,
:class:`~foxhunt.config.DataConfig` and :class:`~foxhunt.config.TrainConfig`. The file overrides
its base field by field, so a partial file changes only what it sets:

.. code-block:: toml

    preset = "demo"

    [train]
    lr = 0.001
    epochs = 2

The base is the preset the file names; without one, the ``--preset`` given on the command line;
without either, ``tft-225``. A file naming one preset and ``--preset`` naming another is refused.
``custom`` (a config built without a preset) means the dataclass defaults.

A run directory's ``config.json`` is read as the run stored it
(:meth:`~foxhunt.config.RunConfig.from_dict`): a field added since the run was saved takes the
dataclass default, which reproduces how that run was built, not the preset's value today
(presets may change their recipe; a run's checkpoint must still load). That holds for the file
copied out of its run too: a JSON file that sets every field of :data:`FIRST_FIELDS` (what every
config foxhunt has stored has set; no hand-written partial config does) is a stored config and
is read the same way wherever it lies, with one warning naming the fields where today's preset
would differ. Any full config loads to exactly the config it was written from. Unknown keys, values of the
wrong type and values out of range are one-line :class:`~foxhunt.config.ConfigError` messages
naming the file and the key. TOML has no null: a field left out takes the base's value, so
:func:`config_text` writes unset (None) fields as comments.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import tomllib
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from foxhunt.config import PRESETS, ConfigError, DataConfig, RunConfig, TFTConfig, TrainConfig

log = logging.getLogger(__name__)

ConfigFormat = Literal["toml", "json"]

SECTIONS: dict[str, type] = {"model": TFTConfig, "data": DataConfig, "train": TrainConfig}
"""Top-level tables of a config file and the dataclass each one overrides."""

FIRST_FIELDS: dict[str, frozenset[str]] = {
    "model": frozenset(
        "n_static n_historical n_known hidden n_heads lstm_layers encoder_length horizon "
        "quantiles dropout vsn_mode variable_width vsn_chunk".split()
    ),
    "data": frozenset("val_fraction test_fraction embargo stride".split()),
    "train": frozenset(
        "batch_size micro_batch_size validation_batch_size epochs max_steps lr weight_decay "
        "warmup_steps grad_clip precision checkpointing patience seed device num_threads "
        "log_every".split()
    ),
}
"""The fields of foxhunt's first config (none removed since): every ``config.json`` a run has
stored sets them all, so a JSON file that does is a stored config (see the module docstring)."""

DEFAULT_PRESET = "tft-225"
"""The base of a file that names no preset when ``--preset`` is not given either."""


def config_format(path: Path) -> ConfigFormat:
    """``toml`` or ``json`` from the file's extension.

    Raises:
        ConfigError: Any other extension.
    """
    suffix = Path(path).suffix.lower()
    if suffix in (".toml", ".json"):
        return "toml" if suffix == ".toml" else "json"
    raise ConfigError(
        f"{path}: unknown config format {suffix or '(no extension)'!r}; use .toml or .json"
    )


def read_config_file(path: Path, preset_name: str | None = None) -> RunConfig:
    """Read a TOML or JSON config file over its base preset.

    Args:
        path: The file (``.toml`` or ``.json``).
        preset_name: ``--preset`` from the command line, or None when it was not given.

    Returns:
        The resolved config: the base with every field the file sets replaced.

    Raises:
        ConfigError: Missing or unreadable file, bad syntax, unknown key, wrong type, value out
            of range, unknown preset, or a preset that contradicts ``preset_name``; one line
            naming the file (and the key).
    """
    raw = _parse(Path(path))
    _check_keys(raw, path)
    name = _base_name(raw.get("preset"), preset_name, path)
    stored = is_run_config(path) or is_stored_config(raw, path)
    try:
        cfg = RunConfig.from_dict({**raw, "preset": name}, over_preset=not stored)
        if stored and not is_run_config(path):
            _warn_if_preset_differs(
                cfg, RunConfig.from_dict({**raw, "preset": name}, over_preset=True), path
            )
        return cfg
    except ConfigError as e:
        raise ConfigError(f"{path}: {str(e).removeprefix('invalid config: ')}") from e


def is_stored_config(raw: dict[str, Any], path: Path) -> bool:
    """Whether ``raw`` (read from ``path``) is a config a run stored, wherever the file lies:
    JSON setting every field of :data:`FIRST_FIELDS`."""
    return config_format(path) == "json" and all(
        isinstance(raw.get(section), dict) and fields <= raw[section].keys()
        for section, fields in FIRST_FIELDS.items()
    )


def _warn_if_preset_differs(stored: RunConfig, over_preset: RunConfig, path: Path) -> None:
    """One warning naming the fields a stored config leaves out whose preset value today
    differs from the default the run was built with."""
    a, b = stored.to_dict(), over_preset.to_dict()
    diff = [
        f"{section}.{k} = {a[section][k]!r} (preset {stored.preset}: {b[section][k]!r})"
        for section in SECTIONS
        for k in a[section]
        if a[section][k] != b[section][k]
    ]
    if diff:
        log.warning(
            "%s: read as the run stored it (a full config from an older foxhunt): the fields it "
            "lacks take the defaults its run was built with: %s",
            path,
            ", ".join(diff),
        )


def is_run_config(path: Path) -> bool:
    """Whether ``path`` is the ``config.json`` of a run directory (``run.json`` beside it): such
    a file is read as the run stored it, not over the preset (see the module docstring)."""
    path = Path(path)
    return path.name == "config.json" and (path.parent / "run.json").is_file()


def config_text(cfg: RunConfig, fmt: ConfigFormat = "toml") -> str:
    """The full config as TOML or JSON text that :func:`read_config_file` reads back exactly."""
    d = cfg.to_dict()
    if fmt == "json":
        return json.dumps(d, indent=2) + "\n"
    import tomli_w

    lines = [f"preset = {json.dumps(d['preset'])}"]
    for section in SECTIONS:
        values = d[section]
        unset = [k for k, v in values.items() if v is None]
        lines += ["", f"[{section}]"]
        lines += [f"# {k}: unset (None; TOML has no null)" for k in unset]
        body = tomli_w.dumps({k: v for k, v in values.items() if v is not None})
        lines += body.rstrip("\n").splitlines()
    return "\n".join(lines) + "\n"


def write_config_file(cfg: RunConfig, path: Path) -> None:
    """Write ``cfg`` in full, TOML or JSON by ``path``'s extension, atomically."""
    from foxhunt.runtime import atomic_write_text  # runtime imports torch: only when writing

    atomic_write_text(Path(path), config_text(cfg, config_format(path)))


def _parse(path: Path) -> dict[str, Any]:
    fmt = config_format(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read config file ({e})") from None
    try:
        raw = tomllib.loads(text) if fmt == "toml" else json.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML ({e})") from None
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a config file must be a table (JSON object) at the top")
    return raw


def _check_keys(raw: dict[str, Any], path: Path) -> None:
    """Every key known, every section a table, every value of its field's type."""
    for key, values in raw.items():
        if key == "preset":
            if not isinstance(values, str):
                raise ConfigError(f"{path}: preset must be a string, got {values!r}")
            continue
        if key not in SECTIONS:
            known = ", ".join(["preset", *SECTIONS])
            raise ConfigError(f"{path}: unknown key {key!r} (known top-level keys: {known})")
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: {key} must be a table of fields, got {values!r}")
        hints = get_type_hints(SECTIONS[key])
        fields = [f.name for f in dataclasses.fields(SECTIONS[key])]
        for name, value in values.items():
            if name not in fields:
                raise ConfigError(
                    f"{path}: unknown key '{key}.{name}' (known in [{key}]: {', '.join(fields)})"
                )
            if not _fits(value, hints[name]):
                raise ConfigError(
                    f"{path}: {key}.{name} must be {_describe(hints[name])}, got {value!r}"
                )


def _base_name(in_file: str | None, on_command_line: str | None, path: Path) -> str:
    def canonical(name: str) -> str:
        return name.replace("_", "-").lower()

    if in_file and on_command_line and canonical(in_file) != canonical(on_command_line):
        raise ConfigError(
            f"{path}: the file's preset {in_file!r} contradicts --preset {on_command_line}; "
            "drop one of them"
        )
    name = in_file or on_command_line or DEFAULT_PRESET
    if canonical(name) not in PRESETS and name != "custom":
        choices = ", ".join([*PRESETS, "custom"])
        raise ConfigError(f"{path}: unknown preset {name!r}; choose from {choices}")
    return name


def _fits(value: Any, hint: Any) -> bool:
    """Whether ``value`` (as TOML or JSON reads it) has the type ``hint`` names."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return any(_fits(value, h) for h in get_args(hint))
    if origin is Literal:
        return value in get_args(hint)
    if origin is tuple:
        item = get_args(hint)[0]
        return isinstance(value, list | tuple) and all(_fits(x, item) for x in value)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    return True  # any other kind: the dataclass validates it


def _describe(hint: Any) -> str:
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return " or ".join(_describe(h) for h in get_args(hint))
    if origin is Literal:
        return "one of " + ", ".join(repr(v) for v in get_args(hint))
    if origin is tuple:
        return f"a list of {_describe(get_args(hint)[0])}"
    if hint is type(None):
        return "null (JSON only)"
    return {bool: "true or false", int: "an integer", float: "a number", str: "a string"}.get(
        hint, str(hint)
    )
