"""Errors that mean "the user's input is wrong": the CLI prints their message on one line and
exits 2, without a traceback."""

from __future__ import annotations


class InputError(Exception):
    """Bad user input (file, column, row/time, value). The message is shown as is, one line."""


class DataError(InputError):
    """A bars or features file is missing, unreadable or fails validation."""


class ModelDirError(InputError):
    """A model/run directory is missing, corrupt, or does not match the data given."""


class ConfigError(ValueError):
    """A configuration value is out of range or inconsistent (:mod:`foxhunt.config`)."""


def require_config(cond: bool, message: str) -> None:
    """Raise :class:`ConfigError` with ``message`` unless ``cond``."""
    if not cond:
        raise ConfigError(message)
