"""`e2g series MESSAGE-ID`: every version of one series side by side, and what
changed from one version to the next.

A series' versions are its lineage (e2g.index.series: the same author's series with
the same subject key and rising versions, v1 -> v2 -> v3 across threads, a resend
as a version of its own). Each version shows its parts from the queue (state,
review, replies: e2g.api.queue.listing's views) and its state from its parts'
(states.series_state). Between two versions, each part is paired with the part of
the earlier version that has its number (when both versions have the same number of
parts), else its subject key; per file of the pair, what changed: `same` (every hunk
equal, line numbers aside), `changed` (hunks edited, added or dropped:
e2g.mail.interdiff), `added` (a file the earlier part did not touch), `dropped`.
A part with no counterpart is `new` (or `gone`, for the earlier version's).
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from e2g.api.basis import open_store
from e2g.api.queue import states
from e2g.api.queue.listing import PatchView, view_of
from e2g.api.reverse import patch_or_cover
from e2g.config import Settings
from e2g.errors import NotFound, UsageError
from e2g.index.store import QueueRow, Store
from e2g.mail.interdiff import compare_hunks, hunks

MAX_VERSIONS = 50  # versions of one lineage shown


class SeriesVersion(NamedTuple):
    message_id: str  # the series' head: its cover letter, else its first part
    version: int
    subject: str
    date: datetime | None
    state: str
    tally: str
    parts: tuple[PatchView, ...]


class FileChange(NamedTuple):
    path: str
    change: str  # same, changed, added, dropped
    identical: int  # hunks equal in both
    edited: int
    added: int  # hunks only in the later version
    dropped: int  # hunks only in the earlier version


class PartChange(NamedTuple):
    part: str  # "2/5", or the later part's subject when it has no number
    before: str | None  # the earlier version's Message-ID (None: a new part)
    after: str | None  # the later version's (None: a part that went)
    files: tuple[FileChange, ...]


class VersionChange(NamedTuple):
    before: int  # versions
    after: int
    parts: tuple[PartChange, ...]


class SeriesHistory(NamedTuple):
    asked: str
    versions: tuple[SeriesVersion, ...]
    changes: tuple[VersionChange, ...]


def series_history(settings: Settings, message_id: str) -> SeriesHistory:
    with open_store(settings) as store:
        message = store.message(message_id)
        if message is None:
            raise NotFound(f"no message <{message_id}> in the store")
        head = patch_or_cover(store, message)
        if head is None or head.series_id is None:
            raise UsageError(
                f"<{message_id}> is no patch, cover letter or reply to one: "
                "e2g series shows the versions of a posted series"
            )
        lineage = store.lineage(head.series_id)[:MAX_VERSIONS]
        heads = store.series_heads(lineage)
        names = [heads[series][0] for series in lineage if series in heads]
        rows = store.queue_of_series(names)
        by_series: dict[str, list[QueueRow]] = {}
        for row in rows:
            by_series.setdefault(row.series, []).append(row)
        versions = [_version(store, name, by_series.get(name, [])) for name in names]
        changes = [
            _change(store, by_series.get(old, []), by_series.get(new, []))
            for old, new in zip(names, names[1:], strict=False)
        ]
    return SeriesHistory(
        asked=message_id,
        versions=tuple(version for version in versions if version is not None),
        changes=tuple(change for change in changes if change is not None),
    )


def _version(store: Store, name: str, rows: list[QueueRow]) -> SeriesVersion | None:
    if not rows:
        return None
    head = store.message(name)
    views = tuple(view_of(row) for row in rows)
    state, tally = states.series_state([row.state for row in rows])
    return SeriesVersion(
        message_id=name,
        version=rows[0].version,
        subject=head.subject if head is not None else rows[0].subject,
        date=head.date if head is not None else views[0].date,
        state=state,
        tally=tally,
        parts=views,
    )


def _change(
    store: Store, before: list[QueueRow], after: list[QueueRow]
) -> VersionChange | None:
    if not before or not after:
        return None
    same_size = len(before) == len(after) and all(row.part for row in before + after)
    key_of = {
        message.seq: message.subject_key
        for message in store.by_seqs([row.seq for row in before + after])
    }
    earlier = {(row.part if same_size else key_of.get(row.seq)): row for row in before}
    parts: list[PartChange] = []
    for row in after:
        old = earlier.pop(row.part if same_size else key_of.get(row.seq), None)
        label = f"{row.part}/{row.total}" if row.part and row.total else row.subject
        parts.append(
            PartChange(
                part=label,
                before=old.message_id if old is not None else None,
                after=row.message_id,
                files=_files(store, old, row),
            )
        )
    parts += [
        PartChange(
            part=f"{row.part}/{row.total}" if row.part and row.total else row.subject,
            before=row.message_id,
            after=None,
            files=(),
        )
        for row in earlier.values()
    ]
    return VersionChange(before[0].version, after[0].version, tuple(parts))


def _files(store: Store, old: QueueRow | None, new: QueueRow) -> tuple[FileChange, ...]:
    if old is None:
        return ()
    # Each diff read once (e2g.mail.hunks, by way of interdiff), for paths and pairs.
    mine, theirs = hunks(store.diff(old.seq) or ""), hunks(store.diff(new.seq) or "")
    old_paths = {hunk.path for hunk in mine}
    new_paths = {hunk.path for hunk in theirs}
    found = compare_hunks(mine, theirs)
    posted = dict.fromkeys(old_paths | new_paths, 0)
    for hunk in mine:
        posted[hunk.path] += 1
    counts: dict[str, dict[str, int]] = {}
    for change in found.changes:
        counts.setdefault(change.path, {}).setdefault(change.kind, 0)
        counts[change.path][change.kind] += 1
    files = []
    for path in sorted(old_paths | new_paths):
        kinds = counts.get(path, {})
        edited, added, dropped = (
            kinds.get(k, 0) for k in ("edited", "added", "dropped")
        )
        if path not in old_paths:
            kind = "added"
        elif path not in new_paths:
            kind = "dropped"
        else:
            kind = "changed" if edited or added or dropped else "same"
        files.append(
            FileChange(
                path=path,
                change=kind,
                identical=max(0, posted[path] - edited - dropped),
                edited=edited,
                added=added,
                dropped=dropped,
            )
        )
    return tuple(files)
