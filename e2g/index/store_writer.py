"""StoreWriter: the only code that writes messages into the store.

Each batch is one `BEGIN IMMEDIATE` transaction holding the messages, their sightings,
raw bytes, thread roots, series, malformed records and the source's checkpoint, so a
crash (SIGKILL, Ctrl-C, full disk) loses at most the batch in flight and never leaves
a checkpoint ahead of the data it covers. Writes are idempotent by Message-ID: a
message seen again adds a sighting (a cross-post or a resend), never a second row.
One writer at a time per data dir, enforced with a lock file.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

from e2g import faults
from e2g.errors import StoreError
from e2g.index.codec import Codec
from e2g.index.db import connect, explain, file_pages, read_meta, transaction
from e2g.index.message_rows import RawPart, file_rows, raw_part, runs
from e2g.index.schema import DELETED_BLOCK_KEY, DELETED_SEQ_KEY
from e2g.index.series import SeriesAssigner
from e2g.index.store import (
    BLOCK_KINDS,
    DIFF_BLOCK_BYTES,
    DIFF_BLOCK_DIFFS,
    diff_blocks,
    stored_diff,
)
from e2g.index.writer_lock import LOCK_NAME, acquire_lock, release_lock
from e2g.mail import threads
from e2g.mail.backport import process_kind
from e2g.mail.trailers import TrailerKind, kind_of
from e2g.model.mail import Malformed, Message, RawMessage


class BatchItem(NamedTuple):
    message: Message
    raw: RawMessage
    list_name: str
    deleted: bool = False  # a public-inbox `d` blob: remove this Message-ID


@dataclass(slots=True)
class BatchResult:
    new: list[int] = field(default_factory=list)  # seqs inserted
    touched: list[int] = field(default_factory=list)  # existing seqs that gained a list
    deleted: list[str] = field(default_factory=list)  # message ids removed
    duplicates: int = 0
    cross_posts: int = 0
    malformed_new: int = 0


# Raw mail per compressed block: 64 messages gave 4.2x on io-uring where one by one
# gave 2.7x; larger blocks gain little (256: 4.5x) and cost more to read one message.
BLOCK_MESSAGES = 64
BLOCK_BYTES = 1 << 20


def stored_process(subject: str, stable: str | None, body: str | None) -> str | None:
    """messages.process of a mail with this subject, X-stable: header and body (the
    text before its diff): its step of the backport process
    (e2g.mail.backport.process_kind), None for any other mail. The one place it is
    computed, for new mail and for mail stored before schema 18
    (pipeline.fill_process_kinds)."""
    kind = process_kind(subject, stable=stable, body=body)
    return None if kind is None else str(kind)


def _epoch(value: datetime | None) -> int | None:
    return None if value is None else int(value.timestamp())


class StoreWriter:
    """Writes batches; use as a context manager (closes and releases the lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = acquire_lock(path.parent / LOCK_NAME)
        try:
            self.connection = connect(path)
        except BaseException:
            os.close(self._lock)
            raise
        self.codec = Codec(self.connection)
        self._series = SeriesAssigner(self.connection)
        self._deleted_high = int(read_meta(self.connection, DELETED_SEQ_KEY) or 0)
        self._raw: list[RawPart] = []  # this batch's, until its blocks
        self._diffs: list[tuple[int, bytes]] = []  # (seq, diff) likewise
        # (list, source) -> places.id, valid inside the batch that read it: a batch
        # that rolls back may have inserted the place it remembers.
        self._places: dict[tuple[str, str], int] = {}

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.connection.close()
        finally:
            release_lock(self._lock)

    def checkpoint(self, source: str) -> str | None:
        row = self.connection.execute(
            "SELECT token FROM checkpoints WHERE source = ?", (source,)
        ).fetchone()
        return None if row is None else row[0]

    def meta(self, key: str) -> str | None:
        return read_meta(self.connection, key)

    def set_meta(self, key: str, value: str) -> None:
        self.connection.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def unweighed_patches(self, *, limit: int) -> list[tuple[int, str]]:
        """(seq, stored diff) of up to `limit` messages with files stored without
        their weight (before schema 3)."""
        seqs = [
            int(seq)
            for (seq,) in self.connection.execute(
                "SELECT DISTINCT seq FROM files WHERE weight IS NULL LIMIT ?", (limit,)
            )
        ]
        blocks = diff_blocks()  # neighbouring patches share a block: decompress it once
        return [
            (seq, stored_diff(self.connection, self.codec, seq, blocks) or "")
            for seq in seqs
        ]

    def set_file_weights(
        self, weights: Sequence[tuple[int, Mapping[str, float]]]
    ) -> None:
        """Each message's file weights by path (0 for a path not given), in one
        transaction."""
        with transaction(self.connection, self.path):
            for seq, by_path in weights:
                paths = [
                    str(path)
                    for (path,) in self.connection.execute(
                        "SELECT path FROM files WHERE seq = ?", (seq,)
                    )
                ]
                self.connection.executemany(
                    "UPDATE files SET weight = ? WHERE seq = ? AND path = ?",
                    [(by_path.get(path, 0.0), seq, path) for path in paths],
                )

    def set_quoted_patch_ids(
        self, found: Sequence[tuple[int, str]], *, key: str, done_to: int
    ) -> None:
        """Each reply's quoted patch-id, and `key` set to the last seq read, in one
        transaction: an interrupted backfill resumes after it."""
        self._update_to_mark(
            "UPDATE messages SET patch_id = ? WHERE seq = ? AND kind = 'reply'",
            found,
            key=key,
            done_to=done_to,
        )

    def set_process_kinds(
        self, found: Sequence[tuple[int, str]], *, key: str, done_to: int
    ) -> None:
        """Each message's `process` (stored_process), and `key` set to the last seq
        classified, in one transaction: an interrupted backfill resumes after it."""
        self._update_to_mark(
            "UPDATE messages SET process = ? WHERE seq = ?",
            found,
            key=key,
            done_to=done_to,
        )

    def _update_to_mark(
        self, update: str, found: Sequence[tuple[int, str]], *, key: str, done_to: int
    ) -> None:
        """`update` (value, seq) of each of `found`'s (seq, value), and `key` set to
        `done_to`, in one transaction: a backfill a migration left pending resumes
        after the mark, never with a batch half written."""
        with transaction(self.connection, self.path):
            self.connection.executemany(update, [(value, seq) for seq, value in found])
            self.set_meta(key, str(done_to))

    def clear_meta(self, key: str) -> None:
        self.connection.execute("DELETE FROM meta WHERE key = ?", (key,))

    def max_seq(self) -> int:
        row = self.connection.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM messages"
        ).fetchone()
        return int(row[0])

    def write_batch(
        self,
        items: Sequence[BatchItem],
        malformed: Sequence[Malformed] = (),
        *,
        source: str,
        token: str | None,
        now: datetime,
    ) -> BatchResult:
        """Write one batch and the source's checkpoint in a single transaction."""
        result = BatchResult()
        self._raw, self._diffs = [], []  # nothing of a batch that failed before
        self._places = {}
        with transaction(self.connection, self.path):
            self.codec.maybe_train(
                [item.raw.data for item in items if not item.deleted]
            )
            for item in items:
                if item.deleted:
                    self._delete(item.message.message_id, result)
                else:
                    self._write_one(item, result)
            self._write_blocks()
            for bad in malformed:
                result.malformed_new += self._write_malformed(bad)
            if token is not None:
                self.connection.execute(
                    "INSERT INTO checkpoints(source, token, updated) VALUES (?, ?, ?) "
                    "ON CONFLICT(source) DO UPDATE SET token = excluded.token, "
                    "updated = excluded.updated",
                    (source, token, int(now.timestamp())),
                )
        return result

    def _write_one(self, item: BatchItem, result: BatchResult) -> None:
        message = item.message
        row = self.connection.execute(
            "SELECT seq FROM messages WHERE message_id = ?", (message.message_id,)
        ).fetchone()
        if row is None:
            seq = self._insert(item)
            result.new.append(seq)
            if seq <= self._deleted_high:  # a reused seq: the index may be past it
                self._journal(seq)
            return
        seq = int(row[0])
        result.duplicates += 1
        self._keep_earliest_date(seq, message)
        known_lists = {
            list_row[0]
            for list_row in self.connection.execute(
                "SELECT DISTINCT list FROM sightings WHERE seq = ?", (seq,)
            )
        }
        self._add_sighting(seq, item)
        if item.list_name not in known_lists:
            result.cross_posts += 1
            result.touched.append(seq)
            self._journal(seq)

    def _keep_earliest_date(self, seq: int, message: Message) -> None:
        """A Message-ID seen twice keeps its earliest date: the first posting counts."""
        when = _epoch(message.date)
        if when is None:
            return
        self.connection.execute(
            "UPDATE messages SET date = ?, date_raw = ?, date_source = ? WHERE seq = ? AND date > ?",
            (when, message.date_raw, str(message.date_source), seq, when),
        )

    def _add_sighting(self, seq: int, item: BatchItem) -> None:
        self.connection.execute(
            "INSERT OR IGNORE INTO seen(seq, place, position) VALUES (?, ?, ?)",
            (
                seq,
                self._place(item.list_name, item.raw.origin.source),
                item.raw.origin.position,
            ),
        )

    def _place(self, list_name: str, source: str) -> int:
        """The id of the (list, archive) pair a message was seen in, made on first use."""
        key = (list_name, source)
        found = self._places.get(key)
        if found is None:
            self.connection.execute(
                "INSERT OR IGNORE INTO places(list, source) VALUES (?, ?)", key
            )
            row = self.connection.execute(
                "SELECT id FROM places WHERE list = ? AND source = ?", key
            ).fetchone()
            found = self._places[key] = int(row[0])
        return found

    def _insert(self, item: BatchItem) -> int:
        message = item.message
        root = self._thread_root(message)
        seq = self._insert_message_row(message, root)
        self._insert_details(seq, item)
        # Messages that named this one as their (ghost) root now hang below its root.
        if root != message.message_id:
            self.connection.execute(
                "UPDATE messages SET thread_root = ? WHERE thread_root = ? AND seq != ?",
                (root, message.message_id, seq),
            )
        self._series.assign(seq, message)
        return seq

    def _insert_details(self, seq: int, item: BatchItem) -> None:
        message = item.message
        self._add_sighting(seq, item)
        part = raw_part(seq, item.raw.data, message)
        self._raw.append(part)
        if message.body and part.body_at is None:
            self.connection.execute(
                "INSERT INTO bodies(seq, dict_id, data) VALUES (?, ?, ?)",
                (seq, self.codec.dict_id, self.codec.compress(message.body.encode())),
            )
        if message.patch is not None:
            self.connection.executemany(
                "INSERT OR IGNORE INTO files(seq, path, old_path, status, binary, added, "
                "removed, weight) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(seq, *row) for row in file_rows(message.patch.files)],
            )
            self._diffs.append((seq, message.patch.diff.encode()))
        reviews = [
            (seq, trailer.key, trailer.value)
            for trailer in message.trailers
            if kind_of(trailer.key) is TrailerKind.REVIEW
        ]
        if reviews:  # the rest are read from the body when shown (Store.trailers)
            self.connection.executemany(
                "INSERT INTO trailers(seq, key, value) VALUES (?, ?, ?)", reviews
            )

    def _insert_message_row(self, message: Message, root: str) -> int:
        subject = message.subject
        patch = message.patch
        patch_author = message.patch_author
        cursor = self.connection.execute(
            "INSERT INTO messages(message_id, synthetic, subject, subject_key, version, "
            "part, total, rfc, resend, is_reply, tags, author_name, author_email, "
            "patch_author_name, patch_author_email, date, date_raw, date_source, received_at, "
            "list_id, parent_id, thread_root, kind, body, pull_url, pull_ref, "
            "patch_id, added, removed, stable, stable_base, process) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?, ?, ?)",
            (
                message.message_id,
                int(message.synthetic_id),
                subject.raw,
                subject.key,
                subject.version,
                subject.part,
                subject.total,
                int(subject.rfc),
                int(subject.resend),
                int(subject.is_reply),
                " ".join(subject.tags),
                message.author.name,
                message.author.email,
                patch_author.name if patch_author else None,
                patch_author.email if patch_author else None,
                _epoch(message.date),
                message.date_raw,
                str(message.date_source),
                _epoch(message.received_at),
                message.list_id,
                message.parent_id,
                root,
                str(message.kind),
                "",  # the body is kept compressed in `bodies`
                message.pull.url if message.pull else None,
                message.pull.ref if message.pull else None,
                patch.patch_id if patch else message.quoted_patch_id,
                patch.added if patch else 0,
                patch.removed if patch else 0,
                message.stable,
                message.stable_base,
                stored_process(subject.raw, message.stable, message.body),
            ),
        )
        assert cursor.lastrowid is not None
        return int(cursor.lastrowid)

    def _thread_root(self, message: Message) -> str:
        """The top of this message's thread: an ancestor in the store, or a ghost id.

        Iterative by construction: each stored message already carries its root, so
        one lookup of the parent (or the oldest known reference) is enough.
        """
        own, parent, references = (
            message.message_id,
            message.parent_id,
            message.references,
        )
        for ancestor in threads.root_candidates(own, parent, references):
            row = self.connection.execute(
                "SELECT thread_root FROM messages WHERE message_id = ?", (ancestor,)
            ).fetchone()
            if row is not None:
                return str(row[0])
        return threads.ghost_root(own, parent, references)

    def _write_blocks(self) -> None:
        """The batch's new messages' raw bytes and diffs, each in blocks of
        consecutive messages."""
        raw, self._raw = self._raw, []
        for block in runs(
            raw, [len(part.stored) for part in raw], BLOCK_MESSAGES, BLOCK_BYTES
        ):
            block_id, starts = self._write_block("raw", [part.stored for part in block])
            self.connection.executemany(
                "INSERT INTO raw_parts(seq, block, start, size, diff_at, body_at, "
                "body_size) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (part.seq, block_id, start, len(part.stored), part.diff_at)
                    + (part.body_at, part.body_size)
                    for part, start in zip(block, starts, strict=True)
                ],
            )
        diffs, self._diffs = self._diffs, []
        for run in runs(
            diffs, [len(diff) for _, diff in diffs], DIFF_BLOCK_DIFFS, DIFF_BLOCK_BYTES
        ):
            block_id, starts = self._write_block("diff", [d for _, d in run])
            self.connection.executemany(
                "INSERT INTO diff_parts(seq, block, start, size) VALUES (?, ?, ?, ?)",
                [
                    (seq, block_id, start, len(diff))
                    for (seq, diff), start in zip(run, starts, strict=True)
                ],
            )

    def _write_block(self, kind: str, parts: Sequence[bytes]) -> tuple[int, list[int]]:
        """One compressed block of `parts` of `kind` (store.BLOCK_KINDS): its id, and
        where each part starts in it."""
        cursor = self.connection.execute(
            f"INSERT INTO {kind}_blocks(id, dict_id, data) VALUES (?, ?, ?)",  # noqa: S608 - ours
            (
                self._new_block_id(kind),
                self.codec.dict_id,
                self.codec.compress(b"".join(parts)),
            ),
        )
        assert cursor.lastrowid is not None
        starts, start = [], 0
        for part in parts:
            starts.append(start)
            start += len(part)
        return int(cursor.lastrowid), starts

    def _new_block_id(self, kind: str) -> int | None:
        """The id for a new block of `kind`: above every block deleted before (None
        leaves it to SQLite, which takes the highest id there plus one)."""
        deleted = self.meta(DELETED_BLOCK_KEY.format(kind=kind))
        if deleted is None:
            return None
        highest = self.connection.execute(
            f"SELECT COALESCE(MAX(id), 0) FROM {kind}_blocks"  # noqa: S608 - ours
        ).fetchone()[0]
        return max(int(highest), int(deleted)) + 1

    def _delete(self, message_id: str, result: BatchResult) -> None:
        row = self.connection.execute(
            "SELECT seq FROM messages WHERE message_id = ?", (message_id,)
        ).fetchone()
        if row is None:
            return
        seq = int(row[0])
        if self._raw or self._diffs:  # one written earlier in this batch may be it
            self._write_blocks()
        blocks = [
            (
                kind,
                self.connection.execute(
                    f"SELECT block FROM {kind}_parts WHERE seq = ?",  # noqa: S608 - ours
                    (seq,),
                ).fetchone(),
            )
            for kind in BLOCK_KINDS
        ]
        self.connection.execute("DELETE FROM messages WHERE seq = ?", (seq,))
        for kind, block in blocks:  # a block none of whose messages is left goes
            if block is not None:
                self._delete_block_if_empty(kind, int(block[0]))
        result.deleted.append(message_id)
        self._journal(seq)
        if seq > self._deleted_high:
            self._deleted_high = seq
            self.set_meta(DELETED_SEQ_KEY, str(seq))

    def _delete_block_if_empty(self, kind: str, block: int) -> None:
        cursor = self.connection.execute(
            f"DELETE FROM {kind}_blocks WHERE id = ? AND NOT EXISTS "  # noqa: S608 - ours
            f"(SELECT 1 FROM {kind}_parts WHERE block = ?)",
            (block, block),
        )
        key = DELETED_BLOCK_KEY.format(kind=kind)
        if cursor.rowcount and block > int(self.meta(key) or 0):
            self.set_meta(key, str(block))

    def _journal(self, seq: int) -> None:
        """Tell the full-text index that the message `seq` changed other than by
        arriving (it gained a list, was deleted, or its seq was given again)."""
        self.connection.execute("INSERT INTO index_journal(seq) VALUES (?)", (seq,))

    def prune_index_journal(self, *, upto: int) -> None:
        """Forget the journal up to `upto`, which the full-text index has applied."""
        with transaction(self.connection, self.path):
            self.connection.execute("DELETE FROM index_journal WHERE rev <= ?", (upto,))

    def compact(self) -> tuple[int, int]:
        """Rewrite the store without its free pages, which SQLite otherwise keeps for
        later writes; (bytes before, bytes after). The copy goes to a temporary file,
        not memory (it is the whole store), and back through the WAL: it needs free
        disk of about twice the store, and a full disk or a crash leaves the store as
        it was."""
        before, free = file_pages(self.connection)
        if free:
            try:
                self.connection.execute("PRAGMA temp_store = FILE")
                faults.point("store.compact")
                self.connection.execute("VACUUM")
                self.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.DatabaseError as err:
                raise StoreError(explain(err, self.path)) from None
            finally:
                self.connection.execute("PRAGMA temp_store = MEMORY")
        return before, file_pages(self.connection)[0]

    def _write_malformed(self, bad: Malformed) -> int:
        cursor = self.connection.execute(
            "INSERT OR IGNORE INTO malformed(source, position, reason, detail) VALUES (?, ?, ?, ?)",
            (bad.origin.source, bad.origin.position, bad.reason, bad.detail[:500]),
        )
        return cursor.rowcount
