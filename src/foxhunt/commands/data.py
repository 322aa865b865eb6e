"""``foxhunt data``: demo bars, real index bars, and bar-file inspection."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from foxhunt.commands.options import add_read_args, read_options_of


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
    add_read_args(i, stored=False)
    i.add_argument(
        "--instruments", type=Path, help="instrument table, TOML or CSV (calendars per symbol)"
    )
    i.add_argument(
        "--allow-outliers",
        action="store_true",
        help="keep bars that fail the plausibility checks (interleaved price levels, prices off "
        "by orders of magnitude, implausible one-bar moves; docs/data.md), counted in one warning",
    )
    i.set_defaults(func=inspect)


def demo(a: argparse.Namespace) -> None:
    from foxhunt.data.sources.demo import BAR_MINUTES, write_demo_bars

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
    from foxhunt.data.sources.index_daily import provenance, write_index_daily

    bars = write_index_daily(a.out)
    counts = ", ".join(f"{s} {n:,}" for s, n in bars.group_by("symbol").len().sort("symbol").rows())
    Console().print(
        f"wrote {bars.height:,} daily bars ({counts}; {bars['ts'].min():%Y-%m-%d} .. "
        f"{bars['ts'].max():%Y-%m-%d}) from the {provenance()['source']} to {a.out}",
        soft_wrap=True,
        highlight=False,
    )


def _listed_guesses(record: logging.LogRecord) -> bool:
    """False for a reading's ``guess:`` line: ``data inspect`` lists each at its report's end
    (logged as the file was read too, every guess was said twice until session 59)."""
    return not record.getMessage().startswith("guess: ")


def inspect(a: argparse.Namespace) -> int:
    """Exit 0 when the commands read the bars (verdict valid, or suspicious: read as given
    with warnings), 2 when they refuse them; with ``--json`` an unreadable file is a JSON
    verdict too (one line), else a one-line error."""
    from foxhunt.data.read.inspection import inspect_report
    from foxhunt.errors import DataError

    reading = logging.getLogger("foxhunt.data.read.bars")
    reading.addFilter(_listed_guesses)  # the report lists the reading's guesses: said once
    try:
        report = inspect_report(
            a.path,
            instruments=a.instruments,
            allow_outliers=a.allow_outliers,
            options=read_options_of(a),
        )
    except DataError as e:
        if not a.json:
            raise
        report = {
            "path": str(a.path),
            "verdict": "invalid",
            "valid": False,
            "readable": False,
            "error": str(e),
            "symbols": [],
        }
    finally:
        reading.removeFilter(_listed_guesses)
    if a.json:
        sys.stdout.write(json.dumps(report) + "\n")
    else:
        _print_report(report)
    return 0 if report["readable"] else 2


def _print_report(report: dict[str, Any]) -> None:
    from rich.table import Table

    console = Console()
    files = report["files"]
    title = files[0] if len(files) == 1 else f"{report['path']} ({len(files)} files)"
    console.print(f"[bold]{title}[/]", soft_wrap=True, highlight=False)
    for s in report["symbols"]:
        table = Table(show_header=False, box=None, padding=(0, 2))
        table.add_column(style="dim")
        table.add_column()
        gaps = f"{s['intra_session_gaps']:,}"
        if s["intra_session_gaps"]:
            gaps += f" ({s['missing_bars']:,} missing bars, largest {s['largest_gap']})"
        rows = [
            ("bars", f"{s['bars']:,}"),
            ("first bar", s["first"].replace("T", " ")),
            ("last bar", s["last"].replace("T", " ")),
            ("interval", s["interval"] or "-"),
            ("sessions", f"{s['sessions']:,} trading days with bars"),  # 24/7: no "weekends"
            ("gaps in sessions", gaps),
            (
                "days without bars",
                f"{s.get('missing_days', 0):,}"
                + (f" (first: {s['first_missing_day']}{_run(s)})" if s.get("missing_days") else ""),
            ),
            ("calendar", s.get("calendar", "-")),
            (
                "bars on closed days" if s.get("daily") else "bars in closed hours",
                f"{s['closed_time_bars']:,}",
            ),
        ]
        for k, v in rows:
            table.add_row(k, v)
        console.print(f"[bold]{s['symbol']}[/]")
        console.print(table)
    needs = report["training_min_bars"]
    console.print(
        "[dim]training:[/] a symbol needs "
        + ", ".join(f"{n:,} bars with --preset {name}" for name, n in needs.items())
        + " (the presets' defaults; a longer --encoder-length or --horizon needs more)",
        soft_wrap=True,
        highlight=False,
    )
    for name, short in report["too_short_to_train"].items():
        if short:
            shown = ", ".join(short[:6]) + (", ..." if len(short) > 6 else "")
            console.print(
                f"[yellow]too short to train with --preset {name} (fewer than {needs[name]:,} "
                f"bars):[/] {shown}",
                soft_wrap=True,
                highlight=False,
            )
    for g in report.get("guesses", []):
        console.print(f"[dim]guess:[/] {g}", soft_wrap=True, highlight=False)
    for w in report["warnings"]:
        console.print(f"[yellow]warning:[/] {w}", soft_wrap=True, highlight=False)
    for p in report["time_axis"][1:] if report["verdict"] == "invalid" else []:
        console.print(f"[red]time axis:[/] {p}", soft_wrap=True, highlight=False)
    if report["too_short_for_features"]:
        need = report["features_min_bars"]
        console.print(
            f"[yellow]too short for features (need >= {need} bars):[/] "
            + ", ".join(report["too_short_for_features"])
        )
    n = len(report["warnings"])
    if report["verdict"] == "valid":
        console.print("[green]verdict: valid[/]")
    elif report["verdict"] == "suspicious":
        console.print(
            f"[yellow]verdict: suspicious[/] - {n} warning{'s' if n > 1 else ''} above; the "
            "commands read these bars as given, not as valid",
            soft_wrap=True,
            highlight=False,
        )
    else:
        console.print(
            f"[red]verdict: invalid[/] - {report['error']}", soft_wrap=True, highlight=False
        )


def _run(summary: dict[str, Any]) -> str:
    """``; longest: N in a row from DAY`` where days without bars run together."""
    run = summary.get("longest_missing_run")
    if not run or run["days"] < 2:
        return ""
    return f"; longest: {run['days']} in a row from {run['first']}"
