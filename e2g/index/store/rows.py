"""The rows some named queries return, as values (no sqlite3.Row leaves the store)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import NamedTuple

from e2g.model import Address


class StoredSha(NamedTuple):
    """A commit `e2g match` stored, by repository."""

    repo: str
    sha: str
    status: str
    commit_date: int  # Unix time


class SubjectRow(NamedTuple):
    """A message's subject and its X-stable: headers (Store.subjects_by_key)."""

    key: str
    message_id: str
    subject: str
    stable: str | None
    stable_base: str | None
    seq: int = 0  # its store seq, to read its body (Store.body)


class ProcessRow(NamedTuple):
    """A mail of the backport process: its step (messages.process, a
    mail.backport.ProcessKind value) and X-stable-base: (Store.process_by_key)."""

    key: str
    message_id: str
    subject: str
    process: str
    stable_base: str | None


class BackportEdge(NamedTuple):
    """Commit `sha` of `repo` is a backport of `upstream_sha` of `upstream_repo`."""

    repo: str
    sha: str
    upstream_repo: str
    upstream_sha: str
    # mail.backport's note ("cherry-picked", ...), "patch-id", or e2g.api.copies'
    # "same-posting" or "same-change"
    how: str


class TitledCommit(NamedTuple):
    """A stored commit found by its subject (Store.commits_with_subjects)."""

    repo: str
    sha: str
    subject: str
    author_email: str
    files: tuple[str, ...]
    commit_date: int  # Unix time


def branch_label(tree: str, branch: str) -> str:
    """A named tree's branch as e2g shows it beside a commit: `stable/linux-6.1.y`."""
    return f"{tree}/{branch}"


class TreePlace(NamedTuple):
    """Commit `sha` is reached by `branch` of the named `tree` in `repo`."""

    repo: str
    tree: str
    branch: str
    sha: str
    gone: bool  # a rebase left it behind: history, not an answer
    merge: str | None = None  # the merge that brought it into the branch

    @property
    def name(self) -> str:
        return branch_label(self.tree, self.branch)


class LinkedCommit(NamedTuple):
    """One stored link: `message_id` is a posting of commit `sha` of `repo`."""

    message_id: str
    repo: str
    sha: str
    subject: str
    commit_date: datetime
    method: str
    score: float
    applied_posting: str | None  # the posting this commit applied, if one was


class AuditRow(NamedTuple):
    """One row of `commits` as `e2g audit` reads it."""

    sha: str
    subject: str
    author: Address
    files: tuple[str, ...]
    status: str  # "matched" or "no-match"
    method: str | None  # how the applied posting was found
    score: float | None
    patch_id: str | None  # the commit's own; None when match read no diff
    author_date: datetime
    commit_date: datetime


class ThreadRow(NamedTuple):
    """One message of a thread without its body: how it hangs, who sent it."""

    seq: int
    message_id: str
    parent_id: str | None
    author: Address
    kind: str
    series_id: int | None


class MatchedSpan(NamedTuple):
    repo: str
    first: datetime
    last: datetime
    commits: int


def _evidence(text: str) -> tuple[tuple[str, str], ...]:
    """link_writer's JSON list of [signal, detail]; anything else is no evidence."""
    try:
        pairs = json.loads(text) if text else []
    except ValueError:
        return ()
    return tuple(
        (str(pair[0]), str(pair[1]))
        for pair in pairs
        if isinstance(pair, list) and len(pair) == 2
    )
