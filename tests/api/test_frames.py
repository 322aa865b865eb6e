"""Bars as a notebook holds them: the kind of what was passed, a frame's missing symbol column
(refused word for word, or added as a string column named ``symbol``), and the frame's name in
the messages of a pandas frame polars cannot hold."""

from __future__ import annotations

import datetime as dt
import logging
import threading
from pathlib import Path

import polars as pl
import pytest

from foxhunt.api import read_bars
from foxhunt.api.frames import kind_of, python_words, reworded, to_polars
from foxhunt.errors import DataError, InputError


def _bars(**extra: object) -> pl.DataFrame:
    ts = [dt.datetime(2024, 1, 2, 15, 5 * i, tzinfo=dt.UTC) for i in range(3)]
    return pl.DataFrame({"ts": ts, "close": [1.0, 2.0, 3.0], **extra})


def test_the_kind_of_what_was_passed() -> None:
    pd = pytest.importorskip("pandas")
    assert kind_of("bars.csv") == kind_of(Path("bars.csv")) == "path"
    assert kind_of(_bars()) == "polars"
    assert kind_of(_bars().to_pandas()) == "pandas"
    with pytest.raises(InputError) as refused:
        kind_of({"close": [1.0]})
    assert str(refused.value) == "bars: expected a path, a polars or a pandas DataFrame, got dict"
    assert pd is not None


def test_a_frame_without_a_symbol_column_gets_the_one_given_or_is_refused() -> None:
    got = to_polars(_bars(), symbol="ES")
    assert got.columns == ["ts", "close", "symbol"]
    assert got.schema["symbol"] == pl.String and got["symbol"].to_list() == ["ES"] * 3
    with pytest.raises(InputError) as refused:
        to_polars(_bars())
    assert str(refused.value) == (
        "bars DataFrame: no symbol column (symbol, ticker, instrument, raw_symbol, #ric, ric, "
        "contract, instrument_id, or a Name, Code ... of tickers); pass symbol='ES'"
    )
    with pytest.raises(InputError) as both:  # has one: `symbol` beside it was ignored
        to_polars(_bars(ticker=["NQ"] * 3), symbol="ES")
    assert str(both.value) == (
        "bars DataFrame: has a symbol column 'ticker'; symbol= is for frames without one"
    )
    assert to_polars(_bars(ticker=["NQ"] * 3)).columns == ["ts", "close", "ticker"]


def test_a_pandas_frame_polars_cannot_hold_is_named_as_the_dataframe() -> None:
    pd = pytest.importorskip("pandas")
    odd = pd.DataFrame({"close": [1.0, 2.0], "obj": [object(), object()]})
    with pytest.raises(DataError, match=r"^bars DataFrame: cannot read the pandas bars \("):
        to_polars(odd, symbol="ES")


@pytest.mark.parametrize(
    ("cli", "python"),
    [
        ("or --allow-odd-times", "or allow_odd_times=True"),
        ("; --allow-outliers keeps it", "; allow_outliers=True keeps it"),
        ("after --bar-minutes 5;", "after bar_minutes=5;"),
        ("(--bar-minutes K)", "(bar_minutes=K)"),
        ("pass --tz ZONE if", "pass tz='ZONE' if"),
        ("; --tz Etc/GMT+5 reads it so", "; tz='Etc/GMT+5' reads it so"),
        ("--tz -05:00 kept", "tz='-05:00' kept"),
        ("--tz UTC kept", "tz='UTC' kept"),
        ("; --tz to change", "; tz=... to change"),
        ("zone (--tz) or", "zone (tz=...) or"),
        ("; --ts-format '%d/%m/%Y' reads them", "; ts_format='%d/%m/%Y' reads them"),
        ("; --ts-format to change", "; ts_format=... to change"),
        ("--columns open=COLUMN names it", "columns={'open': 'COLUMN'} names it"),
        ("--columns takes ts=COLUMN", "columns takes ts=COLUMN"),
        ("; --symbol to change", "; symbol=... to change"),
        ("(--instruments FILE sets its calendar)", "(--instruments FILE sets its calendar)"),
        ("--tzinfo and --symbols", "--tzinfo and --symbols"),
    ],
)
def test_python_words_name_read_bars_keywords_for_the_readers_flags(cli: str, python: str) -> None:
    assert python_words(cli) == python


def test_reworded_rewrites_foxhunt_log_lines_and_errors_and_restores_the_factory(
    caplog: pytest.LogCaptureFixture,
) -> None:
    made = logging.getLogRecordFactory()
    with caplog.at_level(logging.INFO), pytest.raises(DataError) as refused:
        with reworded(str.upper):
            logging.getLogger("foxhunt.data.read.x").warning("naive in %s", "/tmp/f.parquet")
            logging.getLogger("other").warning("naive in %s", "/tmp/f.parquet")
            raise DataError("bad /tmp/f.parquet")
    assert [r.getMessage() for r in caplog.records] == [
        "NAIVE IN /TMP/F.PARQUET",
        "naive in /tmp/f.parquet",
    ]
    assert str(refused.value) == "BAD /TMP/F.PARQUET"
    assert logging.getLogRecordFactory() is made
    with pytest.raises(InputError, match="^unchanged$"), reworded(str.lower):
        raise InputError("unchanged")
    assert logging.getLogRecordFactory() is made


class _Lines(logging.Handler):
    """Each thread's foxhunt lines, as the handlers see them."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: dict[str, list[str]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.setdefault(record.threadName or "", []).append(record.getMessage())


def test_reworded_blocks_in_two_threads_keep_their_own_words_and_a_third_thread_its_own() -> None:
    """One process-wide factory swapped per block once rewrote a third thread's lines with the
    words of a block open in another, and the first block to close restored the factory under
    the second (whose later lines kept their scratch-file words)."""
    made = logging.getLogRecordFactory()
    log = logging.getLogger("foxhunt.test.threads")
    lines = _Lines()
    log.addHandler(lines)
    log.setLevel(logging.INFO)
    both_open, first_closed, third_done = (threading.Event() for _ in range(3))

    def first() -> None:
        with reworded(str.upper):
            log.info("first in %s", "Block")
            both_open.wait(5)
        first_closed.set()

    def second() -> None:
        with reworded(str.lower):
            both_open.set()
            third_done.wait(5)
            first_closed.wait(5)
            log.info("second After the first closed")
            with reworded(lambda text: text.replace("inner", "X")):
                log.info("inner and Outer")  # the inner block's words first, then the outer's
            log.info("Inner left")

    def third() -> None:
        both_open.wait(5)
        log.info("Third Keeps Its Case")
        third_done.set()

    threads = [threading.Thread(target=f, name=f.__name__) for f in (first, second, third)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
    finally:
        log.removeHandler(lines)
    assert lines.lines == {
        "first": ["FIRST IN BLOCK"],
        "second": ["second after the first closed", "x and outer", "inner left"],
        "third": ["Third Keeps Its Case"],
    }
    assert logging.getLogRecordFactory() is made


def test_a_factory_set_inside_a_block_stays_and_a_later_block_cannot_loop_through_it() -> None:
    made = logging.getLogRecordFactory()
    seen: list[str] = []
    try:
        with reworded(str.upper):
            inside = logging.getLogRecordFactory()

            def callers(*args: object, **kwargs: object) -> logging.LogRecord:
                record = inside(*args, **kwargs)
                seen.append(record.getMessage())
                return record

            logging.setLogRecordFactory(callers)
            with reworded(str.lower):  # a block opened meanwhile leaves the caller's on top
                assert logging.getLogRecordFactory() is callers
        assert logging.getLogRecordFactory() is callers  # the caller's factory is not undone
        with reworded(str.lower):  # ours now wraps the caller's, which wraps ours
            record = logging.getLogger("foxhunt.x").makeRecord(
                "foxhunt.x", logging.INFO, "f", 1, "Mixed Case", (), None
            )
        assert record.getMessage() == "mixed case"
        assert seen == ["Mixed Case"]  # the caller's factory saw the record once, as made
    finally:
        logging.setLogRecordFactory(made)


def test_read_bars_warns_about_a_naive_frame_with_its_name_and_the_keyword(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The warning once named the deleted scratch Parquet file and the CLI's ``--tz``."""
    naive = _bars(symbol=["NQ"] * 3).with_columns(
        pl.col("ts").dt.replace_time_zone(None),
        open=pl.col("close"),
        high=pl.col("close"),
        low=pl.col("close"),
        volume=pl.lit(1.0),
    )
    with caplog.at_level(logging.INFO, logger="foxhunt"):
        read_bars(naive)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "naive timestamps in DataFrame taken as UTC; pass tz='ZONE' if they are local" in text
    assert ".parquet" not in text and "--" not in text


def test_frames_given_at_once_never_share_a_scratch_file(tmp_path: Path) -> None:
    """Files were numbered by counting those there: with predict's removed when done, a later
    fit's took a kept file's number and wrote over it. Now each takes the first free number."""
    from foxhunt.api.frames import bars_path

    kept = tmp_path / "dataframe-1.parquet"
    kept.write_bytes(b"a fit's bars")
    with bars_path(_bars(ticker=["ES"] * 3), tmp_path) as first:
        with bars_path(_bars(ticker=["ES"] * 3), tmp_path, keep=False) as second:
            assert {first.name, second.name} == {"dataframe-0.parquet", "dataframe-2.parquet"}
        assert not second.exists()
    assert kept.read_bytes() == b"a fit's bars" and first.exists()
