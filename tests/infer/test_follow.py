"""``foxhunt predict --follow``: growing files, bad lines skipped and counted, restarts that
neither lose nor repeat a forecast, ``--strict``."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from demo_run import DemoRun
from foxhunt.cli import main
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError, InputError
from foxhunt.infer.feed import BarFileReader
from foxhunt.infer.follow import _ingest, follow, follow_path
from foxhunt.infer.follow_state import sidecar_path
from foxhunt.infer.forecaster import Forecaster
from foxhunt.infer.screen import WHERE
from foxhunt.infer.sink import ForecastSink
from infer.test_forecaster import _batch_predict, assert_same_forecasts

H = 4  # the demo run's horizon


def _read_csv_forecasts(path: Path) -> pl.DataFrame:
    return pl.read_csv(path, try_parse_dates=True).with_columns(
        pl.col("origin_ts").dt.cast_time_unit("us").dt.convert_time_zone("UTC"),
        pl.col("horizon").cast(pl.Int16),
    )


def _line(bars: pl.DataFrame, i: int, **change: object) -> str:
    """Bar ``i`` as one CSV line (``ts,symbol,open,high,low,close,volume``), fields changed."""
    row = bars.row(i, named=True) | change
    ts = row["ts"]
    text = ts if isinstance(ts, str) else ts.strftime("%Y-%m-%dT%H:%M:%S.%f+0000")
    values = [row[c] for c in ("open", "high", "low", "close", "volume")]
    return ",".join([text, str(row["symbol"]), *map(str, values)]) + "\n"


class Feed:
    """A CSV feed written line by line; remembers which lines are bad and why."""

    def __init__(self, path: Path, bars: pl.DataFrame) -> None:
        self.path, self.bars = path, bars
        path.write_text(",".join(bars.columns) + "\n")
        self.lines = 1
        self.bad: dict[int, str] = {}  # line number -> reason

    def good(self, i: int) -> None:
        self._write(_line(self.bars, i))

    def bad_line(self, text: str, reason: str) -> None:
        self._write(text)
        self.bad[self.lines] = reason

    def _write(self, text: str) -> None:
        with open(self.path, "a") as f:
            f.write(text)
        self.lines += 1


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_bad_lines_are_skipped_and_every_good_bar_forecast_once_across_restarts(
    demo_run: DemoRun, tmp_path: Path, suffix: str, caplog: pytest.LogCaptureFixture
) -> None:
    bars = demo_bars(256, seed=21)
    feed = Feed(tmp_path / "ES_live.csv", bars)
    # The backlog, with a garbage line and a late bar in it (skipped: not sorted in).
    for i in range(250):
        feed.good(i)
        if i == 100:
            feed.bad_line("hello world\n", "malformed")
        if i == 120:
            feed.bad_line(_line(bars, 50), "out_of_order")
    # Live lines arrive between polls, one good bar per poll, bad lines among them.
    nq = _line(bars, 250, symbol="NQ")
    later = bars["ts"][255] + timedelta(hours=1)
    polls_a = [
        lambda: (
            feed.good(250),
            feed.bad_line(_line(bars, 250).replace("\n", ",7\n"), "malformed"),  # a field too many
            feed.bad_line(_line(bars, 250), "duplicate"),
        ),
        lambda: (
            feed.bad_line(nq, "unknown_symbol"),
            feed.good(251),
            feed.bad_line(_line(bars, 245), "out_of_order"),
        ),
    ]
    out = tmp_path / f"forecasts{suffix}"
    caplog.set_level(logging.INFO, logger="foxhunt")

    def run(polls: int, grow: list) -> int:
        return follow_path(
            demo_run.run,
            feed.path,
            out,
            poll_seconds=0,
            max_polls=polls,
            sleep=lambda _: grow.pop(0)(),
        )

    rows = run(3, polls_a)
    # Down: an invalid bar (high below close) and a good one arrive.
    feed.bad_line(_line(bars, 252, high=1.0, ts=later), "invalid")
    feed.good(252)
    rows += run(2, [lambda: feed.good(253)])
    if suffix == ".csv":
        with open(out, "a") as f:  # a run killed mid-append leaves half a line
            f.write("ES,2024-01-0")
    feed.good(254)
    rows += run(1, [])
    rows += run(1, [])  # nothing new: nothing written (before: the last forecast again)
    feed.good(255)
    rows += run(1, [])

    origins = [bars["ts"][i] for i in (249, 250, 251, 252, 253, 254, 255)]
    assert rows == len(origins) * H
    batch = _batch_predict(demo_run.run, bars, tmp_path)
    if suffix == ".csv":
        got = _read_csv_forecasts(out)
        assert got["origin_ts"].to_list() == [t for t in origins for _ in range(H)]
        assert_same_forecasts(got, batch)  # history rebuilt right after every restart
    else:
        got = pl.read_parquet(out)
        assert got["origin_ts"].to_list() == [origins[-1]] * H
        assert_same_forecasts(got, batch)

    record = json.loads(sidecar_path(out).read_text())
    assert record["skipped"] == {
        "malformed": 2,
        "invalid": 1,
        "unknown_symbol": 1,
        "duplicate": 1,
        "out_of_order": 2,
    }
    assert record["position"] == feed.path.stat().st_size and record["unit"] == "bytes"
    assert record["bars"] == 256 and record["forecast_rows"] == rows
    assert record["last_origin"] == {"ES": origins[-1].isoformat()}
    assert [(e["line"], e["reason"]) for e in record["last_errors"]] == sorted(feed.bad.items())
    # One warning per bad line, naming the file line, never repeated by a restart.
    skipped = [r.getMessage() for r in caplog.records if r.getMessage().endswith("(skipped)")]
    expected = [
        f"{feed.path} line {n}: {reason.replace('_', ' ')}: " for n, reason in feed.bad.items()
    ]
    assert len(skipped) == len(expected)
    for message, start in zip(sorted(skipped, key=_line_number), expected, strict=True):
        assert message.startswith(start), (message, start)
    assert "symbol 'NQ' is not one the model serves (ES)" in "\n".join(skipped)


def _line_number(message: str) -> int:
    return int(message.split(" line ")[1].split(":")[0])


@pytest.mark.slow
def test_strict_stops_at_the_first_bad_line_via_the_cli(
    demo_run: DemoRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bars = demo_bars(242, seed=2)
    feed = Feed(tmp_path / "ES_feed.csv", bars)
    for i in range(240):
        feed.good(i)
    feed.bad_line(_line(bars, 240, close="abc"), "malformed")
    feed.bad_line(_line(bars, 10), "out_of_order")
    feed.good(241)
    out = tmp_path / "fc.csv"
    args = ["predict", "--model", str(demo_run.run), "--follow", str(feed.path), "--out", str(out)]
    args += ["--max-polls", "1", "--poll-seconds", "0", "--engine", "torch"]
    assert main([*args, "--strict"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        f"foxhunt: error: {feed.path} line 242: malformed: close missing or not a number"
    )
    assert not out.exists()
    # Without --strict the two bad lines are skipped and the latest good bar forecast.
    assert main(args) == 0
    got = _read_csv_forecasts(out)
    assert got.height == H and got["origin_ts"][0] == bars["ts"][241]
    assert json.loads(sidecar_path(out).read_text())["skipped"]["out_of_order"] == 1


@pytest.mark.slow
def test_parquet_feed_names_rows_and_resumes(demo_run: DemoRun, tmp_path: Path) -> None:
    bars = demo_bars(246, seed=5)
    feed = tmp_path / "ES_live.parquet"
    bad = bars.with_columns(
        pl.when(pl.int_range(pl.len()) == 100).then(None).otherwise(pl.col("close")).alias("close")
    )
    dup = pl.concat([bad.head(241), bars.slice(240, 1)])  # row 241 repeats row 240
    dup.write_parquet(feed)
    out = tmp_path / "latest.parquet"
    assert follow_path(demo_run.run, feed, out, poll_seconds=0, max_polls=1) == H
    pl.concat([dup, bars.slice(241, 5)]).write_parquet(feed)  # rewritten by its producer
    assert follow_path(demo_run.run, feed, out, poll_seconds=0, max_polls=1) == H
    assert follow_path(demo_run.run, feed, out, poll_seconds=0, max_polls=1) == 0
    record = json.loads(sidecar_path(out).read_text())
    assert record["unit"] == "rows" and record["position"] == 247
    assert [(e["row"], e["reason"]) for e in record["last_errors"]] == [
        (100, "malformed"),
        (241, "duplicate"),
    ]
    latest = pl.read_parquet(out)
    assert latest["origin_ts"].to_list() == [bars["ts"][245]] * H


@pytest.mark.slow
def test_a_replaced_feed_or_another_feed_is_refused(demo_run: DemoRun, tmp_path: Path) -> None:
    bars = demo_bars(240, seed=7)
    feed = tmp_path / "ES_live.csv"
    bars.write_csv(feed)
    out = tmp_path / "fc.csv"
    follow_path(demo_run.run, feed, out, poll_seconds=0, max_polls=1)
    # Same length, but no line ends where the last run stopped.
    feed.write_text(feed.read_text()[:-1] + "7")
    with pytest.raises(
        DataError,
        match=r"no line ends at byte \d+, where the last run stopped \(was the file replaced\?\)",
    ):
        follow_path(demo_run.run, feed, out, poll_seconds=0, max_polls=1)
    bars.head(100).write_csv(feed)
    with pytest.raises(DataError, match="shorter than the .* already read"):
        follow_path(demo_run.run, feed, out, poll_seconds=0, max_polls=1)
    other = tmp_path / "ES_other.csv"
    bars.write_csv(other)
    with pytest.raises(InputError, match="follow record is for .*ES_live.csv"):
        follow_path(demo_run.run, other, out, poll_seconds=0, max_polls=1)


def test_rows_the_forecaster_still_refuses_are_found_by_halving() -> None:
    class Picky:
        def __init__(self) -> None:
            self.taken: list[float] = []

        def update(self, bars: pl.DataFrame, *, forecast: bool) -> None:
            if (bars["close"] == 13.0).any():
                raise DataError("Forecaster.update: row 0, symbol 'ES': thirteen")
            self.taken += bars["close"].to_list()

    rows = pl.DataFrame({"close": [float(c) for c in range(10, 20)], WHERE: range(2, 12)})
    picky = Picky()
    refused = _ingest(picky, rows)  # type: ignore[arg-type]
    assert [(r.where, r.reason, r.detail) for r in refused] == [
        (5, "invalid", "symbol 'ES': thirteen")
    ]
    assert picky.taken == [c for c in rows["close"].to_list() if c != 13.0]


@pytest.mark.slow
def test_follow_a_growing_csv_and_parquet(demo_run: DemoRun, tmp_path: Path) -> None:
    bars = demo_bars(300, seed=13)
    batch = _batch_predict(demo_run.run, bars, tmp_path)
    # CSV: appended in pieces; after the first, a line is cut in half until the next poll.
    csv = tmp_path / "ES_live.csv"
    bars.head(260).write_csv(csv)
    first = bars.slice(260, 10).write_csv(include_header=False)
    second = bars.slice(270, 30).write_csv(include_header=False)
    steps = [first + second[:20], second[20:]]

    def grow(_: float) -> None:
        with open(csv, "a") as f:
            f.write(steps.pop(0))

    out = tmp_path / "live.csv"
    rows = follow(
        Forecaster.load(demo_run.run),
        BarFileReader(csv, chunk_bytes=4096),
        ForecastSink(out),
        poll_seconds=0,
        max_polls=3,
        sleep=grow,
    )
    got = _read_csv_forecasts(out)
    assert rows == got.height == 3 * H  # one forecast per poll: the latest origin
    assert got["origin_ts"].to_list() == [
        t for t in bars["ts"][[259, 269, 299]].to_list() for _ in range(H)
    ]
    assert_same_forecasts(got, batch)

    # Parquet rewritten by its producer; the output keeps the latest forecast.
    pq_path = tmp_path / "ES_live.parquet"
    bars.head(280).write_parquet(pq_path)
    sizes = iter([290, 300])
    out_pq = tmp_path / "latest.parquet"
    follow(
        Forecaster.load(demo_run.run),
        BarFileReader(pq_path, chunk_rows=100),
        ForecastSink(out_pq),
        poll_seconds=0,
        max_polls=3,
        sleep=lambda _: bars.head(next(sizes)).write_parquet(pq_path),
    )
    latest = pl.read_parquet(out_pq)
    assert latest.height == H and latest["origin_ts"][0] == bars["ts"][299]
    assert_same_forecasts(latest, batch)
    reader = BarFileReader(pq_path)
    assert sum(p.rows.height for p in reader.new_pieces()) == 300
    bars.head(100).write_parquet(pq_path)  # replaced by a shorter file
    with pytest.raises(DataError, match="has 100 rows, fewer than the 300 already read"):
        list(reader.new_pieces())


@pytest.mark.slow
def test_cli_predict_follow(demo_run: DemoRun, tmp_path: Path) -> None:
    csv = tmp_path / "ES_feed.csv"
    demo_bars(240, seed=2).write_csv(csv)
    out = tmp_path / "fc.csv"
    args = ["predict", "--model", str(demo_run.run), "--follow", str(csv), "--out", str(out)]
    assert main([*args, "--max-polls", "2", "--poll-seconds", "0"]) == 0
    assert pl.read_csv(out).height == H
    with pytest.raises(SystemExit) as e:  # argparse: --bars and --follow exclude each other
        main(
            [
                "predict",
                "--model",
                str(demo_run.run),
                "--follow",
                str(csv),
                "--bars",
                str(csv),
                "--out",
                str(out),
            ]
        )
    assert e.value.code == 2
    assert main([*args[:-1], str(tmp_path / "fc.json"), "--max-polls", "1"]) == 2


def test_a_file_of_a_symbol_the_model_does_not_serve_stops_naming_symbol(
    demo_run: DemoRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``live_ES.csv`` without a symbol column reads as symbol LIVE: every line was skipped,
    exit 0 and no forecast. It stops naming --symbol, which then reads it."""
    bars = demo_bars(240, seed=2)
    feed = tmp_path / "live_ES.csv"
    bars.drop("symbol").write_csv(feed)
    out = tmp_path / "fc.csv"
    args = ["predict", "--model", str(demo_run.run), "--follow", str(feed), "--out", str(out)]
    args += ["--max-polls", "1", "--poll-seconds", "0", "--engine", "torch"]
    assert main(args) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"foxhunt: error: {feed}: its rows are of symbol 'LIVE' (from the file's name), which "
        "the model does not serve (ES): --symbol ES reads them as that symbol"
    )
    assert not out.exists()
    assert main([*args, "--symbol", "ES"]) == 0
    assert _read_csv_forecasts(out)["origin_ts"][0] == bars["ts"][239]


def test_a_symbol_columns_first_row_of_another_symbol_is_skipped_not_fatal(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    """A feed with a symbol column whose first new line is of a symbol not served: skipped
    with a warning, as any such line (the refusal above is for a symbol from the file name)."""
    bars = demo_bars(240, seed=2)
    feed = Feed(tmp_path / "feed.csv", bars)
    feed.bad_line(_line(bars, 0, symbol="CL"), "unknown_symbol")
    out = tmp_path / "fc.csv"
    args = ["predict", "--model", str(demo_run.run), "--follow", str(feed.path), "--out", str(out)]
    args += ["--max-polls", "1", "--poll-seconds", "0", "--engine", "torch"]
    assert main(args) == 0
    for i in range(240):
        feed.good(i)
    assert main(args) == 0
    assert _read_csv_forecasts(out)["origin_ts"][-1] == bars["ts"][239]


def test_a_nameless_feed_takes_its_folders_symbol(demo_run: DemoRun, tmp_path: Path) -> None:
    """``ES/data.csv`` without a symbol column reads as ES (the folder's word); the follower
    read each poll through a temporary folder, whose random name became the symbol."""
    bars = demo_bars(240, seed=2)
    (tmp_path / "ES").mkdir()
    feed = tmp_path / "ES" / "data.csv"
    bars.drop("symbol").write_csv(feed)
    out = tmp_path / "fc.csv"
    args = ["predict", "--model", str(demo_run.run), "--follow", str(feed), "--out", str(out)]
    assert main([*args, "--max-polls", "1", "--poll-seconds", "0", "--engine", "torch"]) == 0
    got = _read_csv_forecasts(out)
    assert got["symbol"].unique().to_list() == ["ES"] and got["origin_ts"][0] == bars["ts"][239]


def test_a_bar_in_its_calendars_closed_hours_is_taken_and_said_once(
    demo_run: DemoRun, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """As ``serve`` answers ``warnings``, ``--follow`` logs a line per poll for the bars it took
    where their calendar is shut (until session 56 it said nothing): ES's bar at 22:15 UTC
    on 2 January 2024 falls in CME's daily halt (16:00-17:00 Chicago), and is said once."""
    bars = demo_bars(260, seed=13)
    csv = tmp_path / "ES_live.csv"
    bars.head(240).write_csv(csv)
    assert bars["ts"][239] < datetime(2024, 1, 2, 22, 15, tzinfo=UTC)
    halted = _line(bars, 239, ts="2024-01-02T22:15:00.000000+0000")

    def grow(_: float) -> None:
        with open(csv, "a") as f:
            f.write(halted)

    with caplog.at_level(logging.WARNING):
        follow(
            Forecaster.load(demo_run.run),
            BarFileReader(csv),
            ForecastSink(tmp_path / "live.csv"),
            poll_seconds=0,
            max_polls=2,
            sleep=grow,
        )
    said = [r.getMessage() for r in caplog.records if "does not trade" in r.getMessage()]
    assert said == [
        f"{csv}: ES: 1 bar in hours calendar cme_equity does not trade (first "
        "2024-01-02T22:15:00+00:00); taken as sent"
    ]
