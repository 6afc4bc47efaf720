"""The Python API that the CLI and the web layer call.

Each function takes resolved Settings and plain values, does one job, and returns
model or result objects; nothing here prints or exits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from e2g.api.basis import now, open_store
from e2g.config import Settings
from e2g.errors import IndexError_, StoreError
from e2g.index.store import Store, StoreCounts

# A search that finds the index at most this many store changes behind brings it
# level first (about a thousand documents per second); a larger gap is said instead.
CATCH_UP_LIMIT = 20_000

if TYPE_CHECKING:
    from e2g.index.fulltext import Found
    from e2g.ingest.pipeline import IngestReport, ProgressCallback
    from e2g.model.stored import StoredMessage


def ingest(
    settings: Settings,
    paths: Sequence[str],
    *,
    list_name: str | None = None,
    workers: int = 0,
    progress: ProgressCallback | None = None,
    stdin: BinaryIO | None = None,
) -> IngestReport:
    from e2g.ingest import pipeline

    options = pipeline.IngestOptions(
        now=now(),
        list_name=list_name,
        index_bodies=settings.index_bodies,
        workers=workers,
    )
    report = pipeline.ingest(
        paths,
        store_path=settings.store_path,
        index_dir=settings.index_dir,
        options=options,
        progress=progress,
        stdin=stdin,
    )
    if not report.interrupted:
        from e2g.api.queue.refresh import refresh  # here: refresh reads this module

        refresh(settings)
    return report


def reindex(
    settings: Settings, *, progress: Callable[[int], None] | None = None
) -> int:
    from e2g.ingest import pipeline

    open_store(settings).close()
    return pipeline.reindex(
        store_path=settings.store_path,
        index_dir=settings.index_dir,
        bodies=settings.index_bodies,
        progress=progress,
    )


# A NamedTuple, not a dataclass: every search and link imports this module, and a
# dataclass costs ~0.5 ms to create (a NamedTuple ~0.06 ms).
class Optimized(NamedTuple):
    """What `optimize` did: the index's segments and the store file's bytes, before
    and after."""

    segments_before: int
    segments_after: int
    store_before: int
    store_after: int


def optimize(settings: Settings) -> Optimized:
    """Merge the full-text index into one segment, and give the store's free pages
    (left by a migration or deleted mail) back to the disk."""
    from e2g.index.fulltext import Fulltext
    from e2g.index.store_writer import StoreWriter
    from e2g.ingest.indexing import LOCK_WAIT_SECONDS

    with open_store(settings) as store:
        store_before, free = store.file_pages()
    store_after = store_before
    if free:
        with StoreWriter(settings.store_path) as writer:
            store_before, store_after = writer.compact()
    with Fulltext.open(settings.index_dir, create=False) as fulltext:
        before = fulltext.optimize(wait=LOCK_WAIT_SECONDS)
        return Optimized(before, fulltext.segments(), store_before, store_after)


def counts(settings: Settings) -> StoreCounts:
    with open_store(settings) as store:
        return store.counts()


class SearchHit(NamedTuple):
    """A message a search found, as the store holds it (the index keeps only the
    Message-ID: see e2g.index.fulltext)."""

    message_id: str
    subject: str
    author_name: str
    author_email: str
    lists: tuple[str, ...]
    date: datetime | None
    kind: str  # the kind `is:` finds (mail.subject.search_kind)
    version: int
    files: tuple[str, ...]
    thread_root: str | None
    score: float  # 0.0 when sorted by date
    # Where `date` came from when not from the Date: header, and what it said.
    date_source: str = "header"
    date_raw: str = ""

    @property
    def date_corrected(self) -> bool:
        return self.date_source != "header"


class SearchResult(NamedTuple):
    hits: list[SearchHit]
    total: int
    index_lag: int  # store changes the index did not hold when it was searched
    caught_up: int  # documents this search indexed first, to bring the index level
    note: str | None  # one line for the user when the answer may miss messages


def search(  # noqa: PLR0913
    settings: Settings,
    query: str,
    *,
    limit: int = 20,
    offset: int = 0,
    sort: str = "date",
    catch_up: bool = True,
) -> SearchResult:
    """Search the full-text index, first bringing it level with the store when it is
    a little behind (a run that was killed or interrupted); never silently behind:
    the result says how far behind it answered from, and what fixes that."""
    from e2g.index.fulltext import Fulltext, exists
    from e2g.index.writer_lock import writer_running

    running = writer_running(settings.data_dir)
    with open_store(settings) as store:
        if running and not exists(settings.index_dir):  # the ingest makes it any moment
            lag = store.index_lag(last_seq=0, last_change=0)
            return SearchResult([], 0, lag, 0, _running(lag) if lag else None)
        # A store whose index is gone (deleted, or a first ingest killed early): an
        # empty one is made, and caught up below like any lagging index.
        with Fulltext.open(settings.index_dir, create=catch_up) as fulltext:
            lag = fulltext.lag(store)
            caught, note = 0, None
            if lag:
                caught, note = _catch_up(settings, lag, allowed=catch_up)
                lag = fulltext.lag(store)
            found, total = fulltext.search(query, limit=limit, offset=offset, sort=sort)
        hits = _hits(store, found)
    if lag and note is None:
        note = _behind(lag)
    return SearchResult(hits, total, lag, caught, note if lag else None)


def _hits(store: Store, found: Sequence[Found]) -> list[SearchHit]:
    """The page of hits, read from the store in one query; a message the index
    still has but the store no longer does (deleted since) is left out."""
    messages = {
        message.seq: message for message in store.by_seqs([f.seq for f in found])
    }
    return [
        _hit(messages[item.seq], item.score) for item in found if item.seq in messages
    ]


def _hit(message: StoredMessage, score: float) -> SearchHit:
    from e2g.mail.subject import search_kind

    return SearchHit(
        message_id=message.message_id,
        subject=message.subject,
        author_name=message.author_name,
        author_email=message.author_email,
        lists=message.lists,
        date=message.date,
        kind=str(search_kind(message.kind, message.subject)),
        version=message.version,
        files=message.files,
        thread_root=message.thread_root,
        score=score,
        date_source=str(message.date_source),
        date_raw=message.date_raw,
    )


def _catch_up(settings: Settings, lag: int, *, allowed: bool) -> tuple[int, str | None]:
    """Index what the store has and the index lacks, when that is quick and nobody
    else is doing it; else the line that says why the answer may miss messages."""
    from e2g.index.writer_lock import writer_running
    from e2g.ingest import indexing

    if writer_running(settings.data_dir):
        return 0, _running(lag)
    if not allowed or lag > CATCH_UP_LIMIT:
        return 0, None
    try:
        return indexing.catch_up(
            settings.store_path, settings.index_dir, bodies=settings.index_bodies
        ), None
    except (IndexError_, StoreError, OSError) as error:
        return 0, f"{_behind(lag)} (catching up failed: {error})"


def _running(lag: int) -> str:
    return (
        f"an ingest is running: {lag:,} of the store's messages are not searchable yet"
    )


def _behind(lag: int) -> str:
    return (
        f"the search index lacks {lag:,} of the store's messages: "
        "run `e2g reindex` to search them too"
    )
