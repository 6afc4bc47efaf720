"""Pure helpers the pages and the API share: input checks, box routing, safe URLs and
diff line classes. The JSON shapes (messages, threads, commits, search hits, stats)
are `e2g.render`'s, shared with the CLI.

No IO and no framework types: strings in, strings and small values out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple
from urllib.parse import quote, urlsplit

from e2g.mail import msgid
from e2g.mail.hunks import hunks_of, line_kind

MAX_REV = 200
MAX_URL = 2048
MAX_PATH = 4096  # a file's path in the repository, as git's PATH_MAX
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


def check_path(text: str) -> str:
    """A repository path to hand to git as `rev:path` (git checks it against the
    tree; it is never joined into a file system path), or BadInput."""
    if (
        not text
        or len(text) > MAX_PATH
        or text.startswith("/")
        or any(not char.isprintable() for char in text)
    ):
        raise BadInput("bad-path", "not a file path of the repository")
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


class BoxTarget(NamedTuple):
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
    """(css class, line) for each line: "add", "del", "hunk", "meta" or "ctx".

    The hunks are e2g.mail.hunks' (unidiff, the scanner for what it rejects), so a
    removed `-- x` line inside a hunk is a removal and a `---`/`+++` line outside one
    is a file header, in git's diffs and in older tools' alike."""
    lines = diff.splitlines()
    inside: dict[int, str] = {}
    for file in hunks_of(diff):
        for hunk in file.hunks:
            inside[hunk.at] = "hunk"
            for index in range(hunk.at + 1, hunk.end):
                if lines[index][:1] in ("+", "-"):
                    inside[index] = line_kind(lines[index])
    for index, line in enumerate(lines):
        yield inside.get(index) or _outside_hunks(line), line


def _outside_hunks(line: str) -> str:
    if line.startswith(DIFF_META) or line.startswith(("--- ", "+++ ")):
        return "meta"
    if line.startswith("@@"):
        return "hunk"  # a header no hunk reader takes (`@@@` of a combined diff)
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "del"
    return "ctx"
