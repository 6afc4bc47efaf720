"""Patchwork's fuzzer-found mails and series threads: parsed or Malformed, never raised."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from e2g.mail.message import parse_message
from e2g.model import MAX_ADDRESS, MAX_MESSAGE_ID, MAX_NAME, Kind
from e2g.model.mail import Malformed, Message, Origin, RawMessage

PATCHWORK = (
    Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "patchwork"
)
NOW = datetime(2026, 1, 15, tzinfo=UTC)

pytestmark = pytest.mark.corpus


def corpus_files(folder: str, pattern: str) -> list[Path]:
    return sorted((PATCHWORK / folder).glob(pattern)) if PATCHWORK.is_dir() else []


def split_mbox(data: bytes) -> list[RawMessage]:
    """The mails of a small mbox, split on '\\nFrom ' lines (test helper only)."""
    chunks = data.split(b"\nFrom ")
    mails = [chunks[0]] + [b"From " + chunk for chunk in chunks[1:]]
    found = []
    for position, chunk in enumerate(mails):
        line, _, rest = chunk.partition(b"\n")
        if line.startswith(b"From "):
            found.append(
                RawMessage(rest, Origin("series", str(position)), from_line=line)
            )
        elif chunk.strip():
            found.append(RawMessage(chunk, Origin("series", str(position))))
    return found


def _skip_without_corpus() -> None:
    if not PATCHWORK.is_dir():
        pytest.skip("shared corpus not present")


@pytest.mark.parametrize(
    "path", corpus_files("fuzz", "*.mbox"), ids=lambda path: path.name
)
def test_fuzz_mail_never_raises(path: Path) -> None:
    data = path.read_bytes()
    line, _, rest = data.partition(b"\n")
    raw = (
        RawMessage(rest, Origin(path.name, "0"), from_line=line)
        if line.startswith(b"From ")
        else RawMessage(data, Origin(path.name, "0"))
    )
    parsed = parse_message(raw, now=NOW)
    assert isinstance(parsed, (Message, Malformed))
    if isinstance(parsed, Message):
        assert len(parsed.message_id) <= MAX_MESSAGE_ID + 40
        assert len(parsed.author.name) <= MAX_NAME
        assert len(parsed.author.email) <= MAX_ADDRESS
        assert parsed.date is None or parsed.date.tzinfo is UTC
        for text in (
            parsed.message_id,
            parsed.author.name,
            parsed.subject.raw,
            parsed.body,
            parsed.date_raw,
        ):
            text.encode("utf-8")  # no lone surrogates


def test_fuzz_corpus_is_there() -> None:
    _skip_without_corpus()
    assert len(corpus_files("fuzz", "*.mbox")) == 17


def test_fuzz_bad_dates_are_not_invented() -> None:
    _skip_without_corpus()
    for name in (
        "date.mbox",
        "date-oserror.mbox",
        "year-out-of-range.mbox",
        "dateheader.mbox",
    ):
        data = (PATCHWORK / "fuzz" / name).read_bytes()
        parsed = parse_message(RawMessage(data, Origin(name, "0")), now=NOW)
        assert isinstance(parsed, Message)
        assert parsed.date is None or parsed.date.year >= 1991
        assert parsed.date != NOW


@pytest.mark.parametrize(
    "path", corpus_files("series", "*.mbox"), ids=lambda path: path.name
)
def test_series_mails_parse(path: Path) -> None:
    raws = split_mbox(path.read_bytes())
    assert raws
    for raw in raws:
        parsed = parse_message(raw, now=NOW)
        assert isinstance(parsed, Message), (path.name, raw.origin, parsed)
        assert not parsed.synthetic_id
        assert parsed.date is not None


# [covers, patches, comments] as patchwork's series tests count them
SERIES_COUNTS = {
    "base-single-patch.mbox": (0, 1, 0),
    "base-cover-letter.mbox": (1, 2, 0),
    "base-no-cover-letter.mbox": (0, 2, 0),
    "base-deep-threaded.mbox": (1, 2, 0),
    "base-out-of-order.mbox": (1, 2, 0),
    "base-different-versions.mbox": (1, 4, 0),
    "bugs-multiple-references.mbox": (1, 4, 0),
    "base-no-references.mbox": (0, 2, 0),
    "base-no-references-no-cover.mbox": (1, 2, 0),
    "bugs-multiple-content-types.mbox": (0, 1, 1),
    "revision-basic.mbox": (2, 4, 0),
    "revision-threaded-to-single-patch.mbox": (0, 2, 0),
    "revision-threaded-to-cover.mbox": (2, 4, 0),
    "revision-threaded-to-patch.mbox": (2, 4, 0),
    "revision-out-of-order.mbox": (2, 4, 0),
    "revision-no-cover-letter.mbox": (1, 4, 0),
    "revision-unlabeled.mbox": (2, 4, 0),
    "revision-unlabeled-noreferences.mbox": (0, 4, 0),
    "bugs-unnumbered.mbox": (1, 2, 0),
    "bugs-nocover-noversion.mbox": (0, 4, 0),
    "bugs-nocover.mbox": (0, 4, 0),
    "bugs-spamming.mbox": (0, 3, 0),
    "bugs-mixed-versions.mbox": (0, 2, 0),
    "base-incomplete.mbox": (1, 1, 0),
    "base-extra-patches.mbox": (1, 3, 0),
    "mercurial-cover-letter.mbox": (1, 2, 0),
    "mercurial-no-cover-letter.mbox": (0, 2, 0),
}


@pytest.mark.parametrize("name", sorted(SERIES_COUNTS), ids=lambda name: name)
def test_series_kinds_match_patchwork(name: str) -> None:
    _skip_without_corpus()
    kinds = Counter(
        parsed.kind
        for raw in split_mbox((PATCHWORK / "series" / name).read_bytes())
        if isinstance(parsed := parse_message(raw, now=NOW), Message)
    )
    expected = SERIES_COUNTS[name]
    assert (kinds[Kind.COVER], kinds[Kind.PATCH], kinds[Kind.REPLY]) == expected
