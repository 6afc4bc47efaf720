"""The log a walk of the whole tree reads (e2g.git.treehistory), and a copy of it kept
beside the warmed tree, so that the next walk reads only the commits since.

The walk needs every commit up to the head with the paths it changed against its
first parent (`git log --raw --diff-merges=first-parent`), and each merge's paths
that differ from every parent (`git log --merges -c --raw`): git.git, 81,864
commits, 6.8 s and 3.3 s to read, every time, though an update adds a hundred
commits. Kept (`keep`), the next walk of a head that reaches the kept one reads
`git log KEPT..HEAD` only and puts those commits before the kept ones: none of the
kept commits (all reached from the kept head) can have a new one as a parent, so
children still come before their parents, which is all the replay asks of git's
topological order. A head that does not reach the kept one (a rewritten branch)
is read whole.

The copy: marshal'd rows (paths as numbers into one table of names), zlib'd at
level 1 (git.git: 13 MB, read back in 0.9 s), written whole or not at all (a
temporary file synced, then renamed over the old; a killed writer's temporary
file is removed by the next), under the warm's lock. A copy
that cannot be read back (cut short, another format, not ours) is read afresh
from git and written again: it is a cache, never the only copy of anything.
"""

from __future__ import annotations

import marshal
import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, NamedTuple

from e2g.files import replace_whole
from e2g.git.filehistory import _NAME_UNSAFE
from e2g.git.repo import FULL_SHA, Repo
from e2g.git.trees import is_ancestor

FORMAT = 1  # of the kept copy: another value is read afresh
_GITLINK = b"160000"
_ZERO = re.compile(r"0+")


@dataclass(slots=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    author: str
    committed: str
    subject: str
    # Path -> its blob after the commit (None: absent, or no blob), for every
    # path changed against the first parent (against nothing for a root).
    changes: dict[str, str | None] = field(default_factory=dict)


class TreeLog(NamedTuple):
    """Every commit up to `head` (git's topological order, children first) and
    each merge's paths that differ from every parent."""

    head: str
    commits: dict[str, Commit]
    combined: dict[str, set[str]]


def tree_log(repo: Repo, head: str, keep: Path | None = None) -> TreeLog:
    """The log up to `head`: from git, or from the copy kept at `keep` and the
    commits since (the copy then brought to `head`)."""
    kept = _read_kept(keep) if keep is not None else None
    if kept is not None and kept.head == head:
        return kept
    if kept is not None and is_ancestor(repo, kept.head, head):
        since = read_log(repo, head, since=kept.head)
        log = TreeLog(
            head,
            {**since, **kept.commits},
            {**kept.combined, **read_combined(repo, head, since=kept.head)},
        )
    else:
        log = TreeLog(head, read_log(repo, head), read_combined(repo, head))
    if keep is not None:
        _write_kept(keep, log)
    return log


def _read_kept(place: Path) -> TreeLog | None:
    try:
        data = marshal.loads(zlib.decompress(place.read_bytes()))
        version, head, names, rows, merges = data
        if version != FORMAT or not FULL_SHA.fullmatch(head):
            return None
        commits: dict[str, Commit] = {}
        for sha, parents, author, committed, subject, changes in rows:
            commit = Commit(sha, tuple(parents), author, committed, subject)
            commit.changes = {names[number]: blob for number, blob in changes}
            commits[sha] = commit
        combined = {sha: {names[n] for n in numbers} for sha, numbers in merges}
    except (OSError, EOFError, ValueError, TypeError, IndexError, zlib.error):
        return None
    return TreeLog(head, commits, combined) if head in commits else None


def _write_kept(place: Path, log: TreeLog) -> None:
    """The copy replaced whole, or left as it was (a full disk: the next walk
    reads git again)."""
    names: dict[str, int] = {}
    rows = [
        (
            commit.sha,
            commit.parents,
            commit.author,
            commit.committed,
            commit.subject,
            tuple(
                (names.setdefault(path, len(names)), b)
                for path, b in commit.changes.items()
            ),
        )
        for commit in log.commits.values()
    ]
    merges = [
        (sha, tuple(names.setdefault(path, len(names)) for path in paths))
        for sha, paths in log.combined.items()
    ]
    data = zlib.compress(
        marshal.dumps((FORMAT, log.head, list(names), rows, merges)), 1
    )
    replace_whole(place, data, fault="treelog.write")


# -- reading git ------------------------------------------------------------------------


_FORMAT = "%x01%H %P%x00%aN%x00%aE%x00%ad%x00%cd%x00%s%x00"


def read_log(repo: Repo, head: str, *, since: str | None = None) -> dict[str, Commit]:
    """Every commit up to `head` (not reached from `since`) in git's topo order
    (children first), with the paths it changed against its first parent."""
    commits: dict[str, Commit] = {}
    arguments = [
        "log",
        "--topo-order",
        "--no-renames",
        "--raw",
        "-r",
        "-z",
        "--no-abbrev",
        "--root",
        "--diff-merges=first-parent",
        "--date=raw",
        "--no-show-signature",
        f"--format={_FORMAT}",
        "--end-of-options",
        head,
        *([f"^{since}"] if since else []),
        "--",
    ]
    with repo.streamed(arguments, revs=[head, *([since] if since else [])]) as output:
        for record in records(output):
            commit = _commit(record)
            if commit is not None:
                commits[commit.sha] = commit
    return commits


def _commit(record: bytes) -> Commit | None:
    fields = record.split(b"\x00")
    if len(fields) < 6:
        return None
    head = fields[:6]
    text = [item.decode("utf-8", "replace") for item in head]
    shas = text[0].split()
    if not shas or not FULL_SHA.fullmatch(shas[0]):
        return None
    name = _NAME_UNSAFE.sub("", text[1]) or "unknown"
    email = _NAME_UNSAFE.sub("", text[2])
    commit = Commit(
        sha=shas[0],
        parents=tuple(shas[1:]),
        author=f"{name} <{email}> {text[3]}",
        committed=text[4],
        subject=text[5],
    )
    for meta, path in raw_entries(fields[6:]):
        words = meta.split()
        blob = words[3].decode("ascii") if len(words) >= 4 else ""
        absent = _ZERO.fullmatch(blob) is not None or words[1] == _GITLINK
        commit.changes[path] = None if absent else blob
    return commit


def read_combined(
    repo: Repo, head: str, *, since: str | None = None
) -> dict[str, set[str]]:
    """Each merge's paths that differ from every parent (`git log -c --raw`), of
    the merges up to `head` not reached from `since`."""
    found: dict[str, set[str]] = {}
    arguments = [
        "log",
        "--merges",
        "--no-renames",
        "--raw",
        "-r",
        "-z",
        "--no-abbrev",
        "-c",
        "--format=%x01%H%x00",
        "--end-of-options",
        head,
        *([f"^{since}"] if since else []),
        "--",
    ]
    with repo.streamed(arguments, revs=[head, *([since] if since else [])]) as output:
        for record in records(output):
            fields = record.split(b"\x00")
            sha = fields[0].decode("ascii", "replace")
            found[sha] = {path for _, path in raw_entries(fields[1:])}
    return found


def raw_entries(fields: Sequence[bytes]) -> Iterator[tuple[bytes, str]]:
    """(meta, path) of each `--raw -z` entry: ':MODES IDS STATUS' then the path
    (`--no-renames`: one path each)."""
    at = 0
    while at < len(fields):
        meta = fields[at].lstrip(b"\n")
        if meta.startswith(b":") and at + 1 < len(fields):
            yield meta, fields[at + 1].decode("utf-8", "surrogateescape")
            at += 2
        else:
            at += 1


def records(output: IO[bytes]) -> Iterator[bytes]:
    """The output cut at each \\x01 (a commit's start), read as it comes."""
    pending = b""
    read = output.read
    while True:
        chunk = read(1 << 20)
        if not chunk:
            break
        parts = (pending + chunk).split(b"\x01")
        pending = parts.pop()
        for part in parts:
            if part:
                yield part
    if pending:
        yield pending
