"""What a budgeted CPU run plans with once its bars are read: the modules it will import later
are loaded first and the process's RSS is taken (memory/process.py:resident_before_training)."""

from __future__ import annotations

import subprocess
import sys

import pytest

CODE = """
import sys
import foxhunt.train.run
from foxhunt.memory.counters import rss_bytes
from foxhunt.memory.process import IMPORT_BASELINE_BYTES, RUN_IMPORTS, resident_before_training
before = rss_bytes()
assert not any(m in sys.modules for m in RUN_IMPORTS if m != "pandas"), "loaded too early"
got = resident_before_training(10 * 2**20)
assert all(m in sys.modules for m in RUN_IMPORTS), [m for m in RUN_IMPORTS if m not in sys.modules]
after = rss_bytes()
# RSS may move by a few pages between the function's reading and this one
assert abs(got - max(IMPORT_BASELINE_BYTES, after - 10 * 2**20)) <= 2**20, (got, after)
# the later imports are real memory: pandas, pandas_market_calendars, arch weigh ~160 MiB here
assert after - before > 80 * 2**20, (before, after)
print(before, after)
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_resident_before_training_loads_the_later_imports_and_measures() -> None:
    r = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120,
                       check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]


CHILD_PREPARED = """
import sys
import foxhunt.train.run
from foxhunt.memory.counters import rss_bytes
from foxhunt.memory.process import IMPORT_BASELINE_BYTES, RUN_IMPORTS, resident_before_training
got = resident_before_training(10 * 2**20, prepared_here=False)
after = rss_bytes()
assert not any(m in sys.modules for m in RUN_IMPORTS if m != "pandas"), "imported"
# the windows are mapped, not read: nothing of them is in RSS to take off
assert abs(got - max(IMPORT_BASELINE_BYTES, after)) <= 2**20, (got, after)  # a few pages
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_process_whose_data_a_child_prepared_imports_nothing_more() -> None:
    r = subprocess.run([sys.executable, "-c", CHILD_PREPARED], capture_output=True, text=True,
                       timeout=120, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
