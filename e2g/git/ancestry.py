"""Every commit up to a head with its parents and the paths it changed against its
first parent, in a form a worker process can load in a blink: what line blame
needs to hand git the history of a few paths at once (e2g.git.lineblame).

Built from the walk's log (e2g.git.treelog), which holds the same facts as
Python objects (git.git: 260 MB); here commits are numbers in the log's order
(children first, the head first), parents are numbers, and each path has an array
of the commits that changed it (git.git: 81,864 commits, 274,177 changes, 3 MB on
disk, loaded in 0.03 s), and each commit's deleted paths: with each path's first
change, where it was added, they tell the moves line blame follows (moved()). A
warm writes it beside the tree's kept log for its workers (replaced whole: a
temporary file synced, then renamed; one that cannot be read back is not used,
and line blame takes the way it takes without it).
"""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path

from e2g.files import replace_whole
from e2g.git.repo import FULL_SHA
from e2g.git.treelog import TreeLog

FORMAT = 2  # of the file: another value is not read (1: without deletions)
NONE = -1  # no first parent: a root
# A commit that added or deleted more paths than this moved a whole folder (or is a
# root, or a merge of a topic that did): which path became which is not told, and
# following every one would keep many commits for nothing.
MOVE_FANOUT = 16


class Ancestry:
    """The commits up to `head` as numbers (0 is the head)."""

    __slots__ = ("_begun", "_changed", "_deleted", "_more", "_shas", "first", "head")

    def __init__(
        self,
        shas: list[str],
        first: array[int],
        more: dict[int, tuple[int, ...]],
        changed: dict[str, array[int]],
        deleted: dict[int, tuple[str, ...]],
    ) -> None:
        self._shas = shas
        self.head = shas[0]
        self.first = first  # each commit's first parent (NONE for a root)
        self._more = more  # a merge's other parents
        self._changed = changed
        self._deleted = deleted  # the paths a commit deleted (against its first)
        self._begun: dict[int, list[str]] | None = None

    @classmethod
    def of(cls, log: TreeLog) -> Ancestry:
        """The log's commits (git's topological order: the head first)."""
        shas = list(log.commits)
        number = {sha: n for n, sha in enumerate(shas)}
        first = array("i", [NONE]) * len(shas)
        more: dict[int, tuple[int, ...]] = {}
        changed: dict[str, array[int]] = {}
        deleted: dict[int, tuple[str, ...]] = {}
        for n, commit in enumerate(log.commits.values()):
            parents = [number[parent] for parent in commit.parents]
            if parents:
                first[n] = parents[0]
            if len(parents) > 1:
                more[n] = tuple(parents[1:])
            for path in commit.changes:
                found = changed.get(path)
                if found is None:
                    found = changed[path] = array("i")
                found.append(n)
            gone = tuple(path for path, blob in commit.changes.items() if blob is None)
            if gone:
                deleted[n] = gone
        return cls(shas, first, more, changed, deleted)

    def sha(self, commit: int) -> str:
        return self._shas[commit]

    def parents(self, commit: int) -> tuple[int, ...]:
        first = self.first[commit]
        return () if first == NONE else (first, *self._more.get(commit, ()))

    def changed(self, paths: Iterable[str]) -> set[int]:
        """The commits that changed any of `paths` against their first parent
        (a root: that has them)."""
        found: set[int] = set()
        for path in paths:
            found.update(self._changed.get(path, ()))
        return found

    def moved(self, paths: Iterable[str]) -> set[str]:
        """`paths` and, again and again, the paths each was moved from or to.

        Changes are against first parents, without renames: a commit that deleted
        a few paths and added a few (their first change) moved the ones to the
        others; on a topic, its own commit did. Line blame's set of paths then
        holds the names a file had between those its lines were last seen in
        (git.git's odb.h: object-file.c named, not sha1-file.c, its name between
        sha1_file.c and it; a try of 1.9 s thrown away for the full walk)."""
        begun = self._first_changes()
        found = set(paths)
        todo = list(found)
        while todo:
            path = todo.pop()
            changes = self._changed.get(path)
            if not changes:
                continue
            near: list[str] = []
            # Numbered from the head down: changes[-1] is the first, where it was
            # added, and the names it had before were deleted there.
            if len(begun.get(changes[-1], ())) <= MOVE_FANOUT:
                near += _few(self._deleted.get(changes[-1], ()))
            for commit in changes:
                gone = _few(self._deleted.get(commit, ()))
                if path in gone:  # the names it took were added there
                    near += _few(begun.get(commit, ()))
            fresh = [other for other in near if other not in found]
            found.update(fresh)
            todo += fresh
        return found

    def _first_changes(self) -> dict[int, list[str]]:
        """The paths whose first change each commit was."""
        if self._begun is None:
            self._begun = {}
            for path, changes in self._changed.items():
                self._begun.setdefault(changes[-1], []).append(path)
        return self._begun

    def write(self, place: Path) -> None:
        """Replaced whole, or left as it was (a full disk: not used, as when
        there is none)."""
        data = marshal.dumps(
            (
                FORMAT,
                "\n".join(self._shas),
                self.first.tobytes(),
                self._more,
                {path: found.tobytes() for path, found in self._changed.items()},
                self._deleted,
            )
        )
        replace_whole(place, data, fault="ancestry.write")

    @classmethod
    def read(cls, place: Path) -> Ancestry | None:
        """The ancestry written at `place`; None when there is none or it cannot be
        read back whole (cut short, another format, not ours)."""
        try:
            loaded = marshal.loads(place.read_bytes())
            if not isinstance(loaded, tuple) or not loaded or loaded[0] != FORMAT:
                return None
            _, shas, first, more, changed, deleted = loaded
            names = shas.split("\n")
            numbers = array("i")
            numbers.frombytes(first)
            arrays: dict[str, array[int]] = {}
            for path, found in changed.items():
                arrays[path] = array("i")
                arrays[path].frombytes(found)
            count = len(names)
            if not (
                len(numbers) == count
                and FULL_SHA.fullmatch(names[0])
                and _within(numbers, NONE, count)
                and isinstance(more, dict)
                and all(
                    isinstance(parents, tuple)
                    and _within(array("i", [commit, *parents]), 0, count)
                    for commit, parents in more.items()
                )
                and all(_within(found, 0, count) for found in arrays.values())
                and isinstance(deleted, dict)
                and all(
                    isinstance(gone, tuple) and all(isinstance(p, str) for p in gone)
                    for gone in deleted.values()
                )
            ):
                return None
        except (
            OSError,
            EOFError,
            ValueError,
            TypeError,
            AttributeError,
            OverflowError,
        ):
            return None
        return cls(names, numbers, more, arrays, deleted)


def _few(paths: Sequence[str]) -> Sequence[str]:
    """`paths`, or none when they are too many to pair (MOVE_FANOUT)."""
    return paths if len(paths) <= MOVE_FANOUT else ()


def _within(numbers: array[int], low: int, count: int) -> bool:
    return not numbers or (min(numbers) >= low and max(numbers) < count)


def ancestry_path(kept_log: Path) -> Path:
    """Where a warm keeps the ancestry beside its kept log."""
    return kept_log.with_suffix(".ancestry")
