"""The store: schema versions, raw bytes kept, one writer at a time, a full disk."""

from __future__ import annotations

import base64
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from e2g import config
from e2g.api.core import ingest
from e2g.errors import StoreError
from e2g.index.db import connect
from e2g.index.schema import MIGRATIONS, SCHEMA_VERSION
from e2g.index.store import DIFF_BLOCK_BYTES, DIFF_BLOCK_DIFFS, Blocks, Store
from e2g.index.store_writer import BatchItem, StoreWriter
from e2g.mail.message import parse_message
from e2g.model.mail import Message, Origin, RawMessage
from tests.conftest import mail, patch_body, store_sql, stored_where

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _item(number: int, **kwargs: object) -> BatchItem:
    raw = RawMessage(mail(number, **kwargs), Origin("test.mbox", str(number)))  # type: ignore[arg-type]
    parsed = parse_message(raw, now=NOW)
    assert isinstance(parsed, Message)
    return BatchItem(parsed, raw, "frob-devel")


def _old_store(path: Path, version: int) -> sqlite3.Connection:
    """A new store at schema `version`, as an older e2g made it (autocommit)."""
    old = sqlite3.connect(path, isolation_level=None)
    old.executescript(
        "BEGIN;"
        + ";".join(MIGRATIONS[:version])
        + f";PRAGMA user_version = {version};COMMIT;"
    )
    return old


def _add_old_messages(old: sqlite3.Connection, *message_ids: str) -> None:
    """Bare message rows, seq 1, 2, ..., in a store of schema 11 or older (a title)."""
    for seq, message_id in enumerate(message_ids, start=1):
        old.execute(
            "INSERT INTO messages(seq, message_id, subject, title, subject_key, "
            "author_name, author_email, date_raw, date_source, thread_root, kind, "
            "body) VALUES (?, ?, 's', 's', 's', 'A', 'a@example.org', '', 'none', ?, "
            "'other', '')",
            (seq, message_id, message_id),
        )


def test_new_store_has_the_current_schema(tmp_path: Path) -> None:
    connection = connect(tmp_path / "s.sqlite3")
    assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_an_older_store_is_migrated_in_place(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    old = _old_store(path, 1)
    old.execute("INSERT INTO meta(key, value) VALUES ('kept', 'yes')")
    old.close()
    connection = connect(path)
    assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert (
        connection.execute("SELECT value FROM meta WHERE key = 'kept'").fetchone()[0]
        == "yes"
    )
    indexes = {
        row[0]
        for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index'"
        )
    }
    assert "messages_author_date" in indexes


def test_a_store_from_a_newer_e2g_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    connect(path).close()
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    with pytest.raises(StoreError, match="newer e2g"):
        connect(path)


def test_raw_bytes_and_diff_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    items = [
        _item(n, subject=f"[PATCH] mm: fix {n}", body=patch_body(n))
        for n in range(1, 300)
    ]
    with StoreWriter(path) as writer:
        writer.write_batch(items, source="t", token=None, now=NOW)
    with Store(path) as store:
        stored = store.message("msg7@example.org")
        assert stored is not None
        assert store.raw(stored.seq) == items[6].raw.data
        assert store.diff(stored.seq) == items[6].message.patch.diff  # type: ignore[union-attr]
        assert stored.files == ("mm/frob.c",)
        # Enough samples trained a dictionary; rows written after it use it.
        assert store_sql(store.path, "SELECT COUNT(*) FROM zdicts")[0][0] == 1


def test_raw_mail_in_blocks_reads_back_every_message(tmp_path: Path) -> None:
    """Raw bytes are kept in compressed blocks of consecutive messages: every
    message reads back byte for byte, in any order, a message over the block size
    is a block of its own, and blocks are smaller than the messages one by one."""
    from e2g.index.store_writer import BLOCK_BYTES, BLOCK_MESSAGES

    path = tmp_path / "s.sqlite3"
    items = [
        _item(n, subject=f"[PATCH] mm: fix {n}", body=patch_body(n))
        for n in range(1, 2 * BLOCK_MESSAGES + 10)
    ]
    huge = _item(9999, body="y" * (BLOCK_BYTES + 10) + "\n")
    items.insert(70, huge)
    with StoreWriter(path) as writer:
        writer.write_batch(items, source="t", token=None, now=NOW)
    with Store(path) as store:
        seqs = {m.message_id: m.seq for m in stored_where(store, "1")}
        for item in [*reversed(items), *items[::7]]:
            assert store.raw(seqs[item.message.message_id]) == item.raw.data
        sizes = store_sql(
            store.path,
            "SELECT COUNT(*), MAX(n) FROM (SELECT COUNT(*) AS n FROM "
            "raw_parts GROUP BY block)",
        )[0]
        alone = store_sql(
            store.path,
            "SELECT COUNT(*) FROM raw_parts WHERE block IN (SELECT block FROM "
            "raw_parts WHERE seq = ?)",
            (seqs["msg9999@example.org"],),
        )[0][0]
        stored = store_sql(store.path, "SELECT SUM(LENGTH(data)) FROM raw_blocks")[0][0]
    assert sizes[0] >= 3 and sizes[1] <= BLOCK_MESSAGES
    assert alone == 1
    assert stored < sum(len(item.raw.data) for item in items) / 3


def test_a_deleted_message_leaves_its_block_neighbours_and_no_empty_block(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.sqlite3"
    items = [_item(n) for n in range(1, 4)]
    with StoreWriter(path) as writer:
        writer.write_batch(items, source="t", token=None, now=NOW)
        for gone in items[:2]:
            writer.write_batch(
                [BatchItem(gone.message, gone.raw, gone.list_name, deleted=True)],
                source="t",
                token=None,
                now=NOW,
            )
    with Store(path) as store:
        (left,) = stored_where(store, "1")
        assert store.raw(left.seq) == items[2].raw.data
        assert store_sql(store.path, "SELECT COUNT(*) FROM raw_blocks")[0][0] == 1
    with StoreWriter(path) as writer:
        gone = items[2]
        writer.write_batch(
            [BatchItem(gone.message, gone.raw, gone.list_name, deleted=True)],
            source="t",
            token=None,
            now=NOW,
        )
    assert store_sql(path, "SELECT COUNT(*) FROM raw_blocks")[0][0] == 0
    assert store_sql(path, "SELECT COUNT(*) FROM raw_parts")[0][0] == 0


def test_raw_mail_stored_one_by_one_before_schema_5_still_reads(tmp_path: Path) -> None:
    """A store written before blocks keeps its rows in `raw`; after the migration
    they read as before, and new mail goes to blocks."""
    path = tmp_path / "s.sqlite3"
    old = _old_store(path, 4)
    old.close()
    first = _item(1)
    with StoreWriter(path) as writer:
        writer.write_batch([first], source="t", token=None, now=NOW)
    # Move the row back to how schema 4 kept it: one zstd frame in `raw`.
    import zstandard

    connection = sqlite3.connect(path)
    connection.execute("DELETE FROM raw_parts")
    connection.execute("DELETE FROM raw_blocks")
    connection.execute(
        "INSERT INTO raw(seq, dict_id, data) SELECT seq, NULL, ? FROM messages",
        (zstandard.ZstdCompressor().compress(first.raw.data),),
    )
    connection.commit()
    connection.close()
    second = _item(2)
    with StoreWriter(path) as writer:
        writer.write_batch([second], source="t", token=None, now=NOW)
    with Store(path) as store:
        seqs = {m.message_id: m.seq for m in stored_where(store, "1")}
        assert store.raw(seqs["msg1@example.org"]) == first.raw.data
        assert store.raw(seqs["msg2@example.org"]) == second.raw.data
    assert store_sql(path, "SELECT COUNT(*) FROM raw_parts")[0][0] == 1


def test_sightings_of_schema_7_move_to_places_and_read_the_same(
    tmp_path: Path,
) -> None:
    """Schema 8 names each (list, archive) once; a store written before keeps every
    sighting, reads them as before through the `sightings` view, and new mail joins
    the places already there."""
    path = tmp_path / "s.sqlite3"
    old = _old_store(path, 7)
    _add_old_messages(old, "old1@example.org", "old2@example.org")
    rows = [
        (1, "frob-devel", "/archives/frob-devel.mbox", "0"),
        (1, "netdev", "/srv/inbox/netdev/git/0.git", "a" * 40),  # a cross-post
        (2, "frob-devel", "/archives/frob-devel.mbox", "5120"),
        (2, "frob-devel", "/archives/frob-devel.mbox", "9000"),  # a resend
    ]
    old.executemany("INSERT INTO sightings VALUES (?, ?, ?, ?)", rows)
    old.close()
    connection = connect(path)
    assert connection.execute("SELECT COUNT(*) FROM places").fetchone()[0] == 2
    assert sorted(connection.execute("SELECT * FROM sightings").fetchall()) == rows
    tables = {
        name
        for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
        )
    }
    assert "sightings" not in tables and {"places", "seen"} <= tables
    connection.close()
    item = _item(3)
    with StoreWriter(path) as writer:
        writer.write_batch([item], source="t", token=None, now=NOW)
        writer.write_batch([item], source="t", token=None, now=NOW)  # idempotent
    places = store_sql(path, "SELECT list, source FROM places ORDER BY id")
    assert places[2:] == [("frob-devel", "test.mbox")]
    assert store_sql(
        path,
        "SELECT s.list, s.source, s.position FROM sightings s "
        "JOIN messages m ON m.seq = s.seq WHERE m.message_id = 'msg3@example.org'",
    ) == [("frob-devel", "test.mbox", "3")]


def test_the_index_journal_of_schema_10_names_seqs_and_counts_on(
    tmp_path: Path,
) -> None:
    """Schema 11 keys the index journal by seq: entries of messages still stored
    keep their revision, a deleted message's entry goes (a format 5 index is rebuilt
    anyway), and revisions go on above the old ones, never back."""
    path = tmp_path / "s.sqlite3"
    old = _old_store(path, 10)
    _add_old_messages(old, "old1@example.org", "old2@example.org")
    for message_id in ("old2@example.org", "gone@example.org", "old1@example.org"):
        old.execute("INSERT INTO index_changes(message_id) VALUES (?)", (message_id,))
    old.execute("DELETE FROM index_changes WHERE rev = 3")  # pruned, as an index does
    old.close()
    with Store(path) as store:
        assert store.changes_after(0) == [(1, 2)]
        assert store.max_change() == 3
    with StoreWriter(path) as writer:  # old1 seen on a new list: journaled
        item = _item(9)
        writer.write_batch([item], source="t", token=None, now=NOW)
        cross = item._replace(list_name="netdev")
        writer.write_batch([cross], source="t", token=None, now=NOW)
    with Store(path) as store:
        assert store.changes_after(1) == [(4, 3)]
        assert store.max_change() == 4


def test_schema_8_rows_lose_only_the_headers_nothing_read(tmp_path: Path) -> None:
    """Schema 9 drops In-Reply-To and References from message rows (the raw mail
    holds them; threading reads parent_id and thread_root): a store written before
    reads every message as it did, and takes new mail."""
    path = tmp_path / "s.sqlite3"
    old = _old_store(path, 8)
    old.execute(
        "INSERT INTO messages(seq, message_id, subject, title, subject_key, "
        "author_name, author_email, date_raw, date_source, in_reply_to, refs, "
        "parent_id, thread_root, kind, body) VALUES (1, 'reply@x', 'Re: s', 's', "
        "'s', 'A', 'a@example.org', '', 'none', 'p@x', 'r@x p@x', 'p@x', 'r@x', "
        "'reply', '')"
    )
    old.close()
    with Store(path) as store:
        message = store.message("reply@x")
        assert message is not None
        assert (message.parent_id, message.thread_root, message.subject) == (
            "p@x",
            "r@x",
            "Re: s",
        )
    columns = {row[1] for row in store_sql(path, "PRAGMA table_info(messages)")}
    assert not {"in_reply_to", "refs"} & columns and "parent_id" in columns
    assert store_sql(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    with StoreWriter(path) as writer:
        writer.write_batch([_item(3)], source="t", token=None, now=NOW)
    with Store(path) as store:
        assert store.message("msg3@example.org") is not None


def _base64_patch(number: int) -> BatchItem:
    import base64

    text = f"Fix {number}, encoded.\n\n{patch_body(number)}"
    return _item(
        number,
        subject=f"[PATCH] mm: fix {number}",
        body=base64.encodebytes(text.encode()).decode(),
        extra=(
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
        ),
    )


def test_each_byte_is_stored_once_and_every_message_reads_back(
    tmp_path: Path,
) -> None:
    """A plain mail's diff is cut out of its raw bytes (its diff block keeps it)
    and its body is read from them; an encoded mail, whose decoded text is not in
    its raw bytes, keeps both whole. Raw bytes, bodies and diffs read back exactly."""
    path = tmp_path / "s.sqlite3"
    items = [
        _item(n, subject=f"[PATCH] mm: fix {n}", body=f"Fix {n}.\n\n" + patch_body(n))
        for n in range(1, 260)
    ]
    items += [_base64_patch(n) for n in range(300, 310)]
    with StoreWriter(path) as writer:
        writer.write_batch(items, source="t", token=None, now=NOW)
    with Store(path) as store:
        seqs = {m.message_id: m.seq for m in stored_where(store, "1")}
        for item in [*reversed(items), *items[::5]]:
            seq = seqs[item.message.message_id]
            assert store.raw(seq) == item.raw.data
            body = store.body(seq)
            assert body == item.message.body and body.startswith("Fix ")
            assert store.diff(seq) == item.message.patch.diff  # type: ignore[union-attr]
        assert store.body(10**9) == ""
    assert store_sql(path, "SELECT COUNT(*) FROM messages WHERE body != ''")[0][0] == 0
    # Only the encoded mails need a body row, and only theirs keep their diff.
    assert store_sql(path, "SELECT COUNT(*) FROM bodies")[0][0] == 10
    assert store_sql(path, "SELECT COUNT(*) FROM raw_parts WHERE diff_at IS NULL") == [
        (10,)
    ]
    assert store_sql(
        path, "SELECT COUNT(*) FROM raw_parts WHERE body_at IS NOT NULL"
    ) == [(259,)]


def _patch(number: int, lines: int = 1) -> BatchItem:
    diff = patch_body(number) if lines == 1 else _long_patch(number, lines)
    return _item(number, subject=f"[PATCH] mm: fix {number}", body=f"Fix.\n\n{diff}")


def _long_patch(number: int, lines: int) -> str:
    added = "".join(f"+line {number}.{n} of a long change\n" for n in range(lines))
    return (
        f"---\n mm/big{number}.c | {lines} +\n 1 file changed\n\n"
        f"diff --git a/mm/big{number}.c b/mm/big{number}.c\n"
        f"--- a/mm/big{number}.c\n+++ b/mm/big{number}.c\n"
        f"@@ -0,0 +1,{lines} @@\n{added}"
    )


def test_diffs_are_stored_in_blocks_and_each_reads_back_exactly(
    tmp_path: Path,
) -> None:
    """Diffs go DIFF_BLOCK_DIFFS to a compressed block, a diff larger than
    DIFF_BLOCK_BYTES alone; each reads back exactly, in any order, from a reader
    whose block cache holds fewer blocks than there are."""
    from e2g.index import store as module

    path = tmp_path / "s.sqlite3"
    items = [_patch(n) for n in range(1, 40)]
    items.insert(20, _patch(500, lines=DIFF_BLOCK_BYTES // 20))  # ~0.8 MB of diff
    items.append(_item(600))  # no diff: no part
    with StoreWriter(path) as writer:
        writer.write_batch(items, source="t", token=None, now=NOW)
    sizes = [
        count
        for (count,) in store_sql(
            path, "SELECT COUNT(*) FROM diff_parts GROUP BY block ORDER BY block"
        )
    ]
    assert sizes == [DIFF_BLOCK_DIFFS, 4, 1, DIFF_BLOCK_DIFFS, 3], sizes
    assert store_sql(path, "SELECT COUNT(*) FROM diffs") == [(0,)]
    with Store(path) as store:
        store._diff_blocks = module.Blocks("diff", limit=2)
        seqs = {m.message_id: m.seq for m in stored_where(store, "1")}
        for item in [*reversed(items), *items[::3]]:
            seq = seqs[item.message.message_id]
            expected = item.message.patch.diff if item.message.patch else None
            assert store.diff(seq) == expected
            assert store.raw(seq) == item.raw.data
        assert len(store._diff_blocks._blocks) == 2


def test_a_deleted_patch_takes_its_diff_block_only_with_the_last_of_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.sqlite3"
    items = [_patch(n) for n in range(1, 4)]
    with StoreWriter(path) as writer:
        writer.write_batch(items, source="t", token=None, now=NOW)
        for gone in items[:2]:
            deleted = BatchItem(gone.message, gone.raw, gone.list_name, deleted=True)
            writer.write_batch([deleted], source="t", token=None, now=NOW)
    with Store(path) as store:
        (left,) = stored_where(store, "1")
        assert store.diff(left.seq) == items[2].message.patch.diff  # type: ignore[union-attr]
    assert store_sql(path, "SELECT COUNT(*) FROM diff_blocks") == [(1,)]
    with StoreWriter(path) as writer:
        gone = items[2]
        deleted = BatchItem(gone.message, gone.raw, gone.list_name, deleted=True)
        writer.write_batch([deleted], source="t", token=None, now=NOW)
    assert store_sql(path, "SELECT COUNT(*) FROM diff_blocks") == [(0,)]
    assert store_sql(path, "SELECT COUNT(*) FROM diff_parts") == [(0,)]


def test_diffs_stored_one_by_one_before_schema_10_still_read(tmp_path: Path) -> None:
    """A store written before diff blocks keeps its `diffs` rows; after the
    migration they read as before (raw bytes too), and new diffs go to blocks."""
    path = tmp_path / "s.sqlite3"
    first = _patch(1)
    with StoreWriter(path) as writer:
        writer.write_batch([first], source="t", token=None, now=NOW)
    with Store(path) as store:
        (message,) = stored_where(store, "1")
        alone = store.codec.compress(first.message.patch.diff.encode())  # type: ignore[union-attr]
    old = sqlite3.connect(path, isolation_level=None)
    old.executescript(  # as schema 9 held it: the diff in its own row
        "BEGIN;DELETE FROM diff_parts;DELETE FROM diff_blocks;"
        "DROP TABLE diff_parts;DROP TABLE diff_blocks;DROP TABLE index_journal;"
        "CREATE TABLE index_changes (rev INTEGER PRIMARY KEY AUTOINCREMENT,"
        " message_id TEXT NOT NULL);"
        "ALTER TABLE messages ADD COLUMN title TEXT NOT NULL DEFAULT '';"
        "DROP INDEX commits_sha;DROP INDEX commits_patch_id;DROP INDEX commits_subject;"
        "DROP TABLE tree_commits;"
        "DROP TABLE backports;DROP TABLE releases;DROP TABLE release_tags;"
        "DROP TABLE branch_tips;"
        "ALTER TABLE commits DROP COLUMN patch_id;"
        "ALTER TABLE messages DROP COLUMN stable;"
        "ALTER TABLE messages DROP COLUMN stable_base;"
        "DROP INDEX messages_process;ALTER TABLE messages DROP COLUMN process;"
        "DROP TABLE queue;DROP TABLE queue_links;DROP TABLE events;"
        "PRAGMA user_version = 9;COMMIT;"
    )
    old.execute(
        "INSERT INTO diffs(seq, dict_id, data) VALUES (?, NULL, ?)",
        (message.seq, alone),
    )
    old.close()
    second = _patch(2)
    with StoreWriter(path) as writer:
        writer.write_batch([second], source="t", token=None, now=NOW)
    with Store(path) as store:
        for item in (first, second):
            stored = store.message(item.message.message_id)
            assert stored is not None
            assert store.diff(stored.seq) == item.message.patch.diff  # type: ignore[union-attr]
            assert store.raw(stored.seq) == item.raw.data
    assert store_sql(path, "SELECT COUNT(*) FROM diffs") == [(1,)]
    assert store_sql(path, "SELECT COUNT(*) FROM diff_parts") == [(1,)]


def test_a_body_and_diff_stored_whole_under_schema_6_still_read(
    tmp_path: Path,
) -> None:
    """Rows written before schema 7 have the whole raw bytes and a `bodies` row."""
    path = tmp_path / "s.sqlite3"
    first = _item(1, subject="[PATCH] mm: fix 1", body="Fix 1.\n\n" + patch_body(1))
    with StoreWriter(path) as writer:
        writer.write_batch([first], source="t", token=None, now=NOW)
    with Store(path) as store:
        codec = store.codec
        whole = codec.compress(first.raw.data)
        body = codec.compress(first.message.body.encode())
    connection = sqlite3.connect(path)
    connection.execute("UPDATE raw_blocks SET data = ?, dict_id = NULL", (whole,))
    connection.execute(
        "UPDATE raw_parts SET size = ?, diff_at = NULL, body_at = NULL, "
        "body_size = NULL",
        (len(first.raw.data),),
    )
    connection.execute(
        "INSERT INTO bodies(seq, dict_id, data) SELECT seq, NULL, ? FROM messages",
        (body,),
    )
    connection.commit()
    connection.close()
    with Store(path) as store:
        (stored,) = stored_where(store, "1")
        assert store.raw(stored.seq) == first.raw.data
        assert store.body(stored.seq) == first.message.body


def test_a_body_stored_in_its_row_before_schema_6_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    first = _item(1, body="Written before bodies had their own table.\n")
    with StoreWriter(path) as writer:
        writer.write_batch([first], source="t", token=None, now=NOW)
    connection = sqlite3.connect(path)
    connection.execute("UPDATE messages SET body = ?", (first.message.body,))
    connection.execute("DELETE FROM bodies")
    connection.commit()
    connection.close()
    with Store(path) as store:
        (stored,) = stored_where(store, "1")
        assert store.body(stored.seq) == first.message.body


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with (
        StoreWriter(path),
        pytest.raises(
            StoreError, match=rf"another e2g \(pid {os.getpid()}\) is writing"
        ),
    ):
        StoreWriter(path)
    StoreWriter(path).close()  # released once the first one is closed


def test_a_lock_held_for_a_moment_is_waited_for(tmp_path: Path) -> None:
    """A process forked by another thread holds a copy of the writer lock until it
    execs: an ingest that starts then waits for it instead of failing."""
    import fcntl
    import threading

    from e2g.index.writer_lock import LOCK_GRACE_SECONDS, LOCK_NAME

    path = tmp_path / "s.sqlite3"
    StoreWriter(path).close()
    copy = os.open(tmp_path / LOCK_NAME, os.O_RDWR)
    fcntl.flock(copy, fcntl.LOCK_EX)
    release = threading.Timer(LOCK_GRACE_SECONDS / 4, os.close, args=(copy,))
    release.start()
    try:
        StoreWriter(path).close()  # would raise without the grace
    finally:
        release.join()


def test_full_disk_is_a_clear_error_and_loses_nothing_committed(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with StoreWriter(path) as writer:
        writer.write_batch([_item(1)], source="t", token="first", now=NOW)
        pages = writer.connection.execute("PRAGMA page_count").fetchone()[0]
        # Emulate a full disk: SQLite fails the same way ("database or disk is full").
        writer.connection.execute(f"PRAGMA max_page_count = {pages + 1}")
        big = [_item(n, body="x" * 20_000 + "\n") for n in range(2, 60)]
        with pytest.raises(StoreError, match="full"):
            writer.write_batch(big, source="t", token="second", now=NOW)
        assert writer.checkpoint("t") == "first"
    with Store(path) as store:
        assert store.counts().messages == 1
        assert store_sql(store.path, "PRAGMA integrity_check")[0][0] == "ok"


def test_a_deletion_removes_the_message(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with StoreWriter(path) as writer:
        writer.write_batch([_item(1), _item(2)], source="t", token=None, now=NOW)
        gone = _item(1)
        result = writer.write_batch(
            [BatchItem(gone.message, gone.raw, gone.list_name, deleted=True)],
            source="t",
            token=None,
            now=NOW,
        )
    assert result.deleted == ["msg1@example.org"]
    with Store(path) as store:
        assert [m.message_id for m in store.iter_messages()] == ["msg2@example.org"]


def test_a_repeated_message_id_keeps_its_earliest_date(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    late = _item(1, date=datetime(2021, 3, 2, tzinfo=UTC))
    early = _item(1, date=datetime(2021, 3, 1, tzinfo=UTC))
    with StoreWriter(path) as writer:
        writer.write_batch([late], source="a", token=None, now=NOW)
        result = writer.write_batch([early], source="b", token=None, now=NOW)
    assert result.duplicates == 1
    with Store(path) as store:
        stored = store.message("msg1@example.org")
        assert stored is not None and stored.date == datetime(2021, 3, 1, tzinfo=UTC)


def test_reading_while_an_ingest_writes(tmp_path: Path, write_mbox) -> None:
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    ingest(
        settings, [str(write_mbox("a.mbox", [mail(n) for n in range(1, 5)]))], workers=1
    )
    with Store(settings.store_path) as reader:
        assert reader.counts().messages == 4
        ingest(
            settings,
            [str(write_mbox("b.mbox", [mail(n) for n in range(5, 9)]))],
            workers=1,
        )
        assert reader.counts().messages == 8


def test_family_seqs_answer_each_key_with_its_own_order_and_window(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.sqlite3"
    items = [
        _item(n, subject=f"[PATCH] mm: fix {n % 3}", body=patch_body(n % 2))
        for n in range(1, 13)
    ]
    with StoreWriter(path) as writer:
        writer.write_batch(items, source="t", token=None, now=NOW)
    with Store(path) as store:
        ids = {m.seq: m.message_id for m in stored_where(store, "1")}
        dates = {m.message_id: m.date for m in stored_where(store, "1")}
        patch_id = next(
            m.patch_id for m in stored_where(store, "message_id = 'msg2@example.org'")
        )
        low = int(dates["msg4@example.org"].timestamp())  # type: ignore[union-attr]
        high = int(dates["msg10@example.org"].timestamp())  # type: ignore[union-attr]
        same_subject, same_patch = store.family_seqs(
            subject_key="mm: fix 1", patch_id=patch_id, low=low, high=high
        )
        assert [ids[seq] for seq in same_subject] == [
            f"msg{n}@example.org" for n in (10, 7, 4)
        ]  # newest first, inside the window
        assert sorted(ids[seq] for seq in same_patch) == sorted(
            f"msg{n}@example.org" for n in (4, 6, 8, 10)
        )  # the same diff as msg2's: every even message in the window
        none, nothing = store.family_seqs(
            subject_key="no such subject", patch_id=None, low=low, high=high
        )
        assert none == [] and nothing == []


def test_a_held_snapshot_reads_the_store_as_it_was(tmp_path: Path, write_mbox) -> None:
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    ingest(
        settings, [str(write_mbox("a.mbox", [mail(n) for n in range(1, 5)]))], workers=1
    )
    with Store(settings.store_path) as reader:
        reader.hold_snapshot()
        ingest(
            settings,
            [str(write_mbox("b.mbox", [mail(n) for n in range(5, 9)]))],
            workers=1,
        )
        assert reader.counts().messages == 4
        assert reader.max_seq() == 4
        reader.hold_snapshot()  # a new one: the store as it is now
        assert reader.counts().messages == 8


def test_in_list_gives_one_placeholder_per_value(tmp_path: Path) -> None:
    from e2g.index.store import in_list

    for size in (1, 2, 3, 5, 8, 9, 500):
        values = list(range(size))
        marks, padded = in_list(values)
        assert marks.count("?") == len(padded) == size
        assert padded == values
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE t (n INTEGER)")
    connection.executemany("INSERT INTO t VALUES (?)", [(n,) for n in range(10)])
    marks, padded = in_list([7, 2, 5])
    rows = connection.execute(
        f"SELECT n FROM t WHERE n IN ({marks}) ORDER BY n", padded
    )
    assert [n for (n,) in rows] == [2, 5, 7]


def test_each_stored_patch_file_carries_the_weight_its_diff_has(tmp_path: Path) -> None:
    from e2g.mail.patch import diff_lines
    from e2g.model import lines_weight
    from tests.conftest import SAMPLE

    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    ingest(settings, [str(SAMPLE / "frob-devel.mbox")], workers=1)
    checked = 0
    with Store(settings.store_path) as store:
        for message in stored_where(store, "kind = 'patch'"):
            diff = store.diff(message.seq)
            assert diff is not None
            lines = diff_lines(diff)
            want = {
                path: lines_weight(added)[1] + lines_weight(removed)[1]
                for path, (added, removed) in lines.items()
            }
            got = dict(zip(message.files, message.file_weights, strict=True))
            assert got == pytest.approx({path: want.get(path, 0.0) for path in got})
            assert set(want) <= set(got)
            checked += 1
    assert checked > 10


def test_files_stored_before_weights_are_weighed_by_the_next_ingest(
    tmp_path: Path,
) -> None:
    from e2g.index.schema import WEIGHTS_PENDING_KEY
    from tests.conftest import SAMPLE

    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    archive = str(SAMPLE / "frob-devel.mbox")
    ingest(settings, [archive], workers=1)
    connection = connect(settings.store_path)
    assert (
        connection.execute(
            "SELECT COUNT(*) FROM meta WHERE key = ?", (WEIGHTS_PENDING_KEY,)
        ).fetchone()[0]
        == 0
    )
    weighed = connection.execute(
        "SELECT seq, path, weight FROM files ORDER BY seq, path"
    ).fetchall()
    assert weighed and all(weight is not None for _, _, weight in weighed)
    # As a store from before schema 3 looks once migrated:
    connection.execute("UPDATE files SET weight = NULL")
    connection.execute(
        "INSERT INTO meta(key, value) VALUES (?, '1')", (WEIGHTS_PENDING_KEY,)
    )
    connection.close()
    report = ingest(settings, [archive], workers=1)  # nothing new to store
    assert report.new == 0 and report.weighed == len({seq for seq, _, _ in weighed})
    connection = connect(settings.store_path)
    again = connection.execute(
        "SELECT seq, path, weight FROM files ORDER BY seq, path"
    ).fetchall()
    assert again == weighed
    assert (
        connection.execute(
            "SELECT COUNT(*) FROM meta WHERE key = ?", (WEIGHTS_PENDING_KEY,)
        ).fetchone()[0]
        == 0
    )


def test_migrating_a_store_with_files_marks_their_weights_pending(
    tmp_path: Path,
) -> None:
    from e2g.index.schema import WEIGHTS_PENDING_KEY

    path = tmp_path / "s.sqlite3"
    old = sqlite3.connect(path, isolation_level=None)
    old.executescript(
        f"BEGIN;{MIGRATIONS[0]};{MIGRATIONS[1]};PRAGMA user_version = 2;COMMIT;"
    )
    old.execute("INSERT INTO files(seq, path, status) VALUES (1, 'a.c', 'modified')")
    old.close()
    connection = connect(path)
    assert connection.execute(
        "SELECT value FROM meta WHERE key = ?", (WEIGHTS_PENDING_KEY,)
    ).fetchone() == ("1",)
    assert connection.execute("SELECT weight FROM files").fetchall() == [(None,)]


def test_a_file_changed_by_two_diffs_of_one_mail_is_stored_once_with_both_counts(
    tmp_path: Path,
) -> None:
    second = (
        "diff --git a/mm/frob.c b/mm/frob.c\n"
        "--- a/mm/frob.c\n+++ b/mm/frob.c\n"
        "@@ -10,3 +10,4 @@\n int other;\n+int added_one;\n+int added_two;\n-int gone;\n int end;\n"
    )
    body = patch_body(1).replace("--\n2.39.0\n", second)
    item = _item(1, subject="[PATCH] mm: frob twice", body=body)
    assert [f.path for f in item.message.patch.files] == ["mm/frob.c", "mm/frob.c"]
    path = tmp_path / "s.sqlite3"
    with StoreWriter(path) as writer:
        writer.write_batch([item], source="t", token=None, now=NOW)
    with Store(path) as store:
        (stored,) = stored_where(store, "kind = 'patch'")
        assert stored.files == ("mm/frob.c",)
        assert stored.file_lines == ((3, 2),)
        diff = store.diff(stored.seq)
        assert diff is not None
        from e2g.mail.patch import file_weights

        assert stored.file_weights == (file_weights(diff)["mm/frob.c"],)


def _noisy_patch(number: int, lines: int) -> BatchItem:
    """A patch whose lines zstd cannot shrink much, so that deleting it frees pages."""
    import random

    noise = random.Random(number)
    added = "".join(f"+{noise.getrandbits(256):064x}\n" for _ in range(lines))
    diff = (
        f"---\n mm/noise{number}.c | {lines} +\n 1 file changed\n\n"
        f"diff --git a/mm/noise{number}.c b/mm/noise{number}.c\n"
        f"--- a/mm/noise{number}.c\n+++ b/mm/noise{number}.c\n"
        f"@@ -0,0 +1,{lines} @@\n{added}"
    )
    return _item(number, subject=f"[PATCH] mm: noise {number}", body=f"Fix.\n\n{diff}")


def test_compact_returns_the_pages_deleted_mail_freed_and_keeps_the_rest(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.sqlite3"
    items = [_noisy_patch(number, 300) for number in range(1, 41)]
    with StoreWriter(path) as writer:
        writer.write_batch(items, source="t", token=None, now=NOW)
        for gone in items[4:]:
            deleted = BatchItem(gone.message, gone.raw, gone.list_name, deleted=True)
            writer.write_batch([deleted], source="t", token=None, now=NOW)
    with Store(path) as store:
        size, free = store.file_pages()
    assert free > size // 3  # the blocks of 32 of the 36 deleted patches are gone
    with StoreWriter(path) as writer:
        before, after = writer.compact()
        assert before == size and after <= size - free + 4096
        assert writer.compact() == (after, after)  # nothing free: nothing done
        writer.write_batch([_noisy_patch(99, 10)], source="t", token=None, now=NOW)
    with Store(path) as store:
        for kept in items[:4]:
            stored = store.message(kept.message.message_id)
            assert stored is not None
            assert store.raw(stored.seq) == kept.raw.data
            assert store.diff(stored.seq) == kept.message.patch.diff  # type: ignore[union-attr]
        assert store.message("msg99@example.org") is not None
        assert store.message("msg40@example.org") is None


def test_a_deleted_block_s_id_is_never_given_to_a_new_one(tmp_path: Path) -> None:
    """Readers keep decompressed blocks by id (a match worker for its whole run): a
    public-inbox that deletes the newest messages, then brings new ones, must not
    see a new block under the id of one it read before, or it slices the wrong
    bytes."""
    path = tmp_path / "s.sqlite3"
    first, second, spam = _patch(1), _patch(2), _patch(3, lines=40)
    with StoreWriter(path) as writer:
        writer.write_batch([first, second], source="t", token=None, now=NOW)
        writer.write_batch([spam], source="t", token=None, now=NOW)
    with Store(path) as reader:
        read = reader.message(spam.message.message_id)
        assert read is not None
        assert reader.diff(read.seq) == spam.message.patch.diff  # type: ignore[union-attr]
        assert reader.raw(read.seq) == spam.raw.data
        with StoreWriter(path) as writer:
            gone = BatchItem(spam.message, spam.raw, spam.list_name, deleted=True)
            writer.write_batch([gone], source="t", token=None, now=NOW)
            writer.write_batch([_patch(4)], source="t", token=None, now=NOW)
        fresh = reader.message("msg4@example.org")
        assert fresh is not None
        assert reader.diff(fresh.seq) == _patch(4).message.patch.diff  # type: ignore[union-attr]
        assert reader.raw(fresh.seq) == _patch(4).raw.data
    ids = {
        table: [
            row[0] for row in store_sql(path, f"SELECT id FROM {table} ORDER BY id")
        ]
        for table in ("raw_blocks", "diff_blocks")
    }
    assert ids == {"raw_blocks": [1, 3], "diff_blocks": [1, 3]}


def test_a_block_deleted_after_its_part_was_read_reads_as_nothing(
    tmp_path: Path,
) -> None:
    """Outside a held snapshot each query sees the store as it is then: an ingest
    may delete a message's block between the read of its part and of its block.
    That reads as a message no longer stored, never a crash."""
    path = tmp_path / "s.sqlite3"
    with StoreWriter(path) as writer:
        writer.write_batch([_patch(1)], source="t", token=None, now=NOW)
    with Store(path) as store:
        (block,) = store_sql(path, "SELECT id FROM diff_blocks")[0]
        for kind in ("diff", "raw"):
            blocks = Blocks(kind, 1)
            assert blocks.read(store._connection, store.codec, block + 1) is None
            assert blocks.read(store._connection, store.codec, block) is not None


def test_trailers_read_back_from_the_body_and_only_reviews_are_rows(
    tmp_path: Path,
) -> None:
    """Every trailer a message carried reads back, in order (found in its stored
    body, as ingest found them); the store keeps rows only for reviews, which the
    matcher asks for across many messages at once."""
    path = tmp_path / "s.sqlite3"
    posted = _item(1, subject="[PATCH] mm: fix frob", body=patch_body(1))
    said = "Looks right.\n\nAcked-by: Eve Acker <eve@example.org>\n"
    encoded = _item(  # not verbatim in the raw mail: its body is stored apart
        3,
        subject="Re: [PATCH] mm: fix frob",
        in_reply_to="msg1@example.org",
        body=base64.b64encode(said.encode()).decode() + "\n",
        extra=(
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
        ),
    )
    reply = _item(
        2,
        subject="Re: [PATCH] mm: fix frob",
        in_reply_to="msg1@example.org",
        body=(
            "> Fix the thing.\n> Acked-by: Quoted Person <q@example.org>\n\n"
            "Thanks.\n\nTested-by: Carol Tester <carol@example.org>\n"
            "Reported-by: Dan Reporter <dan@example.org>\n"
            "Reviewed-by: Bob Reviewer <bob@example.org>\n"
        ),
    )
    with StoreWriter(path) as writer:
        writer.write_batch([posted, reply, encoded], source="t", token=None, now=NOW)
    assert store_sql(path, "SELECT COUNT(*) FROM bodies") == [(1,)]
    assert [trailer.key for trailer in reply.message.trailers] == [
        "Tested-by",
        "Reported-by",
        "Reviewed-by",
    ]
    with Store(path) as store:
        seqs = {m.message_id: m.seq for m in stored_where(store, "1")}
        for item in (posted, reply, encoded):
            seq = seqs[item.message.message_id]
            assert store.trailers(seq) == list(item.message.trailers)
        assert store.trailers(seqs["msg1@example.org"])[0].key == "Signed-off-by"
        assert store.reviews_of(list(seqs.values())) == [
            (seqs["msg2@example.org"], "Tested-by", "Carol Tester <carol@example.org>"),
            (seqs["msg2@example.org"], "Reviewed-by", "Bob Reviewer <bob@example.org>"),
            (seqs["msg3@example.org"], "Acked-by", "Eve Acker <eve@example.org>"),
        ]
    assert store_sql(path, "SELECT key FROM trailers ORDER BY rowid") == [
        ("Tested-by",),
        ("Reviewed-by",),
        ("Acked-by",),
    ]
