"""`FulltextWriter`: documents in, one Whoosh commit out, with the mark after it.

The writer finds the documents a commit replaces by reading the seq column once,
spills its posting pool in chunks, and merges small segments by size tiers below
FINAL_SEGMENT (a final segment is written once, never merged again by ingest)."""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from itertools import islice
from types import TracebackType
from typing import TYPE_CHECKING, Any

from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield
from whoosh.reading import IndexReader, SegmentReader
from whoosh.util.numeric import byte_to_length
from whoosh.writing import IndexWriter, LockError, PostingPool

from e2g import errors
from e2g.index.fulltext.columns import column_array
from e2g.index.fulltext.schema import IndexDoc, fields_of
from e2g.index.fulltext.sidecar import IndexMark, read_sidecar, write_sidecar

if TYPE_CHECKING:
    from pathlib import Path

    import whoosh.index


MERGE_FACTOR = 8  # segments of one size tier before they merge (see _merge_tiers)
MERGE_FLOOR = 2_000  # segments below this many documents are all one tier
MERGE_DELETED = 0.3  # merge a segment once this share of it is deleted
# A segment of this many documents is final: ingest never merges it again (but for
# deletions). Whoosh merges in Python at ~600 documents/s: one 160k merge stalled a
# 200k-message ingest's index for 4 minutes, and at 1M messages a 1.28M merge would
# take half an hour. Final segments are this index's shards, each written once.
FINAL_SEGMENT = MERGE_FLOOR * MERGE_FACTOR
WRITER_LIMIT_MB = 256  # Whoosh's in-memory posting pool before it spills to disk


class FulltextWriter:
    """Buffers one batch of documents and commits them to the index in one go.

    Holds the index's write lock from creation (so a second writer fails at once) until
    `commit` or `cancel`. It stays usable after `commit`: the next `add` or `delete`
    takes the lock again, so a writer dropped right after its commit holds nothing.
    Leaving the `with` block discards anything not committed: the pipeline commits
    explicitly, right after the store's own commit, so the index never runs ahead.
    """

    def __init__(
        self,
        directory: Path,
        index: whoosh.index.Index,
        *,
        assume_new: bool = False,
        wait: float = 0.0,
    ) -> None:
        # The index's directory and its Whoosh handle, not search.Fulltext: the
        # writer sits below the searcher, which hands writers out.
        self._directory = directory
        self._index = index
        # rebuild: seqs are unique and the index fresh, so look for nothing to replace
        self._assume_new = assume_new
        self._wait = wait
        self._pending: dict[int, IndexDoc] = {}
        self._deleted: set[int] = set()
        self._writer: IndexWriter | None = self._acquire()

    def add(self, doc: IndexDoc) -> None:
        """Index `doc`, replacing any document with the same seq."""
        self._hold()
        self._deleted.discard(doc.seq)
        self._pending[doc.seq] = doc

    def delete(self, seq: int) -> None:
        """Remove the document of the message `seq`, if the index has one."""
        self._hold()
        self._pending.pop(seq, None)
        self._deleted.add(seq)

    def commit(self, mark: IndexMark | None = None, *, optimize: bool = False) -> None:
        """Make the batch durable in the index, then record how far it follows the
        store: the highest seq of the batch's documents, and `mark` when given (a
        catch-up that read the store that far). `optimize` merges all segments."""
        writer = self._writer or self._acquire()
        self._writer = None
        try:
            self._feed(writer)
            if optimize:
                writer.commit(optimize=True)
            else:
                writer.commit(mergetype=_merge_tiers)
        except BaseException:
            writer.cancel()
            raise
        held = IndexMark(max((doc.seq for doc in self._pending.values()), default=0))
        write_sidecar(
            self._directory, read_sidecar(self._directory) | held | (mark or held)
        )
        self._pending.clear()
        self._deleted.clear()

    def cancel(self) -> None:
        """Drop the uncommitted batch and release the write lock."""
        self._pending.clear()
        self._deleted.clear()
        if self._writer is not None:
            self._writer.cancel()
            self._writer = None

    def __enter__(self) -> FulltextWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.cancel()

    def _feed(self, writer: IndexWriter) -> None:
        """Replace, then add: one read of the seq column finds every document this
        batch replaces or deletes (usually none: new mail has new seqs, and a crash
        between Whoosh's commit and the sidecar's is what leaves any)."""
        replaced = self._pending.keys() | self._deleted
        if replaced and not self._assume_new:
            reader = writer.reader()
            try:
                found = _numbers_of(reader, replaced)
            finally:
                reader.close()
            for number in found:
                writer.delete_document(number)
        for doc in self._pending.values():
            writer.add_document(**fields_of(doc))

    def _hold(self) -> None:
        if self._writer is None:
            self._writer = self._acquire()

    def _acquire(self) -> IndexWriter:
        try:
            # Separate files, not one compound file per segment: Whoosh copies each
            # part of a compound segment into memory on every open (110 ms per search
            # process at 200k messages, growing with the index); plain files are read
            # where needed.
            writer = self._index.writer(
                limitmb=WRITER_LIMIT_MB,
                timeout=self._wait,
                delay=0.25,
                compound=False,
            )
        except LockError:
            raise errors.IndexError_(
                f"the full-text index in {self._directory} is being written by "
                "another e2g process (an ingest or reindex); wait for it and retry"
            ) from None
        opened = writer.per_document_reader
        writer.per_document_reader = lambda: _LengthsInMemory(opened())
        if type(writer.pool) is PostingPool:  # see _ChunkedRuns
            writer.pool.__class__ = _ChunkedRuns
        return writer


RUN_CHUNK = 1024  # postings per marshal call in a spilled run: ~200 KB in memory


class _ChunkedRuns(PostingPool):  # type: ignore[misc]
    """Whoosh's posting pool, writing the sorted runs it spills to disk a list of
    postings per marshal call, and reading them back the same way.

    Every ingest commit (INDEX_COMMIT_EVERY documents) outgrows the pool's
    WRITER_LIMIT_MB and spills, and Whoosh writes and reads each posting with a
    marshal call of its own. Same postings in the same order, so the same index
    files; building one 50,000-document commit of generated mail took 20.1 s with
    Whoosh's runs and 16.3 s with these (`benchmarks/tricks.py`, best of 2).
    """

    def _write_run(self, f: Any, items: Iterable[Any]) -> None:
        found = iter(items)
        try:
            while chunk := list(islice(found, RUN_CHUNK)):
                marshal.dump(chunk, f, 2)
        finally:
            f.close()

    def _read_run(self, path: str) -> Iterator[Any]:
        f = self._open_run(path)
        try:
            while True:
                try:
                    chunk = marshal.load(f)
                except EOFError:
                    return
                yield from chunk
        finally:
            f.close()
            self._remove_run(path)


class _LengthsInMemory:
    """The new segment's per-document reader, as Whoosh's writer opens it to write
    the segment's postings, with each field's lengths read into memory once.

    Whoosh asks it for the field length of every posting it writes (to keep each
    block's shortest and longest document), and its own reader answers each from
    the column file on disk, seeking per call, and stats a file for every field
    without lengths. Reading them once saves 17% of building an index (identical
    files; `benchmarks/tricks.py`, 20,000 io-uring messages: 7.49 s -> 6.21 s).
    """

    def __init__(self, reader: Any) -> None:
        self._reader = reader
        self._lengths: dict[str, list[int | None] | None] = {}

    def doc_field_length(self, docnum: int, fieldname: str, default: int = 0) -> Any:
        if fieldname not in self._lengths:
            self._lengths[fieldname] = self._load(fieldname)
        lengths = self._lengths[fieldname]
        return default if lengths is None else lengths[docnum]

    def _load(self, fieldname: str) -> list[int | None] | None:
        column = self._reader._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
        if column is None:
            return None
        # As Whoosh's own reader: the stored byte decoded, None for no length.
        decoded = [byte_to_length(n) if n else None for n in range(256)]
        return [decoded[n] for n in column]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)


def _leaf_seqs(reader: IndexReader) -> Iterator[tuple[int, array[int], frozenset[int]]]:
    """Per segment: its first document number, the seq of each of its documents,
    and the numbers (within it) of its deleted ones."""
    for leaf, offset in reader.leaf_readers():
        count = leaf.doc_count_all()
        has = leaf.has_column("seq")
        column = leaf.column_reader("seq", translate=False) if has else None
        deleted = leaf.deleted_docs_set if leaf.has_deletions() else frozenset()
        yield offset, column_array(column, count), deleted


def live_seqs(reader: IndexReader) -> Iterator[tuple[int, int]]:
    """(document number, seq) of every live document `reader` holds, in order."""
    for offset, values, deleted in _leaf_seqs(reader):
        for number, seq in enumerate(values):
            if number not in deleted:
                yield offset + number, seq


def _numbers_of(reader: IndexReader, seqs: AbstractSet[int]) -> list[int]:
    """The live documents whose seq is one of `seqs`. A segment whose seqs all lie
    below the lowest of them (every segment, when an ingest adds new mail) is passed
    over after one max(): at 1M messages, 37 instead of 151 ms a commit, which an
    ingest pays at each of its commits, over an index that grows."""
    lowest = min(seqs)
    found: list[int] = []
    for offset, values, deleted in _leaf_seqs(reader):
        if not values or max(values) < lowest:
            continue
        found.extend(
            offset + number
            for number, seq in enumerate(values)
            if seq in seqs and number not in deleted
        )
    return found


def _merge_tiers(writer: IndexWriter, segments: list[Any]) -> list[Any]:
    """Whoosh merge policy: merge a size tier once it holds MERGE_FACTOR segments,
    below FINAL_SEGMENT documents.

    Whoosh's default only merges segments of a few dozen documents, so small commits
    (an incremental ingest, a web reindex) would pile up one segment per commit, and
    every search pays per segment. Tiers (x MERGE_FACTOR in size each) keep their
    count logarithmic. A segment of FINAL_SEGMENT documents or more (every large
    ingest's commits) is never rewritten, so merge cost stays bounded at any index
    size; `e2g optimize` merges everything once, when the user chooses to pay for it.
    Segments with many deletions are merged too.
    """
    tiers: dict[int, list[Any]] = {}
    for segment in segments:
        if segment.doc_count() < FINAL_SEGMENT:
            tiers.setdefault(_tier(segment.doc_count()), []).append(segment)
    full = [tier for tier, members in tiers.items() if len(members) >= MERGE_FACTOR]
    merged = [
        segment
        for segment in segments
        if (full and _tier(segment.doc_count()) <= min(full))
        or segment.deleted_count() > segment.doc_count_all() * MERGE_DELETED
    ]
    for segment in merged:
        reader = SegmentReader(writer.storage, writer.schema, segment)
        writer.add_reader(reader)
        reader.close()
    return [segment for segment in segments if segment not in merged]


def _tier(documents: int) -> int:
    tier, size = 0, MERGE_FLOOR
    while documents >= size:
        tier, size = tier + 1, size * MERGE_FACTOR
    return tier
