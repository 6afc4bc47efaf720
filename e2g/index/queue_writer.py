"""QueueWriter: writes what a refresh of the patch queue derived (e2g.api.queue).

One transaction per refresh, begun before the refresh reads the store (`locked`):
two refreshes (an ingest's and a match's) run one after the other, each reading
what the last one wrote, so a change is recorded as an event once. It writes the
rows of the patches it derived or whose state moved, the links it read (so the next
refresh knows what `match` changed since), the mark of the mail it read, and the
events it found.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import NamedTuple, Self

from e2g.index.db import connect, transaction
from e2g.index.schema import (
    QUEUE_COMMITS_KEY,
    QUEUE_RULES_KEY,
    QUEUE_SEQ_KEY,
    QUEUE_TREES_KEY,
)
from e2g.index.store.queue import QueueRow


class NewEvent(NamedTuple):
    """An event as a refresh finds it ('' where it has no value)."""

    kind: str
    message_id: str
    series: str
    list: str
    author_name: str
    author_email: str
    subject: str
    from_state: str = ""
    to_state: str = ""
    commit: str = ""
    tree: str = ""
    release: str = ""


class QueueUpdate(NamedTuple):
    rows: Sequence[QueueRow]  # rows to insert or replace
    gone: Sequence[int]  # seqs of rows whose patch is no longer stored
    links_added: Sequence[tuple[str, str, str]]
    links_removed: Sequence[tuple[str, str, str]]
    seq: int  # the highest message seq read
    trees: str  # the trees' fingerprint read
    commits: str  # the matched commits' fingerprint read
    events: Sequence[NewEvent]
    found: int  # when the run found them (Unix time)
    rules: str = ""  # the rules' version the rows were derived by


class QueueWriter:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._connection = connect(path)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._connection.close()

    @contextmanager
    def locked(self) -> Iterator[None]:
        """The write transaction the refresh reads and writes in: committed on
        leaving the block, rolled back on an error."""
        with transaction(self._connection, self.path):
            yield

    def write(self, update: QueueUpdate) -> int:
        """Store one refresh (inside `locked`); return how many events it recorded."""
        db = self._connection
        db.executemany(
            f"INSERT OR REPLACE INTO queue VALUES ({','.join('?' * 18)})",
            update.rows,
        )
        db.executemany("DELETE FROM queue WHERE seq = ?", [(s,) for s in update.gone])
        db.executemany(
            "INSERT OR IGNORE INTO queue_links VALUES (?, ?, ?)", update.links_added
        )
        db.executemany(
            "DELETE FROM queue_links WHERE repo = ? AND commit_sha = ? "
            "AND message_id = ?",
            update.links_removed,
        )
        db.executemany(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
            [
                (QUEUE_SEQ_KEY, str(update.seq)),
                (QUEUE_TREES_KEY, update.trees),
                (QUEUE_COMMITS_KEY, update.commits),
                (QUEUE_RULES_KEY, update.rules),
            ],
        )
        before = db.total_changes
        db.executemany(
            "INSERT INTO events(kind, found, message_id, series, list, "
            "author_name, author_email, subject, from_state, to_state, commit_sha, "
            "tree, release) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(event.kind, update.found, *event[1:]) for event in update.events],
        )
        return db.total_changes - before
