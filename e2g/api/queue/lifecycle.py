"""The lifecycle of a patch version: the facts its state is a function of.

Derived from the store alone, never from a request: the way back (e2g.api.reverse:
whether it or its family was applied, as which commits, in which trees and
releases), its later versions (its family's, and its series' lineage), the replies
below it and below its series' cover letter (who, when, which review tags), and
whether any matched repository holds the paths it touches. e2g.api.queue.states
turns these into a state; e2g.api.queue.refresh decides which patches to derive.

A reply counts for the patch it sits below (its nearest patch or cover letter up the
thread: a reply to part 2 is not part 1's), and a reply below the cover letter for
every part of the series. A review tag is a review trailer row of such a reply from
someone else (the store keeps those rows: Store.reviews_of); a bare "Ack." in a
reply's words is not read here (it would cost a body read per reply).

The facts e2g.api.metrics reads are kept beside the state's: the family (its
earliest version's Message-ID and date: every version of one patch names the same),
who replied when (`responses`, sender and date of each reply by someone else), the
review tags with the giver's address and date (`tags`), the postings the commits
applied and the earliest commit date. FACTS_VERSION moves when they change, and the
next refresh derives every patch again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from e2g.api import reverse
from e2g.api.queue import states
from e2g.index.store import MatchedSpan, QueueRow, Store, ThreadNode, from_epoch
from e2g.mail.review import person
from e2g.mail.subject import parse_subject, release_line
from e2g.model import Kind
from e2g.model.stored import StoredMessage

_HEADS = frozenset({"patch", "cover"})
MAX_REVIEWS = 64  # review tags kept per patch version
MAX_RESPONSES = 200  # replies by others kept per patch version (their senders, dates)
FACTS_VERSION = "2"  # 2: the facts the metrics read (family, responses, tags, ...)


class Lifecycle(NamedTuple):
    patch: StoredMessage
    series: str  # the Message-ID naming its series (cover, else first part)
    answer: str  # reverse's status when it found commits: applied or superseded
    note: str  # reverse's note
    commits: tuple[dict[str, str | None], ...]  # commit, repo, tree, branch, release
    superseded_by: str
    superseded_applied: bool
    reviews: tuple[tuple[str, str], ...]  # (who, tag), oldest first
    replies: int  # replies from others
    last_activity: datetime | None
    untracked: str
    mail_state: str
    family: tuple[str, int | None]  # its family's earliest version: Message-ID, date
    responses: tuple[tuple[str, int | None, int], ...]  # (sender, date, seq)
    tags: tuple[tuple[str, str, int | None], ...]  # (giver's address, tag, date)
    applied: tuple[str, ...]  # the postings its commits applied
    committed: int | None  # the earliest commit date of its commits

    def verdict(self) -> states.Verdict:
        return states.Verdict(
            answer=self.answer,
            superseded_by=self.superseded_by,
            untracked=self.untracked,
            mail_state=self.mail_state,
            date=self.patch.date,
            last_activity=self.last_activity,
        )

    def row(self, state: str) -> QueueRow:
        patch = self.patch
        facts = {
            "commits": list(self.commits),
            "reviews": [{"who": who, "tag": tag} for who, tag in self.reviews],
            "replies": self.replies,
            "note": self.note,
            "superseded_applied": self.superseded_applied,
            "family": list(self.family),
            "responses": [list(response) for response in self.responses],
            "tags": [list(tag) for tag in self.tags],
            "applied": list(self.applied),
            "committed": self.committed,
        }
        return QueueRow(
            seq=patch.seq,
            message_id=patch.message_id,
            series=self.series,
            list=(patch.lists[0] if patch.lists else patch.list_id or ""),
            date=_epoch(patch.date),
            author_name=patch.credited_name,
            author_email=patch.credited_email,
            subject=patch.subject,
            version=patch.version,
            part=patch.part,
            total=patch.total,
            answer=self.answer,
            mail_state=self.mail_state,
            untracked=self.untracked,
            superseded_by=self.superseded_by,
            last_activity=_epoch(self.last_activity),
            state=state,
            facts=json.dumps(facts, sort_keys=True),
        )


def verdict_of(row: QueueRow) -> states.Verdict:
    """The verdict a stored row keeps (its state is evaluated again from it)."""
    return states.Verdict(
        answer=row.answer,
        superseded_by=row.superseded_by,
        untracked=row.untracked,
        mail_state=row.mail_state,
        date=from_epoch(row.date),
        last_activity=from_epoch(row.last_activity),
    )


class Context(NamedTuple):
    """What one refresh reads once for all the patches it derives."""

    spans: list[MatchedSpan]
    repo_paths: dict[str, set[str]]  # per matched repository: states.known_paths
    heads: dict[int, tuple[str, int]]  # Store.series_heads
    threads: dict[str, list[ThreadNode]]
    known: dict[int, StoredMessage]  # messages read so far, by seq (reverse.family)


def lifecycle(store: Store, patch: StoredMessage, context: Context) -> Lifecycle:
    relatives = reverse.family(store, patch, known=context.known)
    answer = reverse.for_patch(store, patch, context.spans, relatives=relatives)
    later = _later(store, patch, relatives)
    found = answer.status in (reverse.APPLIED, reverse.SUPERSEDED)
    replies = _replies(patch, context)
    others = [node for node in replies if not _by_author(patch, node)]
    reviews, tags = _reviews(store, patch, others)
    dates = [patch.date, *(from_epoch(node.date) for node in replies)]
    line = _line(patch.subject)
    dates += [
        other.date
        for other in relatives
        if other.version > patch.version
        and _successor(other.date, other.subject, than=patch.date, line=line)
    ]
    known = [date for date in dates if date is not None]
    return Lifecycle(
        patch=patch,
        series=_series(patch, context),
        answer=answer.status if found else "",
        note=answer.note,
        commits=_places(answer),
        superseded_by=later,
        superseded_applied=any(
            commit.posting_version > patch.version for commit in answer.commits
        ),
        reviews=reviews,
        replies=len(others),
        last_activity=max(known) if known else None,
        untracked=""
        if found
        else states.untracked_because(list(patch.files), context.repo_paths),
        mail_state=states.mail_state([tag for _, tag in reviews], replied=bool(others)),
        family=_family(relatives),
        responses=tuple(
            (node.author_email.lower(), node.date, node.seq)
            for node in others[:MAX_RESPONSES]
        ),
        tags=tags,
        applied=tuple(dict.fromkeys(commit.posting for commit in answer.commits)),
        committed=min(
            (_epoch(commit.date) or 0 for commit in answer.commits), default=None
        )
        if found
        else None,
    )


def _family(relatives: list[StoredMessage]) -> tuple[str, int | None]:
    """The family's earliest version (by date, then seq): what names it."""
    first = min(
        relatives,
        key=lambda other: (
            other.date.timestamp() if other.date is not None else float("inf"),
            other.seq,
        ),
    )
    return first.message_id, _epoch(first.date)


def _later(store: Store, patch: StoredMessage, relatives: list[StoredMessage]) -> str:
    """The newest later version of the patch (its family's), else of its series:
    a higher version posted after it, for the same stable branch (a v3 for another
    branch, posted before this v2, is not its successor; `_successor`)."""
    line = _line(patch.subject)
    newer = [
        other
        for other in relatives
        if other.version > patch.version
        and other.kind is Kind.PATCH
        and _successor(other.date, other.subject, than=patch.date, line=line)
    ]
    if newer:
        return max(newer, key=lambda other: (other.version, other.seq)).message_id
    if patch.series_id is not None:
        for series in store.later_series(patch.series_id):
            when = from_epoch(series.date)
            if series.head and _successor(
                when, series.subject, than=patch.date, line=line
            ):
                return series.head
    return ""


def _successor(
    date: datetime | None, subject: str, *, than: datetime | None, line: str
) -> bool:
    """Whether a higher version posted at `date` as `subject` follows a patch
    posted at `than` for the release line `line` (e2g.mail.subject.release_line)."""
    return not _before(date, than) and _line(subject) == line


def _line(subject: str) -> str:
    return release_line(parse_subject(subject).tags)


def _before(date: datetime | None, than: datetime | None) -> bool:
    """Whether `date` is known to come before `than` (an unknown date does not)."""
    return date is not None and than is not None and date < than


def _series(patch: StoredMessage, context: Context) -> str:
    if patch.series_id is None:
        return patch.message_id
    head, _ = context.heads.get(patch.series_id, ("", 0))
    return head or patch.message_id


def _replies(patch: StoredMessage, context: Context) -> list[ThreadNode]:
    """The replies below the patch, and below its series' cover letter; not below
    another patch (a reply to part 2 is part 2's)."""
    nodes = context.threads.get(patch.thread_root, [])
    heads = [patch.message_id]
    if patch.series_id is not None:
        cover, _ = context.heads.get(patch.series_id, ("", 0))
        if cover and cover != patch.message_id:
            heads.append(cover)
    return _below(nodes, heads)


def _below(nodes: Sequence[ThreadNode], heads: Sequence[str]) -> list[ThreadNode]:
    children: dict[str, list[ThreadNode]] = {}
    for node in nodes:
        if node.parent_id:
            children.setdefault(node.parent_id, []).append(node)
    found: list[ThreadNode] = []
    seen = set(heads)
    todo = list(heads)
    while todo:  # iterative: threads come from mail
        for child in children.get(todo.pop(), []):
            if child.message_id in seen or child.kind in _HEADS:
                continue
            seen.add(child.message_id)
            found.append(child)
            todo.append(child.message_id)
    return sorted(found, key=lambda node: (node.date or 0, node.seq))


def _by_author(patch: StoredMessage, node: ThreadNode) -> bool:
    email = node.author_email.lower()
    return email in (patch.author_email.lower(), patch.credited_email.lower())


def _reviews(
    store: Store, patch: StoredMessage, others: list[ThreadNode]
) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str, int | None], ...]]:
    """(who, tag) of the review tags others gave in replies, oldest first, and
    (the giver's address, tag, the reply's date) of the same; a tag naming the
    patch's author is not a review."""
    order = {node.seq: index for index, node in enumerate(others)}
    dates = {node.seq: node.date for node in others}
    authors = {patch.author_email.lower(), patch.credited_email.lower()}
    found: list[tuple[int, str, str, str, int | None]] = []
    for seq, key, value in store.reviews_of([node.seq for node in others]):
        who = person(value)
        if who.email in authors:
            continue
        found.append(
            (order.get(seq, 0), who.name or who.email, key, who.email, dates.get(seq))
        )
    found.sort(key=lambda item: item[0])
    kept = found[:MAX_REVIEWS]
    return (
        tuple((who, key) for _, who, key, _, _ in kept),
        tuple((email, key, date) for _, _, key, email, date in kept),
    )


def _places(answer: reverse.WayBack) -> tuple[dict[str, str | None], ...]:
    """The answer's commits in their trees: commit, repo, tree, branch, release."""
    places: dict[tuple[str, str, str | None, str | None], dict[str, str | None]] = {}
    for tree in answer.trees:
        places.setdefault(
            (tree.repo, tree.commit, tree.tree, tree.branch),
            {
                "commit": tree.commit,
                "repo": tree.repo,
                "tree": tree.tree,
                "branch": tree.branch,
                "release": tree.release,
            },
        )
    for commit in answer.commits:
        if not any(key[:2] == (commit.repo, commit.sha) for key in places):
            places[(commit.repo, commit.sha, None, None)] = {
                "commit": commit.sha,
                "repo": commit.repo,
                "tree": None,
                "branch": None,
                "release": None,
            }
    return tuple(places.values())


def _epoch(when: datetime | None) -> int | None:
    return None if when is None else int(when.timestamp())
