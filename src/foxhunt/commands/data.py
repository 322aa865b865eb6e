"""``foxhunt data``: demo bars, real index bars, and bar-file inspection."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console


def add_parser(sub: argparse._SubParsersAction) -> None:
    data = sub.add_parser("data", help="demo bars and bar-file inspection")
    dsub = data.add_subparsers(dest="data_command", required=True, metavar="SUBCOMMAND")
    d = dsub.add_parser("demo", help="write deterministic synthetic ES-like 5-minute bars")
    d.add_argument("--bars", type=int, default=1000, help="number of bars (default 1000)")
    d.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    d.add_argument("--symbol", default="ES", help="symbol root (default ES)")
    d.add_argument("--start", default="2024-01-02", help="first trading day, YYYY-MM-DD")
    d.add_argument("--out", type=Path, required=True, help="output .parquet or .csv")
    d.set_defaults(func=demo)
    r = dsub.add_parser(
        "index-daily",
        help="write real S&P 500 / NASDAQ daily bars 1999-2018 (as ES/NQ) from the installed "
        "arch package",
    )
    r.add_argument("--out", type=Path, required=True, help="output .parquet or .csv")
    r.set_defaults(func=index_daily)
    i = dsub.add_parser("inspect", help="symbols, bars, dates, interval, sessions, gaps, verdict")
    i.add_argument("path", type=Path, help="bars file, directory or glob")
    i.add_argument("--json", action="store_true", help="machine-readable output")
    i.add_argument("--tz", default="UTC", help="zone of naive timestamps (default UTC)")
    i.set_defaults(func=inspect)


def demo(a: argparse.Namespace) -> None:
    from foxhunt.data.demo import BAR_MINUTES, write_demo_bars

    with Console(stderr=True).status(f"generating {a.bars:,} demo bars"):
        bars = write_demo_bars(a.out, n_bars=a.bars, seed=a.seed, symbol=a.symbol, start=a.start)
    first, last = bars["ts"][0], bars["ts"][-1]
    Console().print(
        f"wrote {bars.height:,} {a.symbol} {BAR_MINUTES}-minute bars "
        f"({first:%Y-%m-%d %H:%M} .. {last:%Y-%m-%d %H:%M} UTC) to {a.out}",
        soft_wrap=True,
        highlight=False,
    )


def index_daily(a: argparse.Namespace) -> None:
    from foxhunt.data.index_daily import provenance, write_index_daily

    bars = write_index_daily(a.out)
    counts = ", ".join(f"{s} {n:,}" for s, n in bars.group_by("symbol").len().sort("symbol").rows())
    Console().print(
        f"wrote {bars.height:,} daily bars ({counts}; {bars['ts'].min():%Y-%m-%d} .. "
        f"{bars['ts'].max():%Y-%m-%d}) from the {provenance()['source']} to {a.out}",
        soft_wrap=True,
        highlight=False,
    )


def inspect(a: argparse.Namespace) -> int:
    from foxhunt.data.inspect import inspect_command

    return inspect_command(a.path, as_json=a.json, tz=a.tz)
