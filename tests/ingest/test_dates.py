"""Date:, Received: and From-line parsing, and the 1970/2040 sanitising rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from e2g.mail.dates import (
    parse_date,
    parse_from_line_date,
    parse_received,
    sanitise_date,
)
from e2g.model import DateSource

NOW = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Fri, 22 Oct 2010 14:51:02 +1100", utc(2010, 10, 22, 3, 51, 2)),
        ("Mon, 7 Jan 2002 10:10:10 +-0100", utc(2002, 1, 7, 11, 10, 10)),
        ("Tue, 15 Sep 2009 12:37:20 -0700 (PDT)", utc(2009, 9, 15, 19, 37, 20)),
        ("Tue, 15 Sep 2009 12:37:20 +0000 (UTC)", utc(2009, 9, 15, 12, 37, 20)),
        ("2009-09-15 12:37:20", utc(2009, 9, 15, 12, 37, 20)),
        ("2009-09-15T12:37:20Z", utc(2009, 9, 15, 12, 37, 20)),
        ("Thu, 1 Jan 1970 00:00:00 +0000", utc(1970, 1, 1)),
        ("tue, 15 sep 2009 12:37:20 +0000", utc(2009, 9, 15, 12, 37, 20)),
        ("15 Sep 2009 12:37:20 +0000", utc(2009, 9, 15, 12, 37, 20)),
        ("Tue, 15 Sep 2009 12:37:20 GMT+2", utc(2009, 9, 15, 10, 37, 20)),
        ("Tue, 15 Sep 2009 12:37:20 UTC-05:30", utc(2009, 9, 15, 18, 7, 20)),
        ("Tue, 15 Sep 2009 12:37:20 +05:30", utc(2009, 9, 15, 7, 7, 20)),
        ("Tue, 15 Sep 2009 12:37:20 CET", utc(2009, 9, 15, 11, 37, 20)),
        ("Tue, 15 Sep 2009 12:37:20 EDT", utc(2009, 9, 15, 16, 37, 20)),
        ("Tue, 15 Sep 2009 12:37:20", utc(2009, 9, 15, 12, 37, 20)),  # no zone: UTC
        ("Tue, 15 Sep 09 12:37 +0000", utc(2009, 9, 15, 12, 37)),  # two-digit year
        ("Wed, 4 Jun 97 17:50:46 +0000", utc(1997, 6, 4, 17, 50, 46)),
        ("Tue, 15 Sep 109 12:37:20 +0000", utc(2009, 9, 15, 12, 37, 20)),  # tm_year
        ("Tuesday, 15 September 2009 12:37:20 +0000", utc(2009, 9, 15, 12, 37, 20)),
        ("Tue Sep 15 12:37:20 2009", utc(2009, 9, 15, 12, 37, 20)),  # asctime
        ("Tue, 15 Sep 2009 12.37.20 +0000", utc(2009, 9, 15, 12, 37, 20)),
        ("Wed, 4 Jun 2014 17:50:46 0", utc(2014, 6, 4, 17, 50, 46)),
        ("Wed,  1 Jun 2016 22:00:54 +0200", utc(2016, 6, 1, 20, 0, 54)),
        ("Tue, 15 Sep 2009 12:37:20 +9900", utc(2009, 9, 15, 12, 37, 20)),  # bad zone
        ("Sep 15, 2009 12:37:20 PM +0000", utc(2009, 9, 15, 12, 37, 20)),  # dateutil
    ],
)
def test_parse_date(text: str, expected: datetime) -> None:
    parsed = parse_date(text)
    assert parsed == expected
    assert parsed is not None and parsed.tzinfo is UTC


@pytest.mark.parametrize(
    "text",
    [
        "",
        "garbage",
        "12:37",  # a time alone: dateutil would invent today's date
        "Sep 2009",  # no day: dateutil would invent one
        "1 Jan 1960 00:00:00 +0000",  # before 1970
        "Wed, 4 Jun 207777777777777777777714 17:50:46 0",
        ", 11 Sep 2016 23:22:904070804030804 +0100",  # seconds overflow
        "Tue, 31 Feb 2009 12:37:20 +0000",
        "Tue, 15 Sep 2009 25:37:20 +0000",
        "Wed, 4 Jun 2014 17:50:\x80\xff",
        "x" * 5000,
    ],
)
def test_parse_date_rejects(text: str) -> None:
    assert parse_date(text) is None


@given(st.text(max_size=80))
def test_parse_date_never_raises(text: str) -> None:
    parsed = parse_date(text)
    assert parsed is None or (parsed.tzinfo is UTC and parsed.year >= 1970)


def test_parse_received_topmost_after_semicolon() -> None:
    received = [
        "from bilbo.ozlabs.org (localhost [127.0.0.1])\n\tby ozlabs.org (Postfix) with"
        " ESMTP id ED4B3100937\n\tfor <jk@ozlabs.org>; Fri, 22 Oct 2010 14:51:54 +1100 (EST)",
        "by ozlabs.org (Postfix) id BF799B70CB; Fri, 22 Oct 2010 14:51:50 +1100 (EST)",
    ]
    assert parse_received(received) == utc(2010, 10, 22, 3, 51, 54)
    # two ';' (ECARTIS): the date follows the last one
    ecartis = [
        "with ECARTIS (v1.0.0; list linux-mips); Tue, 06 Dec 2011 01:49:42 +0100 (CET)"
    ]
    assert parse_received(ecartis) == utc(2011, 12, 6, 0, 49, 42)
    # a topmost header without a date gives way to the next one
    assert parse_received(["from x by y", *received]) == utc(2010, 10, 22, 3, 51, 54)
    assert parse_received([]) is None
    assert parse_received(["from x; garbage"]) is None


def test_parse_from_line_date() -> None:
    line = b"From rdunlap@infradead.org Mon May 06 13:30:09 2019"
    assert parse_from_line_date(line) == utc(2019, 5, 6, 13, 30, 9)
    assert parse_from_line_date(b"From patchwork Wed Jun  1 20:00:54 2016") == utc(
        2016, 6, 1, 20, 0, 54
    )
    assert parse_from_line_date(b"From mboxrd@z Thu Jan  1 00:00:00 1970") == utc(
        1970, 1, 1
    )
    # git format-patch's magic placeholder date is not a date
    placeholder = (
        b"From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001"
    )
    assert parse_from_line_date(placeholder) is None
    assert parse_from_line_date(b"From pat016") is None
    assert parse_from_line_date(b"") is None


RECEIVED = utc(2019, 3, 4, 5, 6, 7)
FROM_LINE = utc(2019, 3, 4, 5, 10, 0)


@pytest.mark.parametrize(
    ("header", "received", "from_line", "expected"),
    [
        # a good header date is kept
        (
            RECEIVED - timedelta(hours=3),
            RECEIVED,
            None,
            (RECEIVED - timedelta(hours=3), DateSource.HEADER),
        ),
        (
            RECEIVED + timedelta(hours=20),
            RECEIVED,
            None,
            (RECEIVED + timedelta(hours=20), DateSource.HEADER),
        ),
        (
            RECEIVED - timedelta(days=6),
            RECEIVED,
            None,
            (RECEIVED - timedelta(days=6), DateSource.HEADER),
        ),
        # the 1970 problem: epoch date, 2019 Received
        (utc(1970, 1, 1), RECEIVED, FROM_LINE, (RECEIVED, DateSource.RECEIVED)),
        # the 2040 problem
        (utc(2040, 1, 1), RECEIVED, FROM_LINE, (RECEIVED, DateSource.RECEIVED)),
        (utc(2040, 1, 1), None, FROM_LINE, (FROM_LINE, DateSource.FROM_LINE)),
        (utc(2040, 1, 1), None, None, (None, DateSource.NONE)),
        # before 1991
        (utc(1990, 12, 31), None, None, (None, DateSource.NONE)),
        (utc(1990, 12, 31), None, FROM_LINE, (FROM_LINE, DateSource.FROM_LINE)),
        # too far from Received:
        (RECEIVED + timedelta(days=2), RECEIVED, None, (RECEIVED, DateSource.RECEIVED)),
        (RECEIVED - timedelta(days=8), RECEIVED, None, (RECEIVED, DateSource.RECEIVED)),
        # unparseable header
        (None, RECEIVED, FROM_LINE, (RECEIVED, DateSource.RECEIVED)),
        (None, None, FROM_LINE, (FROM_LINE, DateSource.FROM_LINE)),
        (None, None, None, (None, DateSource.NONE)),
        # no Received: a plausible header date stands alone
        (utc(1999, 1, 1), None, FROM_LINE, (utc(1999, 1, 1), DateSource.HEADER)),
        # ahead of now by more than a day
        (NOW + timedelta(days=2), None, None, (None, DateSource.NONE)),
        # fallbacks must be plausible themselves: never the epoch
        (None, utc(1970, 1, 1), utc(1970, 1, 1), (None, DateSource.NONE)),
        (
            utc(1970, 1, 1),
            utc(1970, 1, 1),
            FROM_LINE,
            (FROM_LINE, DateSource.FROM_LINE),
        ),
        (None, None, NOW + timedelta(days=30), (None, DateSource.NONE)),
    ],
)
def test_sanitise_date(
    header: datetime | None,
    received: datetime | None,
    from_line: datetime | None,
    expected: tuple[datetime | None, DateSource],
) -> None:
    assert (
        sanitise_date(header, received=received, from_line=from_line, now=NOW)
        == expected
    )


def test_sanitise_never_returns_now() -> None:
    for header in (None, utc(1970, 1, 1), utc(2099, 1, 1)):
        date, _ = sanitise_date(header, received=None, from_line=None, now=NOW)
        assert date is None


_MOMENTS = st.none() | st.datetimes(
    min_value=datetime(1960, 1, 1),  # noqa: DTZ001 - hypothesis wants naive bounds
    max_value=datetime(2100, 1, 1),  # noqa: DTZ001
    timezones=st.just(UTC),
)


@given(_MOMENTS, _MOMENTS, _MOMENTS)
def test_sanitise_result_is_plausible(
    header: datetime | None, received: datetime | None, from_line: datetime | None
) -> None:
    date, source = sanitise_date(
        header, received=received, from_line=from_line, now=NOW
    )
    if date is None:
        assert source is DateSource.NONE
    else:
        assert utc(1991, 1, 1) <= date <= NOW + timedelta(days=1)
        assert date in (header, received, from_line)
