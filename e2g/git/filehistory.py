"""A file's history as git's path-limited log gives it, followed back through
renames and copies: the revisions token blame writes into its throwaway history
(e2g.git.tokenview).

`git log --parents -- PATH` rewrites each commit's parents to the nearest ones that
touched the file, so merges that did not change it fall away. Where the file
appears (created, or added back after a deletion), `git diff-tree -M -C` against the
first parent says whether it came from another path, whose history is then
followed from there. A commit can appear twice, once per path (a file renamed back
to a name it had before): a revision is named by commit and path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from graphlib import TopologicalSorter

from e2g.errors import UsageError
from e2g.git.repo import FULL_SHA, Repo

MAX_REVISIONS = 50_000  # of one file's history, renames included
MAX_RENAMES = 64  # renames and copies followed back
_NAME_UNSAFE = re.compile(r"[<>\n\x00]")


@dataclass(slots=True)
class Revision:
    """One commit of the file's history: its parents in that history (rewritten by
    git to the nearest commits that touched the file, then the source of a rename or
    copy), and the file's blob there (None: the file is absent)."""

    sha: str
    parents: list[str]  # keys of the parent revisions
    path: str
    author: str  # "Name <email> STAMP ZONE", as fast-import takes it
    committed: str  # "STAMP ZONE"
    subject: str
    blob: str | None = None

    @property
    def key(self) -> str:
        """The revision's name in the history: a commit can appear twice, with each
        of two paths (a file renamed back to a name it had before)."""
        return f"{self.sha}:{self.path}"


def file_history(repo: Repo, head: str, path: str) -> tuple[list[Revision], str | None]:
    """Every revision of `path` up to `head`, parents first, through renames; and the
    newest, whose file is the one at `head` (None: no commit ever had it)."""
    revisions: dict[str, Revision] = {}
    todo: list[tuple[str, str, str | None]] = [(head, path, None)]
    followed: set[str] = set()  # revisions whose file's source was looked for
    renames = 0
    tip: str | None = None
    while todo:
        rev, name, child = todo.pop()  # child: the revision whose source this is
        segment = _segment(repo, rev, name)
        if child is None and segment:
            tip = segment[0].key
        if child is not None and segment:
            revisions[child].parents.append(segment[0].key)
        for revision in segment:
            revisions.setdefault(revision.key, revision)
        if len(revisions) > MAX_REVISIONS:
            raise UsageError(
                f"{path} has more than {MAX_REVISIONS:,} revisions: too long a "
                "history for token blame (line blame has no such limit)"
            )
        _read_blobs(repo, segment)
        for added in _added(segment, revisions):
            if added.key in followed:
                continue
            followed.add(added.key)
            source = _source(repo, added) if renames < MAX_RENAMES else None
            if source is not None:
                renames += 1
                todo.append((f"{added.sha}^1", source, added.key))
    return _parents_first(revisions), tip


def _segment(repo: Repo, rev: str, path: str) -> list[Revision]:
    """`git log --parents -- PATH` from `rev`: the commits that changed `path`,
    newest first, each with its parents rewritten to the ones that did."""
    output = repo._check(  # noqa: SLF001 - e2g.git's own runner
        [
            "log",
            "--topo-order",
            "--parents",
            "--date=raw",
            "--no-show-signature",
            "--format=%x01%H %P%x00%aN%x00%aE%x00%ad%x00%cd%x00%s",
            "--end-of-options",
            rev,
            "--",
            f":(literal){path}",
        ],
        revs=[rev],
    )
    found: list[Revision] = []
    for record in output.split(b"\x01")[1:]:
        fields = record.rstrip(b"\n").decode("utf-8", "replace").split("\x00")
        if len(fields) < 6:
            continue
        shas = fields[0].split()
        name = _NAME_UNSAFE.sub("", fields[1]) or "unknown"
        email = _NAME_UNSAFE.sub("", fields[2])
        found.append(
            Revision(
                sha=shas[0],
                parents=[f"{parent}:{path}" for parent in shas[1:]],
                path=path,
                author=f"{name} <{email}> {fields[3]}",
                committed=fields[4],
                subject=fields[5],
            )
        )
    return found


def _read_blobs(repo: Repo, segment: Sequence[Revision]) -> None:
    """Each revision's blob id of its path (None where the file is absent), from one
    `git cat-file --batch-check`."""
    if not segment:
        return
    replies = blobs_at(repo, [(revision.sha, revision.path) for revision in segment])
    for revision, blob in zip(segment, replies, strict=False):
        if blob is not None:
            revision.blob = blob


def blobs_at(repo: Repo, names: Sequence[tuple[str, str]]) -> list[str | None]:
    """The blob of each (commit, path), None where there is none, from one `git
    cat-file --batch-check` (one reply a line: a path holding a newline is the
    caller's to keep out)."""
    if not names:
        return []
    output = repo._check(  # noqa: SLF001
        ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
        revs=(),
        data="".join(f"{sha}:{path}\n" for sha, path in names).encode(
            "utf-8", "surrogateescape"
        ),
    )
    found: list[str | None] = []
    for reply in output.decode("ascii", "replace").splitlines():
        words = reply.split()
        ok = len(words) == 2 and words[1] == "blob" and FULL_SHA.fullmatch(words[0])
        found.append(words[0] if ok else None)
    return found


def _added(
    segment: Sequence[Revision], known: dict[str, Revision]
) -> Iterator[Revision]:
    """The revisions where the file appears: present, and absent in every parent the
    history gives them (or with no parent at all)."""
    for revision in segment:
        if revision.blob is None:
            continue
        if all(
            known.get(parent) is None or known[parent].blob is None
            for parent in revision.parents
        ):
            yield revision


def _source(repo: Repo, added: Revision) -> str | None:
    """The path `added` renamed or copied its file from, as `git diff-tree -M -C`
    against its first parent finds it; None for a file created there."""
    result = repo._run(  # noqa: SLF001
        [
            "diff-tree",
            "-r",
            "-z",
            "-M",
            "-C",
            "--name-status",
            "--no-commit-id",
            "--end-of-options",
            f"{added.sha}^1",
            added.sha,
        ]
    )
    if result.returncode != 0:
        return None  # a root commit: nothing before it
    fields = result.stdout.decode("utf-8", "surrogateescape").split("\x00")
    index = 0
    while index < len(fields) - 1:
        status = fields[index]
        if status[:1] in ("R", "C"):
            source, target = fields[index + 1], fields[index + 2]
            if target == added.path and source != added.path:
                return source
            index += 3
        else:
            index += 2
    return None


def _parents_first(revisions: dict[str, Revision]) -> list[Revision]:
    """The revisions in an order where every parent comes before its children."""
    graph = {
        key: [parent for parent in revision.parents if parent in revisions]
        for key, revision in revisions.items()
    }
    return [revisions[key] for key in TopologicalSorter(graph).static_order()]
