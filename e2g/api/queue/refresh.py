"""Keeping the patch queue: what `ingest`, `match` and `sync` call when they are done.

A refresh derives the lifecycle (e2g.api.queue.lifecycle) of every patch a run
touched, evaluates every patch's state again (states move with time and with the
matched repositories' spans too), stores what changed, and records each change once
as an event:

- `patch-created`: a patch version the queue had not held (to: its first state);
- `patch-state-changed`: a state moved (from, to);
- `patch-applied`: a state moved to applied (the commit, tree, release);
- `series-completed`: every part of a series (1..N) is stored.

What a run touched: the mail stored above the queue's mark (QUEUE_SEQ_KEY): its
subject keys (a patch's family: a new version supersedes the old ones; a reply keeps
its patch's key), its threads and their series; the links `match` added or removed
since the queue last read them (a `--redo` that changes past answers too); and,
when the trees tables changed (branches, releases, backports), every linked family.
A store that has no queue yet (a new store, or one that migrated), or whose queue
was derived by other rules (states.RULES) or keeps another version of the facts
(lifecycle.FACTS_VERSION), derives every patch. A run that touched nothing
derives nothing and records no event.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from e2g.api.basis import now as clock
from e2g.api.basis import open_store
from e2g.api.queue import states
from e2g.api.queue.lifecycle import (
    FACTS_VERSION,
    Context,
    Lifecycle,
    lifecycle,
    verdict_of,
)
from e2g.config import Settings
from e2g.index.queue_writer import NewEvent, QueueUpdate, QueueWriter
from e2g.index.schema import QUEUE_COMMITS_KEY, QUEUE_RULES_KEY, QUEUE_TREES_KEY
from e2g.index.store import QueueRow, Store, ThreadNode

# What the stored queue was derived by: the rules of its states and the facts its
# rows keep; another version (an older e2g's) derives every patch again.
VERSION = f"rules {states.RULES}, facts {FACTS_VERSION}"

CREATED = "patch-created"
STATE_CHANGED = "patch-state-changed"
APPLIED = "patch-applied"
SERIES_COMPLETED = "series-completed"
EVENT_KINDS = (CREATED, STATE_CHANGED, APPLIED, SERIES_COMPLETED)
CHUNK = 2000  # patches read and derived at a time


class Refreshed(NamedTuple):
    derived: int  # patch versions whose lifecycle was derived
    changed: int  # rows whose state moved
    events: int  # events recorded
    elapsed: float


def refresh(
    settings: Settings, *, now: datetime | None = None, full: bool = False
) -> Refreshed:
    """Bring the queue level with the store (`full`: derive every patch again).

    Read and written under the store's write lock (QueueWriter.locked): a refresh
    beside another waits for it, and then sees what it wrote."""
    started = time.monotonic()
    when = now or clock()
    if not settings.store_path.exists():
        return Refreshed(0, 0, 0, 0.0)
    with (
        QueueWriter(settings.store_path) as writer,
        writer.locked(),
        open_store(settings) as store,
    ):
        found = _changes(store, settings, when=when, full=full)
        if found is None:
            return Refreshed(0, 0, 0, time.monotonic() - started)
        update, derived, changed = found
        recorded = writer.write(update)
    return Refreshed(derived, changed, recorded, time.monotonic() - started)


def _changes(
    store: Store, settings: Settings, *, when: datetime, full: bool
) -> tuple[QueueUpdate, int, int] | None:
    """What a refresh writes, how many patches it derived and how many rows'
    states moved; None when nothing moved."""
    full = full or store.meta(QUEUE_RULES_KEY) != VERSION  # rules or facts changed
    mark = store.queue_seq()
    high = store.max_seq()
    links = store.link_triples()
    before = store.queue_link_triples()
    trees = store.trees_fingerprint()
    commits = store.commits_fingerprint()
    retrack = commits != (store.meta(QUEUE_COMMITS_KEY) or "")
    dirty = _touched(
        store,
        mark=None if full else mark,
        links=links ^ before,
        trees_moved=trees != (store.meta(QUEUE_TREES_KEY) or ""),
        linked=links,
    )
    idle = not dirty and not retrack and mark == high and links == before
    if idle and not _moved_by_time(store, when, settings):
        return None
    repo_paths = _repo_paths(store) if dirty or retrack else {}
    derived = _derive(store, sorted(dirty), repo_paths)
    update, changed = _update(
        store,
        derived,
        when=when,
        quiet_days=settings.queue_quiet_days,
        retrack=repo_paths if retrack else None,
    )
    update = update._replace(
        links_added=sorted(links - before),
        links_removed=sorted(before - links),
        seq=high,
        trees=trees,
        commits=commits,
        rules=VERSION,
    )
    return update, len(derived), changed


def _touched(
    store: Store,
    *,
    mark: int | None,
    links: set[tuple[str, str, str]],
    trees_moved: bool,
    linked: set[tuple[str, str, str]],
) -> set[int]:
    """The seqs of the patches whose lifecycle a run may have changed."""
    if mark is None:
        return set(store.patch_seqs())
    new = store.mail_after(mark)
    keys = {mail.subject_key for mail in new}
    roots = {mail.thread_root for mail in new}
    series = {mail.series_id for mail in new if mail.series_id is not None}
    series |= store.series_of_threads(sorted(roots))
    message_ids = sorted({message_id for _, _, message_id in links})
    if trees_moved:
        message_ids = sorted({message_id for _, _, message_id in linked})
    keys |= store.subject_keys_of(message_ids)
    return store.patch_seqs_where(
        keys=sorted(keys),
        series_ids=sorted(series),
        roots=sorted(roots),
        message_ids=message_ids,
    )


def _moved_by_time(store: Store, when: datetime, settings: Settings) -> bool:
    """Whether some row's state moved with time or with the spans alone."""
    spans = _spans(store)
    return any(
        states.state_of(
            verdict_of(row),
            spans=spans,
            now=when,
            quiet_days=settings.queue_quiet_days,
        )
        != row.state
        for row in store.queue_all()
    )


def _spans(store: Store) -> list[states.Span]:
    return [states.Span(span.first, span.last) for span in store.matched_spans()]


def _repo_paths(store: Store) -> dict[str, set[str]]:
    """Per matched repository, the paths and directories the untracked rule reads."""
    return {
        repo: states.known_paths(paths) for repo, paths in store.commit_paths().items()
    }


def _derive(
    store: Store, seqs: Sequence[int], repo_paths: dict[str, set[str]]
) -> dict[int, Lifecycle]:
    """The lifecycles of these patches, read a chunk at a time, each thread once."""
    spans = store.matched_spans()
    found: dict[int, Lifecycle] = {}
    # Every patch to derive is read first: they are one another's families.
    known = {
        message.seq: message
        for start in range(0, len(seqs), CHUNK)
        for message in store.by_seqs(seqs[start : start + CHUNK])
    }
    for start in range(0, len(seqs), CHUNK):
        patches = [known[seq] for seq in seqs[start : start + CHUNK] if seq in known]
        series = sorted({p.series_id for p in patches if p.series_id is not None})
        roots = sorted({patch.thread_root for patch in patches})
        threads: dict[str, list[ThreadNode]] = {}
        for node in store.thread_nodes(roots):
            threads.setdefault(node.thread_root, []).append(node)
        context = Context(spans, repo_paths, store.series_heads(series), threads, known)
        for patch in patches:
            found[patch.seq] = lifecycle(store, patch, context)
    return found


def _update(
    store: Store,
    derived: dict[int, Lifecycle],
    *,
    when: datetime,
    quiet_days: int,
    retrack: dict[str, set[str]] | None,
) -> tuple[QueueUpdate, int]:
    """The rows to write and the events they make: every row's state evaluated
    again, the derived rows written whole, the others when their state moved;
    with `retrack` (the matched commits moved: the repositories' paths), whether a
    row no commit answered is untracked is decided again too."""
    spans = _spans(store)
    stored = {row.seq: row for row in store.queue_all()}
    retouched: set[int] = set()
    if retrack is not None:
        retouched = _retrack(store, stored, derived, retrack)
    rows: list[QueueRow] = []
    events: list[NewEvent] = []
    changed = 0
    for seq, life in derived.items():
        state = states.state_of(
            life.verdict(), spans=spans, now=when, quiet_days=quiet_days
        )
        row = life.row(state)
        rows.append(row)
        events += _events(stored.get(seq), row, life)
        changed += seq in stored and stored[seq].state != state
    for seq, old in stored.items():
        if seq in derived:
            continue
        state = states.state_of(
            verdict_of(old), spans=spans, now=when, quiet_days=quiet_days
        )
        if state != old.state or old.seq in retouched:
            row = old._replace(state=state)
            rows.append(row)
            events += _events(old, row, None)
            changed += state != old.state
    events += _completed(store, derived)
    update = QueueUpdate(
        rows=rows,
        gone=[],
        links_added=[],
        links_removed=[],
        seq=0,
        trees="",
        commits="",
        events=events,
        found=int(when.timestamp()),
    )
    return update, changed


def _retrack(
    store: Store,
    stored: dict[int, QueueRow],
    derived: dict[int, Lifecycle],
    repo_paths: dict[str, set[str]],
) -> set[int]:
    """The untracked rule read again for the stored rows no commit answered (in
    `stored`); the seqs of those it moved."""
    unanswered = [
        seq for seq, row in stored.items() if not row.answer and seq not in derived
    ]
    files = store.files_of(unanswered)
    moved: set[int] = set()
    for seq in unanswered:
        untracked = states.untracked_because(files.get(seq, []), repo_paths)
        if untracked != stored[seq].untracked:
            stored[seq] = stored[seq]._replace(untracked=untracked)
            moved.add(seq)
    return moved


def _event(row: QueueRow, kind: str, **values: str) -> NewEvent:
    return NewEvent(
        kind=kind,
        message_id=row.message_id,
        series=row.series,
        list=row.list,
        author_name=row.author_name,
        author_email=row.author_email,
        subject=row.subject,
        **values,
    )


def _events(
    old: QueueRow | None, row: QueueRow, life: Lifecycle | None
) -> list[NewEvent]:
    found: list[NewEvent] = []
    if old is None:
        found.append(_event(row, CREATED, to_state=row.state))
    elif old.state != row.state:
        found.append(
            _event(row, STATE_CHANGED, from_state=old.state, to_state=row.state)
        )
    if row.state == states.APPLIED and (old is None or old.state != states.APPLIED):
        commits = life.commits if life is not None else ()
        first = commits[0] if commits else {}
        found.append(
            _event(
                row,
                APPLIED,
                to_state=row.state,
                commit=first.get("commit") or "",
                tree=_tree(first),
                release=first.get("release") or "",
            )
        )
    return found


def _tree(place: dict[str, str | None]) -> str:
    tree, branch = place.get("tree"), place.get("branch")
    if tree and branch:
        return f"{tree}/{branch}"
    return tree or branch or ""


def _completed(store: Store, derived: dict[int, Lifecycle]) -> list[NewEvent]:
    """A series-completed event for each derived series whose every part is
    stored, once: not for a series that has one."""
    found: list[NewEvent] = []
    seen: set[int] = set()
    heads = store.series_heads(
        sorted({p.patch.series_id for p in derived.values() if p.patch.series_id})
    )
    done = store.recorded(SERIES_COMPLETED, [head for head, _ in heads.values()])
    for life in derived.values():
        patch = life.patch
        if patch.series_id is None or patch.series_id in seen or not patch.total:
            continue
        seen.add(patch.series_id)
        head, parts = heads.get(patch.series_id, ("", 0))
        if head and parts >= patch.total and head not in done:
            row = life.row("")._replace(message_id=head, subject=patch.subject)
            found.append(_event(row, SERIES_COMPLETED))
    return found
