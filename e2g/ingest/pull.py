"""git request-pull detection: the repository URL and ref a pull request names.

Pure functions on str; no IO. Used by ingest.message to mark Kind.PULL.

`git request-pull` writes, in every version since 2006:

    The following changes since commit <sha>:
    ...
    are available in the git repository at:      (2.14.3+: "the Git repository")

      git://git.kernel.org/pub/scm/.../linux.git tags/foo-for-v5.6

Older tools wrote "are found in the git repository at:". Real mails wrap the URL line
(the ref lands on the next line, or the URL is cut after a '/'), leave trailing spaces,
or end the URL line with a backslash. A request without a ref (pull HEAD) is valid.
Quoted lines ('>') are never read: a reply quoting a pull request is not one.
Fallback: a `git pull <url> [<ref>]` command line, as older requests gave.
"""

from __future__ import annotations

import re

from e2g.model import PullRequest

MAX_URL = 1024
MAX_REF = 256
MAX_SCAN_LINES = 4000

_ANNOUNCE = re.compile(
    r"\bare (?:available|found) (?:in|at|from)\b.*\b(?:repository|at)\s*:?\s*$",
    re.IGNORECASE,
)
_URL = re.compile(
    r"^(?:(?:git|ssh|git\+ssh|ssh\+git|https?|rsync)://[^\s<>\"']+"
    r"|[\w.+-]+@[\w.-]+:[^\s<>\"']+)$",
    re.IGNORECASE,
)
_REF = re.compile(r"^[\w][\w./+~@{}^-]*$")
_GIT_PULL = re.compile(r"^\s*git pull\s+(\S+)(?:\s+(\S+))?\s*$")


def _unquoted_lines(text: str) -> list[str]:
    lines = text.splitlines()[:MAX_SCAN_LINES]
    return [line.rstrip() for line in lines if not line.lstrip().startswith(">")]


def _tokens(line: str) -> list[str]:
    return line.replace("\\", " ").split()


def _continuation(line: str | None) -> list[str]:
    """Tokens of a wrapped URL line's successor, when it looks like a URL tail/ref."""
    if line is None:
        return []
    tokens = _tokens(line)
    if 1 <= len(tokens) <= 2 and all(_REF.match(token) for token in tokens):
        return tokens
    return []


def _request(url: str, ref: str | None) -> PullRequest | None:
    if not _URL.match(url) or len(url) > MAX_URL:
        return None
    if ref is not None and (not _REF.match(ref) or len(ref) > MAX_REF):
        ref = None
    return PullRequest(url=url, ref=ref)


def _after_announcement(lines: list[str], index: int) -> PullRequest | None:
    """Read the URL line (and a wrapped tail) after "are available in ... at:"."""
    rest = [line for line in lines[index + 1 : index + 6]]
    while rest and not rest[0].strip():
        rest.pop(0)
    if not rest:
        return None
    tokens = _tokens(rest[0])
    if not tokens or len(tokens) > 2:
        return None
    if len(tokens) == 1:
        tail = _continuation(rest[1] if len(rest) > 1 else None)
        if len(tail) == 2:
            tokens = [tokens[0] + tail[0], tail[1]]
        elif len(tail) == 1:
            tokens.append(tail[0])
    return _request(tokens[0], tokens[1] if len(tokens) > 1 else None)


def find_pull(text: str) -> PullRequest | None:
    """The pull request in a mail's (decoded, unquoted) text, or None."""
    lines = _unquoted_lines(text)
    for index, line in enumerate(lines):
        if _ANNOUNCE.search(line):
            found = _after_announcement(lines, index)
            if found is not None:
                return found
    for line in lines:
        command = _GIT_PULL.match(line)
        if command:
            found = _request(command[1], command[2])
            if found is not None:
                return found
    return None
