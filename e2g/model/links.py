"""What git and the matcher produce: a commit, the postings that carried it, and the
answer to `e2g link`."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from e2g.model import Address, DateSource, Trailer
from e2g.model.patch import Patch


class Commit(NamedTuple):
    """A non-merge commit as the matcher sees it."""

    sha: str
    subject: str
    subject_key: str
    author: Address  # mailmap applied
    author_date: datetime
    commit_date: datetime
    patch: Patch
    trailers: tuple[Trailer, ...] = ()
    body: str = ""


class Evidence(NamedTuple):
    """One reason behind a score, for humans and for --json."""

    signal: str  # "trailer", "patch-id", "author-date", "subject", "author", "files", "diff", "date"
    detail: str
    weight: float = 0.0


class Link(NamedTuple):
    """A commit matched to one message that carried its patch."""

    commit: str
    message_id: str
    method: str
    score: float
    evidence: tuple[Evidence, ...] = ()


class Posting(NamedTuple):
    """One message that carried a commit's patch (a version, resend, cross-post or cover)."""

    message_id: str
    subject: str
    date: datetime | None
    author: Address
    lists: tuple[str, ...]
    version: int
    kind: str  # "patch", "cover", ...
    applied: bool  # the version that was applied
    method: (
        str  # how it was found: "trailer", "patch-id", ..., "series" (cover), "version"
    )
    score: float
    url: str | None  # the list archive's page for it, where one is known
    thread_root: str
    replies: int = 0
    participants: tuple[str, ...] = ()
    reviewers: tuple[
        str, ...
    ] = ()  # "Reviewed-by: Name <addr>" trailers given in replies
    evidence: tuple[Evidence, ...] = ()
    # Where `date` came from; when not the Date: header, what that header said.
    date_source: DateSource = DateSource.HEADER
    date_raw: str = ""

    @property
    def date_corrected(self) -> bool:
        return self.date_source is not DateSource.HEADER


class Rejected(NamedTuple):
    """A candidate the matcher looked at and turned down, with why."""

    message_id: str
    subject: str
    score: float
    reason: str


class CommitInfo(NamedTuple):
    """What is shown of a commit next to its postings."""

    sha: str
    subject: str
    author: Address
    author_date: datetime
    commit_date: datetime
    files: tuple[str, ...]


def commit_info(commit: Commit) -> CommitInfo:
    """What is shown of `commit` next to its postings."""
    return CommitInfo(
        sha=commit.sha,
        subject=commit.subject,
        author=commit.author,
        author_date=commit.author_date,
        commit_date=commit.commit_date,
        files=commit.patch.paths,
    )


class Upstream(NamedTuple):
    """The commit a backport was taken from."""

    commit: str
    repo: str
    how: str  # mail.backport's note ("commit-upstream", "cherry-picked", ...) or "patch-id"
    tree: str | None = None  # its named tree ("mainline"), where one is configured
    subject: str = ""


class InTree(NamedTuple):
    """One tree's commit of a patch: the upstream commit ("applied") or a backport
    (how it was found), the branch that reaches it (and the merge on the branch's
    first-parent line that brought it in) and the first tag containing it."""

    repo: str
    tree: str | None  # None: the repository is no named tree
    branch: str | None
    commit: str
    how: str
    release: str | None
    merge: str | None = None  # the merge that brought it into the branch, if one did


class LinkResult(NamedTuple):
    """The answer to `e2g link REV`: every posting of the commit, or an explicit no match.

    For a backport, `postings` are its upstream commit's (the review it inherits) and
    `own` the backport's own mails (AUTOSEL, stable review, FAILED, queued)."""

    commit: CommitInfo
    postings: tuple[Posting, ...]
    rejected: tuple[Rejected, ...] = ()
    note: str = ""  # e.g. why no match was possible: the commit is outside the archive
    upstream: Upstream | None = None
    trees: tuple[InTree, ...] = ()
    own: tuple[Posting, ...] = ()
    # For a merge: the commits it brought in, each with its answer (its postings
    # are then the pull request that asked for the merge).
    merged: tuple[LinkResult, ...] = ()
    merge: bool = False  # the commit is a merge (postings: its pull request)

    @property
    def status(self) -> str:
        return "matched" if self.postings else "no-match"
