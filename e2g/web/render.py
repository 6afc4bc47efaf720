"""Pure helpers the pages and the API share: input checks, box routing, safe URLs,
diff line classes, and the JSON shapes of messages, threads and search hits.

No IO and no framework types: strings and e2g values in, strings and dicts out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote, urlsplit

from e2g.api.threads import MessageView, ThreadNode, ThreadView
from e2g.config import Settings
from e2g.index.store import StoredMessage
from e2g.mail import msgid

MAX_REV = 200
MAX_URL = 2048
# A revision we hand to git: no leading "-" (never an option), no ranges, no reflog
# syntax, nothing a shell or git would read as special.
_REV = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/~^-]*")
_SHA = re.compile(r"[0-9a-fA-F]{7,40}")
_FULL_SHA = re.compile(r"[0-9a-f]{40}")
_MESSAGE_ID_PATH_SAFE = "@!$&'()*+,;=:~-._"

DIFF_META = (
    "diff ",
    "index ",
    "new file",
    "deleted file",
    "similarity",
    "dissimilarity",
    "rename ",
    "copy ",
    "old mode",
    "new mode",
    "Binary files",
    "GIT binary patch",
)


class BadInput(ValueError):
    """A request value that cannot be what it claims to be; shown as a 400."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def check_message_id(text: str) -> str:
    """The Message-ID as stored, or BadInput for anything a Message-ID cannot be."""
    found = msgid.from_typed(text)
    if found is None:
        raise BadInput(
            "bad-message-id",
            "not a Message-ID: expected <local@domain> without spaces, at most 512 characters",
        )
    return found


def check_rev(text: str) -> str:
    """A commit id or ref name safe to hand to git, or BadInput."""
    if len(text) > MAX_REV or not _REV.fullmatch(text) or ".." in text:
        raise BadInput(
            "bad-revision",
            "not a commit id: expected a sha (full or abbreviated) or a branch/tag name",
        )
    return text


def is_full_sha(text: str) -> bool:
    return _FULL_SHA.fullmatch(text) is not None


def message_path(message_id: str) -> str:
    """The Message-ID as one URL path part: every reserved byte percent-encoded."""
    return quote(message_id, safe=_MESSAGE_ID_PATH_SAFE)


def safe_href(url: str | None) -> str | None:
    """`url` if it is a plain http(s) URL, else None: mail never gets to pick a scheme."""
    if not url or len(url) > MAX_URL:
        return None
    if any(char.isspace() or not char.isprintable() for char in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return url


@dataclass(frozen=True, slots=True)
class BoxTarget:
    """Where the front page's box sends what was typed: "commit", "message" or "search"."""

    kind: str
    value: str


def route_box(text: str, *, known_message: bool) -> BoxTarget:
    """Commit id -> commit page; a stored Message-ID -> its thread; anything else -> search.

    `known_message` says whether the Message-ID candidate of `text` (see
    `message_candidate`) is in the store; an address like alice@example.org that is not a
    stored Message-ID is searched for instead.
    """
    text = text.strip()
    if _SHA.fullmatch(text):
        return BoxTarget("commit", text.lower())
    candidate = message_candidate(text)
    if candidate is not None and known_message:
        return BoxTarget("message", candidate)
    return BoxTarget("search", text)


def message_candidate(text: str) -> str | None:
    text = text.strip()
    if text.lower().startswith(("http://", "https://")):
        return msgid.from_url(text)
    if text.lower().startswith("id:"):
        text = text[3:]
    if "@" not in text:
        return None
    return msgid.from_typed(text)


def diff_lines(diff: str) -> Iterator[tuple[str, str]]:
    """(css class, line) for each line: "add", "del", "hunk", "meta" or "ctx"."""
    in_header = False
    for line in diff.splitlines():
        if line.startswith(DIFF_META):
            in_header = True
            yield "meta", line
        elif line.startswith("@@"):
            in_header = False
            yield "hunk", line
        elif in_header and line.startswith(("--- ", "+++ ")):
            yield "meta", line
        elif line.startswith("+"):
            yield "add", line
        elif line.startswith("-"):
            yield "del", line
        else:
            yield "ctx", line


def iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


# --- JSON shapes ---------------------------------------------------------------------


def _first_list(message: StoredMessage) -> str | None:
    return message.lists[0] if message.lists else message.list_id


def message_summary(message: StoredMessage, settings: Settings) -> dict[str, object]:
    patch_author = None
    if message.patch_author_email:
        patch_author = {
            "name": message.patch_author_name or "",
            "email": message.patch_author_email,
        }
    return {
        "message_id": message.message_id,
        "subject": message.subject,
        "author": {"name": message.author_name, "email": message.author_email},
        "patch_author": patch_author,
        "date": iso(message.date),
        "date_raw": message.date_raw,
        "date_source": message.date_source,
        "date_corrected": message.date_corrected,
        "lists": list(message.lists),
        "kind": message.kind,
        "version": message.version,
        "part": message.part,
        "total": message.total,
        "parent_id": message.parent_id,
        "thread_root": message.thread_root,
        "files": list(message.files),
        "added": message.added,
        "removed": message.removed,
        "patch_id": message.patch_id,
        "pull": {"url": message.pull_url, "ref": message.pull_ref}
        if message.pull_url
        else None,
        "url": settings.url_for(message.message_id, _first_list(message)),
    }


def node_json(node: ThreadNode, settings: Settings) -> dict[str, object]:
    data = message_summary(node.message, settings)
    data["trailers"] = [{"key": t.key, "value": t.value} for t in node.trailers]
    data["shown"] = node.shown
    if node.shown:
        data["body"] = node.message.body
        data["diff"] = node.diff
        data["diff_truncated"] = node.diff_truncated
    return data


def message_json(view: MessageView, settings: Settings) -> dict[str, object]:
    data = node_json(view.node, settings)
    data["replies"] = view.replies
    return data


def thread_json(view: ThreadView, settings: Settings) -> dict[str, object]:
    messages = []
    for node in view.nodes:
        data = node_json(node, settings)
        data.update(
            depth=node.depth,
            parent_missing=node.parent_missing,
            loop=node.loop,
            focus=node.focus,
        )
        messages.append(data)
    return {
        "root": view.root,
        "focus": view.focus,
        "total": view.total,
        "truncated": view.truncated,
        "root_missing": view.root_missing,
        "messages": messages,
    }
