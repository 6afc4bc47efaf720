"""git request-pull detection: the repository URL and ref a pull request names.

Pure functions on str; no IO. Used by mail.message to mark Kind.PULL.

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

from e2g.model.mail import PullRequest

MAX_URL = 1024
MAX_REF = 256
MAX_SCAN_LINES = 4000

# "are available in the git repository at:" and its variants, ending a line.
_ANNOUNCE = re.compile(
    r"\bare (?:available|found) (?:in|at|from)\b[^\n]*\b(?:repository|at)[ \t]*:?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_ANNOUNCE_WORDS = ("vailable", "VAILABLE", "ound in", "OUND IN")
_URL = re.compile(
    r"^(?:(?:git|ssh|git\+ssh|ssh\+git|https?|rsync)://[^\s<>\"']+"
    r"|[\w.+-]+@[\w.-]+:[^\s<>\"']+)$",
    re.IGNORECASE,
)
_REF = re.compile(r"^[\w][\w./+~@{}^-]*$")
_GIT_PULL = re.compile(r"^\s*git pull\s+(\S+)(?:\s+(\S+))?\s*$")


def _unquoted_lines(text: str) -> list[str]:
    lines = text.split("\n", MAX_SCAN_LINES)[:MAX_SCAN_LINES]
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


def _after_announcement(text: str) -> PullRequest | None:
    """Read the URL line (and a wrapped tail) that follows "are available in ... at:"."""
    rest = _unquoted_lines("\n".join(text.split("\n", 8)[1:8]))
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
    """The pull request in a mail's (decoded) text, or None; quoted lines never count."""
    text = text[: MAX_SCAN_LINES * 200]
    # Substring tests first: the case-insensitive regex is slow on every body.
    announced = any(word in text for word in _ANNOUNCE_WORDS)
    if not announced and "git pull" not in text:
        return None
    for match in _ANNOUNCE.finditer(text) if announced else ():
        line_start = text.rfind("\n", 0, match.start()) + 1
        if text[line_start : match.start()].lstrip().startswith(">"):
            continue
        found = _after_announcement(text[match.end() :])
        if found is not None:
            return found
    if "git pull" not in text:
        return None
    for line in _unquoted_lines(text):
        command = _GIT_PULL.match(line)
        if command:
            found = _request(command[1], command[2])
            if found is not None:
                return found
    return None


# What git merge and git pull write: Merge tag 'for-linus' of git://host/path, Merge
# branch 'x' of URL, Merge tags 'a' and 'b' (the first names the request), and
# older pulls' Merge git://host/path.
_MERGE = re.compile(
    r"^Merge (?:(?:remote-tracking )?(?:tag|branch)e?s? '([^'\n]{1,256})'"
    r"(?:[^\n]*? of (\S{1,1024}))?|(\S+://\S{1,1024}))",
)


def parse_merge(subject: str) -> PullRequest | None:
    """The repository and ref a merge commit's subject line names, or None: what
    `git merge` and `git pull` write ("Merge tag 'x' of URL"). A local merge names
    a ref and no URL (url is then empty)."""
    found = _MERGE.match(subject.strip())
    if found is None:
        return None
    if found[3]:
        return PullRequest(url=found[3].rstrip(":"), ref=None)
    return PullRequest(url=(found[2] or "").rstrip(":"), ref=found[1])


def _repository(url: str) -> str:
    """A URL as the host and path, whatever the scheme and a trailing .git or /."""
    url = re.sub(r"^[a-z+]+://", "", url.strip().lower()).rstrip("/")
    url = url.removesuffix(".git")
    return re.sub(r"^[^@/]+@", "", url).replace(":", "/", 1)


def _ref_name(ref: str) -> str:
    for prefix in ("refs/tags/", "refs/heads/", "tags/", "heads/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return ref


def requests_merge(request: PullRequest, merge: PullRequest) -> bool:
    """Whether the pull request `request` asked for what `merge` merged: the same
    ref (tags/x is x), and the same repository when the merge names one (git://
    and https:// of one host and path are one)."""
    if merge.ref is not None and (
        request.ref is None or _ref_name(request.ref) != _ref_name(merge.ref)
    ):
        return False
    if merge.url:
        return _repository(request.url) == _repository(merge.url)
    return merge.ref is not None


# What `git request-pull` writes below the URL: the shortlog ("Author Name (2):"
# then each subject indented) and the diffstat (" path | 12 +++---", a long path
# cut to ".../tail", a rename as "old => new" or "dir/{old => new}/file"), ended
# by " 3 files changed, ...".
_SHORTLOG_AUTHOR = re.compile(r"^\S[^\n]{0,200} \(\d{1,6}\):$")
_DIFFSTAT_LINE = re.compile(r"^ (\S[^|\n]{0,1024}?)\s+\|\s+(?:\d+\b|Bin\b)")
_RENAME_BRACES = re.compile(r"\{([^{}]*) => ([^{}]*)\}")
MAX_LISTED = 5000  # subjects or paths read from one request


def parse_shortlog(text: str) -> tuple[str, ...]:
    """The commit subjects a pull request's shortlog lists, in its order (each
    subject once; whitespace runs made one space); () when it has none.

    States: outside (until an "Author (N):" line), then in an author's block, where
    each indented line is a subject and a blank line or an unindented one ends it."""
    found: dict[str, None] = {}
    in_block = False
    for line in _unquoted_lines(text):
        if _SHORTLOG_AUTHOR.match(line):
            in_block = True
        elif in_block and line[:1].isspace() and line.strip():
            found.setdefault(" ".join(line.split()), None)
            if len(found) >= MAX_LISTED:
                break
        else:
            in_block = False
    return tuple(found)


def parse_diffstat(text: str) -> tuple[str, ...]:
    """The paths a pull request's diffstat lists (a rename's new path; a path git
    cut short keeps its leading ".../"), in its order; () when it has none."""
    found: dict[str, None] = {}
    for line in _unquoted_lines(text):
        row = _DIFFSTAT_LINE.match(line)
        if row is None:
            continue
        path = _RENAME_BRACES.sub(r"\2", row[1].strip())
        path = path.split(" => ")[-1].replace("//", "/")
        found.setdefault(path, None)
        if len(found) >= MAX_LISTED:
            break
    return tuple(found)


def same_path(listed: str, path: str) -> bool:
    """Whether the diffstat's `listed` names `path` (".../tail" names any path
    that ends in "/tail")."""
    if listed.startswith(".../"):
        return path.endswith(listed[3:])
    return listed == path
