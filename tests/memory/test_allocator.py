from __future__ import annotations

import sys

import pytest

from foxhunt.memory.allocator import tune_cpu_allocator


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_tune_cpu_allocator_applies_on_glibc() -> None:
    assert tune_cpu_allocator() is True
