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
level 1 (git.git: 13 MB, read back in 0.55 s), written whole or not at all (a
temporary file synced, then renamed over the old; a killed writer's temporary
file is removed by the next), under the warm's lock. The commits a later walk
read are kept apart, in a second file beside it (`.since`: the same rows, and the
head of the copy they extend) rewritten whole at each walk, until they are an
eighth of the copy: then the two are written as one copy again. Writing the
whole copy for an update of a hundred commits cost 0.8 s of its walk, 1.5% of
the update. The second file is removed before a new whole copy is written, so
it never extends any copy but the one it was written beside. A copy (or a
second file) that cannot be read back (cut short, another format, not ours) is
read afresh from git (or ignored) and written again: it is a cache, never the
only copy of anything.
"""

from __future__ import annotations

import contextlib
import marshal
import re
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import IO, NamedTuple

from e2g.files import replace_whole
from e2g.git.filehistory import _NAME_UNSAFE
from e2g.git.repo import FULL_SHA, Repo
from e2g.git.trees import is_ancestor

FORMAT = 2  # of the kept copy: another value is read afresh
SINCE_FORMAT = 1  # of the commits kept apart
APART = 8  # the commits since the copy are kept apart while the copy has 8x more
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


class _Kept(NamedTuple):
    """The kept log: the copy and the commits kept apart since, as one log."""

    log: TreeLog
    base: str  # the copy's own head
    apart: int  # how many of the log's commits (its newest) are kept apart


def tree_log(repo: Repo, head: str, keep: Path | None = None) -> TreeLog:
    """The log up to `head`: from git, or from the copy kept at `keep` and the
    commits since (the copy then brought to `head`)."""
    kept = _read(keep) if keep is not None else None
    if kept is not None and kept.log.head == head:
        return kept.log
    if kept is not None and is_ancestor(repo, kept.log.head, head):
        since = read_log(repo, head, since=kept.log.head)
        log = TreeLog(
            head,
            {**since, **kept.log.commits},
            {**kept.log.combined, **read_combined(repo, head, since=kept.log.head)},
        )
        apart = len(since) + kept.apart
        if keep is not None and apart * APART <= len(log.commits) - apart:
            _write_since(keep, log, kept.base, apart)
            return log
    else:
        log = TreeLog(head, read_log(repo, head), read_combined(repo, head))
    if keep is not None:
        _write_kept(keep, log)
    return log


def _since_path(place: Path) -> Path:
    return place.with_name(f"{place.name}.since")


def _read_kept(place: Path) -> TreeLog | None:
    """The kept log as one (the copy and the commits kept apart since)."""
    kept = _read(place)
    return None if kept is None else kept.log


def _read(place: Path) -> _Kept | None:
    found = _read_rows(place, FORMAT)
    if found is None:
        return None
    base, _ = found
    since = _read_rows(_since_path(place), SINCE_FORMAT)
    if since is None or since[1] != base.head:
        return _Kept(base, base.head, 0)  # none, or not of this copy
    newer = since[0]
    log = TreeLog(
        newer.head,
        {**newer.commits, **base.commits},
        {**base.combined, **newer.combined},
    )
    return _Kept(log, base.head, len(newer.commits))


def _read_rows(place: Path, version: int) -> tuple[TreeLog, str] | None:
    """A file of rows: its log and the head it extends ("" for the copy)."""
    try:
        data = marshal.loads(zlib.decompress(place.read_bytes()))
        found, head, on, names, rows, merges = data
        if found != version or not FULL_SHA.fullmatch(head):
            return None
        commits: dict[str, Commit] = {}
        for sha, parents, author, committed, subject, changes in rows:
            commit = Commit(sha, tuple(parents), author, committed, subject)
            commit.changes = {names[number]: blob for number, blob in changes}
            commits[sha] = commit
        combined = {sha: {names[n] for n in numbers} for sha, numbers in merges}
    except (OSError, EOFError, ValueError, TypeError, IndexError, zlib.error):
        return None
    if head not in commits or not isinstance(on, str):
        return None
    return TreeLog(head, commits, combined), on


def _write_kept(place: Path, log: TreeLog) -> None:
    """The copy replaced whole, or left as it was (a full disk: the next walk
    reads git again); the commits kept apart beside the copy before are
    removed first (they extend that one)."""
    with contextlib.suppress(FileNotFoundError):
        _since_path(place).unlink()
    replace_whole(
        place,
        _rows(FORMAT, log.head, "", log.commits.values(), log.combined),
        fault="treelog.write",
    )


def _write_since(place: Path, log: TreeLog, base: str, apart: int) -> None:
    """The log's `apart` newest commits (those since the copy, whose head is
    `base`) and their merges' paths kept apart, replaced whole or left as they
    were."""
    newest = list(islice(log.commits.values(), apart))
    combined = {c.sha: log.combined[c.sha] for c in newest if c.sha in log.combined}
    replace_whole(
        _since_path(place),
        _rows(SINCE_FORMAT, log.head, base, newest, combined),
        fault="treelog.write",
    )


def _rows(
    version: int,
    head: str,
    on: str,
    commits: Iterable[Commit],
    combined: dict[str, set[str]],
) -> bytes:
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
        for commit in commits
    ]
    merges = [
        (sha, tuple(names.setdefault(path, len(names)) for path in paths))
        for sha, paths in combined.items()
    ]
    return zlib.compress(
        marshal.dumps((version, head, on, list(names), rows, merges)), 1
    )


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
