"""The ingest pipeline end to end: real mbox bytes in, store rows and index documents out."""

from __future__ import annotations

import gzip
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from e2g import config
from e2g.api import core as api_core
from e2g.errors import ArchiveUnreadable
from e2g.index.store import Store
from e2g.ingest.pipeline import IngestReport
from tests.conftest import (
    BASE_DATE,
    mail,
    patch_body,
    store_rows,
    store_sql,
    stored_where,
)


def _ingest(settings: config.Settings, *paths: Path, **kwargs: object) -> IngestReport:
    return api_core.ingest(settings, [str(path) for path in paths], workers=1, **kwargs)  # type: ignore[arg-type]


def _counts(settings: config.Settings) -> tuple[int, ...]:
    with Store(settings.store_path) as store:
        counts = store.counts()
        sightings = store_sql(store.path, "SELECT COUNT(*) FROM sightings")[0][0]
        return (
            counts.messages,
            counts.patches,
            counts.replies,
            counts.cross_posts,
            sightings,
            counts.threads,
        )


def test_ingest_counts_kinds_and_is_idempotent(settings, write_mbox):
    messages = [mail(1, subject="[PATCH] mm: fix frob", body=patch_body(1))]
    messages += [
        mail(n, subject="Re: [PATCH] mm: fix frob", in_reply_to="msg1@example.org")
        for n in (2, 3)
    ]
    archive = write_mbox("list.mbox", messages)

    first = _ingest(settings, archive)
    assert (first.messages, first.new, first.patches, first.replies) == (3, 3, 1, 2)
    before = _counts(settings)
    second = _ingest(settings, archive)
    assert second.new == 0
    assert _counts(settings) == before


def test_reingest_after_checkpoint_loss_changes_no_counts(settings, write_mbox):
    archive = write_mbox("list.mbox", [mail(n) for n in range(1, 6)])
    _ingest(settings, archive)
    before = _counts(settings)
    with Store(settings.store_path) as store:
        assert store_sql(store.path, "SELECT COUNT(*) FROM checkpoints")[0][0] == 1
    # Forget the checkpoint: the whole archive is read again, and nothing doubles.
    connection = sqlite3.connect(settings.store_path)
    connection.execute("DELETE FROM checkpoints")
    connection.commit()
    connection.close()
    report = _ingest(settings, archive)
    assert (report.messages, report.new, report.duplicates) == (5, 0, 5)
    assert _counts(settings) == before


def test_cross_post_is_one_message_with_two_sightings(settings, write_mbox):
    shared = mail(
        1, subject="[PATCH] net: fix", body=patch_body(1), list_id="netdev.example.org"
    )
    first = write_mbox("netdev.mbox", [shared])
    second = write_mbox(
        "mm.mbox", [shared.replace(b"netdev.example.org", b"linux-mm.example.org")]
    )
    _ingest(settings, first)
    report = _ingest(settings, second)
    assert (report.new, report.cross_posts) == (0, 1)
    with Store(settings.store_path) as store:
        stored = store.message("msg1@example.org")
        assert stored is not None
        assert stored.lists == ("linux-mm.example.org", "netdev.example.org")
        assert store.counts().cross_posts == 1


def test_appending_to_an_mbox_reads_only_the_new_part(settings, write_mbox):
    archive = write_mbox("list.mbox", [mail(n) for n in range(1, 4)])
    assert _ingest(settings, archive).messages == 3
    with archive.open("ab") as handle:
        handle.write(mail(4) + mail(5))
    report = _ingest(settings, archive)
    assert (report.messages, report.new) == (2, 2)
    assert _counts(settings)[0] == 5


def test_compressed_and_list_override(settings, tmp_path):
    archive = tmp_path / "old.mbox.gz"
    archive.write_bytes(gzip.compress(mail(1) + mail(2)))
    _ingest(settings, archive, list_name="frob-archive")
    with Store(settings.store_path) as store:
        assert store.list_names() == ["frob-archive"]


def test_threads_resolve_out_of_order_and_ghosts(settings, write_mbox):
    # The reply arrives before its parent, and the parent replies to a ghost.
    reply = mail(
        3,
        subject="Re: x",
        in_reply_to="msg2@example.org",
        extra=["References: <ghost@example.org> <msg2@example.org>"],
    )
    parent = mail(2, subject="Re: x", in_reply_to="ghost@example.org")
    _ingest(settings, write_mbox("a.mbox", [reply, parent]))
    with Store(settings.store_path) as store:
        roots = {m.message_id: m.thread_root for m in store.iter_messages()}
    assert roots == {
        "msg3@example.org": "ghost@example.org",
        "msg2@example.org": "ghost@example.org",
    }


def test_bad_dates_come_from_received_or_neighbours(settings, write_mbox):
    received = "Received: from mx.example.org by lists.example.org; Mon, 1 Mar 2021 12:30:00 +0000"
    epoch = mail(1, date=BASE_DATE, extra=[received]).replace(
        b"Date: Mon, 01 Mar 2021 12:00:00 +0000",
        b"Date: Thu, 1 Jan 1970 00:00:00 +0000",
    )
    future = mail(2).replace(
        b"Date: Mon, 01 Mar 2021 12:02:00 +0000",
        b"Date: Sun, 1 Jan 2040 00:00:00 +0000",
    )
    report = _ingest(settings, write_mbox("d.mbox", [epoch, future, mail(3)]))
    assert report.dates_sanitised == 2
    with Store(settings.store_path) as store:
        first, second = (
            store.message("msg1@example.org"),
            store.message("msg2@example.org"),
        )
    assert first is not None and second is not None
    assert (first.date_source, first.date) == ("received", BASE_DATE.replace(minute=30))
    assert first.date_raw.startswith("Thu, 1 Jan 1970")
    assert second.date_source in {"from-line", "neighbours"}
    assert second.date is not None and second.date.year == 2021


def test_malformed_is_counted_not_fatal(settings, write_mbox):
    junk = b"From nobody Mon Mar  1 12:00:00 2021\nX-Junk: \x00\x01\n\n\x00\x02 not a mail\n\n"
    report = _ingest(settings, write_mbox("m.mbox", [mail(1), junk, mail(2)]))
    assert report.messages == 3
    # A tolerant parser may still keep the junk (with a synthetic Message-ID).
    assert report.new + report.malformed == 3
    assert report.new >= 2


def test_missing_path_is_one_clear_error(settings, tmp_path):
    with pytest.raises(ArchiveUnreadable, match="no-such.mbox"):
        _ingest(settings, tmp_path / "no-such.mbox")
    assert not settings.store_path.exists() or _counts(settings)[0] == 0


def test_search_sees_ingested_messages(settings, write_mbox):
    _ingest(
        settings,
        write_mbox(
            "s.mbox",
            [mail(1, subject="[PATCH] mm: fix frob leak", body=patch_body(1)), mail(2)],
        ),
    )
    found = api_core.search(settings, "frob")
    hits, total = found.hits, found.total
    assert total >= 1
    assert hits[0].message_id == "msg1@example.org"
    hits = api_core.search(settings, "file:mm/frob.c").hits
    assert [hit.message_id for hit in hits] == ["msg1@example.org"]


def test_is_patch_finds_postings_and_has_diff_finds_replies_with_one(
    settings, write_mbox
):
    """A reply that carries a fix-up diff is a reply, not a posting; has:diff finds
    every message with a diff. Ingested and reindexed alike."""
    archive = write_mbox(
        "diffs.mbox",
        [
            mail(1, subject="[PATCH] mm: fix frob leak", body=patch_body(1)),
            mail(
                2,
                subject="Re: [PATCH] mm: fix frob leak",
                body="How about this instead?\n\n" + patch_body(5),
                in_reply_to="msg1@example.org",
            ),
            mail(
                3,
                subject="Re: [PATCH] mm: fix frob leak",
                body="> -\treturn 1;\n> +\treturn 2;\n\nQuoted, no diff of mine.\n",
                in_reply_to="msg1@example.org",
            ),
            mail(
                4,
                subject="[PATCH 2/2] mm: frob more",
                body=patch_body(7),
                in_reply_to="msg1@example.org",
            ),
        ],
    )
    _ingest(settings, archive)

    def found(query: str) -> list[str]:
        hits = api_core.search(settings, query, limit=100).hits
        return sorted(hit.message_id.removesuffix("@example.org") for hit in hits)

    for _ in ("ingested", "reindexed"):
        assert found("is:patch") == ["msg1", "msg4"]
        assert found("is:reply") == ["msg2", "msg3"]
        assert found("has:diff") == ["msg1", "msg2", "msg4"]
        assert found("has:diff is:reply") == ["msg2"]
        assert found("frob -has:diff") == ["msg3"]
        api_core.reindex(settings)


def test_reindex_gives_the_same_hits(settings, write_mbox):
    _ingest(
        settings,
        write_mbox(
            "s.mbox",
            [
                mail(n, subject=f"[PATCH] mm: fix {n}", body=patch_body(n))
                for n in range(1, 30)
            ],
        ),
    )
    before = [
        hit.message_id for hit in api_core.search(settings, "is:patch", limit=100).hits
    ]
    assert api_core.reindex(settings) == 29
    after = [
        hit.message_id for hit in api_core.search(settings, "is:patch", limit=100).hits
    ]
    assert before == after and len(after) == 29


def _big_archive(path: Path, count: int) -> None:
    with path.open("wb") as handle:
        for number in range(1, count + 1):
            subject = (
                f"[PATCH] mm: fix {number}"
                if number % 3
                else f"Re: [PATCH] mm: fix {number - 1}"
            )
            body = (
                patch_body(number)
                if number % 3
                else "Looks good.\n\nReviewed-by: Bob <bob@example.org>\n"
            )
            handle.write(mail(number, subject=subject, body=body))


@pytest.mark.slow
def test_ctrl_c_exits_130_keeps_committed_batches_and_resumes(tmp_path):
    archive = tmp_path / "big.mbox"
    _big_archive(archive, 6000)
    data = tmp_path / "data"
    command = [
        sys.executable,
        "-m",
        "e2g",
        "--data-dir",
        str(data),
        "ingest",
        "--json",
        str(archive),
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    store = data / "store.sqlite3"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if store.exists() and store_rows(store) >= 1000:
            break
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert b"Traceback" not in stderr
    assert b"interrupted" in stderr
    kept = store_rows(store)
    assert 0 < kept < 6000
    subprocess.run(command, check=True, capture_output=True)
    assert store_rows(store) == 6000


def test_patchwork_fuzz_mails_go_through_ingest_without_a_crash(settings):
    from tests.conftest import corpus_path

    fuzz = corpus_path("patchwork", "fuzz")
    files = sorted(fuzz.glob("*.mbox"))
    report = _ingest(settings, fuzz)
    assert report.messages >= len(files) == 17
    assert report.new + report.malformed + report.duplicates == report.messages
    from e2g.index.fulltext import Fulltext

    index = Fulltext.open(settings.index_dir, create=False)
    try:
        with Store(settings.store_path) as store:
            assert index.count() == store.counts().messages == report.new
    finally:
        index.close()


def test_patchwork_mails_ingest_with_expected_kinds(settings):
    from tests.conftest import corpus_path

    mails = corpus_path("patchwork", "mail")
    report = _ingest(settings, mails)
    assert report.malformed == 0
    # 0001-0006, 0017, 0023, 0024 (0003 carries a diff too); 0001-0006 and 0013-0015
    # share their Message-IDs, so they are one message each with several sightings.
    assert (report.pulls, report.duplicates) == (9, 7)
    with Store(settings.store_path) as store:
        pulls = stored_where(store, "kind = 'pull'")
        assert len(pulls) == 4
        assert all(m.pull_url for m in pulls)
        renamed = store_sql(
            store.path, "SELECT COUNT(*) FROM files WHERE status = 'renamed'"
        )[0][0]
        assert renamed >= 4  # 0008 and 0009 rename two files each
        binary = store_sql(store.path, "SELECT COUNT(*) FROM files WHERE binary = 1")[
            0
        ][0]
        assert binary >= 3  # 0025, 0026, 0027


def test_bodies_stay_indexed_once_asked_for(tmp_path, write_mbox):
    plain = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    bodies = config.resolve(
        data_dir=tmp_path / "data", index_bodies=True, env={}, home=tmp_path
    )
    _ingest(bodies, write_mbox("a.mbox", [mail(1, body="the frobnicator starves\n")]))
    _ingest(plain, write_mbox("b.mbox", [mail(2, body="another starves here\n")]))
    assert api_core.search(plain, "starves").total == 2
    assert api_core.reindex(plain) == 2
    assert api_core.search(plain, "starves").total == 2
