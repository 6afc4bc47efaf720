"""Store: read-only typed queries over the SQLite store.

What the matcher, the API and the web layer read. It never writes (the connection is
`query_only`), so it is safe beside a running ingest: WAL readers see the last committed
batch. Rows become `StoredMessage` values here; no sqlite3.Row leaves this module.

Its size (over 500 lines) is the price of being the SQL boundary: every query a
reader makes is a named method here, so no SQL is written anywhere else.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from e2g.index.codec import Codec
from e2g.index.db import connect, file_pages, read_meta
from e2g.model import Address, DateSource, Kind, Trailer
from e2g.model.stored import StoredMessage

if TYPE_CHECKING:
    from e2g.model.links import CommitInfo

__all__ = [
    "AuditRow",
    "Store",
    "StoreCounts",
    "StoredLink",
    "StoredMessage",
    "SubjectLookup",
    "ThreadRow",
    "from_epoch",
]

MESSAGE_COLUMNS = (
    "seq, message_id, synthetic, subject, subject_key, version, part, total, rfc, "
    "resend, author_name, author_email, patch_author_name, patch_author_email, date, "
    "date_raw, date_source, received_at, parent_id, thread_root, kind, pull_url, "
    "pull_ref, patch_id, added, removed, series_id, list_id"
)


@dataclass(frozen=True, slots=True)
class StoreCounts:
    messages: int
    patches: int
    covers: int
    pulls: int
    replies: int
    other: int
    cross_posts: int
    malformed: int
    dates_sanitised: int
    lists: int
    threads: int
    series: int


@dataclass(frozen=True, slots=True)
class StoredLink:
    """One row of `links`: a posting `e2g match` stored for a commit."""

    commit_sha: str
    message_id: str
    method: str
    score: float
    applied: bool
    evidence: tuple[tuple[str, str], ...]  # (signal, detail)


@dataclass(frozen=True, slots=True)
class SubjectLookup:
    """Patches whose subject key is `key`, nearest the epoch `near` first, `limit` of them."""

    key: str
    near: int
    limit: int


def _subject_part(subject: SubjectLookup) -> tuple[str, tuple[object, ...], str]:
    # An empty key (a summary of tags alone) matches nothing: "" is no subject.
    return (
        "subject_key = ? AND subject_key != '' AND kind = 'patch'",
        (subject.key, subject.near),
        f"ORDER BY abs(date - ?) LIMIT {int(subject.limit)}",
    )


def from_epoch(value: int | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, UTC)


def in_list(values: Sequence[object]) -> tuple[str, list[object]]:
    """Placeholders and parameters for `IN (...)` over `values` (not empty)."""
    # Padding the list to a power of two (so SQLite's statement cache serves every
    # length) saved 1.7% of a match run (benchmarks/tricks.py): not worth a trick.
    return ",".join("?" * len(values)), list(values)


# Diffs per compressed block. On 200k messages built from git.git's history
# (benchmarks/scale.py): one by one, 71.9 MB of zstd (83.2 MB of table); 16 to a
# block, 46.6 MB (54.0 MB of table; 8: 51.8, 32: 43.6). Each diff the matcher reads
# costs a block's decompression (~60 KB), yet `e2g match` there (52,000 diff reads)
# took 42.5 s against 44.4 s one by one: a smaller file, fewer pages to read.
DIFF_BLOCK_DIFFS = 16
DIFF_BLOCK_BYTES = 256 * 1024  # a larger diff is a block of its own
DIFF_BLOCK_CACHE = 16  # decompressed blocks a reader keeps: a thread's, a series'
# Which blocks a message's parts lie in: raw mail (`raw_blocks`, `raw_parts`) and
# diffs (`diff_blocks`, `diff_parts`); the tables of a kind are named after it.
BLOCK_KINDS = ("raw", "diff")


class Blocks:
    """The decompressed blocks of one kind (raw, diff) a reader read last (least
    recently used goes).

    Kept by id across snapshots: a block is never rewritten, and the writer never
    gives a deleted block's id to a new one (schema.DELETED_BLOCK_KEY)."""

    def __init__(self, kind: str, limit: int) -> None:
        self._query = f"SELECT dict_id, data FROM {kind}_blocks WHERE id = ?"  # noqa: S608 - ours
        self._limit = limit
        self._blocks: dict[int, bytes] = {}

    def read(
        self, connection: sqlite3.Connection, codec: Codec, block: int
    ) -> bytes | None:
        """The block's bytes; None when an ingest deleted it since its part was read
        (each read outside a held snapshot sees the store as it is then)."""
        found = self._blocks.pop(block, None)
        if found is None:
            row = connection.execute(self._query, (block,)).fetchone()
            if row is None:
                return None
            found = codec.decompress(bytes(row[1]), row[0])
            if len(self._blocks) >= self._limit:
                del self._blocks[next(iter(self._blocks))]
        self._blocks[block] = found  # last in the dict: the most recently used
        return found


def diff_blocks() -> Blocks:
    return Blocks("diff", DIFF_BLOCK_CACHE)


def stored_diff(
    connection: sqlite3.Connection, codec: Codec, seq: int, blocks: Blocks | None = None
) -> str | None:
    """The diff text stored for message `seq`, or None (a message without one)."""
    data = stored_diff_bytes(connection, codec, seq, blocks)
    return None if data is None else data.decode("utf-8", "replace")


def stored_diff_bytes(
    connection: sqlite3.Connection,
    codec: Codec,
    seq: int,
    blocks: Blocks | None = None,
) -> bytes | None:
    row = connection.execute(
        "SELECT block, start, size FROM diff_parts WHERE seq = ?", (seq,)
    ).fetchone()
    if row is not None:
        block, start, size = row
        data = (blocks or Blocks("diff", 1)).read(connection, codec, int(block))
        return None if data is None else data[start : start + size]
    row = connection.execute(  # stored before schema 10: one by one
        "SELECT dict_id, data FROM diffs WHERE seq = ?", (seq,)
    ).fetchone()
    return None if row is None else codec.decompress(bytes(row[1]), row[0])


# Row values to enum members without Enum's call machinery (once per row read).
_KINDS = {kind.value: kind for kind in Kind}
_DATE_SOURCES = {source.value: source for source in DateSource}


def _message(
    row: Sequence[Any],
    lists: tuple[str, ...],
    files: tuple[tuple[str, int, int, float | None], ...],
) -> StoredMessage:
    (
        seq,
        message_id,
        synthetic,
        subject,
        subject_key,
        version,
        part,
        total,
        rfc,
        resend,
        author_name,
        author_email,
        patch_author_name,
        patch_author_email,
        date,
        date_raw,
        date_source,
        received_at,
        parent_id,
        thread_root,
        kind,
        pull_url,
        pull_ref,
        patch_id,
        added,
        removed,
        series_id,
        list_id,
    ) = row
    return StoredMessage(
        seq=int(seq),
        message_id=str(message_id),
        synthetic=bool(synthetic),
        subject=str(subject),
        subject_key=str(subject_key),
        version=int(version),
        part=part,
        total=total,
        rfc=bool(rfc),
        resend=bool(resend),
        author_name=str(author_name),
        author_email=str(author_email),
        patch_author_name=patch_author_name,
        patch_author_email=patch_author_email,
        date=from_epoch(date),
        date_raw=str(date_raw),
        date_source=_DATE_SOURCES.get(str(date_source), DateSource.NONE),
        received_at=from_epoch(received_at),
        parent_id=parent_id,
        thread_root=str(thread_root),
        kind=_KINDS.get(str(kind), Kind.OTHER),
        pull_url=pull_url,
        pull_ref=pull_ref,
        patch_id=patch_id,
        added=int(added),
        removed=int(removed),
        series_id=series_id,
        list_id=list_id,
        lists=lists,
        files=tuple(path for path, _, _, _ in files),
        file_lines=tuple((added, removed) for _, added, removed, _ in files),
        file_weights=tuple(weight for _, _, _, weight in files),
    )


class Store:
    """Read access to one store file. Use as a context manager."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._connection: sqlite3.Connection = connect(path, readonly=True)
        self._codec: Codec | None = None
        # Neighbouring messages (a thread, a series) are often read together: the
        # last raw block read is kept, and the last few diff blocks.
        self._raw_blocks = Blocks("raw", 1)
        self._diff_blocks = diff_blocks()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._connection.in_transaction:
            self._connection.rollback()
        self._connection.close()

    def hold_snapshot(self) -> None:
        """Read the store as it is now, in one read transaction, until the next call.

        For a long reader beside a writer (`e2g match` stores links while its
        workers read mail): each query would otherwise start a transaction of its
        own, and SQLite drops a connection's whole page cache at the next one
        whenever another connection has committed meanwhile. Call it again now and
        then: while a snapshot is held, the writer's log cannot be checkpointed
        and grows.
        """
        if self._connection.in_transaction:
            self._connection.rollback()
        self._connection.execute("BEGIN")
        self._connection.execute("SELECT COUNT(*) FROM meta").fetchone()

    @property
    def codec(self) -> Codec:
        if self._codec is None:
            self._codec = Codec(self._connection)
        return self._codec

    # -- single messages -------------------------------------------------------------

    def _lists(self, seqs: Sequence[int]) -> dict[int, tuple[str, ...]]:
        grouped = self._grouped(
            "SELECT seq, list FROM sightings WHERE seq IN ({}) ORDER BY list", seqs
        )
        return {
            seq: tuple(dict.fromkeys(str(name) for (name,) in rows))
            for seq, rows in grouped.items()
        }

    def _files(
        self, seqs: Sequence[int]
    ) -> dict[int, tuple[tuple[str, int, int, float | None], ...]]:
        """(path, added, removed, weight) of each message's files, by path."""
        grouped = self._grouped(
            "SELECT seq, path, added, removed, weight FROM files WHERE seq IN ({}) "
            "ORDER BY path",
            seqs,
        )
        return {
            seq: tuple(
                (
                    str(path),
                    int(added),
                    int(removed),
                    None if weight is None else float(weight),
                )
                for path, added, removed, weight in rows
            )
            for seq, rows in grouped.items()
        }

    def _grouped(
        self, sql: str, seqs: Sequence[int]
    ) -> dict[int, list[tuple[Any, ...]]]:
        """The rows of `sql` (its first column a seq) by seq, asked 500 seqs at a time."""
        grouped: dict[int, list[tuple[Any, ...]]] = {}
        for start in range(0, len(seqs), 500):
            marks, chunk = in_list(seqs[start : start + 500])
            for seq, *rest in self._connection.execute(sql.format(marks), chunk):
                grouped.setdefault(int(seq), []).append(tuple(rest))
        return grouped

    def _build(self, rows: list[Sequence[Any]]) -> list[StoredMessage]:
        if not rows:  # most of the matcher's exact-key lookups find nothing
            return []
        seqs = [int(row[0]) for row in rows]
        lists, files = self._lists(seqs), self._files(seqs)
        return [
            _message(row, lists.get(seq, ()), files.get(seq, ()))
            for row, seq in zip(rows, seqs, strict=True)
        ]

    def _select(
        self, where: str, parameters: Sequence[object] = (), *, suffix: str = ""
    ) -> list[StoredMessage]:
        """Messages matching a WHERE clause over the messages table."""
        rows = self._connection.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE {where} {suffix}", parameters
        ).fetchall()
        return self._build(rows)

    def _seq_parts(
        self, parts: Sequence[tuple[str, Sequence[object], str]]
    ) -> list[list[int]]:
        """The seqs of several _select()s, each (where, parameters, suffix), in one
        query: what each part found, in the order of the parts."""
        sql = " UNION ALL ".join(
            f"SELECT * FROM (SELECT {number} AS part, seq FROM messages "
            f"WHERE {where} {suffix})"
            for number, (where, _, suffix) in enumerate(parts)
        )
        parameters = [value for _, values, _ in parts for value in values]
        found: list[list[int]] = [[] for _ in parts]
        for part, seq in self._connection.execute(sql, parameters):
            found[int(part)].append(int(seq))
        return found

    # -- the matcher's lookups -------------------------------------------------------

    def exact_key_seqs(
        self, *, patch_id: str, author_stamp: int, subject: SubjectLookup
    ) -> tuple[list[int], list[int]]:
        """Patches with this patch-id or this author timestamp (patch-id first, at most
        100), and the patches `subject` finds, in one query: most commits find
        little or nothing, so the number of queries is the cost. SQLite answers the
        OR of two indexed columns from both indexes."""
        found, same_subject = self._seq_parts(
            [
                (
                    "(patch_id = ? OR date = ?) AND kind = 'patch'",
                    (patch_id, author_stamp, patch_id),
                    "ORDER BY patch_id IS ? DESC, seq LIMIT 100",
                ),
                _subject_part(subject),
            ]
        )
        return found, same_subject

    def subject_patches(self, subject: SubjectLookup) -> list[StoredMessage]:
        """Patches whose subject key is `subject.key`, nearest `subject.near` first."""
        where, parameters, suffix = _subject_part(subject)
        return self._select(where, parameters, suffix=suffix)

    def family_seqs(
        self, *, subject_key: str, patch_id: str | None, low: int, high: int
    ) -> tuple[list[int], list[int]]:
        """Patches dated in [low, high] with this subject key (newest first, at most
        200), and with this patch-id (at most 100)."""
        same_subject, same_patch = self._seq_parts(
            [
                (
                    "subject_key = ? AND kind = 'patch' AND date BETWEEN ? AND ?",
                    (subject_key, low, high),
                    "ORDER BY date DESC LIMIT 200",
                ),
                (
                    "patch_id = ? AND kind = 'patch' AND date BETWEEN ? AND ?",
                    (patch_id or "", low, high),
                    "LIMIT 100",
                ),
            ]
        )
        return same_subject, same_patch

    def patches_with_patch_id(self, patch_id: str) -> list[StoredMessage]:
        """Every patch whose `git patch-id --stable` is `patch_id`."""
        return self._select("patch_id = ? AND kind = 'patch'", (patch_id,))

    def patches_with_subject(self, subject_key: str) -> list[StoredMessage]:
        """Every patch whose subject key is `subject_key`."""
        return self._select("subject_key = ? AND kind = 'patch'", (subject_key,))

    def thread_patches(self, root: str, *, limit: int = 200) -> list[StoredMessage]:
        """The patches of the thread rooted at `root`, in store order."""
        return self._select(
            "thread_root = ? AND kind = 'patch'", (root,), suffix=f"LIMIT {int(limit)}"
        )

    def by_seqs(self, seqs: Sequence[int]) -> list[StoredMessage]:
        """The messages with these seqs, in seq order (one cached statement)."""
        if not seqs:
            return []
        return self._select(
            "seq IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(set(seqs))),),
            suffix="ORDER BY seq",
        )

    def patches_touching(self, path: str) -> list[tuple[int, int, str, str | None]]:
        """(date, seq, author_email, patch_author_email) of every dated patch that
        touches `path`, oldest first: the rows the matcher's file map windows."""
        return [
            (int(date), int(seq), str(email), patch_email)
            for date, seq, email, patch_email in self._connection.execute(
                "SELECT m.date, f.seq, m.author_email, m.patch_author_email "
                "FROM files f JOIN messages m ON m.seq = f.seq WHERE f.path = ? "
                "AND m.kind = 'patch' AND m.date IS NOT NULL ORDER BY m.date, f.seq",
                (path,),
            )
        ]

    def message(self, message_id: str) -> StoredMessage | None:
        found = self._select("message_id = ?", (message_id,))
        return found[0] if found else None

    def messages(
        self, message_ids: Iterable[str], *, places: bool = True
    ) -> list[StoredMessage]:
        """The messages with these Message-IDs; without `places`, their lists and
        files are left empty, unread (half the cost: `e2g audit` reads neither)."""
        ids = list(dict.fromkeys(message_ids))
        found: list[StoredMessage] = []
        for start in range(0, len(ids), 500):
            marks, chunk = in_list(ids[start : start + 500])
            if places:
                found.extend(self._select(f"message_id IN ({marks})", chunk))
                continue
            found += [
                _message(row, (), ())
                for row in self._connection.execute(
                    f"SELECT {MESSAGE_COLUMNS} FROM messages "
                    f"WHERE message_id IN ({marks})",
                    chunk,
                )
            ]
        return found

    def raw(self, seq: int) -> bytes | None:
        """The message's bytes as the archive held them (None: not stored)."""
        part = self._raw_part(seq)
        if part is not None:
            stored, diff_at, _ = part
            if diff_at is None:
                return stored
            # The diff was cut out where it occurred verbatim; its block holds it.
            diff = (
                stored_diff_bytes(self._connection, self.codec, seq, self._diff_blocks)
                or b""
            )
            return stored[:diff_at] + diff + stored[diff_at:]
        row = self._connection.execute(  # stored before schema 5: one by one
            "SELECT dict_id, data FROM raw WHERE seq = ?", (seq,)
        ).fetchone()
        return None if row is None else self.codec.decompress(bytes(row[1]), row[0])

    def _raw_part(
        self, seq: int
    ) -> tuple[bytes, int | None, tuple[int, int] | None] | None:
        """A message's bytes as its block holds them (schema 5 and later), where its
        diff was cut out, and where its body lies; None before schema 5."""
        row = self._connection.execute(
            "SELECT block, start, size, diff_at, body_at, body_size FROM raw_parts "
            "WHERE seq = ?",
            (seq,),
        ).fetchone()
        if row is None:
            return None
        block, start, size, diff_at, body_at, body_size = row
        data = self._raw_blocks.read(self._connection, self.codec, int(block))
        if data is None:
            return None
        stored = data[start : start + size]
        return stored, diff_at, None if body_at is None else (body_at, body_size)

    def body(self, seq: int) -> str:
        """The message's commentary (the text before its diff), "" when it has none."""
        part = self._raw_part(seq)
        if part is not None and part[2] is not None:  # verbatim in the raw bytes
            # The writer cuts a diff only after the body, so the body's offsets hold
            # in the stored bytes: no diff to read back.
            body_at, body_size = part[2]
            return part[0][body_at : body_at + body_size].decode("utf-8")
        row = self._connection.execute(
            "SELECT dict_id, data FROM bodies WHERE seq = ?", (seq,)
        ).fetchone()
        if row is not None:
            return self.codec.decompress(bytes(row[1]), row[0]).decode("utf-8")
        row = self._connection.execute(  # stored before schema 6: in the row
            "SELECT body FROM messages WHERE seq = ?", (seq,)
        ).fetchone()
        return "" if row is None else str(row[0])

    def diff(self, seq: int) -> str | None:
        return stored_diff(self._connection, self.codec, seq, self._diff_blocks)

    def trailers(self, seq: int) -> list[Trailer]:
        """The message's known trailers, in order: found in its stored body as ingest
        found them (the body is the whole commentary they were read from), so the
        store keeps rows only for the reviews the matcher asks for (`reviews_of`)."""
        from e2g.mail.trailers import find_in_mail  # here: readers' imports stay cheap

        return list(find_in_mail(self.body(seq)))

    def thread(self, root: str, *, limit: int = 5000) -> list[StoredMessage]:
        """Every stored message of the thread rooted at `root`, oldest first."""
        return self._select(
            "thread_root = ?", (root,), suffix=f"ORDER BY date, seq LIMIT {int(limit)}"
        )

    def thread_links(
        self, root: str, *, limit: int = 5000
    ) -> list[tuple[int, str, str | None, str, str]]:
        """(seq, message_id, parent_id, author_name, author_email) of a thread: the light
        form of `thread` for walking replies without loading bodies."""
        return [
            (int(seq), str(mid), parent, str(name), str(email))
            for seq, mid, parent, name, email in self._connection.execute(
                "SELECT seq, message_id, parent_id, author_name, author_email FROM messages "
                "WHERE thread_root = ? ORDER BY date, seq LIMIT ?",
                (root, limit),
            )
        ]

    def reviews_of(self, seqs: Sequence[int]) -> list[tuple[int, str, str]]:
        """(seq, key, value) of the review trailers (Reviewed-by, Acked-by, ...) of
        the given messages, in order: the trailers the store keeps as rows."""
        from e2g.mail.trailers import REVIEW_KEYS  # here: readers' imports stay cheap

        found: list[tuple[int, str, str]] = []
        key_marks, key_values = in_list(REVIEW_KEYS)
        for start in range(0, len(seqs), 500):
            marks, chunk = in_list(seqs[start : start + 500])
            found += [
                (int(seq), str(key), str(value))
                for seq, key, value in self._connection.execute(
                    f"SELECT seq, key, value FROM trailers WHERE seq IN ({marks}) "
                    f"AND key IN ({key_marks}) ORDER BY rowid",
                    (*chunk, *key_values),
                )
            ]
        return found

    def cover_seqs(self, series_ids: Sequence[int]) -> list[int]:
        """The seqs of these series' cover letters, in seq order."""
        if not series_ids:
            return []
        marks, values = in_list(series_ids)
        return sorted(
            int(seq)
            for (seq,) in self._connection.execute(
                f"SELECT DISTINCT cover_seq FROM series WHERE id IN ({marks}) "
                "AND cover_seq IS NOT NULL",
                values,
            )
        )

    def series_members(self, series_id: int) -> list[StoredMessage]:
        return self._select("series_id = ?", (series_id,), suffix="ORDER BY part, seq")

    def lineage(self, series_id: int) -> list[int]:
        """Series ids of every version of this series (v1, v2, ...), oldest version first."""
        row = self._connection.execute(
            "SELECT COALESCE(lineage, id) FROM series WHERE id = ?", (series_id,)
        ).fetchone()
        if row is None:
            return []
        return [
            int(found)
            for (found,) in self._connection.execute(
                "SELECT id FROM series WHERE id = ? OR lineage = ? ORDER BY version, id",
                (row[0], row[0]),
            )
        ]

    # -- bulk ------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        return read_meta(self._connection, key)

    def file_pages(self) -> tuple[int, int]:
        """(bytes of the store's file, bytes of them free for later writes)."""
        return file_pages(self._connection)

    def date_range(self) -> tuple[datetime, datetime] | None:
        """The oldest and newest message dates in the store (None when empty)."""
        low, high = self._connection.execute(
            "SELECT MIN(date), MAX(date) FROM messages WHERE date IS NOT NULL"
        ).fetchone()
        if low is None:
            return None
        return datetime.fromtimestamp(low, UTC), datetime.fromtimestamp(high, UTC)

    def max_seq(self) -> int:
        return int(
            self._connection.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM messages"
            ).fetchone()[0]
        )

    def max_change(self) -> int:
        """The newest revision of the index journal (0 when it was never written)."""
        row = self._connection.execute(
            "SELECT seq FROM sqlite_sequence WHERE name = 'index_journal'"
        ).fetchone()
        return 0 if row is None else int(row[0])

    def changes_after(self, rev: int, *, limit: int = 2000) -> list[tuple[int, int]]:
        """(rev, seq) of the index journal after `rev`, oldest first."""
        return [
            (int(found), int(seq))
            for found, seq in self._connection.execute(
                "SELECT rev, seq FROM index_journal WHERE rev > ? ORDER BY rev LIMIT ?",
                (rev, limit),
            )
        ]

    def index_lag(self, *, last_seq: int, last_change: int) -> int:
        """How many changes an index that holds up to (`last_seq`, `last_change`) lacks:
        messages with a higher seq, and journal entries after `last_change`."""
        row = self._connection.execute(
            "SELECT (SELECT COUNT(*) FROM messages WHERE seq > ?)"
            " + (SELECT COUNT(*) FROM index_journal WHERE rev > ?)",
            (last_seq, last_change),
        ).fetchone()
        return int(row[0])

    def iter_messages(
        self, *, after_seq: int = 0, batch: int = 2000
    ) -> Iterator[StoredMessage]:
        """All messages with seq > after_seq, in seq order, read in batches."""
        last = after_seq
        while True:
            chunk = self._select(
                "seq > ?", (last,), suffix=f"ORDER BY seq LIMIT {int(batch)}"
            )
            if not chunk:
                return
            yield from chunk
            last = chunk[-1].seq

    def counts(self) -> StoreCounts:
        one = self._connection.execute
        kinds = dict(
            one("SELECT kind, COUNT(*) FROM messages GROUP BY kind").fetchall()
        )
        cross = one(
            "SELECT COUNT(*) FROM (SELECT seq FROM sightings GROUP BY seq HAVING COUNT(DISTINCT list) > 1)"
        ).fetchone()[0]
        return StoreCounts(
            messages=sum(int(value) for value in kinds.values()),
            patches=int(kinds.get("patch", 0)),
            covers=int(kinds.get("cover", 0)),
            pulls=int(kinds.get("pull", 0)),
            replies=int(kinds.get("reply", 0)),
            other=int(kinds.get("other", 0)),
            cross_posts=int(cross),
            malformed=int(one("SELECT COUNT(*) FROM malformed").fetchone()[0]),
            dates_sanitised=int(
                one(
                    "SELECT COUNT(*) FROM messages WHERE date_source != 'header'"
                ).fetchone()[0]
            ),
            lists=int(one("SELECT COUNT(DISTINCT list) FROM sightings").fetchone()[0]),
            threads=int(
                one("SELECT COUNT(DISTINCT thread_root) FROM messages").fetchone()[0]
            ),
            series=int(one("SELECT COUNT(*) FROM series").fetchone()[0]),
        )

    def malformed_reasons(self) -> dict[str, int]:
        return {
            str(reason): int(count)
            for reason, count in self._connection.execute(
                "SELECT reason, COUNT(*) FROM malformed GROUP BY reason ORDER BY 2 DESC"
            )
        }

    def list_names(self) -> list[str]:
        return [
            str(name)
            for (name,) in self._connection.execute(
                "SELECT DISTINCT list FROM sightings ORDER BY 1"
            )
        ]

    # -- what the web and CLI views count and list -------------------------------------

    def has_message(self, message_id: str) -> bool:
        """Whether the store holds `message_id` (one indexed lookup)."""
        row = self._connection.execute(
            "SELECT 1 FROM messages WHERE message_id = ?", (message_id,)
        ).fetchone()
        return row is not None

    def reply_count(self, message_id: str) -> int:
        """Stored messages whose parent is `message_id`."""
        row = self._connection.execute(
            "SELECT COUNT(*) FROM messages WHERE parent_id = ?", (message_id,)
        ).fetchone()
        return int(row[0])

    def thread_size(self, root: str) -> int:
        """Stored messages of the thread rooted at `root`."""
        row = self._connection.execute(
            "SELECT COUNT(*) FROM messages WHERE thread_root = ?", (root,)
        ).fetchone()
        return int(row[0])

    def first_in_thread(self, root: str) -> StoredMessage | None:
        """The oldest stored message of the thread rooted at `root`."""
        found = self._select(
            "thread_root = ?", (root,), suffix="ORDER BY date, seq LIMIT 1"
        )
        return found[0] if found else None

    def busy_threads(self, *, window: int, limit: int) -> dict[str, int]:
        """Thread roots with more than one of the latest `window` messages, busiest
        first, with how many they have."""
        rows = self._connection.execute(
            "SELECT thread_root, COUNT(*) AS n FROM "
            "(SELECT thread_root FROM messages ORDER BY seq DESC LIMIT ?) "
            "GROUP BY thread_root HAVING n > 1 ORDER BY n DESC, thread_root LIMIT ?",
            (window, limit),
        ).fetchall()
        return {str(root): int(count) for root, count in rows}

    def recent_commits(
        self, repos: Sequence[str], *, limit: int, status: str | None = None
    ) -> list[tuple[str, str, str, int | None, str, str | None]]:
        """(sha, subject, author_name, commit_date, status, method) of the commits of
        `repos` that were looked at, newest first; only those of `status` if given."""
        if not repos:
            return []
        marks = ",".join("?" * len(repos))
        wanted = "" if status is None else " AND status = ?"
        return [
            (str(sha), str(subject), str(author), date, str(status), method)
            for sha, subject, author, date, status, method in self._connection.execute(
                "SELECT sha, subject, author_name, commit_date, status, method "
                f"FROM commits WHERE repo IN ({marks}){wanted} "
                "ORDER BY commit_date DESC LIMIT ?",
                (*repos, *([] if status is None else [status]), limit),
            )
        ]

    def commit_outcomes(self, repo: str) -> list[tuple[str, str, str, str | None, int]]:
        """(sha, files, status, method, commit_date) of every matched-or-not commit of
        `repo`."""
        return [
            (str(sha), str(files), str(status), method, int(date))
            for sha, files, status, method, date in self._connection.execute(
                "SELECT sha, files, status, method, commit_date FROM commits "
                "WHERE repo = ?",
                (repo,),
            )
        ]

    def lists_of_commit(self, repo: str, sha: str) -> set[str]:
        """The lists the postings linked to commit `sha` of `repo` were seen on."""
        rows = self._connection.execute(
            "SELECT DISTINCT s.list FROM links l "
            "JOIN messages m ON m.message_id = l.message_id "
            "JOIN sightings s ON s.seq = m.seq WHERE l.repo = ? AND l.commit_sha = ?",
            (repo, sha),
        ).fetchall()
        return {str(row[0]) for row in rows}

    def links_of_messages(self, message_ids: Sequence[str]) -> list[LinkedCommit]:
        """The stored links of `e2g match` that name any of these messages, with their
        commit's facts and the posting that commit applied, newest commit first."""
        found: list[LinkedCommit] = []
        for start in range(0, len(message_ids), 500):
            marks, chunk = in_list(message_ids[start : start + 500])
            found += [
                LinkedCommit(
                    message_id=str(message_id),
                    repo=str(repo),
                    sha=str(sha),
                    subject=str(subject),
                    commit_date=datetime.fromtimestamp(int(date), UTC),
                    method=str(method),
                    score=float(score),
                    applied_posting=None if applied is None else str(applied),
                )
                for message_id, repo, sha, subject, date, method, score, applied in (
                    self._connection.execute(
                        "SELECT l.message_id, l.repo, l.commit_sha, c.subject, "
                        "c.commit_date, l.method, l.score, (SELECT a.message_id "
                        "FROM links a WHERE a.repo = l.repo AND a.commit_sha = "
                        "l.commit_sha AND a.applied = 1 LIMIT 1) FROM links l JOIN "
                        "commits c ON c.repo = l.repo AND c.sha = l.commit_sha "
                        f"WHERE l.message_id IN ({marks})",
                        chunk,
                    )
                )
            ]
        return sorted(found, key=lambda link: link.commit_date, reverse=True)

    def matched_spans(self) -> list[MatchedSpan]:
        """Per repository `e2g match` has looked at: its commits' date span."""
        return [
            MatchedSpan(
                repo=str(repo),
                first=datetime.fromtimestamp(int(low), UTC),
                last=datetime.fromtimestamp(int(high), UTC),
                commits=int(count),
            )
            for repo, low, high, count in self._connection.execute(
                "SELECT repo, MIN(commit_date), MAX(commit_date), COUNT(*) "
                "FROM commits GROUP BY repo ORDER BY repo"
            )
        ]

    # -- stored links, by commit (e2g blame) ------------------------------------------

    def commit_statuses(self, repo: str, shas: Sequence[str]) -> dict[str, str]:
        """The stored status ("matched", "no-match") of those of `shas` that `e2g
        match` answered for `repo`: one indexed lookup per 500."""
        found: dict[str, str] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for sha, status in self._connection.execute(
                f"SELECT sha, status FROM commits WHERE repo = ? AND sha IN ({marks})",
                (repo, *chunk),
            ):
                found[str(sha)] = str(status)
        return found

    def links_of_commits(
        self, repo: str, shas: Sequence[str], *, evidence: bool = True
    ) -> dict[str, list[StoredLink]]:
        """The stored links of each of `shas` in `repo`: one query per 500; without
        `evidence`, each link's evidence is left empty, unread."""
        found: dict[str, list[StoredLink]] = {}
        column = "evidence" if evidence else "''"  # '' reads as no evidence
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            rows = self._connection.execute(
                "SELECT commit_sha, message_id, method, score, applied, "
                f"{column} FROM links WHERE repo = ? AND commit_sha IN ({marks})",
                (repo, *chunk),
            )
            for sha, message_id, method, score, applied, reasons in rows:
                found.setdefault(str(sha), []).append(
                    StoredLink(
                        commit_sha=str(sha),
                        message_id=str(message_id),
                        method=str(method),
                        score=float(score),
                        applied=bool(applied),
                        evidence=_evidence(reasons),
                    )
                )
        return found

    def stored_commits(self, repo: str, shas: Sequence[str]) -> dict[str, CommitInfo]:
        """What `e2g match` stored of each of `shas` in `repo` (those it answered)."""
        # Here, not at the top: a search, which never asks, does not create the link
        # types (model.links, and model.mail under it: ~8 ms of each start).
        from e2g.model.links import CommitInfo  # noqa: PLC0415

        found: dict[str, CommitInfo] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for (
                sha,
                subject,
                name,
                email,
                authored,
                committed,
                files,
            ) in self._connection.execute(
                "SELECT sha, subject, author_name, author_email, author_date, "
                f"commit_date, files FROM commits WHERE repo = ? AND sha IN ({marks})",
                (repo, *chunk),
            ):
                found[str(sha)] = CommitInfo(
                    sha=str(sha),
                    subject=str(subject),
                    author=Address(str(name), str(email)),
                    author_date=datetime.fromtimestamp(int(authored), UTC),
                    commit_date=datetime.fromtimestamp(int(committed), UTC),
                    files=tuple(str(files).split("\n")) if files else (),
                )
        return found

    def audit_commits(self, repo: str, shas: Sequence[str]) -> dict[str, AuditRow]:
        """What `e2g match` stored of each of `shas` in `repo` that `e2g audit`
        reads: its facts, how it was answered and its patch-id (one query per 500)."""
        found: dict[str, AuditRow] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for (
                sha,
                subject,
                name,
                email,
                files,
                status,
                method,
                score,
                patch,
            ) in self._connection.execute(
                "SELECT sha, subject, author_name, author_email, files, status, "
                "method, score, patch_id FROM commits "
                f"WHERE repo = ? AND sha IN ({marks})",
                (repo, *chunk),
            ):
                found[str(sha)] = AuditRow(
                    sha=str(sha),
                    subject=str(subject),
                    author=Address(str(name), str(email)),
                    files=tuple(str(files).split("\n")) if files else (),
                    status=str(status),
                    method=method,
                    score=score,
                    patch_id=patch,
                )
        return found

    def threads_links(
        self, roots: Sequence[str], *, limit: int = 5000
    ) -> dict[str, list[ThreadRow]]:
        """The messages of many threads, by root, light (no bodies), oldest first:
        one query per 500 roots, each thread cut at its first `limit` messages as
        `thread_links` cuts it."""
        found: dict[str, list[ThreadRow]] = {}
        for start in range(0, len(roots), 500):
            marks, chunk = in_list(roots[start : start + 500])
            for root, *row in self._connection.execute(
                "SELECT thread_root, seq, message_id, parent_id, author_name, "
                "author_email, kind, series_id FROM messages "
                f"WHERE thread_root IN ({marks}) ORDER BY thread_root, date, seq",
                chunk,
            ):
                thread = found.setdefault(str(root), [])
                if len(thread) >= limit:
                    continue
                seq, mid, parent, name, email, kind, series = row
                thread.append(
                    ThreadRow(
                        seq=int(seq),
                        message_id=str(mid),
                        parent_id=parent,
                        author=Address(str(name), str(email)),
                        kind=str(kind),
                        series_id=series,
                    )
                )
        return found

    def has_commits(self, repo: str) -> bool:
        """Whether `e2g match` ever stored an answer for `repo`."""
        row = self._connection.execute(
            "SELECT 1 FROM commits WHERE repo = ? LIMIT 1", (repo,)
        ).fetchone()
        return row is not None

    # -- trees: branches, backports, releases (e2g.api.trees) ---------------------

    def commits_by_prefix(self, prefix: str, *, limit: int = 2) -> list[StoredSha]:
        """Stored commits (any repository) whose sha starts with `prefix`, a full or
        abbreviated sha: one range over the sha index."""
        return [
            StoredSha(str(repo), str(sha), str(status), int(date))
            for repo, sha, status, date in self._connection.execute(
                "SELECT repo, sha, status, commit_date FROM commits "
                "WHERE sha >= ? AND sha < ? LIMIT ?",
                (prefix, prefix + "g", limit),
            )
        ]

    def statuses_and_files(
        self, repo: str, shas: Sequence[str]
    ) -> dict[str, tuple[str, str]]:
        """The stored status and files (newline-separated, as stored) of each of
        `shas` in `repo`: what a backport copies from its upstream commit."""
        found: dict[str, tuple[str, str]] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for sha, status, files in self._connection.execute(
                "SELECT sha, status, files FROM commits "
                f"WHERE repo = ? AND sha IN ({marks})",
                (repo, *chunk),
            ):
                found[str(sha)] = (str(status), str(files))
        return found

    def commits_by_shas(self, shas: Sequence[str]) -> dict[str, list[StoredSha]]:
        """Stored commits (any repository) named by full shas: one query per 500."""
        found: dict[str, list[StoredSha]] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for repo, sha, status, date in self._connection.execute(
                "SELECT repo, sha, status, commit_date FROM commits "
                f"WHERE sha IN ({marks})",
                chunk,
            ):
                found.setdefault(str(sha), []).append(
                    StoredSha(str(repo), str(sha), str(status), int(date))
                )
        return found

    def commits_with_patch_ids(
        self, patch_ids: Sequence[str]
    ) -> dict[str, list[StoredSha]]:
        """Stored commits (any repository) by their patch-id, oldest commit first."""
        found: dict[str, list[StoredSha]] = {}
        for start in range(0, len(patch_ids), 500):
            marks, chunk = in_list(patch_ids[start : start + 500])
            for patch_id, repo, sha, status, date in self._connection.execute(
                "SELECT patch_id, repo, sha, status, commit_date FROM commits "
                f"WHERE patch_id IN ({marks}) ORDER BY commit_date",
                chunk,
            ):
                found.setdefault(str(patch_id), []).append(
                    StoredSha(str(repo), str(sha), str(status), int(date))
                )
        return found

    def backport_edges(self, repo: str, shas: Sequence[str]) -> dict[str, BackportEdge]:
        """The stored upstream of each of `shas` of `repo` that is a backport."""
        found: dict[str, BackportEdge] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for sha, upstream_repo, upstream_sha, how in self._connection.execute(
                "SELECT sha, upstream_repo, upstream_sha, how FROM backports "
                f"WHERE repo = ? AND sha IN ({marks})",
                (repo, *chunk),
            ):
                found[str(sha)] = BackportEdge(
                    repo, str(sha), str(upstream_repo), str(upstream_sha), str(how)
                )
        return found

    def backports_of(self, upstream_shas: Sequence[str]) -> list[BackportEdge]:
        """Every stored backport of any of `upstream_shas` (any repository)."""
        found: list[BackportEdge] = []
        for start in range(0, len(upstream_shas), 500):
            marks, chunk = in_list(upstream_shas[start : start + 500])
            found += [
                BackportEdge(str(repo), str(sha), str(up_repo), str(up_sha), str(how))
                for repo, sha, up_repo, up_sha, how in self._connection.execute(
                    "SELECT repo, sha, upstream_repo, upstream_sha, how FROM backports "
                    f"WHERE upstream_sha IN ({marks}) ORDER BY repo, sha",
                    chunk,
                )
            ]
        return found

    def tree_places(self, shas: Sequence[str]) -> dict[str, list[TreePlace]]:
        """The named trees and branches that reach each of `shas`, any repository,
        `gone` ones (a rebase left them behind) included, in tree order."""
        found: dict[str, list[TreePlace]] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for repo, tree, branch, sha, gone, merge in self._connection.execute(
                "SELECT repo, tree, branch, sha, gone, merge FROM tree_commits "
                f"WHERE sha IN ({marks}) ORDER BY repo, tree, branch",
                chunk,
            ):
                found.setdefault(str(sha), []).append(
                    TreePlace(
                        str(repo), str(tree), str(branch), str(sha), bool(gone), merge
                    )
                )
        return found

    def branch_shas(self, repo: str, tree: str, branch: str) -> dict[str, bool]:
        """Every commit stored as reached by `branch` of `tree`, and whether it is gone."""
        return {
            str(sha): bool(gone)
            for sha, gone in self._connection.execute(
                "SELECT sha, gone FROM tree_commits WHERE repo = ? AND tree = ? "
                "AND branch = ?",
                (repo, tree, branch),
            )
        }

    def branch_tip(self, repo: str, tree: str, branch: str) -> str | None:
        """The tip `branch` of `tree` had when it was last recorded."""
        row = self._connection.execute(
            "SELECT tip FROM branch_tips WHERE repo = ? AND tree = ? AND branch = ?",
            (repo, tree, branch),
        ).fetchone()
        return None if row is None else str(row[0])

    def releases(self, repo: str, shas: Sequence[str]) -> dict[str, str]:
        """The first tag of `repo` that contains each of `shas`, where one does."""
        found: dict[str, str] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for sha, tag in self._connection.execute(
                f"SELECT sha, tag FROM releases WHERE repo = ? AND sha IN ({marks})",
                (repo, *chunk),
            ):
                found[str(sha)] = str(tag)
        return found

    def release_tags(self, repo: str) -> dict[str, str]:
        """The tags of `repo` already walked for releases, and the commits they named."""
        return {
            str(tag): str(target)
            for tag, target in self._connection.execute(
                "SELECT tag, target FROM release_tags WHERE repo = ?", (repo,)
            )
        }

    def pull_requests(
        self, low: int, high: int, *, limit: int = 500
    ) -> list[StoredMessage]:
        """The pull requests (kind pull) dated in [low, high] (Unix times), newest
        first: a range over the date index."""
        return self._select(
            "kind = 'pull' AND date BETWEEN ? AND ?",
            (low, high, limit),
            suffix="ORDER BY date DESC LIMIT ?",
        )

    def subjects_by_key(self, keys: Sequence[str]) -> list[tuple[str, str, str]]:
        """(subject_key, message_id, subject) of every message whose subject key is
        one of `keys`, light (no files or lists): one query per 500 keys."""
        found: list[tuple[str, str, str]] = []
        for start in range(0, len(keys), 500):
            marks, chunk = in_list(keys[start : start + 500])
            found += [
                (str(key), str(message_id), str(subject))
                for key, message_id, subject in self._connection.execute(
                    "SELECT subject_key, message_id, subject FROM messages "
                    f"WHERE subject_key IN ({marks}) ORDER BY date, seq",
                    chunk,
                )
            ]
        return found

    def subjects_by_key_prefix(
        self, prefix: str, *, limit: int = 100
    ) -> list[tuple[str, str, str]]:
        """subjects_by_key() of the messages whose subject key starts with `prefix`
        (a range over the subject index)."""
        return [
            (str(key), str(message_id), str(subject))
            for key, message_id, subject in self._connection.execute(
                "SELECT subject_key, message_id, subject FROM messages "
                "WHERE subject_key >= ? AND subject_key < ? ORDER BY date, seq LIMIT ?",
                (prefix, prefix + "\uffff", limit),
            )
        ]


@dataclass(frozen=True, slots=True)
class StoredSha:
    """A commit `e2g match` stored, by repository."""

    repo: str
    sha: str
    status: str
    commit_date: int  # Unix time


@dataclass(frozen=True, slots=True)
class BackportEdge:
    """Commit `sha` of `repo` is a backport of `upstream_sha` of `upstream_repo`."""

    repo: str
    sha: str
    upstream_repo: str
    upstream_sha: str
    how: str  # mail.backport's note ("cherry-picked", ...) or "patch-id"


@dataclass(frozen=True, slots=True)
class TreePlace:
    """Commit `sha` is reached by `branch` of the named `tree` in `repo`."""

    repo: str
    tree: str
    branch: str
    sha: str
    gone: bool  # a rebase left it behind: history, not an answer
    merge: str | None = None  # the merge that brought it into the branch


@dataclass(frozen=True, slots=True)
class LinkedCommit:
    """One stored link: `message_id` is a posting of commit `sha` of `repo`."""

    message_id: str
    repo: str
    sha: str
    subject: str
    commit_date: datetime
    method: str
    score: float
    applied_posting: str | None  # the posting this commit applied, if one was


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One row of `commits` as `e2g audit` reads it."""

    sha: str
    subject: str
    author: Address
    files: tuple[str, ...]
    status: str  # "matched" or "no-match"
    method: str | None  # how the applied posting was found
    score: float | None
    patch_id: str | None  # the commit's own; None when match read no diff


@dataclass(frozen=True, slots=True)
class ThreadRow:
    """One message of a thread without its body: how it hangs, who sent it."""

    seq: int
    message_id: str
    parent_id: str | None
    author: Address
    kind: str
    series_id: int | None


@dataclass(frozen=True, slots=True)
class MatchedSpan:
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
