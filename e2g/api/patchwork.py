"""The patch queue as Patchwork's REST API sees it (read-only): projects, patches,
cover letters, series, people and events, with Patchwork's ids and state names.

The one home of the state mapping (`SLUGS`): each e2g state
(e2g.api.queue.states) shows as the Patchwork state that means the same, from
Patchwork's default set. `reviewed` has no Patchwork twin and shows as
`under-review` (Patchwork's "action required" set, as e2g's); `not-applied` (quiet
for `quiet_days`, no version applied) as `deferred`; `untracked` (no matched
repository holds its paths) as `not-applicable`. A filter by a Patchwork state asks
for every e2g state shown as it. Patchwork's `changes-requested`, `rfc` and
`awaiting-upstream` are never shown: e2g does not derive them.

Ids are the store's own (e2g.index.store.tracker says which), stable from run to
run. e2g.web.patchwork turns these values into Patchwork's JSON; nothing here
knows a URL.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from email.parser import BytesHeaderParser
from email.policy import compat32
from typing import NamedTuple

from e2g.api.basis import open_store
from e2g.api.queue import states
from e2g.api.queue.listing import view_of
from e2g.archives.mbox import mboxrd_entry
from e2g.config import Settings
from e2g.index.store import (
    CoverFilter,
    EventFilter,
    EventRow,
    Person,
    QueueFilter,
    QueueRow,
    SeriesRow,
    Store,
)
from e2g.mail.lists import short_name
from e2g.mail.subject import parse_subject
from e2g.model.stored import StoredMessage

SLUGS = {
    states.APPLIED: "accepted",
    states.SUPERSEDED: "superseded",
    states.UNTRACKED: "not-applicable",
    states.REJECTED: "rejected",
    states.NOT_APPLIED: "deferred",
    states.REVIEWED: "under-review",
    states.UNDER_REVIEW: "under-review",
    states.NEW: "new",
}
# Patchwork's event categories for e2g's event kinds (e2g.api.queue.refresh).
CATEGORIES = {
    "patch-created": "patch-created",
    "patch-state-changed": "patch-state-changed",
    "patch-applied": "patch-state-changed",
    "series-completed": "series-completed",
}
MAX_HEADERS = 500  # header fields shown per message
MAX_HEADER_BYTES = 256 * 1024


def states_of(slugs: Sequence[str]) -> tuple[str, ...]:
    """The e2g states shown as these Patchwork states; an unknown slug asks for
    none (`("-",)`: a state no row has)."""
    found = tuple(state for state, slug in SLUGS.items() if slug in slugs)
    return found or ("-",)


class Project(NamedTuple):
    id: int
    list_id: str

    @property
    def link_name(self) -> str:
        return short_name(self.list_id)


class SeriesBrief(NamedTuple):
    id: int
    name: str
    version: int
    date: datetime | None


class Submission(NamedTuple):
    """A patch (with its queue row) or a cover letter (row None)."""

    message: StoredMessage
    row: QueueRow | None
    submitter: int | None  # its person's id
    project: Project | None
    series: SeriesBrief | None


class SeriesView(NamedTuple):
    row: SeriesRow
    name: str
    submitter: Person | None
    project: Project | None
    cover: StoredMessage | None
    patches: tuple[StoredMessage, ...]


class Details(NamedTuple):
    headers: dict[str, str | list[str]]
    content: str
    diff: str | None


class Listing(NamedTuple):
    patches: list[Submission]
    total: int


def projects(settings: Settings) -> list[Project]:
    with open_store(settings) as store:
        return [Project(seq, name) for name, seq in store.list_firsts().items()]


def project_named(settings: Settings, text: str) -> Project | None:
    """A project by id, link_name or list id."""
    for project in projects(settings):
        if text in (str(project.id), project.link_name, project.list_id):
            return project
    return None


def _project(message: StoredMessage, known: dict[str, Project]) -> Project | None:
    name = message.lists[0] if message.lists else message.list_id or ""
    return known.get(name)


def _submissions(
    store: Store, messages: list[StoredMessage], rows: dict[int, QueueRow]
) -> list[Submission]:
    known = {name: Project(seq, name) for name, seq in store.list_firsts().items()}
    people = store.person_ids([message.credited_email for message in messages])
    briefs = _briefs(store, [m.series_id for m in messages if m.series_id is not None])
    return [
        Submission(
            message,
            rows.get(message.seq),
            people.get(message.credited_email.lower()),
            _project(message, known),
            briefs.get(message.series_id) if message.series_id is not None else None,
        )
        for message in messages
    ]


def _briefs(store: Store, ids: list[int]) -> dict[int, SeriesBrief]:
    rows = store.series_rows(sorted(set(ids)))
    heads = {
        row.id: row.cover_seq if row.cover_seq is not None else row.parts[0]
        for row in rows.values()
        if row.cover_seq is not None or row.parts
    }
    messages = {m.seq: m for m in store.by_seqs(list(heads.values()))}
    found = {}
    for series_id, seq in heads.items():
        head = messages.get(seq)
        if head is not None:
            found[series_id] = SeriesBrief(
                series_id, _name(head), rows[series_id].version, head.date
            )
    return found


def _name(head: StoredMessage) -> str:
    return parse_subject(head.subject).title or head.subject


def patches(settings: Settings, wanted: QueueFilter) -> Listing:
    with open_store(settings) as store:
        rows = store.queue_rows(wanted)
        total = store.queue_count(wanted)
        by_seq = {
            message.seq: message for message in store.by_seqs([r.seq for r in rows])
        }
        messages = [by_seq[row.seq] for row in rows if row.seq in by_seq]
        found = _submissions(store, messages, {row.seq: row for row in rows})
    return Listing(found, total)


def submission(settings: Settings, seq: int, *, kind: str) -> Submission | None:
    """The patch (`kind` "patch") or cover letter ("cover") `seq`, or None."""
    with open_store(settings) as store:
        found = store.by_seqs([seq])
        if not found or found[0].kind != kind:
            return None
        rows = store.queue_by_seqs([seq]) if kind == "patch" else {}
        if kind == "patch" and seq not in rows:
            return None
        return _submissions(store, found, rows)[0]


def details(settings: Settings, seq: int) -> Details:
    """A message's header fields (as Patchwork shows them: a name, its value or
    values), its commentary, and its diff."""
    with open_store(settings) as store:
        raw = store.raw(seq) or b""
        return Details(_headers(raw), store.body(seq), store.diff(seq))


def _headers(raw: bytes) -> dict[str, str | list[str]]:
    end = raw.find(b"\n\n")
    head = raw[: end if end >= 0 else MAX_HEADER_BYTES][:MAX_HEADER_BYTES]
    parsed = BytesHeaderParser(policy=compat32).parsebytes(head)
    found: dict[str, str | list[str]] = {}
    for name, value in parsed.items()[:MAX_HEADERS]:
        text = " ".join(str(value).split())
        before = found.get(name)
        if before is None:
            found[name] = text
        elif isinstance(before, list):
            before.append(text)
        else:
            found[name] = [before, text]
    return found


def covers(settings: Settings, wanted: CoverFilter) -> tuple[list[Submission], int]:
    with open_store(settings) as store:
        seqs, total = store.cover_page(wanted)
        found = _submissions(store, store.by_seqs(seqs), {})
    order = {seq: place for place, seq in enumerate(seqs)}
    return sorted(found, key=lambda one: order[one.message.seq]), total


def series_page(
    settings: Settings, wanted: QueueFilter, *, newest_first: bool = False
) -> tuple[list[SeriesView], int]:
    with open_store(settings) as store:
        ids, total = store.series_page(wanted, newest_first=newest_first)
        return _series_views(store, ids), total


def one_series(settings: Settings, series_id: int) -> SeriesView | None:
    with open_store(settings) as store:
        found = _series_views(store, [series_id])
    return found[0] if found else None


def _series_views(store: Store, ids: list[int]) -> list[SeriesView]:
    rows = store.series_rows(ids)
    seqs = [seq for row in rows.values() for seq in row.parts]
    seqs += [row.cover_seq for row in rows.values() if row.cover_seq is not None]
    messages = {message.seq: message for message in store.by_seqs(seqs)}
    known = {name: Project(seq, name) for name, seq in store.list_firsts().items()}
    views = []
    for series_id in ids:
        row = rows.get(series_id)
        if row is None or not row.parts:
            continue
        parts = tuple(messages[seq] for seq in row.parts if seq in messages)
        cover = messages.get(row.cover_seq) if row.cover_seq is not None else None
        head = cover or parts[0]
        email = head.credited_email
        person = store.person_ids([email]).get(email.lower())
        views.append(
            SeriesView(
                row=row,
                name=_name(head),
                submitter=None
                if person is None
                else Person(person, head.credited_name, email),
                project=_project(head, known),
                cover=cover,
                patches=parts,
            )
        )
    return views


def mbox(settings: Settings, seqs: Sequence[int]) -> bytes:
    """These messages as one mboxrd, in this order, bytes as stored."""
    with open_store(settings) as store:
        return b"".join(
            mboxrd_entry(raw) for seq in seqs if (raw := store.raw(seq)) is not None
        )


def people(
    settings: Settings, *, text: str, limit: int, offset: int
) -> tuple[list[Person], int]:
    with open_store(settings) as store:
        return store.people_page(text=text, limit=limit, offset=offset)


def person(settings: Settings, person_id: int) -> Person | None:
    with open_store(settings) as store:
        return store.person(person_id)


def person_email(settings: Settings, text: str) -> str:
    """A submitter filter's address: an address as given, a person's id as theirs
    ("" when it names no one: a filter that keeps nothing)."""
    if not text.isdigit():
        return text
    found = person(settings, int(text))
    return found.email if found else "-"


class Event(NamedTuple):
    row: EventRow
    category: str
    patch: StoredMessage | None
    series: StoredMessage | None  # the series' head
    project: Project | None


def events(settings: Settings, wanted: EventFilter) -> list[Event]:
    with open_store(settings) as store:
        rows = store.events(wanted)
        ids = {row.message_id for row in rows} | {row.series for row in rows}
        messages = {m.message_id: m for m in store.messages(ids)}
        known = {name: Project(seq, name) for name, seq in store.list_firsts().items()}
    found = []
    for row in rows:
        patch = messages.get(row.message_id)
        head = messages.get(row.series)
        category = CATEGORIES.get(row.kind, row.kind)
        found.append(
            Event(
                row,
                category,
                None if category == "series-completed" else patch,
                head,
                _project(shown, known) if (shown := patch or head) else None,
            )
        )
    return found


def commit_ref(row: QueueRow | None) -> str | None:
    """The applied commit of a patch the queue says is applied."""
    if row is None or row.state != states.APPLIED:
        return None
    commits = view_of(row).commits
    return commits[0].commit if commits else None
