"""Opening the SQLite store: pragmas, migrations, and turning SQLite failures into E2gErrors.

Shared by store (read) and store_writer (write). Connections run in autocommit mode;
writers open explicit `BEGIN IMMEDIATE` transactions, one per batch.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from e2g.errors import StoreError
from e2g.index.schema import SCHEMA_VERSION, migrate, newer_schema

BUSY_TIMEOUT_MS = 30_000


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """Open the store at `path` (creating it unless `readonly`) and migrate it."""
    if readonly and not path.exists():
        raise StoreError(f"no store at {path}: run `e2g ingest ARCHIVE` first")
    try:
        if not readonly:
            path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(
            str(path),
            isolation_level=None,
            timeout=BUSY_TIMEOUT_MS / 1000,
            check_same_thread=False,
        )
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not readonly:
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("PRAGMA cache_size = -65536")
        connection.execute("PRAGMA temp_store = MEMORY")
        if readonly:
            connection.execute("PRAGMA query_only = ON")
            if _stale(connection, path):
                # An older schema: bring it forward once, through a writer.
                connection.close()
                connect(path).close()
                return connect(path, readonly=True)
        else:
            migrate(connection)
        return connection
    except sqlite3.DatabaseError as err:
        raise StoreError(explain(err, path)) from None
    except OSError as err:
        raise StoreError(
            f"cannot open the store at {path}: {err.strerror or err}"
        ) from None


@contextmanager
def transaction(connection: sqlite3.Connection, path: Path) -> Iterator[None]:
    """One `BEGIN IMMEDIATE` ... `COMMIT`: rolled back on any error (Ctrl-C too), an
    SQLite failure said as a StoreError about the store at `path`."""
    try:
        connection.execute("BEGIN IMMEDIATE")
        yield
        connection.execute("COMMIT")
    except sqlite3.DatabaseError as err:
        _rollback(connection)
        raise StoreError(explain(err, path)) from None
    except BaseException:
        _rollback(connection)
        raise


def _rollback(connection: sqlite3.Connection) -> None:
    if connection.in_transaction:
        connection.execute("ROLLBACK")


def _stale(connection: sqlite3.Connection, path: Path) -> bool:
    """Whether a store opened for reading needs migrating; raise if it is no store
    of ours (an empty file, another program's database) or a newer one."""
    found = int(connection.execute("PRAGMA user_version").fetchone()[0])
    if found == 0:
        tables = connection.execute(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'"
        ).fetchone()[0]
        connection.close()
        if tables:
            raise StoreError(
                f"{path} is not an e2g store: move it away or pass another --data-dir"
            )
        raise StoreError(
            f"the store at {path} is empty: run `e2g ingest ARCHIVE` first"
        )
    if found > SCHEMA_VERSION:
        connection.close()
        raise StoreError(newer_schema(found))
    return found < SCHEMA_VERSION


def explain(err: BaseException, path: Path) -> str:
    """One line that says what went wrong with the store and what to do."""
    text = str(err)
    if "disk is full" in text or "disk I/O error" in text:
        return f"the disk holding {path} is full: free some space and run the same command again (nothing committed was lost)"
    if "file is not a database" in text or "malformed" in text:
        return f"{path} is not an e2g store or is damaged: move it away or pass another --data-dir"
    if "locked" in text:
        return f"the store at {path} is busy (another e2g is writing): try again when it is done"
    if "readonly" in text or "unable to open" in text:
        return f"cannot write the store at {path}: check its permissions or pass --data-dir"
    return f"store error at {path}: {text}"


def read_meta(connection: sqlite3.Connection, key: str) -> str | None:
    """A value of the store's `meta` table, or None."""
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def file_pages(connection: sqlite3.Connection) -> tuple[int, int]:
    """(bytes the store's file holds in pages, bytes of them that are free): the
    free pages are what a migration or deleted mail left, reused by later writes."""
    size = int(connection.execute("PRAGMA page_size").fetchone()[0])
    pages = int(connection.execute("PRAGMA page_count").fetchone()[0])
    free = int(connection.execute("PRAGMA freelist_count").fetchone()[0])
    return pages * size, free * size
