"""What `e2g audit` answers: a verdict per commit, its evidence, and the summary.

Values only; their JSON and SARIF shapes are `e2g.render`'s, their text the CLI's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

from e2g.mail.interdiff import Change
from e2g.model import Address


class Verdict(StrEnum):
    """Strictest first: the order the summary counts them in."""

    REVIEWED = "reviewed"
    TRIVIAL = "reviewed-trivial-change"
    CHANGED = "changed-after-review"
    EARLIER = "earlier-version-reviewed"
    UNREVIEWED = "posted-unreviewed"
    OUTSIDE = "outside-archive"
    NOT_POSTED = "not-posted"
    EXEMPT = "exempt"
    UNCERTAIN = "uncertain"


# What each verdict means, in the words the help, SARIF's rules and the web show.
MEANINGS = {
    Verdict.REVIEWED: "the applied patch is a version someone other than its author "
    "reviewed (a review trailer given in a reply, or comments on the quoted patch)",
    Verdict.TRIVIAL: "differs from the reviewed version only in context lines (a "
    "rebase), spacing within lines, or the commit message",
    Verdict.CHANGED: "the code differs from the last reviewed version",
    Verdict.EARLIER: "an earlier version got review; the applied code is mostly new "
    "since, or could not be compared",
    Verdict.UNREVIEWED: "posted, but nobody other than its author answered with review",
    Verdict.OUTSIDE: "no posting found, and the archive does not span the time it "
    "was written and committed: it cannot say whether it was posted",
    Verdict.NOT_POSTED: "no posting found (committed off-list)",
    Verdict.EXEMPT: "a revert, a version bump, or a subject the config exempts",
    Verdict.UNCERTAIN: "matched with low confidence, or not matched yet",
}

# Lenient coverage: the code that landed was reviewed, maybe not to the last line.
LENIENT = frozenset({Verdict.REVIEWED, Verdict.TRIVIAL, Verdict.CHANGED})
# Not in coverage's denominator: commits that need no review, and commits the
# archive cannot judge (counting those as unreviewed would measure how far back
# the archive reaches, not how the project reviews).
UNJUDGED = frozenset({Verdict.EXEMPT, Verdict.OUTSIDE})


class ArchiveWindow(NamedTuple):
    """The dates the archive behind an audit spans: from the first to the last
    mail of the lists the repository's postings were seen on (of every list in
    the store when none was)."""

    first: datetime
    last: datetime
    lists: tuple[str, ...]


class ReviewGiven(NamedTuple):
    """One review of one posted version: a trailer given in a reply, or a reply
    that quotes the patch and comments on it (`trailer` "comment")."""

    trailer: str
    person: Address
    message_id: str
    version: int
    committer: bool = False  # given by whoever committed the patch


class TagCheck(NamedTuple):
    """A review tag of the commit message, checked against the mail."""

    trailer: str
    person: Address
    backed_by: (
        str | None
    )  # a mail of that person giving that tag, in any version's thread
    version: int | None  # the version that mail replied to
    by_author: bool  # the patch's author tagged it: that is no review


class Delta(NamedTuple):
    """How the code that landed differs from the last reviewed version."""

    from_version: int
    files: tuple[str, ...]
    added: int
    removed: int
    disclosed: str  # how the change was disclosed ("" when it was not)
    changes: tuple[Change, ...]


class VersionInfo(NamedTuple):
    """One posting of the commit's patch, as the audit saw it."""

    message_id: str
    version: int
    kind: str
    applied: bool
    same_code: bool  # its patch-id is the commit's
    reviewed: bool


class CommitAudit(NamedTuple):
    sha: str
    subject: str
    author: Address
    committer: Address
    files: tuple[str, ...]
    verdict: Verdict
    evidence: str  # a few words: why this verdict
    applied: VersionInfo | None = None
    versions: tuple[VersionInfo, ...] = ()
    reviews: tuple[ReviewGiven, ...] = ()
    tags: tuple[TagCheck, ...] = ()
    delta: Delta | None = None
    committer_only: bool = False  # the only review came from the committer
    # The named trees' branches that hold the commit ("mainline/master"), if any.
    trees: tuple[str, ...] = ()


@dataclass(slots=True)
class Tally:
    """Verdict counts of a group of commits (all of them, a committer, a directory)."""

    counts: Counter[Verdict] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def audited(self) -> int:
        """The commits coverage is over: not exempt ones, nor those outside the
        archive."""
        return self.total - sum(self.counts[verdict] for verdict in UNJUDGED)

    @property
    def strict(self) -> float:
        return self.counts[Verdict.REVIEWED] / self.audited if self.audited else 0.0

    @property
    def lenient(self) -> float:
        reviewed = sum(self.counts[verdict] for verdict in LENIENT)
        return reviewed / self.audited if self.audited else 0.0


@dataclass(slots=True)
class AuditSummary:
    tally: Tally = field(default_factory=Tally)
    by: str = ""  # "committer", "dir" or "" (no grouping)
    groups: dict[str, Tally] = field(default_factory=dict)
    tags: int = 0  # review tags of commits the archive can judge
    tags_backed: int = 0
    tags_outside: int = 0  # of commits outside the archive: no mail can back them
    matched: int = 0  # commits `e2g match` had not answered, matched first
    strict: bool = False
    archive: ArchiveWindow | None = None  # None: the store holds no dated mail
    elapsed: float = 0.0

    def add(self, audit: CommitAudit) -> None:
        self.tally.counts[audit.verdict] += 1
        if audit.verdict is Verdict.OUTSIDE:
            self.tags_outside += len(audit.tags)
        else:
            self.tags += len(audit.tags)
            self.tags_backed += sum(tag.backed_by is not None for tag in audit.tags)
        for key in group_keys(audit, self.by):
            self.groups.setdefault(key, Tally()).counts[audit.verdict] += 1


def group_keys(audit: CommitAudit, by: str) -> set[str]:
    """The groups `--by` puts a commit in: its committer's address, or each top
    directory its files are in ("(top)" for a file at the top), as `e2g stats`."""
    if by == "committer":
        return {audit.committer.email or audit.committer.name}
    if by == "dir":
        return {
            path.split("/", 1)[0] if "/" in path else "(top)" for path in audit.files
        }
    return set()
