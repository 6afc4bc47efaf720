"""Reading the patch queue: what `e2g patches`, `e2g events`, the web pages and
feeds list. Everything here reads the stored queue (e2g.api.queue.refresh keeps
it); nothing derives a state, except a series' from its parts' (states.series_state).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import NamedTuple

from e2g.api.basis import now as clock
from e2g.api.basis import open_store
from e2g.api.queue import states
from e2g.config import Settings
from e2g.errors import UsageError
from e2g.index.store import EventFilter, EventRow, QueueFilter, QueueRow, from_epoch

MAX_LIMIT = 10_000
SEARCH_LIMIT = 10_000  # hits of a query the queue is filtered by
_AGO = re.compile(r"(\d{1,6})\s*(d|day|days|w|week|weeks|h|hour|hours)(?:\s+ago)?")
_UNITS = {"d": 86_400, "w": 7 * 86_400, "h": 3600}


class Commit(NamedTuple):
    commit: str
    repo: str
    tree: str | None
    branch: str | None
    release: str | None


class Review(NamedTuple):
    who: str
    tag: str


class PatchView(NamedTuple):
    """One patch version of the queue, as every front end shows it."""

    message_id: str
    subject: str
    author_name: str
    author_email: str
    date: datetime | None
    list: str
    series: str
    version: int
    part: str | None  # "2/5"
    state: str
    mail_state: str  # the replies' say (beside untracked)
    untracked: str
    commits: tuple[Commit, ...]
    superseded_by: str | None
    superseded_applied: bool
    reviews: tuple[Review, ...]
    replies: int
    last_activity: datetime | None
    note: str


class SeriesView(NamedTuple):
    """A series of the list view: its head (cover letter, else first part), its
    state from all its parts, and the parts the filter kept."""

    message_id: str
    subject: str
    state: str
    tally: str  # "1 of 2" when partly applied
    parts: tuple[PatchView, ...]
    total: int  # its parts in the queue


class Page(NamedTuple):
    patches: list[PatchView]  # the filter's rows, newest first
    series: list[SeriesView]  # the same rows grouped by series, in that order
    total: int  # rows the filter finds
    offset: int
    note: str | None


def parse_when(text: str, *, now: datetime | None = None) -> int:
    """A moment a user typed, as Unix time: 2024-05-01, an ISO date and time, a
    Unix time, or "30 days ago" / "2w" / "12h"."""
    value = text.strip().lower()
    moment = now or clock()
    ago = _AGO.fullmatch(value)
    if ago:
        return int(moment.timestamp()) - int(ago[1]) * _UNITS[ago[2][0]]
    if value.isdigit() and len(value) >= 9:
        return int(value)
    try:
        parsed = datetime.fromisoformat(value.replace("z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"cannot read {text!r} as a time: give 2024-05-01, 2024-05-01T12:00, "
            "or '30 days ago'"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp())


def parse_states(text: str | None) -> tuple[str, ...]:
    """`--state a,b`: the states asked for (default: those needing action; `all`:
    every state)."""
    if text is None or not text.strip():
        return states.ACTION_NEEDED
    asked = tuple(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
    if asked == ("all",):
        return ()
    unknown = [state for state in asked if state not in states.STATES]
    if unknown:
        raise UsageError(
            f"unknown state {unknown[0]!r}: the states are {', '.join(states.STATES)}"
            " (or all)"
        )
    return asked


def patches(  # noqa: PLR0913 - the list view's filters
    settings: Settings,
    *,
    query: str = "",
    wanted: QueueFilter = QueueFilter(),  # noqa: B008 - an immutable value
) -> Page:
    """The queue's patch versions `wanted` asks for (and `query`, a search as `e2g
    search` takes it, finds), newest first, grouped by series too."""
    note = None
    if query.strip():
        from e2g.api.core import search

        found = search(settings, query, limit=SEARCH_LIMIT)
        note = found.note
        wanted = wanted._replace(
            message_ids=tuple(hit.message_id for hit in found.hits)
        )
    wanted = wanted._replace(limit=max(0, min(wanted.limit, MAX_LIMIT)))
    with open_store(settings) as store:
        if store.queue_seq() is None:
            note = note or (
                "the patch queue is not derived yet: run `e2g ingest` or `e2g match`"
            )
        rows = store.queue_rows(wanted)
        total = store.queue_count(wanted)
        heads = sorted({row.series for row in rows})
        members = store.queue_of_series(heads)
        subjects = {
            head: message.subject
            for head in heads
            if (message := store.message(head)) is not None
        }
    views = [view_of(row) for row in rows]
    return Page(views, _grouped(views, members, subjects), total, wanted.offset, note)


def _grouped(
    views: list[PatchView], members: list[QueueRow], subjects: dict[str, str]
) -> list[SeriesView]:
    parts: dict[str, list[QueueRow]] = {}
    for row in members:
        parts.setdefault(row.series, []).append(row)
    shown: dict[str, list[PatchView]] = {}
    for view in views:
        shown.setdefault(view.series, []).append(view)
    found = []
    for head, kept in shown.items():
        every = parts.get(head, [])
        state, tally = states.series_state([row.state for row in every])
        found.append(
            SeriesView(
                message_id=head,
                subject=subjects.get(head, kept[0].subject),
                state=state,
                tally=tally,
                parts=tuple(sorted(kept, key=lambda view: _part_order(view.part))),
                total=len(every),
            )
        )
    return found


def _part_order(part: str | None) -> int:
    return int(part.split("/")[0]) if part else 0


def view_of(row: QueueRow) -> PatchView:
    facts = json.loads(row.facts)
    return PatchView(
        message_id=row.message_id,
        subject=row.subject,
        author_name=row.author_name,
        author_email=row.author_email,
        date=from_epoch(row.date),
        list=row.list,
        series=row.series,
        version=row.version,
        part=f"{row.part}/{row.total}" if row.part and row.total else None,
        state=row.state,
        mail_state=row.mail_state,
        untracked=row.untracked,
        commits=tuple(Commit(**commit) for commit in facts.get("commits", [])),
        superseded_by=row.superseded_by or None,
        superseded_applied=bool(facts.get("superseded_applied")),
        reviews=tuple(Review(**review) for review in facts.get("reviews", [])),
        replies=int(facts.get("replies", 0)),
        last_activity=from_epoch(row.last_activity),
        note=str(facts.get("note", "")),
    )


def state_counts(settings: Settings) -> dict[str, int]:
    with open_store(settings) as store:
        return store.queue_state_counts()


class EventView(NamedTuple):
    id: int
    kind: str
    found: datetime
    message_id: str
    series: str
    list: str
    author_name: str
    author_email: str
    subject: str
    from_state: str | None
    to_state: str | None
    commit: str | None
    tree: str | None
    release: str | None


def events(settings: Settings, wanted: EventFilter) -> list[EventView]:
    """The events `wanted` asks for (oldest first, unless it asks newest first)."""
    with open_store(settings) as store:
        return [_event_view(row) for row in store.events(wanted)]


def since_filter(text: str | None) -> tuple[int, int | None]:
    """`--since WHEN|ID`: an event id (a bare number below 10^9) or a moment."""
    if not text:
        return 0, None
    value = text.strip()
    if value.isdigit() and len(value) < 9:
        return int(value), None
    return 0, parse_when(value)


def _event_view(row: EventRow) -> EventView:
    found = from_epoch(row.found)
    assert found is not None
    return EventView(
        id=row.id,
        kind=row.kind,
        found=found,
        message_id=row.message_id,
        series=row.series,
        list=row.list,
        author_name=row.author_name,
        author_email=row.author_email,
        subject=row.subject,
        from_state=row.from_state or None,
        to_state=row.to_state or None,
        commit=row.commit or None,
        tree=row.tree or None,
        release=row.release or None,
    )
