"""Tests written against the surviving mutants of data/scale/target.py (``make mutate
MUTATE_MODULES=target_scale``; docs/testing.md, "Mutation testing")."""

from __future__ import annotations
