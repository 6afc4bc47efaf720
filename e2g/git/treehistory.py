"""The histories of many files of one tree from one walk of the repository's
history: for each path, the revisions `e2g.git.filehistory.file_history` gives,
without its `git log -- PATH` per file (git.git: 4,800 files, each log a walk of
82,000 commits).

One `git log --raw --diff-merges=first-parent` (each commit's changed paths against
its first parent) and one `git log --merges -c --raw` (the paths a merge changed
against every parent) are read once (e2g.git.treelog; kept, the next walk reads
only the commits since); then git's own history simplification
(revision.c, `try_to_simplify_commit` with parent rewriting, which `git log
--parents -- PATH` applies) is replayed for every path at once, parents before
children:

- a commit whose path is the same as in a parent (TREESAME) is not shown and
  stands for the revision that parent stands for (a merge: the first such parent);
- any other commit that has the path or had it is a revision, its parents being
  what its parents stand for (none where the path never was), duplicates dropped.

What a commit stands for is kept per path in blocks of paths shared between
commits until one changes (copy on write), and dropped once its children are done,
so memory follows the width of the graph, not its length. Renames and copies are
followed as file_history follows them (`git diff-tree -M -C` where a file appears,
here one `--stdin` run for all), by another replay for the source paths. Paths whose
answer the replay cannot give exactly (an octopus merge that took the path from a
later parent; a path that was a directory somewhere in the history) are left to
file_history, as are histories past its limits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from e2g.git.filehistory import (
    MAX_RENAMES,
    MAX_REVISIONS,
    Revision,
    _added,
    _parents_first,
)
from e2g.git.repo import FULL_SHA, Repo
from e2g.git.treelog import Commit, TreeLog, raw_entries, records, tree_log

BLOCK = 64  # paths per block of a commit's table

History = tuple[list[Revision], str | None]  # as file_history returns it


class _Query:
    """A segment to find: `path`'s history from commit `at`, for file `owner`,
    whose revision `child` (a key; None for the tip) it continues."""

    __slots__ = ("at", "child", "owner", "path", "tip")

    def __init__(self, at: str, path: str, owner: str, child: str | None) -> None:
        self.at = at
        self.path = path
        self.owner = owner
        self.child = child
        self.tip: str | None = None


def tree_histories(
    repo: Repo,
    head: str,
    paths: Sequence[str],
    *,
    keep: Path | None = None,
    log: TreeLog | None = None,
) -> dict[str, History | None]:
    """Each path's history up to `head` as file_history gives it (revisions
    parents first, and the tip), from one walk; None for a path to leave to
    file_history. `keep`: where the log read is kept for the next walk
    (e2g.git.treelog); `log`: the log up to `head`, when the caller read it."""
    if log is None or log.head != head:
        log = tree_log(repo, head, keep)
    commits = log.commits
    merges = (log.combined, _octopus_diffs(repo, commits))
    walk = _Files(paths)
    queries = [_Query(head, path, path, None) for path in paths]
    directories = _directories(commits)
    while queries:
        recorded, unclear = _Replay(commits, merges, queries).run()
        unclear.update(query.path for query in queries if query.path in directories)
        walk.unsure.update(q.owner for q in queries if q.path in unclear)
        sources = [
            (query, added)
            for query in queries
            if query.owner not in walk.unsure
            for added in walk.add(query, _segment(recorded, query.tip))
        ]
        found = _sources(repo, commits, [added for _, added in sources])
        queries = []
        for query, added in sources:
            source = found.get(added.key)
            if source is not None and query.owner not in walk.unsure:
                walk.renames[query.owner] += 1
                first = commits[added.sha].parents[0]
                queries.append(_Query(first, source, query.owner, added.key))
    return {
        path: None
        if path in walk.unsure
        else (_parents_first(walk.owned[path]), walk.tips.get(path))
        for path in paths
    }


def touched_since(repo: Repo, old: str, new: str) -> set[str] | None:
    """Every path a commit between `old` and `new` changed against its first
    parent (`git log --diff-merges=first-parent --raw old..new`), when `old` is
    on `new`'s first-parent line: any other path's history is the same at both,
    its newest revision too. From `new`, git's simplification of such a path
    passes every commit that did not change it, and every merge whose first
    parent has it as the merge does (the first TREESAME parent is the one
    followed, and no other parent is looked at), so it walks the first-parent
    line down to `old` and goes on as `old`'s own history. A merge diffed
    against its other parents too named what the main line changed since the
    topic forked (git.git, 102 commits: 1,213 paths, against 109). None when
    `old` is not there (a rewound or rebased branch)."""
    chain = repo._check(  # noqa: SLF001 - e2g.git's own runner
        ["rev-list", "--first-parent", "--parents", new, f"^{old}", "--"],
        revs=[new, old],
    ).split(b"\n")
    oldest = [line.split() for line in chain if line.strip()]
    if old != new and (not oldest or oldest[-1][1:2] != [old.encode("ascii")]):
        return None  # not reached by first parents: not a simple advance
    found: set[str] = set()
    arguments = [
        "log",
        "--diff-merges=first-parent",
        "--no-renames",
        "--raw",
        "-r",
        "-z",
        "--no-abbrev",
        "--format=%x01",
        "--end-of-options",
        new,
        f"^{old}",
        "--",
    ]
    with repo.streamed(arguments, revs=[new, old]) as output:
        for record in records(output):
            found.update(path for _, path in raw_entries(record.split(b"\x00")))
    return found


class _Files:
    """What file_history keeps per file, for every file at once."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.owned: dict[str, dict[str, Revision]] = {path: {} for path in paths}
        self.tips: dict[str, str | None] = {}
        self.renames = dict.fromkeys(paths, 0)
        self.followed: dict[str, set[str]] = {path: set() for path in paths}
        self.unsure: set[str] = set()

    def add(self, query: _Query, segment: list[Revision]) -> list[Revision]:
        """`segment` added to its file's revisions (each file its own copies: a
        rename links a revision to its source's); the revisions where the file
        appears, whose source to look for."""
        revisions = self.owned[query.owner]
        if query.child is None:
            self.tips[query.owner] = segment[0].key if segment else None
        elif segment:
            revisions[query.child].parents.append(segment[0].key)
        for revision in segment:
            if revision.key not in revisions:
                revisions[revision.key] = replace(
                    revision, parents=list(revision.parents)
                )
        if len(revisions) > MAX_REVISIONS:
            self.unsure.add(query.owner)  # file_history says why
            return []
        found = []
        followed = self.followed[query.owner]
        for added in _added(segment, revisions):
            if added.key not in followed:
                followed.add(added.key)
                if self.renames[query.owner] < MAX_RENAMES:
                    found.append(added)
        return found


def _segment(recorded: dict[str, Revision], tip: str | None) -> list[Revision]:
    """The revisions reachable from `tip` through their rewritten parents: what
    `git log --parents REV -- PATH` lists, tip first."""
    if tip is None:
        return []
    found: dict[str, Revision] = {}
    todo = [tip]
    while todo:
        key = todo.pop()
        if key in found:
            continue
        revision = recorded[key]
        found[key] = revision
        todo.extend(parent for parent in revision.parents if parent not in found)
    return list(found.values())


class _Replay:
    """git's simplification replayed for the queries' paths over every commit,
    parents first: the revisions shown (by key), each query's tip set, and the
    paths it cannot answer exactly."""

    def __init__(
        self,
        commits: dict[str, Commit],
        merges: tuple[dict[str, set[str]], dict[str, list[set[str]]]],
        queries: Sequence[_Query],
    ) -> None:
        self.commits = commits
        self.combined, self.octopus = merges
        tracked = list(dict.fromkeys(query.path for query in queries))
        self.index = {path: number for number, path in enumerate(tracked)}
        self.blocks = -(-len(tracked) // BLOCK)
        self.asked: dict[str, list[_Query]] = {}
        for query in queries:
            self.asked.setdefault(query.at, []).append(query)
        self.tables: dict[str, list[tuple[str | None, ...]]] = {}
        self.recorded: dict[str, Revision] = {}
        self.unclear: set[str] = set()

    def run(self) -> tuple[dict[str, Revision], set[str]]:
        children: dict[str, int] = {}
        for commit in self.commits.values():
            for parent in set(commit.parents):
                children[parent] = children.get(parent, 0) + 1
        tracked = self.index.keys()
        for commit in reversed(self.commits.values()):  # git's topo order, reversed
            parents = commit.parents
            # Most commits change no tracked path: they stand for what their first
            # parent does, its very table (never changed in place; an update of
            # git.git, 4 rounds over 82,000 commits: 1.8-2.2 s -> 1.3-1.5 s).
            base = self.tables.get(parents[0]) if parents else None
            if base is not None and tracked.isdisjoint(commit.changes):
                self.tables[commit.sha] = base
            else:
                self.tables[commit.sha] = self._table(commit)
            for query in self.asked.get(commit.sha, ()):
                query.tip = self._stands(commit.sha, self.index[query.path])
            for parent in set(parents):
                children[parent] -= 1
                if children[parent] == 0:
                    self.tables.pop(parent, None)  # no child left to ask
        return self.recorded, self.unclear

    def _stands(self, parent: str, number: int) -> str | None:
        table = self.tables.get(parent)
        return None if table is None else table[number // BLOCK][number % BLOCK]

    def _table(self, commit: Commit) -> list[tuple[str | None, ...]]:
        """What `commit` stands for, per tracked path: its first parent's table
        with the paths it changed replaced (copy on write, by block)."""
        parents = commit.parents
        base = self.tables.get(parents[0]) if parents else None
        empty: tuple[str | None, ...] = (None,) * BLOCK
        table = list(base) if base is not None else [empty] * self.blocks
        for number, value in self._changed(commit).items():
            block = list(table[number // BLOCK])
            block[number % BLOCK] = value
            table[number // BLOCK] = tuple(block)
        return table

    def _changed(self, commit: Commit) -> dict[int, str | None]:
        parents = commit.parents
        merged = self.combined.get(commit.sha, set()) if len(parents) > 1 else set()
        changed: dict[int, str | None] = {}
        for path, blob in commit.changes.items():
            number = self.index.get(path)
            if number is None:
                continue
            if len(parents) > 1 and path not in merged:
                # The same as in a later parent: it stands for what that one does.
                later = _same_in(commit, path, self.octopus.get(commit.sha))
                if later is None:
                    self.unclear.add(path)
                else:
                    changed[number] = self._stands(later, number)
                continue
            key = f"{commit.sha}:{path}"
            rewritten = [self._stands(parent, number) for parent in parents]
            self.recorded[key] = Revision(
                sha=commit.sha,
                parents=[p for p in dict.fromkeys(rewritten) if p is not None],
                path=path,
                author=commit.author,
                committed=commit.committed,
                subject=commit.subject,
                blob=blob,
            )
            changed[number] = key
        return changed


def _same_in(commit: Commit, path: str, changed: list[set[str]] | None) -> str | None:
    """The first parent after the first that `path` is the same in: the second
    of a merge of two; of an octopus, the first whose diff lacks it."""
    if len(commit.parents) == 2:
        return commit.parents[1]
    if changed is None:
        return None
    for parent, paths in zip(commit.parents[1:], changed, strict=False):
        if path not in paths:
            return parent
    return None


def _directories(commits: dict[str, Commit]) -> set[str]:
    """Every directory above a path some commit changed: a tracked path that is
    one somewhere in the history has its changes counted by git's pathspec, not
    by the replay (left to file_history). Found once for the log, not for each
    changed path of each commit in every replay (git.git, 108 files: 0.9 s of
    an update's 4.5 s walk)."""
    names = {path for commit in commits.values() for path in commit.changes}
    found: set[str] = set()
    for path in names:
        at = path.rfind("/")
        while at != -1 and path[:at] not in found:
            found.add(path[:at])
            at = path.rfind("/", 0, at)
    return found


# -- reading git ------------------------------------------------------------------------


def _octopus_diffs(repo: Repo, commits: dict[str, Commit]) -> dict[str, list[set[str]]]:
    """For each merge of more than two parents, the paths it changed against
    each parent after the first, in order (one `git diff-tree --stdin --always`
    run; --always: an empty diff still names its commit)."""
    octopus = [commit for commit in commits.values() if len(commit.parents) > 2]
    if not octopus:
        return {}
    lines = "".join(
        f"{commit.sha} {parent}\n"
        for commit in octopus
        for parent in commit.parents[1:]
    )
    output = repo._check(  # noqa: SLF001 - e2g.git's own runner
        [
            "diff-tree",
            "--stdin",
            "--always",
            "-r",
            "-z",
            "--no-renames",
            "--raw",
            "--no-abbrev",
            "--format=%x01%H%x00",
        ],
        revs=(),
        data=lines.encode("ascii"),
    )
    diffs = [
        {path for _, path in raw_entries(record.split(b"\x00")[1:])}
        for record in output.split(b"\x01")[1:]
    ]
    found: dict[str, list[set[str]]] = {}
    if len(diffs) != len(lines.splitlines()):
        return found  # not what was asked: every octopus is left unclear
    at = 0
    for commit in octopus:
        count = len(commit.parents) - 1
        found[commit.sha] = diffs[at : at + count]
        at += count
    return found


def _sources(
    repo: Repo, commits: dict[str, Commit], added: Sequence[Revision]
) -> dict[str, str]:
    """For each revision where a file appears, the path it was renamed or copied
    from, as `git diff-tree -M -C` against its first parent finds it (one
    `--stdin` run for all); by revision key."""
    wanted: dict[str, list[Revision]] = {}
    for revision in added:
        commit = commits.get(revision.sha)
        if commit is not None and commit.parents:
            wanted.setdefault(revision.sha, []).append(revision)
    if not wanted:
        return {}
    lines = "".join(f"{sha} {commits[sha].parents[0]}\n" for sha in wanted)
    output = repo._check(  # noqa: SLF001 - e2g.git's own runner
        ["diff-tree", "--stdin", "-r", "-z", "-M", "-C", "--name-status"],
        revs=(),
        data=lines.encode("ascii"),
    )
    found: dict[str, str] = {}
    fields = output.decode("utf-8", "surrogateescape").split("\x00")
    sha = ""
    at = 0
    while at < len(fields):
        item = fields[at]
        if FULL_SHA.fullmatch(item):
            sha, at = item, at + 1
            continue
        if item[:1] in ("R", "C") and at + 2 < len(fields):
            source, target = fields[at + 1], fields[at + 2]
            for revision in wanted.get(sha, ()):
                if target == revision.path and source != revision.path:
                    found.setdefault(revision.key, source)
            at += 3
        elif item:
            at += 2
        else:
            at += 1
    return found
