"""Commit-message trailers and the Message-IDs they name.

Owns two pure steps: finding the trailer block of a commit message (git's own rule:
the last paragraph, mostly `Key: value` lines) and reading the Message-IDs that
`Link:`, `Message-Id:` and `Closes:` trailers point at (lore.kernel.org,
patch.msgid.link, lkml.kernel.org/r, patchwork, or a bare `<msgid>`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from urllib.parse import unquote, urlsplit

from e2g.model import MAX_BODY, MAX_MESSAGE_ID, Trailer

MAX_TRAILERS = 256
MAX_TRAILER_VALUE = 2048

# git accepts `token: value` where the token is letters, digits and dashes.
_TRAILER_LINE = re.compile(r"([A-Za-z0-9][A-Za-z0-9-]{0,63})[ \t]*:[ \t]*(.*)")
# Keys that mark a paragraph as a trailer block even when it holds other lines too
# (git recognises only Signed-off-by; kernel trees use these all the time).
_KNOWN_KEYS = frozenset(
    {
        "signed-off-by",
        "reviewed-by",
        "acked-by",
        "tested-by",
        "reported-by",
        "suggested-by",
        "co-developed-by",
        "link",
        "message-id",
        "closes",
        "fixes",
        "cc",
    }
)
# Trailers that may name the posting itself; bare `<msgid>` is read only from these
# (Signed-off-by values hold `<email>`, which looks like a bare msgid).
_ID_KEYS = frozenset({"link", "message-id", "closes", "in-reply-to"})
_URL = re.compile(r"https?://[^\s<>\"'`]+", re.IGNORECASE)
_BRACKETED_ID = re.compile(r"<([^<>\s]{1,512}@[^<>\s]{1,512})>")
_MESSAGE_ID = re.compile(r"[^\s<>/]+@[^\s<>/]+")
# Archives whose paths never hold a Message-ID, though a segment may contain "@".
_NOT_MESSAGE_ID_HOSTS = frozenset(
    {
        "github.com",
        "gitlab.com",
        "marc.info",
        "www.spinics.net",
        "spinics.net",
        "lkml.org",
        "www.mail-archive.com",
    }
)
_URL_TAIL_PUNCTUATION = ".,;:)]>'\""


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


def message_id_from_url(url: str) -> str | None:
    """The Message-ID a public-inbox or patchwork URL names, or None.

    Handles lore.kernel.org/r/ID, lore.kernel.org/LIST/ID/T/#u, /raw,
    patch.msgid.link/ID, lkml.kernel.org/r/ID, patchwork's /patch/ID/, with
    %-escapes decoded (%40 is "@", %2B is "+").
    """
    url = url.strip().strip("<>").rstrip(_URL_TAIL_PUNCTUATION)
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unbalanced "[" in the host
        return None
    host = (parts.hostname or "").lower()
    if not host or host in _NOT_MESSAGE_ID_HOSTS:
        return None
    for segment in parts.path.split("/"):
        candidate = _clean_message_id(unquote(segment))
        if candidate is not None:
            return candidate
    return None


def _ids_in_value(trailer: Trailer) -> list[str]:
    value = trailer.value
    ids = [
        message_id
        for url in _URL.findall(value)
        if (message_id := message_id_from_url(url)) is not None
    ]
    if trailer.key.lower() not in _ID_KEYS or ids or _URL.search(value):
        return ids
    bracketed = _BRACKETED_ID.findall(value)
    if bracketed:
        return [m for m in (_clean_message_id(b) for b in bracketed) if m is not None]
    # `Message-Id: 20200101.1-1-a@b.c` without brackets.
    first = value.split()[0] if value.split() else ""
    bare = _clean_message_id(first) if trailer.key.lower() == "message-id" else None
    return [bare] if bare is not None else []


def _clean_message_id(text: str) -> str | None:
    text = text.strip().strip("<>").strip()
    if len(text) > MAX_MESSAGE_ID or _MESSAGE_ID.fullmatch(text) is None:
        return None
    return text


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
