"""What a match run reports: the counts of its commits' answers, by method, and
the backports and rebased copies answered without a mail search; summed over a
tree's branches.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

# MatchSummary's counts, summed over a tree's branches.
COUNTS = (
    *("commits", "matched", "no_match", "skipped", "outside"),
    *("merges", "backports", "rebased"),
)


@dataclass(slots=True)
class MatchSummary:
    commits: int = 0
    matched: int = 0
    no_match: int = 0
    skipped: int = 0  # already matched on an earlier run
    outside: int = 0  # unmatched and dated outside the archive: no match was possible
    merges: int = 0
    elapsed: float = 0.0
    by_method: Counter[str] = field(default_factory=Counter)
    # The store holds patches stored before their line weights (schema 3): the
    # matcher reads more of their diffs until `e2g ingest` weighs them.
    unweighed: bool = False
    # Mail stored before schema 18 is not sorted from the backport process's yet
    # (its fill is pending): the matcher knows such mail by its subject alone.
    unclassified: bool = False
    done: list[str] = field(default_factory=list)  # the skipped commits, in range order
    repo: str = ""  # the repository's key in the store
    backports: int = 0  # answered from their upstream commit, no mail search
    rebased: int = 0  # answered from the commit a rebase replaced
    tree: str = ""  # "stable/linux-6.1.y" when a named tree's branch was matched

    @property
    def rate(self) -> float:
        return self.commits / self.elapsed if self.elapsed > 0 else 0.0

    def count(self, method: str | None, *, outside: bool = False) -> None:
        """One commit's answer: matched by `method`, or not (`outside`: dated
        outside the archive, so no match was possible)."""
        self.commits += 1
        if method is None:
            self.no_match += 1
            self.outside += outside
            return
        self.matched += 1
        self.by_method[method] += 1

    def count_split(self, backports: int, rebased: int) -> None:
        """The commits answered from the commits they copy (e2g.api.trees.split)."""
        self.backports = backports
        self.rebased = rebased

    @classmethod
    def summed(
        cls, summaries: Sequence[MatchSummary], *, repo: str, started: float
    ) -> MatchSummary:
        """One summary of several branches' matches."""
        total = cls(repo=repo)
        for part in summaries:
            for name in COUNTS:
                setattr(total, name, getattr(total, name) + getattr(part, name))
            total.by_method.update(part.by_method)
            total.unweighed = total.unweighed or part.unweighed
            total.unclassified = total.unclassified or part.unclassified
        total.elapsed = time.monotonic() - started
        return total
