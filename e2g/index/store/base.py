"""What every reader of the store shares: the connection, message rows read into
`StoredMessage` values, and the compressed blocks of raw mail and diffs."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple, Self

from e2g.index.codec import Codec
from e2g.index.db import connect
from e2g.model import DateSource, Kind
from e2g.model.stored import StoredMessage

MESSAGE_COLUMNS = (
    "seq, message_id, synthetic, subject, subject_key, version, part, total, rfc, "
    "resend, author_name, author_email, patch_author_name, patch_author_email, date, "
    "date_raw, date_source, received_at, parent_id, thread_root, kind, pull_url, "
    "pull_ref, patch_id, added, removed, series_id, list_id, stable, stable_base, process"
)


class StoreCounts(NamedTuple):
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


class StoredLink(NamedTuple):
    """One row of `links`: a posting `e2g match` stored for a commit."""

    commit_sha: str
    message_id: str
    method: str
    score: float
    applied: bool
    evidence: tuple[tuple[str, str], ...]  # (signal, detail)


class SubjectLookup(NamedTuple):
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
        stable,
        stable_base,
        process,
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
        stable=stable,
        stable_base=stable_base,
        process=process,
    )


class StoreBase:
    """Read access to one store file: the connection and the reading of message
    rows, which every group of named queries (the mixins of `Store`) shares."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._connection: sqlite3.Connection = connect(path, readonly=True)
        self._codec: Codec | None = None
        # Neighbouring messages (a thread, a series) are often read together: the
        # last raw block read is kept, and the last few diff blocks.
        self._raw_blocks = Blocks("raw", 1)
        self._diff_blocks = diff_blocks()

    def __enter__(self) -> Self:
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
