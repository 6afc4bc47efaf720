"""How an applied commit differs from the patch that was posted: hunk by hunk.

Maintainers edit patches as they apply them (a fixed typo, a dropped hunk, a rebase
onto moved code); those edits are what a reviewer wants to see. `compare` splits both
diffs into hunks per file and pairs them:

- identical: the same lines (line numbers may differ: the tree moved under the patch);
- edited: a posted and an applied hunk of one file that share most of their lines,
  shown as a diff of the two hunks;
- dropped: a posted hunk with no counterpart in the commit;
- added: a hunk of the commit that was never posted.

Both diffs are the text e2g keeps (`Patch.diff`, the store's diff): file headers, then
`@@` hunks, read by e2g.mail.hunks (unidiff, and the scanner for what it rejects). Sizes are bounded by those diffs' own bounds; pairing is greedy on a
similarity ratio, quadratic only in the hunks of one file.
"""

from __future__ import annotations

import difflib
from typing import NamedTuple

from e2g.mail.hunks import hunks_of

SIMILAR = (
    0.5  # a posted and an applied hunk sharing this share of lines are one, edited
)
MAX_HUNKS = 2000  # hunks of one diff compared; the rest are counted as unmatched


class Hunk(NamedTuple):
    path: str
    header: str  # the `@@ -a,b +c,d @@ context` line
    lines: tuple[str, ...]  # the hunk's body, markers kept


class Change(NamedTuple):
    kind: str  # "edited", "dropped" or "added"
    path: str
    posted: Hunk | None
    applied: Hunk | None

    def shown(self) -> list[str]:
        """The change as lines: an edit as a diff of the two hunks' bodies."""
        if self.posted is not None and self.applied is not None:
            return [
                line.rstrip("\n")
                for line in difflib.unified_diff(
                    self.posted.lines,
                    self.applied.lines,
                    "posted",
                    "applied",
                    n=1,
                    lineterm="",
                )
            ][2:]
        hunk = self.posted or self.applied
        assert hunk is not None
        return [hunk.header, *hunk.lines]


class Interdiff(NamedTuple):
    identical: int
    changes: tuple[Change, ...]

    @property
    def same(self) -> bool:
        return not self.changes


def hunks(diff: str) -> list[Hunk]:
    """The hunks of a diff (e2g.mail.hunks), each with the path of the file it
    changes, normalised as the store's paths are (`diff -urp linux-2.6.20.orig/mm/x.c`
    is `mm/x.c`); at most MAX_HUNKS."""
    found = [
        Hunk(file.path, hunk.header, hunk.lines)
        for file in hunks_of(diff)
        for hunk in file.hunks
    ]
    return found[:MAX_HUNKS]


def compare(posted: str, applied: str) -> Interdiff:
    """The hunks that differ between the posted diff and the applied one."""
    return compare_hunks(hunks(posted), hunks(applied))


def compare_hunks(mine: list[Hunk], theirs: list[Hunk]) -> Interdiff:
    """`compare` of diffs already cut into hunks (a caller that reads them too)."""
    identical = 0
    changes: list[Change] = []
    for path in dict.fromkeys([hunk.path for hunk in mine + theirs]):
        old = [hunk for hunk in mine if hunk.path == path]
        new = [hunk for hunk in theirs if hunk.path == path]
        same = _take_identical(old, new)
        identical += same
        changes += _pair(path, old, new)
    return Interdiff(identical=identical, changes=tuple(changes))


def _take_identical(old: list[Hunk], new: list[Hunk]) -> int:
    """Remove hunks with equal bodies from both lists; return how many pairs."""
    count = 0
    for hunk in list(old):
        twin = next((other for other in new if other.lines == hunk.lines), None)
        if twin is not None:
            old.remove(hunk)
            new.remove(twin)
            count += 1
    return count


def _pair(path: str, old: list[Hunk], new: list[Hunk]) -> list[Change]:
    """Edited pairs (most similar first), then what is left: dropped and added."""
    scored = sorted(
        (
            (
                difflib.SequenceMatcher(None, a.lines, b.lines, autojunk=False).ratio(),
                i,
                j,
            )
            for i, a in enumerate(old)
            for j, b in enumerate(new)
        ),
        reverse=True,
    )
    used_old: set[int] = set()
    used_new: set[int] = set()
    changes: list[Change] = []
    for ratio, i, j in scored:
        if ratio < SIMILAR:
            break
        if i in used_old or j in used_new:
            continue
        used_old.add(i)
        used_new.add(j)
        changes.append(Change("edited", path, old[i], new[j]))
    changes += [
        Change("dropped", path, hunk, None)
        for i, hunk in enumerate(old)
        if i not in used_old
    ]
    changes += [
        Change("added", path, None, hunk)
        for j, hunk in enumerate(new)
        if j not in used_new
    ]
    return changes
