"""encoding.py's sniff of files that are no delimited table, where `make mutate` (session 50)
found only some of its prefixes tested: each one, in either case, after a byte-order mark and
blank space, and nothing else stripped before it."""

from __future__ import annotations

import pytest

from foxhunt.data.read.encoding import not_delimited

HTML = "a web page (HTML)"


@pytest.mark.parametrize(
    ("head", "what"),
    [
        (b"<!DOCTYPE html><html>", HTML),
        (b"<html><body>", HTML),
        (b"<HTML><BODY>", HTML),
        (b'<?xml version="1.0"?>', HTML),
        (b'<?XML version="1.0"?>', HTML),
        (b"<table><tr><td>1</td></tr></table>", HTML),
        (b"<TABLE>", HTML),
        (b"<head><title>Login</title>", HTML),
        (b"<HEAD>", HTML),
        (b'[{"ts": 1}]', "JSON"),
        (b'{"data": []}', "JSON"),
        (b"[[1, 2], [3, 4]]", "JSON"),
        (b'[\n  {"ts": 1}\n]', "JSON"),
        (b'[ {"ts": 1} ]', "JSON"),
        (b'{\n  "data": []\n}', "JSON"),
        (b'{ "data": [] }', "JSON"),
        (b"\xef\xbb\xbf \t\r\n<html>", HTML),  # a byte-order mark and blank space first
        (b"\xef\xbb\xbf\n[{}]", "JSON"),
        (b"date,open\n2024-01-02,1\n", None),
        (b"X<html>", None),  # only the mark and blank space are stripped
        (b"[1,2]\n", None),  # a bracket alone is not JSON's start here (a bracketed header)
    ],
)
def test_each_prefix_of_a_page_or_json_is_recognised(head: bytes, what: str | None) -> None:
    assert not_delimited(head) == what
