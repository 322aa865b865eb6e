"""The package's version: a bottom module, so that the rooms that stamp it into what they write
(run directories, feature stores, quantised models) never import the package top."""

from __future__ import annotations

__version__ = "0.1.0"
