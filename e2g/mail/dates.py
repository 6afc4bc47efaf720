"""Dates of mails: Date:, Received: and mbox From-line parsing, and sanitising.

Pure functions; no IO and no clock (callers pass `now`). Used by mail.message.
Every result is an aware UTC datetime or None; nothing is ever invented: no fuzzy
parsing, no falling back to the epoch or to the ingest time (DESIGN.md, "Dates").

Broken forms seen in real archives, fixed by `_normalise` before the stdlib parser:
- "+-0100" (sign typed twice), "GMT+2" / "UTC+05:30", "+05:30" (colon in offset);
- comments "(PDT)", "(UTC)", "(CET)" and named zones the stdlib does not know (CET);
- three-digit years from `tm_year` bugs ("109" for 2009), full month names;
- ISO 8601 "2009-09-15 12:37:20" with no zone (read as UTC);
- absurd offsets ("+9900"): the offset is dropped rather than the date.
python-dateutil (non-fuzzy) is the fallback for layouts the stdlib cannot read;
a field it would fill from its default (a missing year, month or day) rejects the date.
"""

from __future__ import annotations

import email.utils
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone

from dateutil import parser as dateutil_parser

from e2g.model import DateSource

MAX_DATE_TEXT = 256
MIN_YEAR = 1970
MAX_YEAR = 2199
PLAUSIBLE_SINCE = datetime(1991, 1, 1, tzinfo=UTC)  # before this, a date is bogus
MAX_AHEAD = timedelta(days=1)  # tolerated lead over the Received: time or now
MAX_AWAY = timedelta(days=7)  # tolerated distance from the Received: time
MAX_OFFSET_MINUTES = 15 * 60
MAX_RECEIVED_HEADERS = 32
# git format-patch writes this fixed date into its "From <sha>" lines.
GIT_FORMAT_PATCH_DATE = datetime(2001, 9, 17, tzinfo=UTC)

_ZONES = {
    "UT": 0, "UTC": 0, "GMT": 0, "Z": 0, "WET": 0, "BST": 60, "IST": 60,
    "CET": 60, "MET": 60, "MEZ": 60, "WEST": 60, "CEST": 120, "MEST": 120,
    "MESZ": 120, "EET": 120, "EEST": 180, "MSK": 180, "MSD": 240,
    "EST": -300, "EDT": -240, "CST": -360, "CDT": -300, "MST": -420,
    "MDT": -360, "PST": -480, "PDT": -420, "AKST": -540, "AKDT": -480,
    "HST": -600, "JST": 540, "KST": 540, "HKT": 480, "SGT": 480, "AWST": 480,
    "ACST": 570, "AEST": 600, "AEDT": 660, "NZST": 720, "NZDT": 780,
}  # fmt: skip
_MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august",
    "september", "october", "november", "december",
)  # fmt: skip

_COMMENT = re.compile(r"\([^()]*\)")
_DOUBLE_SIGN = re.compile(r"(?<=\s)(?:\+-|-\+)(?=\d{4}\b)")
_NAMED_OFFSET = re.compile(
    r"\b(?:GMT|UTC|UT)\s*([+-])(\d{1,2})(?::?(\d{2}))?\b", re.IGNORECASE
)
_COLON_OFFSET = re.compile(r"(?<=\s)([+-])(\d{2}):(\d{2})\s*$")
_ZONE_NAME = re.compile(r"(?<=\s)([A-Za-z]{1,5})\s*$")
_NUMERIC_ZONE = re.compile(r"(?<=\s)[+-]?\d{4}\s*$")
_SHORT_YEAR = re.compile(r"(?<=[A-Za-z]\s)(1\d\d)(?=\s+\d{1,2}[:.])")
_FULL_MONTH = re.compile(r"\b(" + "|".join(_MONTHS) + r")\b", re.IGNORECASE)
# RFC 5322 with a numeric zone and at most a comment: parsedate_tz reads it right.
_STANDARD = re.compile(
    r"^\s*(?:[A-Z][a-z]{2},\s*)?\d{1,2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}(?::\d{2})? "
    r"[+-]\d{4}(?: \([^()]*\))?\s*$"
)
_ASCTIME = re.compile(r"^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]?\d \d{2}:\d{2}:\d{2} \d{4}$")
_ISO = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?")


def _offset_text(minutes: int) -> str:
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


def _named_offset(match: re.Match[str]) -> str:
    minutes = int(match[2]) * 60 + int(match[3] or 0)
    return _offset_text(-minutes if match[1] == "-" else minutes)


def _normalise(text: str) -> str:
    """Rewrite the known broken forms into RFC 5322 the stdlib can read."""
    for _ in range(4):  # nested comments, bounded
        stripped = _COMMENT.sub(" ", text)
        if stripped == text:
            break
        text = stripped
    text = " ".join(text.replace("\x00", " ").split())
    text = _DOUBLE_SIGN.sub("-", text)
    text = _NAMED_OFFSET.sub(_named_offset, text)
    text = _COLON_OFFSET.sub(r"\1\2\3", text)
    zone = _ZONE_NAME.search(text)
    if zone and not _NUMERIC_ZONE.search(text) and zone[1].upper() in _ZONES:
        text = text[: zone.start()] + _offset_text(_ZONES[zone[1].upper()])
    text = _SHORT_YEAR.sub(lambda match: str(1900 + int(match[1])), text)
    return _FULL_MONTH.sub(lambda match: match[1][:3], text)


def _checked(moment: datetime) -> datetime | None:
    """Aware UTC, or None for years outside what mail can carry."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        moment = moment.astimezone(UTC)
    except (OverflowError, ValueError):
        return None
    return moment if MIN_YEAR <= moment.year <= MAX_YEAR else None


def _parse_rfc(text: str) -> datetime | None:
    parts = email.utils.parsedate_tz(text)
    if parts is None:
        return None
    year, month, day, hour, minute, second = parts[:6]
    offset = parts[9] or 0
    if second > 61:  # leap seconds are 60 and 61; more is garbage, not a time
        return None
    if abs(offset) > MAX_OFFSET_MINUTES * 60 or offset % 60:
        offset = 0  # a bogus zone; sanitise_date judges the time against Received:
    try:
        moment = datetime(
            year, month, day, hour, minute, min(second, 59),
            tzinfo=timezone(timedelta(seconds=offset)),
        )  # fmt: skip
    except (ValueError, OverflowError, TypeError):
        return None
    return _checked(moment)


def _parse_iso(text: str) -> datetime | None:
    try:
        return _checked(datetime.fromisoformat(text))
    except ValueError:
        return None


_DEFAULT_A = datetime(1904, 2, 29)  # noqa: DTZ001 - dateutil's fill-in markers only
_DEFAULT_B = datetime(1908, 3, 28)  # noqa: DTZ001


def _parse_dateutil(text: str) -> datetime | None:
    """dateutil, non-fuzzy; reject when it had to fill a date field from its default."""
    try:
        first = dateutil_parser.parse(text, default=_DEFAULT_A, tzinfos=_tzinfos)
        second = dateutil_parser.parse(text, default=_DEFAULT_B, tzinfos=_tzinfos)
    except (ValueError, OverflowError, TypeError, LookupError):
        return None
    if first.date() != second.date():
        return None
    return _checked(first)


def _tzinfos(name: str, offset: int | None) -> timezone | None:
    if name and name.upper() in _ZONES:
        return timezone(timedelta(minutes=_ZONES[name.upper()]))
    return timezone(timedelta(seconds=offset)) if offset is not None else None


def parse_date(text: str) -> datetime | None:
    """A Date:-style text as aware UTC; None when it does not parse or is absurd."""
    if not text or len(text) > MAX_DATE_TEXT * 4:
        return None
    if _STANDARD.match(text) or _ASCTIME.match(text):  # common forms need no repair
        return _parse_rfc(text)
    normal = _normalise(text[: MAX_DATE_TEXT * 4])
    if not normal or len(normal) > MAX_DATE_TEXT:
        return None
    if _ISO.match(normal):
        parsed = _parse_iso(normal)
        if parsed is not None:
            return parsed
    parsed = _parse_rfc(normal)
    if parsed is None and any(character.isdigit() for character in normal):
        parsed = _parse_dateutil(normal)
    return parsed


def parse_received(headers: Sequence[str]) -> datetime | None:
    """The list server's Received: time: the topmost Received: header's date.

    The date follows the last ';'. When the topmost header carries no readable date
    the next one down is used, so one odd relay does not lose the timestamp.
    """
    for header in headers[:MAX_RECEIVED_HEADERS]:
        _, semicolon, stamp = header.rpartition(";")
        if semicolon:
            parsed = parse_date(stamp.strip())
            if parsed is not None:
                return parsed
    return None


def parse_from_line_date(from_line: bytes) -> datetime | None:
    """The date of an mbox separator, "From addr Thu Jan  1 00:00:00 1970", as UTC.

    git format-patch's fixed "Mon Sep 17 00:00:00 2001" is a placeholder, not a date.
    """
    text = from_line[: MAX_DATE_TEXT * 2].decode("ascii", "replace").strip()
    if text.startswith("From "):
        text = text[5:]
    _, _, stamp = text.strip().partition(" ")
    parsed = parse_date(stamp)
    if parsed == GIT_FORMAT_PATCH_DATE:
        return None
    return parsed


def _plausible(moment: datetime | None, now: datetime) -> bool:
    return moment is not None and PLAUSIBLE_SINCE <= moment <= now + MAX_AHEAD


def sanitise_date(
    header: datetime | None,
    *,
    received: datetime | None,
    from_line: datetime | None,
    now: datetime,
) -> tuple[datetime | None, DateSource]:
    """The date to keep and where it came from (DESIGN.md, "Dates").

    The header date is bogus when missing, before 1991, more than a day ahead of now
    or of the Received: time, or more than 7 days from the Received: time. A bogus
    date gives way to Received:, then to the From-line date (each only when itself
    plausible), else to nothing: the pipeline interpolates from archive neighbours.
    """
    if not _plausible(received, now):
        received = None
    bogus = not _plausible(header, now)
    if not bogus and received is not None and header is not None:
        bogus = header > received + MAX_AHEAD or abs(header - received) > MAX_AWAY
    if not bogus:
        return header, DateSource.HEADER
    if received is not None:
        return received, DateSource.RECEIVED
    if from_line is not None and _plausible(from_line, now):
        return from_line, DateSource.FROM_LINE
    return None, DateSource.NONE
