"""What a search hit shows is the store's record of the message: the full-text index
keeps only Message-IDs (e2g.index.fulltext), and api.core.search reads the page of
hits from the store. Real mbox bytes, ingested the way `e2g ingest` does."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from e2g import config
from e2g.api import core as api
from tests.conftest import mail, patch_body

WriteMbox = Callable[[str, Sequence[bytes]], Path]
WHEN = datetime(2024, 3, 5, 10, 0, tzinfo=UTC)
PATCH = mail(
    1,
    subject="[PATCH v2 1/1] mm: frob: return the next value",
    sender="Pavel Begunkov <asml.silence@gmail.com>",
    message_id="patch@example.org",
    date=WHEN,
    body=patch_body(7),
)


def _ingest(settings: config.Settings, write_mbox: WriteMbox) -> None:
    devel = write_mbox(
        "devel.mbox",
        [
            PATCH,
            mail(
                2,
                subject="Re: [PATCH v2 1/1] mm: frob: return the next value",
                in_reply_to="patch@example.org",
                message_id="reply@example.org",
                body="Reviewed-by: Keiko Tanaka <keiko@example.com>\n",
            ),
            mail(
                3,
                subject="Re: [PATCH v2 1/1] mm: frob: return the next value",
                in_reply_to="patch@example.org",
                message_id="fixup@example.org",
                body="How about this instead?\n\n" + patch_body(8),
            ),
        ],
    )
    net = write_mbox(
        "net.mbox", [PATCH.replace(b"frob-devel.lists.", b"frob-net.lists.")]
    )
    api.ingest(settings, [str(devel), str(net)], workers=1)


def _hits(settings: config.Settings, query: str) -> dict[str, api.SearchHit]:
    found = api.search(settings, query, limit=50)
    assert found.note is None and found.index_lag == 0
    return {hit.message_id: hit for hit in found.hits}


def test_a_hit_is_the_stored_message(
    settings: config.Settings, write_mbox: WriteMbox
) -> None:
    _ingest(settings, write_mbox)
    patch = _hits(settings, "frob is:patch")["patch@example.org"]
    assert patch.subject == "[PATCH v2 1/1] mm: frob: return the next value"
    assert (patch.author_name, patch.author_email) == (
        "Pavel Begunkov",
        "asml.silence@gmail.com",
    )
    assert set(patch.lists) == {
        "frob-devel.lists.example.org",
        "frob-net.lists.example.org",
    }  # a cross-post: both lists, from the store's sightings
    assert patch.date == WHEN and not patch.date_corrected
    assert (patch.kind, patch.version) == ("patch", 2)
    assert patch.files == ("mm/frob.c",)
    assert patch.thread_root == "patch@example.org"
    assert patch.score == 0.0  # newest first: unscored


def test_replies_name_their_thread_and_search_kind(
    settings: config.Settings, write_mbox: WriteMbox
) -> None:
    _ingest(settings, write_mbox)
    hits = _hits(settings, "frob")
    assert set(hits) == {"patch@example.org", "reply@example.org", "fixup@example.org"}
    assert hits["reply@example.org"].thread_root == "patch@example.org"
    # A Re: with a diff is a reply to `is:`, though it carries a diff.
    assert hits["fixup@example.org"].kind == "reply"
    assert set(_hits(settings, "frob has:diff")) == {
        "patch@example.org",
        "fixup@example.org",
    }
    ranked = api.search(settings, "frob", sort="relevance").hits
    assert all(hit.score > 0 for hit in ranked)
