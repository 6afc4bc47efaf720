"""Message-IDs: the one home of how e2g reads them, wherever they come from.

A Message-ID is keyed in the store without its angle brackets. How much to forgive
depends on where the text comes from, so there is one reader per source:

- `from_header`: a Message-ID: header. Lenient, as archives are: comments, folding
  and missing brackets are forgiven, and what is left is kept (bounded).
- `from_references`: the ids of In-Reply-To:/References:, de-duplicated and bounded.
- `from_typed`: what a user typed or pasted (a CLI argument, the web box, an API
  path): "<id>" or "id", printable, no spaces.
- `from_url`: the id a public-inbox or patchwork URL names (lore.kernel.org/r/ID,
  patch.msgid.link/ID, ...).
- `from_text`: an id found in free text such as a commit trailer: strict
  (local@domain, no "/" or spaces), because a trailer also holds e-mail addresses
  and paths.
- `from_argument`: an argument of `e2g link`, which names either a message (any of
  the typed or URL forms) or a git revision (`HEAD@{1}`, `v6.1`, a sha).
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from e2g.mail.headers import clean_raw
from e2g.model import MAX_MESSAGE_ID

_ANGLE = re.compile(r"<([^<>]*)>")
_COMMENT = re.compile(r"\(([^()]*)\)")
_BARE_ID = re.compile(r"[^\s<>()\",;:]+@[^\s<>()\",;:]+")
_STRICT_ID = re.compile(r"[^\s<>/]+@[^\s<>/]+")
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


def from_header(value: str | None) -> str | None:
    """A Message-ID without <>, comments and whitespace; None when nothing is left."""
    text = clean_raw(value, limit=MAX_MESSAGE_ID * 4)
    angle = _ANGLE.search(text)
    candidate = angle[1] if angle else _COMMENT.sub(" ", text)
    candidate = "".join(candidate.split()).strip("<>")
    return candidate[:MAX_MESSAGE_ID] or None


def from_references(value: str | None, *, limit: int) -> tuple[str, ...]:
    """The ids in In-Reply-To:/References:, in order, de-duplicated, bounded.

    When there are too many, the first (the thread root) and the last ones (the
    nearest ancestors) are kept.
    """
    text = clean_raw(value, limit=limit * MAX_MESSAGE_ID)
    raw_ids = _ANGLE.findall(text)
    if not raw_ids:
        raw_ids = _BARE_ID.findall(_COMMENT.sub(" ", text))
    found: dict[str, None] = {}
    for raw_id in raw_ids:
        message_id = "".join(raw_id.split())[:MAX_MESSAGE_ID]
        if message_id:
            found.setdefault(message_id, None)
    ids = tuple(found)
    if len(ids) > limit:
        ids = ids[:1] + ids[len(ids) - limit + 1 :]
    return ids


def from_typed(text: str) -> str | None:
    """A Message-ID as the store keys it (no <>, no spaces), or None if it cannot be one."""
    text = text.strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1].strip()
    if not text or len(text) > MAX_MESSAGE_ID:
        return None
    if any(char.isspace() or not char.isprintable() or char in "<>" for char in text):
        return None
    return text


def from_url(url: str) -> str | None:
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
        candidate = from_text(unquote(segment))
        if candidate is not None:
            return candidate
    return None


def from_text(text: str) -> str | None:
    """`text` (maybe in <>) when it is one plausible Message-ID: local@domain, no "/"."""
    text = text.strip().strip("<>").strip()
    if len(text) > MAX_MESSAGE_ID or _STRICT_ID.fullmatch(text) is None:
        return None
    return text


def from_argument(text: str) -> str | None:
    """The Message-ID `text` names (<id>, id, or an archive URL), or None for anything
    that reads as a git revision instead (`HEAD@{1}`, `@~2`, `v6.1`, a sha)."""
    text = text.strip()
    if "://" in text:
        return from_url(text)
    if text.startswith("<") and text.endswith(">"):
        return from_typed(text)
    if "@{" in text:
        return None
    return from_text(text)
