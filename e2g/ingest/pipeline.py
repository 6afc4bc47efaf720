"""The ingest pipeline: archives -> parsed messages -> store (the record) -> full-text index.

The only ingest module that touches `e2g.index`. Readers stream raw messages; worker
processes parse them in bounded chunks (memory does not grow with archive size); this
process writes each chunk as one store transaction together with the source's
checkpoint, then feeds the full-text index, which is committed after the store and so
is never ahead of it (a crash leaves it behind; the next run catches up by `seq`).

The per-message boundary here is one of the two places e2g catches broadly: a message
that makes the parser fail is counted as malformed with the reason, never fatal.
"""

from __future__ import annotations

import dataclasses
import logging
import multiprocessing
import signal
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from multiprocessing.pool import AsyncResult, Pool
from pathlib import Path
from typing import BinaryIO

from e2g.errors import Interrupted
from e2g.index.fulltext import rebuild
from e2g.index.schema import WEIGHTS_PENDING_KEY
from e2g.index.store import Store
from e2g.index.store_writer import BatchItem, BatchResult, StoreWriter
from e2g.ingest import processes
from e2g.ingest.archives import Source, detect_sources, read_source
from e2g.ingest.indexing import IndexProcess, index_doc
from e2g.ingest.message import parse_message
from e2g.ingest.patch import file_weights
from e2g.model import DateSource, Kind, Malformed, Message, RawMessage

log = logging.getLogger(__name__)

BODIES_KEY = "index_bodies"  # store meta: the index holds message bodies
CHUNK = 500  # messages per parse task and per store transaction
INDEX_COMMIT_EVERY = (
    20_000  # documents between full-text commits (Whoosh commits are slow)
)


@dataclass(frozen=True, slots=True)
class IngestOptions:
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
    index_behind: bool = False  # the index process failed: `e2g reindex` catches up
    elapsed: float = 0.0
    sources: int = 0
    interrupted: bool = False
    weighed: int = 0  # messages stored before schema 3 whose files were weighed now
    malformed_reasons: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, object]:
        data = dataclasses.asdict(self)
        data["malformed_reasons"] = dict(self.malformed_reasons)
        data["elapsed"] = round(self.elapsed, 3)
        return data


@dataclass(frozen=True, slots=True)
class Progress:
    source: str
    messages: int
    bytes: int
    elapsed: float


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
        return dataclasses.replace(item, date=when, date_source=DateSource.NEIGHBOURS)
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


def _ignore_interrupts() -> None:
    # Ctrl-C reaches the whole process group: the parent stops the run, not the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class _ParsePool:
    """At most `depth` chunks in flight: the reader never runs ahead of the writer."""

    def __init__(self, workers: int, now: datetime) -> None:
        self._now = now
        self._pool: Pool | None = None
        if workers > 1:
            self._pool = processes.context().Pool(
                workers, initializer=_ignore_interrupts
            )
        self._depth = max(2, workers * 2)

    def map(
        self, chunks: Iterable[_Chunk]
    ) -> Iterator[tuple[_Chunk, list[Message | Malformed]]]:
        if self._pool is None:
            for chunk in chunks:
                yield chunk, parse_chunk(chunk.raws, self._now)
            return
        queue: deque[tuple[_Chunk, AsyncResult[list[Message | Malformed]]]] = deque()
        for chunk in chunks:
            queue.append(
                (chunk, self._pool.apply_async(parse_chunk, (chunk.raws, self._now)))
            )
            if len(queue) >= self._depth:
                done, result = queue.popleft()
                yield done, result.get()
        while queue:
            done, result = queue.popleft()
            yield done, result.get()

    def close(self, *, abort: bool = False) -> None:
        if self._pool is None:
            return
        if abort:
            self._pool.terminate()
        else:
            self._pool.close()
        self._pool.join()


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
            items.append(
                BatchItem(
                    item, raw, _list_name(item, raw, source, self.options), deleted
                )
            )
        result = self.writer.write_batch(
            items, malformed, source=source.key, token=chunk.token, now=self.options.now
        )
        self._account(result)
        self.indexer.add(result.new + result.touched, result.deleted)
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
    back with `interrupted` set.
    """
    sources = detect_sources(paths)
    report = IngestReport(sources=len(sources))
    started = time.monotonic()
    with StoreWriter(store_path) as writer:
        # Once a store's index holds bodies, every later ingest indexes them too.
        bodies = options.index_bodies or writer.meta(BODIES_KEY) == "1"
        if bodies and writer.meta(BODIES_KEY) != "1":
            writer.set_meta(BODIES_KEY, "1")
        pool = _ParsePool(_worker_count(options.workers), options.now)
        indexer = IndexProcess(
            store_path, index_dir, bodies=bodies, upto=writer.max_seq()
        )
        run = _Run(writer, indexer, options, report, progress, started)
        try:
            for source in sources:
                messages = read_source(
                    source, checkpoint=writer.checkpoint(source.key), stdin=stdin
                )
                for chunk, parsed in pool.map(_chunks(messages, options.chunk)):
                    run.write(source, chunk, parsed)
            pool.close()
        except (KeyboardInterrupt, Interrupted):
            pool.close(abort=True)
            report.interrupted = True
        except BaseException:
            pool.close(abort=True)
            indexer.abort()
            raise
        if not report.interrupted:
            try:
                report.weighed = fill_file_weights(writer)
            except (KeyboardInterrupt, Interrupted):
                report.interrupted = True
        # The index takes only what the store committed, also after Ctrl-C.
        indexer.finish()
    report.indexed = indexer.indexed
    report.index_behind = indexer.failed
    report.elapsed = time.monotonic() - started
    return report


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
        docs = (index_doc(stored, bodies=bodies) for stored in store.iter_messages())
        return rebuild(index_dir, docs, progress=progress)
