"""The ingest pipeline: archives -> parsed messages -> store (the record) -> full-text index.

It joins the packages below it: `e2g.archives` readers stream raw messages; worker
processes parse them with `e2g.mail.message` in bounded chunks (memory does not grow with archive size); this
process writes each chunk as one store transaction together with the source's
checkpoint, then nudges the full-text index process (`indexing`), which reads only what
the store committed and so is never ahead of it. A run ends complete (store and index)
or says what is behind: the report's `index_lag` counts the store changes the index
lacks after the run, and anything that cut the run short is in its `warnings`.

The per-message boundary here is one of the two places e2g catches broadly: a message
that makes the parser fail is counted as malformed with the reason, never fatal.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import BinaryIO, NamedTuple, TypeVar

from e2g import faults, processes
from e2g.archives.detect import Source, detect_sources, read_source
from e2g.errors import E2gError, Interrupted, notice
from e2g.index.fulltext import IndexMark, read_mark, rebuild
from e2g.index.schema import (
    BODIES_KEY,
    PROCESS_PENDING_KEY,
    QUOTED_PENDING_KEY,
    WEIGHTS_PENDING_KEY,
)
from e2g.index.store import Store
from e2g.index.store_writer import BatchItem, BatchResult, StoreWriter, stored_process
from e2g.ingest.indexing import IndexProcess, index_doc
from e2g.mail.message import parse_message
from e2g.mail.patch import file_weights
from e2g.model import DateSource, Kind
from e2g.model.mail import Malformed, Message, Origin, RawMessage

log = logging.getLogger(__name__)
_Row = TypeVar("_Row")

CHUNK = 500  # messages per parse task and per store transaction


class IngestOptions(NamedTuple):
    now: datetime
    list_name: str | None = None  # --list: overrides List-Id
    index_bodies: bool = False
    workers: int = 0  # 0: one per core (at most 2 parse workers); 1: parse inline
    chunk: int = CHUNK


@dataclass(slots=True)
class IngestReport:
    messages: int = 0
    new: int = 0
    patches: int = 0
    covers: int = 0
    pulls: int = 0
    replies: int = 0
    other: int = 0
    cross_posts: int = 0
    duplicates: int = 0
    deleted: int = 0
    malformed: int = 0
    dates_sanitised: int = 0
    bytes: int = 0
    indexed: int = 0
    index_lag: int = 0  # store changes the full-text index lacks after the run
    index_behind: bool = False  # index_lag > 0: searches miss them until caught up
    index_restarts: int = 0  # index processes that died and were started again
    index_problem: str | None = None  # why the index is behind, when it is
    elapsed: float = 0.0
    sources: int = 0
    interrupted: bool = False
    weighed: int = 0  # messages stored before schema 3 whose files were weighed now
    quoted_read: int = 0  # replies stored before schema 16 read for a quoted patch
    classified: int = 0  # messages stored before schema 18 classified (process)
    malformed_reasons: Counter[str] = field(default_factory=Counter)
    damaged: int = 0  # messages kept without a part that could not be read
    damaged_reasons: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)  # damaged input, restarts


class Progress(NamedTuple):
    source: str
    messages: int
    bytes: int
    elapsed: float
    index_lag: int | None = None  # set while the run waits for the index to catch up


ProgressCallback = Callable[[Progress], None]


@dataclass(slots=True)
class _Chunk:
    raws: list[RawMessage]
    token: str | None


def _parse_one(raw: RawMessage, now: datetime) -> Message | Malformed:
    try:
        return parse_message(raw, now=now)
    except Interrupted:
        raise
    except Exception as err:  # the per-message boundary: count, log, go on
        log.warning(
            "cannot parse message at %s:%s: %r",
            raw.origin.source,
            raw.origin.position,
            err,
        )
        return Malformed(
            "parser error", raw.origin, detail=f"{type(err).__name__}: {err}"[:500]
        )


def parse_chunk(raws: Sequence[RawMessage], now: datetime) -> list[Message | Malformed]:
    """Parse a chunk of raw messages (runs in a worker process)."""
    return [_parse_one(raw, now) for raw in raws]


def _chunks(
    messages: Iterator[tuple[RawMessage, str | None]], size: int
) -> Iterator[_Chunk]:
    raws: list[RawMessage] = []
    token: str | None = None
    for raw, token in messages:
        raws.append(raw)
        if len(raws) >= size:
            yield _Chunk(raws, token)
            raws = []
    if raws:
        yield _Chunk(raws, token)


def _fill_dates(
    parsed: list[Message | Malformed], last: datetime | None
) -> datetime | None:
    """Give dateless messages the date of their neighbours in archive order.

    Forward from the last dated message (carried across chunks), else backward from the
    next one. Returns the last known date for the next chunk.
    """
    pending: list[int] = []
    for position, item in enumerate(parsed):
        if not isinstance(item, Message):
            continue
        if item.date is not None:
            last = item.date
            for waiting in pending:
                parsed[waiting] = _with_neighbour_date(parsed[waiting], last)
            pending.clear()
        elif last is not None:
            parsed[position] = _with_neighbour_date(item, last)
        else:
            pending.append(position)
    return last


def _with_neighbour_date(
    item: Message | Malformed, when: datetime
) -> Message | Malformed:
    if isinstance(item, Message):
        return item._replace(date=when, date_source=DateSource.NEIGHBOURS)
    return item


def _list_name(
    message: Message, raw: RawMessage, source: Source, options: IngestOptions
) -> str:
    if options.list_name:
        return options.list_name
    if message.list_id:
        return message.list_id
    if raw.origin.list_hint:
        return raw.origin.list_hint
    if source.list_hint:
        return source.list_hint
    if source.path is not None:
        return source.path.name.split(".")[0] or "unknown"
    return "unknown"


def _count(report: IngestReport, message: Message) -> None:
    kind = message.kind
    if kind is Kind.PATCH:
        report.patches += 1
    elif kind is Kind.COVER:
        report.covers += 1
    elif kind is Kind.PULL:
        report.pulls += 1
    elif kind is Kind.REPLY:
        report.replies += 1
    else:
        report.other += 1
    if message.date_source is not DateSource.HEADER:
        report.dates_sanitised += 1


def _start_worker(ingest: int) -> None:
    # Ctrl-C reaches the whole process group: the parent stops the run, not the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    processes.exit_with(ingest)  # a killed ingest leaves no worker behind


class _ParsePool:
    """At most `depth` chunks in flight: the reader never runs ahead of the writer.

    A pool whose worker died (the OOM killer, a signal) is broken for good; the
    chunks in flight and all later ones are then parsed here, so the run still ends
    with every message accounted for.
    """

    def __init__(self, workers: int, now: datetime) -> None:
        self._now = now
        self._pool: ProcessPoolExecutor | None = None
        if workers > 1:
            self._pool = ProcessPoolExecutor(
                workers,
                mp_context=processes.context(),
                initializer=_start_worker,
                initargs=(os.getpid(),),
            )
        self._depth = max(2, workers * 2)

    def map(
        self, chunks: Iterable[_Chunk]
    ) -> Iterator[tuple[_Chunk, list[Message | Malformed]]]:
        queue: deque[tuple[_Chunk, Future[list[Message | Malformed]] | None]] = deque()
        for chunk in chunks:
            queue.append((chunk, self._submit(chunk)))
            if len(queue) >= self._depth:
                yield self._result(*queue.popleft())
        while queue:
            yield self._result(*queue.popleft())

    def _submit(self, chunk: _Chunk) -> Future[list[Message | Malformed]] | None:
        if self._pool is None:
            return None
        try:
            return self._pool.submit(parse_chunk, chunk.raws, self._now)
        except BrokenProcessPool:
            self._broken()
            return None

    def _result(
        self, chunk: _Chunk, future: Future[list[Message | Malformed]] | None
    ) -> tuple[_Chunk, list[Message | Malformed]]:
        if future is not None:
            try:
                return chunk, future.result()
            except BrokenProcessPool:
                self._broken()
        return chunk, parse_chunk(chunk.raws, self._now)

    def _broken(self) -> None:
        if self._pool is not None:
            notice.warning("a parse worker died; parsing in this process from here on")
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def close(self, *, abort: bool = False) -> None:
        if self._pool is None:
            return
        self._pool.shutdown(wait=True, cancel_futures=abort)
        self._pool = None


def _worker_count(requested: int) -> int:
    if requested > 0:
        return requested
    return max(1, min(2, multiprocessing.cpu_count()))


@dataclass(slots=True)
class _Run:
    writer: StoreWriter
    indexer: IndexProcess
    options: IngestOptions
    report: IngestReport
    progress: ProgressCallback | None
    started: float
    last_date: datetime | None = None

    def write(
        self, source: Source, chunk: _Chunk, parsed: list[Message | Malformed]
    ) -> None:
        self.last_date = _fill_dates(parsed, self.last_date)
        items: list[BatchItem] = []
        malformed: list[Malformed] = []
        for raw, item in zip(chunk.raws, parsed, strict=True):
            self.report.messages += 1
            self.report.bytes += len(raw.data)
            if isinstance(item, Malformed):
                malformed.append(item)
                self.report.malformed += 1
                self.report.malformed_reasons[item.reason] += 1
                continue
            deleted = raw.origin.position.startswith("d:")
            if not deleted:
                _count(self.report, item)
            if item.defects:
                self.report.damaged += 1
                self.report.damaged_reasons.update(item.defects)
            items.append(
                BatchItem(
                    item, raw, _list_name(item, raw, source, self.options), deleted
                )
            )
        result = self.writer.write_batch(
            items, malformed, source=source.key, token=chunk.token, now=self.options.now
        )
        faults.point("ingest.batch")
        self._account(result)
        self.indexer.nudge()
        if self.progress is not None:
            self.progress(
                Progress(
                    source.key,
                    self.report.messages,
                    self.report.bytes,
                    time.monotonic() - self.started,
                )
            )

    def _account(self, result: BatchResult) -> None:
        self.report.new += len(result.new)
        self.report.duplicates += result.duplicates
        self.report.cross_posts += result.cross_posts
        self.report.deleted += len(result.deleted)


def ingest(
    paths: Sequence[str],
    *,
    store_path: Path,
    index_dir: Path,
    options: IngestOptions,
    progress: ProgressCallback | None = None,
    stdin: BinaryIO | None = None,
) -> IngestReport:
    """Ingest every archive in `paths` into the store and index; return the counts.

    Raises ArchiveUnreadable before writing anything when a path is bad. On Ctrl-C the
    batch in flight is rolled back, everything before it is kept, and the report comes
    back with `interrupted` set. The report's `index_lag` says what the full-text index
    lacks at the end (0 after a complete run), and `warnings` what went wrong on the way.
    """
    sources = detect_sources(paths)
    report = IngestReport(sources=len(sources))
    started = time.monotonic()
    with _collect_warnings(report.warnings), StoreWriter(store_path) as writer:
        # Once a store's index holds bodies, every later ingest indexes them too.
        bodies = options.index_bodies or writer.meta(BODIES_KEY) == "1"
        if bodies and writer.meta(BODIES_KEY) != "1":
            writer.set_meta(BODIES_KEY, "1")
        indexer = IndexProcess(store_path, index_dir, bodies=bodies)
        run = _Run(writer, indexer, options, report, progress, started)
        try:
            _read_all(run, sources, stdin)
        except BaseException:
            indexer.stop()
            raise
        if report.interrupted:
            indexer.stop()
        else:
            _finish_index(run, store_path, index_dir)
        _account_index(report, indexer, writer, store_path, index_dir)
    report.elapsed = time.monotonic() - started
    return report


def _read_all(run: _Run, sources: Sequence[Source], stdin: BinaryIO | None) -> None:
    """Every source through the parse pool into the store; Ctrl-C sets `interrupted`."""
    pool = _ParsePool(_worker_count(run.options.workers), run.options.now)
    try:
        for source in sources:
            messages = read_source(
                source, checkpoint=run.writer.checkpoint(source.key), stdin=stdin
            )
            for chunk, parsed in pool.map(_chunks(messages, run.options.chunk)):
                run.write(source, chunk, parsed)
        pool.close()
        run.report.weighed = fill_file_weights(run.writer)
        run.report.quoted_read = fill_quoted_patches(run.writer, now=run.options.now)
        run.report.classified = fill_process_kinds(run.writer)
    except (KeyboardInterrupt, Interrupted):
        pool.close(abort=True)
        run.report.interrupted = True
    except BaseException:
        pool.close(abort=True)
        raise


def _finish_index(run: _Run, store_path: Path, index_dir: Path) -> None:
    """Wait for the index to hold all the store has, showing how much is left."""

    def waiting(mark: IndexMark) -> None:
        if run.progress is None:
            return
        with Store(store_path) as store:
            lag = store.index_lag(last_seq=mark.seq, last_change=mark.change)
        report = run.report
        elapsed = time.monotonic() - run.started
        run.progress(Progress("index", report.messages, report.bytes, elapsed, lag))

    try:
        run.indexer.finish(waiting)
    except (KeyboardInterrupt, Interrupted):
        run.indexer.stop()
        run.report.interrupted = True


def _account_index(
    report: IngestReport,
    indexer: IndexProcess,
    writer: StoreWriter,
    store_path: Path,
    index_dir: Path,
) -> None:
    """What the index holds after the run, measured against the store."""
    outcome = indexer.outcome
    report.indexed = outcome.indexed
    report.index_restarts = outcome.restarts
    report.index_problem = outcome.problem
    try:
        mark = read_mark(index_dir)
    except E2gError as error:
        report.index_problem = str(error)
        mark = IndexMark()
    with Store(store_path) as store:
        report.index_lag = store.index_lag(last_seq=mark.seq, last_change=mark.change)
    report.index_behind = report.index_lag > 0
    if report.index_behind and report.index_problem is None and not report.interrupted:
        report.index_problem = "the full-text index process did not finish"
    if mark.change:
        writer.prune_index_journal(upto=mark.change)


class _Warnings(logging.Handler):
    """Copies what a run says at default verbosity into its report, for --json."""

    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.WARNING)
        self._into = into

    def emit(self, record: logging.LogRecord) -> None:
        self._into.append(record.getMessage())


@contextmanager
def _collect_warnings(into: list[str]) -> Iterator[None]:
    handler = _Warnings(into)
    level = notice.level
    # Collected whatever the verbosity: `-q` keeps them off stderr (the handler's
    # level there), not out of the summary's `warnings`.
    notice.setLevel(logging.WARNING)
    notice.addHandler(handler)
    try:
        yield
    finally:
        notice.removeHandler(handler)
        notice.setLevel(level)


def fill_file_weights(writer: StoreWriter, *, batch: int = 1000) -> int:
    """Weigh the files of mail stored before schema 3 (model.lines_weight), which
    the matcher needs to bound a diff's similarity before reading it; return how
    many messages were weighed. Each batch commits: an interrupted run resumes."""
    if writer.meta(WEIGHTS_PENDING_KEY) != "1":
        return 0
    weighed = 0
    while found := writer.unweighed_patches(limit=batch):
        writer.set_file_weights([(seq, file_weights(diff)) for seq, diff in found])
        weighed += len(found)
    writer.clear_meta(WEIGHTS_PENDING_KEY)
    log.info("weighed the files of %d messages stored before", weighed)
    return weighed


def fill_quoted_patches(
    writer: StoreWriter, *, now: datetime, batch: int = 2000
) -> int:
    """Give the replies stored before schema 16 the patch-id of a patch they quote
    whole (e2g.mail.quoted), read again from their raw mail; return how many were
    read. Each batch commits with the last seq read: an interrupted run resumes."""
    read = _fill_pending(
        writer,
        QUOTED_PENDING_KEY,
        after=lambda store, seq: store.replies_after(seq, limit=batch),
        seq_of=lambda seq: seq,
        found=lambda store, seqs: [
            (seq, patch_id)
            for seq in seqs
            if (patch_id := _quoted_patch_id(store.raw(seq), now)) is not None
        ],
        write=partial(writer.set_quoted_patch_ids, key=QUOTED_PENDING_KEY),
        fault="ingest.quoted",
    )
    if read:
        log.info("read %d replies stored before for a quoted patch", read)
    return read


def fill_process_kinds(writer: StoreWriter, *, batch: int = 20_000) -> int:
    """Write the backport-process step (messages.process, store_writer.stored_process)
    of the messages stored before schema 18; return how many were read. Each batch
    commits with the last seq read: an interrupted run resumes after it."""
    read = _fill_pending(
        writer,
        PROCESS_PENDING_KEY,
        after=lambda store, seq: store.subjects_after(seq, limit=batch),
        seq_of=lambda row: row[0],
        found=lambda store, rows: [
            (seq, kind)
            for seq, subject, stable in rows
            if (
                kind := stored_process(
                    subject, stable, store.process_body(seq, subject)
                )
            )
            is not None
        ],
        write=partial(writer.set_process_kinds, key=PROCESS_PENDING_KEY),
        fault="ingest.process",
    )
    if read:
        log.info("classified %d messages stored before for the backport process", read)
    return read


def _fill_pending(  # noqa: PLR0913 - keyword-only
    writer: StoreWriter,
    key: str,
    *,
    after: Callable[[Store, int], Sequence[_Row]],
    seq_of: Callable[[_Row], int],
    found: Callable[[Store, Sequence[_Row]], list[tuple[int, str]]],
    write: Callable[..., None],
    fault: str,
) -> int:
    """The fill a migration left pending under meta `key` (its value: the last seq
    done): each batch of rows `after` gives past it, what `found` makes of them,
    written by `write` with the batch's last seq in one transaction, so an
    interrupted run resumes after it; the key cleared once no row is left. How
    many rows were read."""
    mark = writer.meta(key)
    if mark is None:
        return 0
    done_to, read = int(mark), 0
    with Store(writer.path) as store:
        while rows := after(store, done_to):
            values = found(store, rows)
            done_to = seq_of(rows[-1])
            faults.point(fault)
            write(values, done_to=done_to)
            read += len(rows)
    writer.clear_meta(key)
    return read


def _quoted_patch_id(raw: bytes | None, now: datetime) -> str | None:
    if raw is None or b"diff --git" not in raw:  # the quote's first line holds it
        return None
    parsed = parse_message(RawMessage(raw, Origin("store", "0")), now=now)
    return parsed.quoted_patch_id if isinstance(parsed, Message) else None


def reindex(
    *,
    store_path: Path,
    index_dir: Path,
    bodies: bool,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Rebuild the full-text index from the store alone; return documents indexed."""
    with Store(store_path) as store:
        bodies = bodies or store.meta(BODIES_KEY) == "1"
        change = store.max_change()  # read first: later changes are caught up after
        docs = (
            index_doc(stored, body=store.body(stored.seq) if bodies else None)
            for stored in store.iter_messages()
        )
        return rebuild(index_dir, docs, change=change, progress=progress)
