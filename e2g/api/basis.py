"""What every module of the API opens first: the store that settings name (a clear
error when nothing was ingested), and the clock. Below every other API module, so
that those that derive (the queue's refresh, the way back, trees) and those that
run a job (core's ingest, which refreshes the queue) all stand on it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from e2g.config import Settings
from e2g.errors import EmptyStore, StoreError
from e2g.index.store import Store


def now() -> datetime:
    return datetime.now(UTC)


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


def no_mail(settings: Settings) -> EmptyStore:
    """The error for a store that exists but holds no message yet."""
    return EmptyStore(
        f"the store in {settings.data_dir} holds no mail: run `e2g ingest ARCHIVE` first"
    )
