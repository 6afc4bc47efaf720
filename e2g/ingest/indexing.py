"""Feeding the full-text index from the store, in a process of its own during ingest.

The index is derived: documents are built from rows the store has already committed,
so the index can lag behind the store but never run ahead of it. During `e2g ingest`
an `IndexProcess` does this work beside the parse workers and the store writer, so that
Whoosh (about a thousand small documents per CPU-second) is not on the critical path.
A run that dies leaves the index behind; the next ingest catches up by `seq`.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import signal
from collections.abc import Callable, Sequence
from multiprocessing.process import BaseProcess
from pathlib import Path

from e2g.index.fulltext import Fulltext, FulltextWriter, IndexDoc
from e2g.index.store import Store, StoredMessage
from e2g.ingest import processes

log = logging.getLogger(__name__)

INDEX_COMMIT_EVERY = (
    20_000  # documents between full-text commits (Whoosh commits are slow)
)
PARENT_POLL_SECONDS = 1.0


def index_doc(stored: StoredMessage, *, bodies: bool) -> IndexDoc:
    """The full-text document of a stored message."""
    return IndexDoc(
        message_id=stored.message_id,
        subject=stored.subject,
        subject_key=stored.subject_key,
        author_name=stored.author_name,
        author_email=stored.author_email,
        lists=stored.lists,
        date=stored.date,
        kind=stored.kind,
        version=stored.version,
        files=stored.files,
        thread_root=stored.thread_root,
        body=stored.body if bodies else None,
        seq=stored.seq,
    )


class Indexer:
    """Feeds committed store rows to the full-text index, committing it in large steps."""

    def __init__(self, fulltext: Fulltext, store: Store, *, bodies: bool) -> None:
        self._fulltext = fulltext
        self._store = store
        self._bodies = bodies
        self._writer: FulltextWriter | None = None
        self._pending = 0
        self.indexed = 0

    def add(self, seqs: Sequence[int], deleted: Sequence[str] = ()) -> None:
        if not seqs and not deleted:
            return
        if self._writer is None:
            self._writer = self._fulltext.writer()
        for message_id in deleted:
            self._writer.delete(message_id)
        for start in range(0, len(seqs), 500):
            chunk = list(seqs[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for stored in self._store.select(f"seq IN ({marks})", chunk):
                self._writer.add(index_doc(stored, bodies=self._bodies))
                self._pending += 1
        if self._pending >= INDEX_COMMIT_EVERY:
            self.commit()

    def catch_up(
        self, *, upto: int, progress: Callable[[int], None] | None = None
    ) -> None:
        """Index what the store committed up to `upto` but the index missed (a crash)."""
        last = self._fulltext.last_seq()
        if last >= upto:
            return
        batch: list[int] = []
        for stored in self._store.iter_messages(after_seq=last):
            if stored.seq > upto:
                break
            batch.append(stored.seq)
            if len(batch) >= 2000:
                self.add(batch)
                batch = []
                if progress:
                    progress(self.indexed + self._pending)
        self.add(batch)
        self.commit()

    def commit(self) -> None:
        if self._writer is not None:
            self._writer.commit()
            self.indexed += self._pending
            self._writer = None
            self._pending = 0

    def cancel(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
            self._writer = None
            self._pending = 0


class IndexProcess:
    """The index writer as a child process fed with the seqs of committed batches."""

    def __init__(
        self, store_path: Path, index_dir: Path, *, bodies: bool, upto: int
    ) -> None:
        context = processes.context()
        self._queue: multiprocessing.Queue[tuple[list[int], list[str]] | None] = (
            context.Queue()
        )
        self._result: multiprocessing.Queue[int] = context.Queue()
        self._process: BaseProcess = context.Process(
            target=_serve,
            args=(
                store_path,
                index_dir,
                bodies,
                upto,
                self._queue,
                self._result,
                os.getpid(),
            ),
            name="e2g-index",
            daemon=True,
        )
        self._process.start()
        self.indexed = 0
        self.failed = False

    def add(self, seqs: Sequence[int], deleted: Sequence[str] = ()) -> None:
        if seqs or deleted:
            self._queue.put((list(seqs), list(deleted)))

    def finish(self) -> None:
        """Index what was sent, commit, and wait for the child to end."""
        self._queue.put(None)
        self._process.join()
        if self._process.exitcode != 0:
            self.failed = True
            log.warning("the full-text index fell behind the store: run `e2g reindex`")
            return
        try:
            self.indexed = self._result.get(timeout=5)
        except queue.Empty:
            self.failed = True

    def abort(self) -> None:
        if self._process.is_alive():
            self._process.terminate()
        self._process.join()


def _serve(  # noqa: PLR0913
    store_path: Path,
    index_dir: Path,
    bodies: bool,
    upto: int,
    inbox: multiprocessing.Queue[tuple[list[int], list[str]] | None],
    result: multiprocessing.Queue[int],
    parent: int,
) -> None:
    # Ctrl-C reaches the whole process group; the parent decides when this one stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with Store(store_path) as store:
        fulltext = Fulltext.open(index_dir)
        indexer = Indexer(fulltext, store, bodies=bodies)
        try:
            indexer.catch_up(upto=upto)
            while True:
                try:
                    item = inbox.get(timeout=PARENT_POLL_SECONDS)
                except queue.Empty:
                    if (
                        os.getppid() != parent
                    ):  # the ingest was killed: stop, keep nothing half-done
                        indexer.cancel()
                        return
                    continue
                if item is None:
                    break
                indexer.add(*item)
            indexer.commit()
            result.put(indexer.indexed)
        finally:
            fulltext.close()
