"""Immutable value types shared by every layer of e2g.

No IO and no third-party imports: readers produce RawMessage, parsers produce Message
(with Patch / PullRequest / SubjectInfo), git.repo produces Commit, the matcher produces
Link. The store maps rows to and from these; output maps them to JSON.

Here: the bounds on mail fields, the enums, line weights, Address, Trailer and
SubjectInfo (a parsed subject, which search reads too). The
other types live beside, by who makes them: `model.mail` (archive readers and mail
parsers), `model.links` (git and the matcher), `model.stored` (the store's reads).
Why apart: every start of e2g pays for the types its modules import; `e2g search`
needs four of the eighteen (12.7 -> 2.5 ms of each search process,
`benchmarks/startup.py`).

Records are `typing.NamedTuple`s, not frozen dataclasses: on Python 3.11 a frozen
slotted dataclass costs ~0.55 ms to create at import (six methods compiled one by
one) and a named tuple ~0.08 ms; `e2g link` loaded 57 dataclasses, ~30 ms of its
~135 (184 -> 151 ms, alternating rounds of `benchmarks/startup.py`). A named tuple
is also built in one step where a frozen dataclass sets each field through
object.__setattr__, and pickles as its values. Change one with `record._replace()`.
Records that are changed after they are built, or that compare on some fields only
(model.patch), stay dataclasses, as do the matcher's per-candidate records, whose
attributes a scoring loop reads ~10 ns faster from slots.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import NamedTuple

# Named bounds for every field that comes from mail (STYLE 2.2 habit 8).
MAX_MESSAGE_ID = 512
MAX_SUBJECT = 2048
MAX_NAME = 256
MAX_ADDRESS = 320
MAX_REFERENCES = 128
MAX_BODY = 256 * 1024
MAX_DIFF = 8 * 1024 * 1024
MAX_FILES = 10_000


class Kind(StrEnum):
    """What a message is, for matching and display."""

    PATCH = "patch"
    COVER = "cover"
    PULL = "pull"
    REPLY = "reply"
    OTHER = "other"


class DateSource(StrEnum):
    """Where a message's sanitised date came from (DESIGN.md, "Dates")."""

    HEADER = "header"
    RECEIVED = "received"
    FROM_LINE = "from-line"
    NEIGHBOURS = "neighbours"
    NONE = "none"


class FileStatus(StrEnum):
    MODIFIED = "modified"
    ADDED = "added"
    DELETED = "deleted"
    RENAMED = "renamed"
    COPIED = "copied"


# How much a changed line weighs when two diffs are compared (the matcher's diff
# similarity), here because ingest stores each mail file's total weight. A line
# with fewer alphanumerics than MIN_ALNUM ("}", "", "*/", "});") says little about
# which patch it came from, so it weighs TRIVIAL_WEIGHT instead of 1.
MIN_ALNUM = 3
TRIVIAL_WEIGHT = 0.1


def is_informative(line: str) -> bool:
    """Whether a +/- line has enough letters or digits to tell patches apart."""
    alnum = 0
    for character in line:
        if character.isalnum():
            alnum += 1
            if alnum >= MIN_ALNUM:
                return True
    return False


def lines_weight(lines: Sequence[str]) -> tuple[int, float]:
    """(informative lines, total weight) of whitespace-collapsed +/- lines."""
    informative = sum(map(is_informative, lines))
    return informative, informative + TRIVIAL_WEIGHT * (len(lines) - informative)


class Address(NamedTuple):
    name: str
    email: str


class Trailer(NamedTuple):
    """`Key: value` at the foot of a commit message or in a mail (mail.trailers)."""

    key: str  # canonical case: "Link", "Message-Id", "Reviewed-by"
    value: str


class SubjectInfo(NamedTuple):
    """A parsed subject: "[PATCH v3 2/7] mm: fix x" -> version 3, part 2/7, key."""

    raw: str
    title: str  # subject without Re:/Fwd: and leading [...] groups
    key: (
        str  # title whitespace-collapsed and case-folded: compare commit summaries here
    )
    version: int = 1
    part: int | None = None
    total: int | None = None
    is_patch_tag: bool = False  # a [PATCH ...] / [RFC ...] style prefix was present
    rfc: bool = False
    resend: bool = False
    is_reply: bool = False  # Re:/AW:/Fwd: prefix
    tags: tuple[str, ...] = ()  # tree tags: net-next, liburing, 4.19, ...
