"""Trailers, in commits and in mail, and the Message-IDs they name.

The one home of the trailer vocabulary: which keys e2g knows, their canonical
spelling, and their kind (a person credited, a review given, a pointer). Mail
parsing, the thread view and the matcher's reviewer lists all read it from here.

Owns three pure steps: finding the trailer block of a commit message (git's own
rule: the last paragraph, mostly `Key: value` lines), finding the known trailers in
a mail's unquoted commentary (a reply's `Reviewed-by:` may sit anywhere in it), and
reading the Message-IDs that `Link:`, `Message-Id:` and `Closes:` trailers point at
(lore.kernel.org, patch.msgid.link, lkml.kernel.org/r, patchwork, or a bare
`<msgid>`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from enum import StrEnum

from e2g.mail import msgid
from e2g.model import MAX_BODY, Trailer

MAX_TRAILERS = 256
MAX_TRAILER_VALUE = 2048
MAX_MAIL_TRAILERS = 64  # per message: a reply quoting a whole series gets no more


class TrailerKind(StrEnum):
    PERSON = "person"  # someone credited: author, co-author, reporter, Cc
    REVIEW = "review"  # someone who reviewed, acked, tested or nacked the patch
    UTILITY = "utility"  # a pointer: a link, the commit fixed, the issue closed


# The trailers kernel-style projects use (Documentation/process/submitting-patches).
# Mail keeps only these: a reply's "Note: ..." line is prose, not a trailer.
_VOCABULARY = {
    "signed-off-by": ("Signed-off-by", TrailerKind.PERSON),
    "co-developed-by": ("Co-developed-by", TrailerKind.PERSON),
    "reported-by": ("Reported-by", TrailerKind.PERSON),
    "suggested-by": ("Suggested-by", TrailerKind.PERSON),
    "requested-by": ("Requested-by", TrailerKind.PERSON),
    "cc": ("Cc", TrailerKind.PERSON),
    "reviewed-by": ("Reviewed-by", TrailerKind.REVIEW),
    "acked-by": ("Acked-by", TrailerKind.REVIEW),
    "tested-by": ("Tested-by", TrailerKind.REVIEW),
    "nacked-by": ("Nacked-by", TrailerKind.REVIEW),
    "reviewed-and-tested-by": ("Reviewed-and-tested-by", TrailerKind.REVIEW),
    "link": ("Link", TrailerKind.UTILITY),
    "fixes": ("Fixes", TrailerKind.UTILITY),
    "closes": ("Closes", TrailerKind.UTILITY),
    "message-id": ("Message-Id", TrailerKind.UTILITY),
}
# Canonical keys of the reviews a posting's replies gave, as the store holds them.
REVIEW_KEYS = tuple(
    canonical for canonical, kind in _VOCABULARY.values() if kind is TrailerKind.REVIEW
)

# The review tags that approve a patch (every review key but Nacked-by, which is
# review but no approval): what makes a patch reviewed for `e2g audit` and the queue.
NACKED_BY = "Nacked-by"
ACKED_BY = "Acked-by"  # the tag a bare "Ack." backs (e2g.mail.review)
APPROVAL_KEYS = frozenset(key for key in REVIEW_KEYS if key != NACKED_BY)
# A line that may give an approving review tag: only messages with one are parsed
# for trailers (most commits carry none).
APPROVAL_LINE = re.compile(
    "(?im)^[ \t]*(?:"
    + "|".join(sorted((re.escape(key) for key in APPROVAL_KEYS), key=len, reverse=True))
    + "):"
)

# git accepts `token: value` where the token is letters, digits and dashes.
_TRAILER_LINE = re.compile(r"([A-Za-z0-9][A-Za-z0-9-]{0,63})[ \t]*:[ \t]*(.*)")
# A known trailer on a line of mail, maybe indented; the value must not be empty.
_KNOWN_ALTERNATIVES = "|".join(sorted(_VOCABULARY, key=len, reverse=True))
# Mail keeps every known trailer but Cc: the mail's own headers say who was copied,
# and kernel patches carry many Cc: lines that would double the stored trailers.
_KEPT_FROM_MAIL = "|".join(sorted(set(_VOCABULARY) - {"cc"}, key=len, reverse=True))
_MAIL_TRAILER = re.compile(
    rf"^[ \t]*({_KEPT_FROM_MAIL})[ \t]*:[ \t]*(\S[^\n]*?)[ \t\r]*$",
    re.IGNORECASE | re.MULTILINE,
)
_MAIL_TRAILER_START = re.compile(rf"[ \t]*(?:{_KNOWN_ALTERNATIVES})[ \t]*:\s", re.I)
# Keys that mark a paragraph as a trailer block even when it holds other lines too
# (git recognises only Signed-off-by; kernel trees use these all the time).
_KNOWN_KEYS = frozenset(_VOCABULARY)
# Trailers that may name the posting itself; bare `<msgid>` is read only from these
# (Signed-off-by values hold `<email>`, which looks like a bare msgid).
_ID_KEYS = frozenset({"link", "message-id", "closes", "in-reply-to"})
_URL = re.compile(r"https?://[^\s<>\"'`]+", re.IGNORECASE)
_BRACKETED_ID = re.compile(r"<([^<>\s]{1,512}@[^<>\s]{1,512})>")


def parse_trailers(message: str) -> tuple[Trailer, ...]:
    """Trailers of a commit message: its trailer block plus earlier link-only paragraphs.

    The block is git's: the last paragraph, accepted when every line is a trailer,
    or when it holds a well-known key and at least a quarter of its lines are
    trailers. Earlier paragraphs made only of `Link:`/`Message-Id:`/`Closes:` lines
    count too, because maintainers sometimes put those above a note. `message` is
    the whole commit message, subject first.
    """
    # The first paragraph is the subject: never trailers, as in git.
    paragraphs = _paragraphs(message[-MAX_BODY:])[1:]
    if not paragraphs:
        return ()
    found: list[Trailer] = []
    for paragraph in paragraphs[:-1]:
        trailers = _parse_block(paragraph)
        links_only = all(t.key.lower() in _ID_KEYS for t in trailers)
        if trailers and links_only and len(trailers) == _count_entries(paragraph):
            found.extend(trailers)
    last = paragraphs[-1]
    trailers = _parse_block(last)
    if _is_trailer_block(trailers, entries=_count_entries(last)):
        found.extend(trailers)
    return tuple(found[:MAX_TRAILERS])


def find_in_mail(commentary: str) -> tuple[Trailer, ...]:
    """The known trailers (but Cc) in a mail's unquoted commentary, canonical keys,
    in order."""
    found: list[Trailer] = []
    for match in _MAIL_TRAILER.finditer(commentary):
        canonical = _VOCABULARY[match[1].lower()][0]
        found.append(Trailer(canonical, match[2][:MAX_TRAILER_VALUE]))
        if len(found) >= MAX_MAIL_TRAILERS:
            break
    return tuple(found)


def is_trailer_line(line: str) -> bool:
    """Whether a line of mail starts with a known trailer ("Acked-by: ...")."""
    return _MAIL_TRAILER_START.match(line) is not None


def kind_of(key: str) -> TrailerKind | None:
    """The kind of a trailer key in any case; None for a key outside the vocabulary."""
    known = _VOCABULARY.get(key.lower())
    return known[1] if known else None


def linked_message_ids(trailers: Iterable[Trailer]) -> list[str]:
    """Message-IDs named by the trailers, in order, without duplicates.

    URLs count from any trailer (a lore link may follow `Reported-by:`); a bare
    `<msgid>` only from Link/Message-Id/Closes. GitHub, marc.info and spinics URLs
    name no Message-ID.
    """
    ids: list[str] = []
    for trailer in trailers:
        for message_id in _ids_in_value(trailer):
            if message_id not in ids:
                ids.append(message_id)
    return ids


def _ids_in_value(trailer: Trailer) -> list[str]:
    value = trailer.value
    ids = [
        message_id
        for url in _URL.findall(value)
        if (message_id := msgid.from_url(url)) is not None
    ]
    if trailer.key.lower() not in _ID_KEYS or ids or _URL.search(value):
        return ids
    bracketed = _BRACKETED_ID.findall(value)
    if bracketed:
        return [m for m in (msgid.from_text(b) for b in bracketed) if m is not None]
    # `Message-Id: 20200101.1-1-a@b.c` without brackets.
    first = value.split()[0] if value.split() else ""
    bare = msgid.from_text(first) if trailer.key.lower() == "message-id" else None
    return [bare] if bare is not None else []


def _paragraphs(message: str) -> list[list[str]]:
    """Non-empty paragraphs (lists of lines), comment lines dropped as git does."""
    paragraphs: list[list[str]] = []
    current: list[str] = []
    for line in message.splitlines():
        if line.startswith("#"):
            continue
        if line.strip():
            current.append(line.rstrip())
        elif current:
            paragraphs.append(current)
            current = []
    if current:
        paragraphs.append(current)
    return paragraphs


def _parse_block(lines: Sequence[str]) -> list[Trailer]:
    """Trailer lines of one paragraph; indented lines continue the previous one."""
    trailers: list[Trailer] = []
    previous_was_trailer = False
    for line in lines:
        if line[:1] in (" ", "\t") and previous_was_trailer:
            last = trailers[-1]
            value = f"{last.value} {line.strip()}"[:MAX_TRAILER_VALUE]
            trailers[-1] = Trailer(last.key, value)
            continue
        trailer = _parse_line(line)
        previous_was_trailer = trailer is not None
        if trailer is not None:
            trailers.append(trailer)
    return trailers


def _parse_line(line: str) -> Trailer | None:
    match = _TRAILER_LINE.fullmatch(line)
    if match is None:
        return None
    key, value = match.group(1), match.group(2).strip()
    # "https://host/..." alone on a line is a URL, not a trailer called "https".
    if not value or value.startswith("//"):
        return None
    return Trailer(_canonical_key(key), value[:MAX_TRAILER_VALUE])


def _count_entries(lines: Sequence[str]) -> int:
    """Lines of a paragraph that start an entry (continuation lines belong to one)."""
    return sum(1 for line in lines if line[:1] not in (" ", "\t")) or 1


def _is_trailer_block(trailers: Sequence[Trailer], *, entries: int) -> bool:
    if not trailers:
        return False
    if len(trailers) >= entries:
        return True
    known = any(trailer.key.lower() in _KNOWN_KEYS for trailer in trailers)
    return known and len(trailers) * 4 >= entries


def _canonical_key(key: str) -> str:
    """ "signed-off-BY" -> "Signed-off-by", "Message-ID" -> "Message-Id"."""
    lowered = key.lower()
    if lowered == "message-id":
        return "Message-Id"
    return lowered[:1].upper() + lowered[1:]
