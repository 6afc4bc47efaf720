"""`rebuild`: a new index from the store alone (`e2g reindex`), written beside the
old one and swapped in whole under its lock."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from whoosh.filedb.filestore import FileStorage

from e2g import errors
from e2g.index.fulltext.schema import IndexDoc
from e2g.index.fulltext.search import Fulltext
from e2g.index.fulltext.sidecar import IndexMark

REBUILD_BATCH = 50_000  # docs per commit in rebuild: bounds memory, fewer merges


def rebuild(
    directory: Path,
    docs: Iterable[IndexDoc],
    *,
    change: int = 0,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Build a fresh index from `docs` beside `directory`, then swap it in by rename.

    Searches keep working on the old index until the swap. Returns the docs indexed.
    `change` is the store's journal revision read before the first doc was.
    A crash before the swap leaves the old index untouched (and a temp dir to ignore);
    a crash between the two renames leaves no index, which the next open creates empty
    and the next ingest refills from seq 0.
    """
    directory = directory.resolve()
    directory.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(
        tempfile.mkdtemp(prefix=f".{directory.name}.rebuild-", dir=directory.parent)
    )
    try:
        count = _fill(fresh, docs, change, progress)
        _swap(fresh, directory)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    return count


def _fill(
    fresh: Path,
    docs: Iterable[IndexDoc],
    change: int,
    progress: Callable[[int], None] | None,
) -> int:
    count = 0
    with (
        Fulltext.open(fresh) as fulltext,
        fulltext.writer(assume_new=True) as writer,
    ):
        for doc in docs:
            writer.add(doc)
            count += 1
            if count % REBUILD_BATCH == 0:
                writer.commit()
            if progress is not None and count % 1000 == 0:
                progress(count)
        writer.commit(IndexMark(change=change))
    if progress is not None:
        progress(count)
    return count


def _swap(fresh: Path, directory: Path) -> None:
    """Replace `directory` by `fresh`, holding the old index's write lock if there is one."""
    if not directory.exists():
        fresh.rename(directory)
        return
    old = directory.with_name(f".{directory.name}.old-{os.getpid()}")
    # The lock file itself, not open_dir(): reindex must also replace a broken index.
    lock = FileStorage(str(directory)).lock("MAIN_WRITELOCK")
    if not lock.acquire():
        raise errors.IndexError_(
            f"the full-text index in {directory} is being written by another e2g "
            "process (an ingest); wait for it and run `e2g reindex` again"
        )
    try:  # the lock's file descriptor survives the rename; no writer can slip in
        directory.rename(old)
        fresh.rename(directory)
    finally:
        lock.release()
    shutil.rmtree(old, ignore_errors=True)
