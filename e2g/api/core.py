"""The Python API that the CLI and the web layer call.

Each function takes resolved Settings and plain values, does one job, and returns
model or result objects; nothing here prints or exits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, BinaryIO

from e2g.config import Settings
from e2g.errors import EmptyStore, StoreError
from e2g.index.store import Store, StoreCounts

if TYPE_CHECKING:
    from e2g.index.fulltext import SearchHit
    from e2g.ingest.pipeline import IngestReport, ProgressCallback


def now() -> datetime:
    return datetime.now(UTC)


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
    return pipeline.ingest(
        paths,
        store_path=settings.store_path,
        index_dir=settings.index_dir,
        options=options,
        progress=progress,
        stdin=stdin,
    )


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


def open_store(settings: Settings) -> Store:
    """The store for reading; a clear error when nothing was ingested yet."""
    if not settings.store_path.exists():
        raise EmptyStore(
            f"no store in {settings.data_dir}: run `e2g ingest ARCHIVE` first (or pass --data-dir)"
        )
    try:
        return Store(settings.store_path)
    except StoreError:
        raise


def counts(settings: Settings) -> StoreCounts:
    with open_store(settings) as store:
        return store.counts()


def search(
    settings: Settings,
    query: str,
    *,
    limit: int = 20,
    offset: int = 0,
    sort: str = "date",
) -> tuple[list[SearchHit], int]:
    from e2g.index.fulltext import Fulltext

    open_store(settings).close()
    fulltext = Fulltext.open(settings.index_dir, create=False)
    try:
        return fulltext.search(query, limit=limit, offset=offset, sort=sort)
    finally:
        fulltext.close()


def hit_json(hit: SearchHit, settings: Settings) -> dict[str, object]:
    """One search hit as `e2g search --json` and `/api/v1/search` give it."""
    first_list = hit.lists[0] if hit.lists else None
    return {
        "message_id": hit.message_id,
        "subject": hit.subject,
        "author": f"{hit.author_name} <{hit.author_email}>"
        if hit.author_name
        else hit.author_email,
        "author_name": hit.author_name,
        "author_email": hit.author_email,
        "date": hit.date.isoformat() if hit.date else None,
        "list": first_list,
        "lists": list(hit.lists),
        "kind": hit.kind,
        "version": hit.version,
        "files": list(hit.files),
        "thread_root": hit.thread_root,
        "score": round(hit.score, 4),
        "url": settings.url_for(hit.message_id, first_list),
    }
