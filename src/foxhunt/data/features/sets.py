"""Which observed features a run uses: ``default`` (all 210), ``minimal`` or a user's file.

A feature file lists one feature per line (blank lines and ``#`` comments are skipped):

* a built-in observed feature, with or without its ``obs__`` prefix (``ret1_lag0``,
  ``obs__rv_cc_20``): the same causal expression as in the default set;
* ``name = SQL expression`` over the bar columns (``open high low close volume`` and any extra
  numeric column of the bars), parsed with :func:`polars.sql_expr` (no Python is run, so a
  config from someone else stays data), evaluated per symbol and named ``obs__name``, e.g.
  ``log_range = LN(high / low)`` or ``mom = close - LAG(close, 5) OVER (ORDER BY ts)``.

Expressions must be causal: :func:`check_causal` evaluates each one on random bars twice, the
second time with the later bars changed, and refuses one whose earlier values move (``LEAD``,
a mean over the whole series, a reversed order ...). It is a test of the expression, not a
proof: an expression that only looks ahead on some data could pass it.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

from foxhunt.data.features.observed import observed_features, partition_of
from foxhunt.errors import DataError, InputError

MINIMAL: tuple[str, ...] = (
    *(f"obs__ret1_lag{k}" for k in range(5)),
    "obs__ret_5",
    "obs__ret_20",
    "obs__ret_60",
    "obs__rv_cc_20",
    "obs__rv_parkinson_20",
    "obs__rv_garman_klass_20",
    "obs__rsi_14",
    "obs__volume_z_20",
    "obs__vwap_dist_20",
    "obs__log_range_lag0",
    "obs__sma_dist_20",
)
"""The ``minimal`` set (16): one-bar returns at lags 0-4, returns over 5/20/60 bars, three
20-bar volatility estimators, RSI(14), volume z-score, VWAP distance, log range, SMA distance."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_PREFIX = "obs__"


def read_feature_file(path: Path) -> tuple[str, ...]:
    """The feature lines of ``--features FILE`` (comments and blank lines dropped), checked.

    Raises:
        InputError: unreadable file, no feature, or a bad line (named with its line number).
    """
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"--features {path}: cannot read ({e})") from e
    lines = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            selected_features((line,))
        except DataError as e:
            raise InputError(f"--features {path}, line {number}: {e}") from e
        lines.append(line)
    if not lines:
        raise InputError(f"--features {path}: lists no feature")
    return tuple(lines)


def feature_names(features: str, lines: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Observed feature names of a set (``default``, ``minimal``, ``custom`` with ``lines``)."""
    if features == "default":
        return tuple(_builtin())  # in model input order
    if features == "minimal":
        return MINIMAL
    return tuple(name for name, _ in selected_features(lines))


@functools.cache
def _builtin() -> dict[str, pl.Expr]:
    """The 210 built-in features, each over its partition: built once per process (about 4 ms
    each time otherwise, paid by every forecast that recomputes features). Expressions are
    immutable, so one dict serves every caller; callers never change it."""
    return {n: e.over(partition_of(n)) for n, e in observed_features()}


def selected_features(
    lines: tuple[str, ...], features: str = "custom"
) -> list[tuple[str, pl.Expr]]:
    """``(name, expression evaluated per symbol)`` for each feature of the set.

    Raises:
        DataError: an unknown built-in name, a bad name or SQL, a repeated name, or an
            expression that reads later bars.
    """
    builtin = _builtin()
    if features != "custom":
        return [(n, builtin[n]) for n in feature_names(features)]
    out: list[tuple[str, pl.Expr]] = []
    for line in lines:
        name, sep, sql = line.partition("=")
        name = name.strip()
        if not sep:
            full = name if name.startswith(_PREFIX) else _PREFIX + name
            if full not in builtin:
                raise DataError(f"unknown feature {name!r} (see docs/features.md for the names)")
            out.append((full, builtin[full]))
            continue
        if not _NAME.match(name):
            raise DataError(f"feature name {name!r} must be letters, digits and _")
        try:
            expr = pl.sql_expr(sql.strip())
        except Exception as e:  # polars raises several SQL error types
            raise DataError(f"feature {name!r}: not an SQL expression ({e})") from e
        _check_causal_once(name, sql.strip())
        out.append((_PREFIX + name, expr.over("symbol")))
    names = [n for n, _ in out]
    twice = [n for n in names if names.count(n) > 1]
    if twice:
        raise DataError(f"feature {twice[0]!r} is listed twice")
    return out


def expression_columns(lines: tuple[str, ...]) -> tuple[str, ...]:
    """Columns the SQL expressions of ``lines`` read (to be kept when the bars are read)."""
    cols: list[str] = []
    for line in lines:
        name, sep, sql = line.partition("=")
        if sep:
            for c in pl.sql_expr(sql.strip()).meta.root_names():
                if c not in cols and c not in ("ts", "symbol"):
                    cols.append(c)
    return tuple(cols)


PROBE_BARS = 4096
"""Random bars :func:`check_causal` evaluates an expression on: a ``LEAD`` of fewer bars, or a
window up to :data:`PROBE_CUT` long that also looks ahead, changes an earlier value there (64
bars, before session 29, let ``LEAD(close, 64)`` and any look-ahead inside a window longer
than 40 bars through)."""

PROBE_CUT = PROBE_BARS // 2 - 1
"""The last probe bar kept when the later ones are replaced."""


@functools.lru_cache(maxsize=1024)
def _check_causal_once(name: str, sql: str) -> None:
    """:func:`check_causal` of one line, once per process: every ``compute_features`` of a
    custom set selects its lines again (each forecast from bar tails does), and the probe
    costs milliseconds per line. A refusal raises and is not cached."""
    check_causal(name, pl.sql_expr(sql))


_NEGATIVE_SHIFT = re.compile(r"\.shift\(\[dyn int: -(\d+)\]\)")
"""A literal negative shift in an expression's printed plan: what ``LEAD(x, k)`` becomes."""
_PEER_TEST = re.compile(r'\(col\("([^"]+)"\)\) !=v \(col\("\1"\)\.shift\(\[dyn int: -1\]\)\)')
"""How polars prints the peer test of ``SUM(x) OVER (ORDER BY ts)`` (rows tied on ``ts``)."""


def check_causal(name: str, expr: pl.Expr, n: int = PROBE_BARS, cut: int = PROBE_CUT) -> None:
    """Refuse ``expr`` if its value at a bar depends on later bars.

    First a literal negative shift in its plan (``LEAD(x, k)``, whatever ``k``) is refused;
    then it is evaluated on ``n`` random bars, and again with bars after ``cut`` replaced; rows
    up to ``cut`` must be unchanged (NaN equal to NaN). A look-ahead the plan does not spell
    as a shift, of ``n`` bars or more, is not seen (a test, not a proof).

    Raises:
        DataError: the expression reads later bars, fails, or does not give one value per bar.
    """
    # LEAD(x, k) is shift(-k): any k, even >= n; polars' own tie test of a window ordered by
    # a column (its peers: ``col != col.shift(-1)``) is not a read of later values
    ahead = _NEGATIVE_SHIFT.search(_PEER_TEST.sub("", str(expr)))
    if ahead:
        raise DataError(
            f"feature {name!r} reads later bars ({ahead.group(1)} bars ahead: LEAD, or LAG of "
            "a negative offset); use LAG, not LEAD"
        )
    rng = np.random.default_rng(0)
    roots = [c for c in expr.meta.root_names() if c not in ("ts", "symbol")]
    cols = ["open", "high", "low", "close", "volume", *roots]

    def frame(seed: int) -> pl.DataFrame:
        r = np.random.default_rng(seed)
        data = {c: 100.0 + r.random(n) for c in dict.fromkeys(cols)}
        start = datetime(2024, 1, 1)
        ts = pl.datetime_range(start, start + timedelta(minutes=n - 1), "1m", eager=True)
        return pl.DataFrame({"ts": ts, "symbol": ["X"] * n, **data})

    base = frame(int(rng.integers(1 << 30)))
    later = frame(int(rng.integers(1 << 30)))
    changed = pl.concat([base.head(cut + 1), later.slice(cut + 1)])
    try:
        a = base.select(expr.over("symbol").cast(pl.Float64).alias("v"))["v"]
        b = changed.select(expr.over("symbol").cast(pl.Float64).alias("v"))["v"]
    except Exception as e:
        raise DataError(f"feature {name!r}: cannot evaluate ({str(e).splitlines()[0]})") from e
    if a.len() != n:
        raise DataError(f"feature {name!r} must give one value per bar, not {a.len()}")
    x, y = a.head(cut + 1).to_numpy(), b.head(cut + 1).to_numpy()
    if not np.array_equal(x, y, equal_nan=True):
        raise DataError(
            f"feature {name!r} reads later bars (its past values change when the future does); "
            "use LAG, not LEAD, and no aggregate over the whole series"
        )
