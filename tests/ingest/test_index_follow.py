"""The full-text index follows the store exactly: new messages by seq, other changes
through the store's journal, and readers that catch up a small lag or say it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from e2g import config
from e2g.api import core as api_core
from e2g.index.fulltext import Fulltext
from e2g.index.store import Store
from e2g.index.store_writer import BatchItem, StoreWriter
from e2g.index.writer_lock import writer_running
from e2g.mail.message import parse_message
from e2g.model.mail import Message, Origin, RawMessage
from tests.conftest import mail, patch_body

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _message(number: int, **kwargs: object) -> tuple[Message, RawMessage]:
    raw = RawMessage(mail(number, **kwargs), Origin("test", str(number)))  # type: ignore[arg-type]
    message = parse_message(raw, now=NOW)
    assert isinstance(message, Message)
    return message, raw


def _write(
    settings: config.Settings,
    numbers: range,
    *,
    list_name: str = "frob",
    deleted: bool = False,
) -> None:
    """Store messages the way an ingest does, but tell no index about them (a crash)."""
    with StoreWriter(settings.store_path) as writer:
        items = [
            BatchItem(
                *_message(n, subject=f"[PATCH] frob: fix {n}", body=patch_body(n)),
                list_name,
                deleted,
            )
            for n in numbers
        ]
        writer.write_batch(
            items, source=f"test-{list_name}-{deleted}", token=None, now=NOW
        )


def _index_ids(settings: config.Settings) -> set[str]:
    """The Message-IDs of the indexed seqs (a seq the store lacks shows as itself)."""
    with Fulltext.open(settings.index_dir, create=False) as fulltext:
        seqs = fulltext.seqs()
    assert len(seqs) == len(set(seqs)), "a message indexed twice"
    with Store(settings.store_path) as store:
        by_seq = {m.seq: m.message_id for m in store.by_seqs(seqs)}
    return {by_seq.get(seq, f"#{seq}") for seq in seqs}


def _store_ids(settings: config.Settings) -> set[str]:
    with Store(settings.store_path) as store:
        return {m.message_id for m in store.iter_messages()}


def _ingest(settings: config.Settings, path: Path, **kwargs: object) -> None:
    report = api_core.ingest(settings, [str(path)], **kwargs)  # type: ignore[arg-type]
    assert report.index_lag == 0 and not report.index_behind


def test_a_search_catches_up_what_a_crash_left_unindexed(settings, write_mbox):
    _ingest(settings, write_mbox("a.mbox", [mail(1)]))
    _write(settings, range(2, 40))  # committed to the store, never indexed
    result = api_core.search(settings, "frob", limit=100)
    assert (result.index_lag, result.note) == (0, None)
    assert result.caught_up == 38
    assert {hit.message_id for hit in result.hits} == {
        f"msg{n}@example.org" for n in range(2, 40)
    }
    assert _index_ids(settings) == _store_ids(settings)


def test_a_search_that_may_not_catch_up_says_how_far_behind_and_what_to_run(
    settings, write_mbox
):
    _ingest(settings, write_mbox("a.mbox", [mail(1)]))
    _write(settings, range(2, 12))
    result = api_core.search(settings, "frob", catch_up=False)
    assert result.total == 0
    assert result.index_lag == 10
    assert result.note is not None
    assert "10" in result.note and "e2g reindex" in result.note


def test_a_search_beside_a_running_ingest_says_so_and_does_not_index(
    settings, write_mbox
):
    _ingest(settings, write_mbox("a.mbox", [mail(1)]))
    _write(settings, range(2, 5))
    with StoreWriter(settings.store_path):  # an ingest holds the data dir
        assert writer_running(settings.data_dir)
        result = api_core.search(settings, "frob")
        assert result.caught_up == 0 and result.index_lag == 3
        assert result.note is not None and "ingest is running" in result.note
    assert not writer_running(settings.data_dir)
    assert api_core.search(settings, "frob").total == 3


def test_a_cross_post_reaches_the_index_through_the_journal(settings, write_mbox):
    _write(settings, range(1, 4))
    assert api_core.search(settings, "list:frob").total == 3
    _write(settings, range(2, 3), list_name="netdev")  # the same message, a second list
    result = api_core.search(settings, "list:netdev")
    assert [hit.message_id for hit in result.hits] == ["msg2@example.org"]
    assert result.hits[0].lists == ("frob", "netdev")


def test_a_deletion_and_a_reused_seq_reach_the_index(settings):
    _write(settings, range(1, 4))
    assert api_core.search(settings, "frob").total == 3
    _write(settings, range(3, 4), deleted=True)  # the highest seq: SQLite may reuse it
    _write(settings, range(4, 5))
    with Store(settings.store_path) as store:
        seqs = {m.message_id: m.seq for m in store.iter_messages()}
    assert seqs["msg4@example.org"] == 3  # reused
    result = api_core.search(settings, "frob", limit=10)
    assert {hit.message_id for hit in result.hits} == {
        "msg1@example.org",
        "msg2@example.org",
        "msg4@example.org",
    }
    assert _index_ids(settings) == _store_ids(settings)


def test_reindex_records_the_journal_so_nothing_looks_behind(settings):
    _write(settings, range(1, 4))
    _write(settings, range(1, 3), list_name="netdev")
    assert api_core.reindex(settings) == 3
    result = api_core.search(settings, "list:netdev", catch_up=False)
    assert (result.total, result.index_lag, result.note) == (2, 0, None)


def test_an_ingest_prunes_the_journal_the_index_has_applied(settings, write_mbox):
    messages = [mail(n) for n in range(1, 6)]
    _ingest(settings, write_mbox("a.mbox", messages))
    # The same five posted to a second list: five journal rows.
    _ingest(settings, write_mbox("b.mbox", messages), list_name="netdev")
    with Store(settings.store_path) as store:
        assert store.changes_after(0) == []
        assert store.max_change() == 5
    assert api_core.search(settings, "list:netdev").total == 5
