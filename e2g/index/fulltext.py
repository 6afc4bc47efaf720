"""The full-text index: one Whoosh document per message, derived from the store.

This is the only module in e2g that imports Whoosh, and no Whoosh type leaves it: the
pipeline hands in `IndexDoc`s, searches come back as `Found` (a store seq and its
score), and queries arrive as text parsed by `index.query`. The index stores no field:
each document's key is its message's seq in the store, kept in a numeric column, and
what a hit shows (subject, author, lists, date, files, thread) is read from the store
for the page of hits (`api.core.search`, one query), which every search opened
anyway. Until index format 4 the index kept its own copy of those fields: 39% of the
index at 200k messages (68 of 175 MB), pickled per document on every write. Until
format 6 the key was the Message-ID, as a unique term and a stored field: ~115 bytes
of term dictionary and ~76 of pickle per document, a third of the index at 200k
messages, and a term lookup in every segment per document added. The SQLite store is
the record; this index is derived and can be rebuilt from the store at any time
(`rebuild`, behind `e2g reindex`).

Consistency with the store: documents are built only from rows the store committed,
and how far the index has followed the store (its `IndexMark`: the highest message
`seq`, and the last revision of the store's index journal of other changes) is written
to a sidecar file only after Whoosh's own commit. A crash therefore leaves the index
behind the store, never ahead of it, and whoever opens it next catches up from the mark.
Updates are keyed by seq, so indexing a message again (a cross-post's new list, a
catch-up that overlaps) replaces it instead of duplicating it. A seq the index never
held (every new message) needs no lookup at all: the writer finds the documents to
replace by reading the seq column once per commit, not by a term per document.

Readers never block: Whoosh locks writers only, and a searcher sees the last commit.

Layout at scale (lore-size archives): the index's shards are Whoosh segments, each
written once. An ingest commits every `indexing.INDEX_COMMIT_EVERY` documents, and a
segment that large is final (FINAL_SEGMENT): no later commit merges it, so indexing
costs the same per document at a million messages as at ten thousand, and the index
process never stalls on a merge. Small commits (incremental ingests, journal
changes) still merge by size tiers below FINAL_SEGMENT, so their segments stay few.
A search reads every segment; `e2g optimize` merges them all into one when the user
wants to pay for that once. Measured with benchmarks/scale.py (git.git's history,
2 cores): a 200k-message ingest took 385 s instead of 512 s (a 160k merge had held
the index for about 4 minutes), and 1M messages ingested in 25 minutes at a flat
index rate with 20 final segments. Segments are plain files, not Whoosh's compound
ones: opening a compound segment copies each of its parts into memory, which cost
every search process 110 ms at 200k messages and grew with the index. Why segments and not separate Whoosh indexes per shard:
one index keeps one reader, one deletion path by seq and one commit per
batch, while Whoosh's merge policy hook is all that shards needed.

Security: Whoosh stores pickles in its files (the schema, stored fields). Never open an
index from a source you do not trust; rebuild it from the store instead.
Whoosh never fsyncs, so a power loss can lose recent commits; `e2g reindex` repairs that.

Its size (over 500 lines) is the price of that rule: schema, tokenizer adapters,
query translation, the index's life cycle and search all speak Whoosh, and they
stay in the one module allowed to.
"""

from __future__ import annotations

import heapq
import json
import logging
import marshal
import os
import pickle
import shutil
import struct
import sys
import tempfile
import time as clock
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from itertools import islice
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, NamedTuple

# isort: off
import e2g.index.whoosh_imports  # noqa: F401 - before any Whoosh module: see there
import whoosh.index

# isort: on
import whoosh.query as wq
from whoosh.analysis import RegexTokenizer, Token, Tokenizer
from whoosh.codec.whoosh3 import LENGTHS_COLUMN, W3LeafMatcher, _lenfield
from whoosh.columns import NumericColumn
from whoosh.fields import COLUMN, ID, NUMERIC, TEXT, Schema
from whoosh.filedb.filestore import FileStorage
from whoosh.matching.wrappers import FilterMatcher
from whoosh.reading import IndexReader, SegmentReader
from whoosh.searching import Searcher
from whoosh.util.numeric import byte_to_length
from whoosh.writing import IndexWriter, LockError, PostingPool

from e2g import errors
from e2g.index import analysis
from e2g.index import query as ql

if TYPE_CHECKING:
    from e2g.index.store import Store

log = logging.getLogger(__name__)

# Bump when the schema or the analysis changes: old indexes need a reindex. 5: no
# subject_key and thread_root terms, which no query ever read (11-14% of the index).
# 6: documents keyed by the store's seq in a column, not by a Message-ID term.
FORMAT = 6
SIDECAR = "e2g-index.json"
REBUILD_BATCH = 50_000  # docs per commit in rebuild: bounds memory, fewer merges
MERGE_FACTOR = 8  # segments of one size tier before they merge (see _merge_tiers)
MERGE_FLOOR = 2_000  # segments below this many documents are all one tier
MERGE_DELETED = 0.3  # merge a segment once this share of it is deleted
# A segment of this many documents is final: ingest never merges it again (but for
# deletions). Whoosh merges in Python at ~600 documents/s: one 160k merge stalled a
# 200k-message ingest's index for 4 minutes, and at 1M messages a 1.28M merge would
# take half an hour. Final segments are this index's shards, each written once.
FINAL_SEGMENT = MERGE_FLOOR * MERGE_FACTOR
WRITER_LIMIT_MB = 256  # Whoosh's in-memory posting pool before it spills to disk
SUBJECT_BOOST = 3.0  # a subject hit outranks a body-only hit
SORTS = ("date", "relevance")
OPEN_ATTEMPTS = 5  # a writer's commit can delete the files we are opening

# A word, possibly compound: `io_uring`, `net-next`, `mm/slab`, `slab.c`, `3/7`.


@dataclass(frozen=True, slots=True)
class IndexDoc:
    """What the index holds for one message; built by the pipeline."""

    subject: str
    author_name: str
    author_email: str
    lists: tuple[str, ...]
    date: datetime | None
    kind: str
    version: int
    files: tuple[str, ...]
    body: str | None  # None unless --index-bodies
    seq: int  # the store's message sequence number: the document's key
    diff: bool = False  # carries a diff (a posting, or a reply with one): has:diff


@dataclass(frozen=True, slots=True)
class IndexMark:
    """How far the index follows the store: every message up to `seq`, and the
    store's journal of other changes (new lists, deletions) up to `change`."""

    seq: int = 0
    change: int = 0

    def __or__(self, other: IndexMark) -> IndexMark:
        return IndexMark(max(self.seq, other.seq), max(self.change, other.change))


class Found(NamedTuple):
    """A document a search found: its message's store seq, and its score (0.0 by
    date)."""

    seq: int
    score: float


class _Tokens(Tokenizer):  # type: ignore[misc]
    """Whoosh adapter for a pure token function; pickled into the schema by name."""

    def tokens(self, value: str) -> Iterable[str]:
        raise NotImplementedError

    def __call__(  # noqa: PLR0913 - the signature Whoosh calls
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Token]:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        texts = self.tokens(value) if tokenize else [analysis.fold(value)]
        for position, text in enumerate(texts):
            token.text = text
            token.boost = 1.0
            token.stopped = False
            if positions:
                token.pos = start_pos + position
            if chars:
                token.startchar = token.endchar = start_char
            yield token


class WordTokenizer(_Tokens):
    """Words, compounds, their parts and subsystem prefixes (`analysis.word_tokens`)."""

    def tokens(self, value: str) -> Iterable[str]:
        return [word for _, word in analysis.word_tokens(value)]


class PairTokenizer(_Tokens):
    """Adjacent word pairs (`analysis.pair_tokens`): phrases without positions."""

    def tokens(self, value: str) -> Iterable[str]:
        return analysis.pair_tokens(value)


def _schema() -> Schema:
    lines = RegexTokenizer(r"[^\n]+")  # one token per line: values we tokenised
    # No positions anywhere: Whoosh's positional phrase matching costs ~0.2 ms per
    # candidate; phrases match adjacent-pair terms instead (see analysis.pair_tokens).
    return Schema(
        # The document's key: its message's seq in the store (see the module's doc).
        seq=COLUMN(NumericColumn("q", default=0)),
        subject=TEXT(analyzer=WordTokenizer(), phrase=False, field_boost=SUBJECT_BOOST),
        subject_pairs=TEXT(
            analyzer=PairTokenizer(), phrase=False, field_boost=SUBJECT_BOOST
        ),
        body=TEXT(analyzer=WordTokenizer(), phrase=False),
        body_pairs=TEXT(analyzer=PairTokenizer(), phrase=False),
        author=TEXT(analyzer=lines, phrase=False),
        lists=TEXT(analyzer=lines, phrase=False),
        # Seconds since 1970 (0 = undated): a column, read as an array for sorting and
        # for date ranges, which as tiered term ranges cost ~1 s on 100k documents.
        date=COLUMN(NumericColumn("q", default=0)),
        kind=ID(),  # what is: finds (mail.subject.search_kind)
        has=ID(),  # "diff" for a message that carries one
        version=NUMERIC(int, bits=16, shift_step=0),
        files=TEXT(analyzer=lines, phrase=False),
    )


def _fields(doc: IndexDoc) -> dict[str, Any]:
    """An IndexDoc as Whoosh fields; absent values are left out, not indexed empty."""
    fields: dict[str, Any] = {
        "seq": doc.seq,
        "subject": doc.subject,
        "subject_pairs": doc.subject,
        "author": "\n".join(analysis.author_tokens(doc.author_name, doc.author_email)),
        "lists": "\n".join(analysis.list_tokens(doc.lists)),
        "kind": str(doc.kind),
        "version": max(0, min(doc.version, ql.MAX_VERSION)),
        "files": "\n".join(analysis.path_tokens(doc.files)),
    }
    if doc.date is not None:
        stamp = max(_timestamp(doc.date), 1)  # 0 means undated
        fields["date"] = stamp
    if doc.diff:
        fields["has"] = "diff"
    if doc.body:
        fields.update(body=doc.body, body_pairs=doc.body)
    return {name: value for name, value in fields.items() if value != ""}


def _timestamp(moment: datetime) -> int:
    if moment.tzinfo is None:  # the model promises aware UTC; be safe, not local
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp())


# --- query translation: index.query's tree to Whoosh queries -------------------------

Window = tuple[int, int]  # inclusive bounds on the date column, in seconds


@dataclass(frozen=True, slots=True)
class Plan:
    """A parsed query ready to run: Whoosh matching, then date windows on the column."""

    query: wq.Query  # the positive clauses (Every() when there are none)
    # Negated clauses, subtracted as sets of document numbers: Whoosh's AndNot lets a
    # document through (found by benchmarks/search.py's FTS5 cross-check) and its
    # And(..., Not(...)) walks every document in Python.
    excluding: wq.Query | None
    scored: bool  # a positive word, phrase or name to rank by
    window: Window | None  # every hit lies inside it (the intersection of d: clauses)
    excluded: tuple[Window, ...]  # and outside each of these (negated d: clauses)
    # Clauses Whoosh cannot run as one query (an OR or a group holding a date range or
    # a negation): each is evaluated as a set of document numbers every hit is in.
    within: tuple[ql.Clause, ...] = ()


def translate(parsed: ql.Query) -> Plan:
    """The plan for a parsed query; all clauses must match."""
    positive: list[wq.Query] = []
    negative: list[wq.Query] = []
    windows: list[Window] = []
    excluded: list[Window] = []
    within: list[ql.Clause] = []
    scored = False
    for clause in parsed.clauses:
        negated = isinstance(clause, ql.Not)
        inner = clause.clause if isinstance(clause, ql.Not) else clause
        engine = _engine(inner)
        if isinstance(inner, ql.DateRange):
            (excluded if negated else windows).append(_window(inner))
        elif engine is None:
            within.append(clause)
        else:
            (negative if negated else positive).append(engine)
            scored = scored or (not negated and _has_words(inner))
    base = wq.And(positive) if len(positive) > 1 else (positive or [wq.Every()])[0]
    excluding = None
    if negative:
        excluding = wq.Or(negative) if len(negative) > 1 else negative[0]
    window = None
    if windows:
        window = (max(low for low, _ in windows), min(high for _, high in windows))
    return Plan(base, excluding, scored, window, tuple(excluded), tuple(within))


def _engine(clause: ql.Clause) -> wq.Query | None:
    """`clause` as one Whoosh query, or None when it holds a date range or a
    negation (a column Whoosh does not index; a Not Whoosh runs badly, see Plan)."""
    if isinstance(clause, ql.Match | ql.KindIs | ql.Has | ql.VersionIs):
        return _clause(clause)
    if isinstance(clause, ql.And | ql.Or):
        parts = [_engine(inner) for inner in clause.clauses]
        if any(part is None for part in parts):
            return None
        kind = wq.And if isinstance(clause, ql.And) else wq.Or
        return kind([part for part in parts if part is not None])
    return None


def _has_words(clause: ql.Clause) -> bool:
    if isinstance(clause, ql.And | ql.Or):
        return any(_has_words(inner) for inner in clause.clauses)
    return isinstance(clause, ql.Match)


def _clause(clause: ql.Match | ql.KindIs | ql.Has | ql.VersionIs) -> wq.Query:
    if isinstance(clause, ql.KindIs):
        return wq.Term("kind", clause.kind)
    if isinstance(clause, ql.Has):
        return wq.Term("has", clause.feature)
    if isinstance(clause, ql.VersionIs):
        return wq.NumericRange("version", clause.version, clause.version)
    if clause.field is ql.Field.FROM:
        return _all(_author_word(word) for word in clause.value.split())
    if clause.field is ql.Field.FILE:
        path = analysis.clean_path(clause.value)
        if path.endswith("*") and path.rstrip("*"):
            # `file:net/fro*`: any path, directory or base name the text begins.
            return wq.Prefix("files", path.rstrip("*"))
        return wq.Or([wq.Term("files", path), wq.Term("files", path + "/")])
    if clause.field is ql.Field.LIST:
        return wq.Term("lists", analysis.fold(clause.value).strip())
    names = ["subject"] if clause.field is ql.Field.SUBJECT else ["subject", "body"]
    return _text(clause, names)


def _text(clause: ql.Match, names: list[str]) -> wq.Query:
    if clause.phrase:
        pairs = analysis.pair_tokens(clause.value)
        if pairs:  # every adjacent pair of the phrase's words, adjacent in the field
            fields = [f"{name}_pairs" for name in names]
            return wq.Or([_all(wq.Term(f, pair) for pair in pairs) for f in fields])
        return _all(_any(names, word) for word in analysis.phrase_words(clause.value))
    return _all(_any(names, word) for word in analysis.query_words(clause.value))


def _any(names: list[str], word: str) -> wq.Query:
    return wq.Or([wq.Term(name, word) for name in names])


def _all(queries: Iterable[wq.Query]) -> wq.Query:
    found = list(queries)
    if not found:
        return wq.NullQuery
    return found[0] if len(found) == 1 else wq.And(found)


def _author_word(word: str) -> wq.Query:
    """`axboe@kernel.dk`, `axboe`, `Jens`; `o'brien` also as its parts `o` `brien`."""
    folded = analysis.fold(word).strip()
    parts = analysis.NAME_WORD.findall(folded)
    if len(parts) > 1 and "@" not in folded:
        every_part = _all(wq.Term("author", part) for part in parts)
        return wq.Or([wq.Term("author", folded), every_part])
    return wq.Term("author", folded)


def _window(clause: ql.DateRange) -> Window:
    # 0 is "undated": in no range, not even one that starts on 1970-01-01.
    low = max(_day_start(clause.start), 1) if clause.start else 1
    high = _day_start(clause.end) + 86_399 if clause.end else 2**62
    return low, high


def _day_start(day: date) -> int:
    return int(datetime.combine(day, time(0), UTC).timestamp())


def _date_values(searcher: Searcher) -> array[int]:
    """The date column of every document, indexed by document number."""
    values: array[int] = array("q")
    for leaf, offset in searcher.leaf_searchers():
        reader = leaf.reader()
        values.extend([0] * (offset - len(values)))
        count = reader.doc_count_all()
        has = reader.has_column("date")
        column = reader.column_reader("date", translate=False) if has else None
        values.extend(_column_array(column, count))
    return values


# Reading the column file directly: 0.5 ms instead of 106 ms for 100,000 documents,
# once per searcher, for every newest-first search (benchmarks/tricks.py).
def _column_array(column: Any, count: int) -> array[int]:
    """A numeric column as an array: its raw big-endian bytes when we can reach them
    (one read instead of one struct.unpack per document), else value by value."""
    if column is None:
        return array("q", bytes(8 * count))
    try:
        raw = column._dbfile.get(column._basepos, column._count * 8)
        chunk = array("q", raw)
        if sys.byteorder == "little":
            chunk.byteswap()
    except AttributeError:  # another Whoosh column layout: the slow, public way
        chunk = array("q", (column[number] for number in range(count)))
    chunk.extend([0] * (count - len(chunk)))
    return chunk


SPAN = 4_096  # documents per span of the date column's summary


class DateColumn:
    """Every document's date (`values`, by document number, 0 = undated), and which
    documents lie in a date window.

    Mail is indexed roughly in date order (archives are read oldest first), so most
    spans of SPAN consecutive documents lie wholly inside or wholly outside a window.
    The lowest and highest date of each span, found once per searcher, settle those
    spans without a look at each document; only spans across an edge of the window
    are read date by date. At 1M messages, `d:2006` (62,000 hits) went from 61 ms to
    9 ms once the summary was made (~50 ms, once per searcher: a one-off for
    `e2g search`, and kept by `e2g serve` until the index changes).
    """

    __slots__ = ("_spans", "values")

    def __init__(self, values: array[int]) -> None:
        self.values = values
        self._spans: list[tuple[int, int]] | None = None

    def within(self, low: int, high: int) -> list[int]:
        """Document numbers dated `low`..`high` (both included), in order."""
        values = self.values
        found: list[int] = []
        for start, end, least, most in self._overlapping(low, high):
            if low <= least and most <= high:
                found.extend(range(start, end))
            else:
                found.extend(n for n in range(start, end) if low <= values[n] <= high)
        return found

    def at_most(self, low: int, high: int) -> int:
        """An upper bound of len(within(low, high)), from the summary alone."""
        return sum(end - start for start, end, _, _ in self._overlapping(low, high))

    def _overlapping(self, low: int, high: int) -> Iterator[tuple[int, int, int, int]]:
        """(first document, end, lowest date, highest date) of each span that has a
        date in `low`..`high`."""
        size = len(self.values)
        for number, (least, most) in enumerate(self._summary()):
            if most >= low and least <= high:
                start = number * SPAN
                yield start, min(start + SPAN, size), least, most

    def _summary(self) -> list[tuple[int, int]]:
        if self._spans is None:
            values = self.values
            self._spans = [
                (min(part), max(part))
                for part in (
                    values[start : start + SPAN]
                    for start in range(0, len(values), SPAN)
                )
            ]
        return self._spans


# --- the index ------------------------------------------------------------------------

# What a broken or foreign index directory can throw while opening (an unpickling
# schema, a truncated TOC, a class renamed since): all mean "rebuild it".
_BROKEN = (
    whoosh.index.IndexError,
    OSError,
    EOFError,
    ValueError,
    TypeError,
    AttributeError,
    ImportError,
    KeyError,
    struct.error,
    pickle.UnpicklingError,
)


class Fulltext:
    """An open full-text index directory: searches, counts, and hands out writers."""

    def __init__(self, directory: Path, index: whoosh.index.Index) -> None:
        self.directory = directory
        self._index = index
        self._searcher: Searcher | None = None
        self._columns: _Columns | None = None  # the columns of self._searcher

    @classmethod
    def open(cls, directory: Path, *, create: bool = True) -> Fulltext:
        """Open the index in `directory`, creating an empty one if allowed and absent.

        Raises IndexError_ when the index is missing (and `create` is false), broken,
        or written by an incompatible e2g: `e2g reindex` rebuilds it from the store.
        """
        try:
            if whoosh.index.exists_in(str(directory)):
                _check_sidecar(directory)
                return cls(directory, _retrying(whoosh.index.open_dir, str(directory)))
            if not create:
                raise errors.IndexError_(
                    f"no full-text index in {directory}; run `e2g reindex` to build it"
                )
            directory.mkdir(parents=True, exist_ok=True)
            index = whoosh.index.create_in(str(directory), _schema())
            _write_sidecar(directory, IndexMark())
            return cls(directory, index)
        except _BROKEN as error:
            raise errors.IndexError_(
                f"the full-text index in {directory} is unusable ({error}); "
                "run `e2g reindex` to rebuild it"
            ) from error

    def last_seq(self) -> int:
        """The highest store sequence number committed to this index (0 when empty)."""
        return self.mark().seq

    def mark(self) -> IndexMark:
        """How far the committed index follows the store."""
        return _read_sidecar(self.directory)

    def lag(self, store: Store) -> int:
        """How many of `store`'s changes the committed index does not hold yet."""
        mark = self.mark()
        return store.index_lag(last_seq=mark.seq, last_change=mark.change)

    def seqs(self) -> list[int]:
        """The seq of every live document, ascending, repeats kept (a consistency
        check; memory grows with the index)."""
        with self._index.searcher() as searcher:
            return sorted(seq for _, seq in _live_seqs(searcher.reader()))

    def count(self) -> int:
        return int(self._index.doc_count())

    def writer(self, *, wait: float = 0.0) -> FulltextWriter:
        """A writer for one or more batches; raises IndexError_ if another one is
        still open after `wait` seconds."""
        return FulltextWriter(self, wait=wait)

    def search(
        self, query: str, *, limit: int = 20, offset: int = 0, sort: str = "date"
    ) -> tuple[list[Found], int]:
        """Hits `offset`..`offset+limit` and the total; newest first or by relevance.

        Raises QueryError for a query that cannot be parsed or a bad sort/limit.
        """
        if sort not in SORTS:
            raise errors.QueryError(f"unknown sort {sort!r}; expected one of {SORTS}")
        if limit < 0 or offset < 0:
            raise errors.QueryError("limit and offset must not be negative")
        plan = translate(ql.parse_query(query))
        searcher = self._fresh_searcher()
        if sort == "date" or not plan.scored:  # nothing to score: all would tie
            dates = self._dates(searcher)
            numbers, total = _newest(searcher, plan, dates, offset + limit)
            page = [(number, 0.0) for number in numbers[offset:]]
        else:
            page, total = self._relevant(searcher, plan, offset + limit)
            page = page[offset:]
        seq_of = self._columns_of(searcher).seq_of
        return [Found(seq_of(n), score) for n, score in page], total

    def _relevant(
        self, searcher: Searcher, plan: Plan, wanted: int
    ) -> tuple[list[tuple[int, float]], int]:
        """Best BM25F scores first, equal scores newest first within the page (not
        index order, which a rebuild changes). Date windows filter document numbers.

        Whoosh's own top-N collector skips low-scoring blocks; sorting by a facet
        (score, then date) would visit every match, ~20x slower on broad queries.
        """
        allowed = None
        if plan.window or plan.excluded:
            dates = self._dates(searcher)
            if plan.window:
                allowed = set(dates.within(*plan.window))
            else:
                allowed = set(range(len(dates.values)))
            for low, high in plan.excluded:
                allowed -= set(dates.within(low, high))
        for clause in plan.within:
            inside = _documents(searcher, clause, self._dates(searcher))
            allowed = inside if allowed is None else allowed & inside
        if allowed is not None and not allowed:  # Whoosh: empty filter = no filter
            return [], 0
        masked = None
        if plan.excluding is not None:
            candidates = _listed(searcher, plan.query)
            masked = _matching(searcher, plan.excluding, candidates) or None
        results = searcher.search(
            plan.query, limit=max(wanted, 1), filter=allowed, mask=masked
        )
        values = self._dates(searcher).values
        page = [(hit.docnum, float(hit.score)) for hit in results[:wanted]]
        page.sort(key=lambda pair: (-round(pair[1], 6), -values[pair[0]]))
        return page, len(results)

    def segments(self) -> int:
        """How many segments a search reads (each costs a term lookup per word)."""
        return len(self._index._segments())

    def optimize(self, *, wait: float = 0.0) -> int:
        """Merge every segment into one (what ingest never does: see FINAL_SEGMENT);
        return how many there were. Readers keep their old segments until then."""
        before = self.segments()
        if before <= 1:
            return before
        with self.writer(wait=wait) as writer:
            writer.commit(optimize=True)
        return before

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None
        self._index.close()

    def __enter__(self) -> Fulltext:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _fresh_searcher(self) -> Searcher:
        """One searcher kept open between searches, moved on to the latest commit."""
        # Not Searcher.refresh(): it reuses segment readers by segment, and so misses
        # deletions committed to a segment it already had open.
        current = self._searcher
        if current is not None and current.reader().generation() == self._generation():
            return current
        if current is not None:
            current.close()
            self._searcher = self._columns = None
        for _ in range(OPEN_ATTEMPTS):
            try:
                searcher = _retrying(self._index.searcher)
            except OSError as error:
                raise errors.IndexError_(
                    f"cannot read the full-text index in {self.directory} ({error}); "
                    "run `e2g reindex` if this persists"
                ) from error
            columns = _Columns.open(searcher)
            if columns is not None:
                self._searcher, self._columns = searcher, columns
                return searcher
            searcher.close()  # a commit merged away a segment it had not opened yet
            clock.sleep(0.05)
        raise errors.IndexError_(
            f"the full-text index in {self.directory} changed under every read; "
            "is a writer merging it? Try again"
        )

    def _columns_of(self, searcher: Searcher) -> _Columns:
        assert searcher is self._searcher and self._columns is not None
        return self._columns

    def _dates(self, searcher: Searcher) -> DateColumn:
        """The date column of `searcher`'s documents, read when it was opened."""
        return self._columns_of(searcher).dates

    def _generation(self) -> int:
        return int(self._index.latest_generation())


class _Columns:
    """A searcher's columns, opened as soon as the searcher is: every document's
    date (read whole), and each segment's seq column (read per hit).

    Whoosh opens a segment's column files only when asked, and a writer deletes
    the files of the segments its commit merged at once: a searcher that asked
    later found no column at all (a concurrent-commit test failed so, 2 in 12 runs
    under load). A segment with documents always has a seq column, so its absence
    right after opening says the segment went, and the searcher is opened again.
    The date column is opened first: a segment deleted between the two shows as a
    missing seq column too."""

    __slots__ = ("_offsets", "_readers", "dates")

    def __init__(
        self, dates: DateColumn, offsets: list[int], readers: list[Any]
    ) -> None:
        self.dates = dates
        self._offsets = offsets
        self._readers = readers

    @classmethod
    def open(cls, searcher: Searcher) -> _Columns | None:
        """The columns of `searcher`, or None when a segment is already gone."""
        offsets: list[int] = []
        readers: list[Any] = []
        try:
            dates = DateColumn(_date_values(searcher))
            for leaf, offset in searcher.leaf_searchers():
                reader = leaf.reader()
                if not reader.has_column("seq"):
                    if reader.doc_count_all():
                        return None
                    continue
                offsets.append(offset)
                readers.append(reader.column_reader("seq", translate=False))
        except FileNotFoundError:  # deleted between the look and the open
            return None
        return cls(dates, offsets, readers)

    def seq_of(self, number: int) -> int:
        """The seq of the document `number`."""
        segment = bisect_right(self._offsets, number) - 1
        return int(self._readers[segment][number - self._offsets[segment]])


def _retrying(opener: Callable[..., Any], *args: Any) -> Any:
    """Open again when a concurrent commit deleted the files of the generation we
    were opening (Whoosh removes merged segments at once): the next one is there."""
    for _ in range(OPEN_ATTEMPTS - 1):
        try:
            return opener(*args)
        except FileNotFoundError:
            clock.sleep(0.05)
    return opener(*args)


def _newest(
    searcher: Searcher, plan: Plan, dates: DateColumn, wanted: int
) -> tuple[list[int], int]:
    """Document numbers of the `wanted` newest matches, and how many matched.

    Whoosh's sorting collector costs a few microseconds per match in Python; reading
    the matching numbers and picking the newest from the date array is ~10x cheaper.
    A date window holding fewer documents than the rest of the query matches goes
    first: its documents come from the date column's summary, and the rest of the
    query is asked only about them (`is:patch` in one quarter at 1M messages: 35 ms
    listing every patch, 8 ms this way).
    """
    within = list(plan.within)
    values = dates.values
    if plan.window and _window_first(searcher, plan, dates, plan.window):
        matched: list[int] = _in_window(searcher, dates, plan.window)
        if not isinstance(plan.query, wq.Every):
            found = _matching(searcher, plan.query, matched)
            matched = [n for n in matched if n in found]
    elif isinstance(plan.query, wq.Every) and within:
        # `d:2019 OR d:2021` alone: start from that set, not from every document
        matched = sorted(_documents(searcher, within.pop(), dates))
    else:
        matched = _listed(searcher, plan.query)
        if plan.window:
            low, high = plan.window
            matched = [n for n in matched if low <= values[n] <= high]
    for low, high in plan.excluded:
        matched = [n for n in matched if not low <= values[n] <= high]
    for clause in within:
        inside = _documents(searcher, clause, dates)
        matched = [n for n in matched if n in inside]
    if plan.excluding is not None:
        excluded = _matching(searcher, plan.excluding, matched)
        matched = [n for n in matched if n not in excluded]
    return heapq.nlargest(wanted, matched, key=values.__getitem__), len(matched)


def _window_first(
    searcher: Searcher, plan: Plan, dates: DateColumn, window: Window
) -> bool:
    if isinstance(plan.query, wq.Every):
        return True
    estimate = int(plan.query.estimate_size(searcher.reader()))
    return dates.at_most(*window) <= estimate


def _in_window(searcher: Searcher, dates: DateColumn, window: Window) -> list[int]:
    """Live documents dated inside `window`, from the date column alone: a date-only
    query (`d:2006`) would otherwise walk every document of the index through
    Whoosh (530 ms at 1M messages; a scan of the column, ~60 ms)."""
    found = dates.within(*window)
    deleted = _deleted(searcher)
    return [n for n in found if n not in deleted] if deleted else found


def _deleted(searcher: Searcher) -> set[int]:
    deleted: set[int] = set()
    for leaf, offset in searcher.leaf_searchers():
        reader = leaf.reader()
        if reader.has_deletions():
            deleted.update(offset + n for n in reader.deleted_docs_set)
    return deleted


def _documents(searcher: Searcher, clause: ql.Clause, dates: DateColumn) -> set[int]:
    """The live documents `clause` matches, as a set: for an OR or a group holding a
    date range or a negation. Recursion is as deep as the parsed query's nesting,
    which `query.MAX_NESTING` bounds."""
    engine = _engine(clause)
    if engine is not None:
        return set(_listed(searcher, engine))
    if isinstance(clause, ql.DateRange):
        return set(_in_window(searcher, dates, _window(clause)))
    if isinstance(clause, ql.Not):
        every = set(range(len(dates.values))) - _deleted(searcher)
        return every - _documents(searcher, clause.clause, dates)
    assert isinstance(clause, ql.And | ql.Or)  # every other clause has an engine
    sets = [_documents(searcher, inner, dates) for inner in clause.clauses]
    if isinstance(clause, ql.And):
        return set.intersection(*sets)
    return set.union(*sets)


def _listed(searcher: Searcher, query: wq.Query) -> list[int]:
    """Every live document `query` matches, ascending: what `docs_for_query` yields,
    read a posting block at a time where the query is terms joined by OR and AND
    (Whoosh's matchers step one document per Python call). benchmarks/tricks.py on
    io-uring: `io_uring` (17,177 of 33,431 documents) 5.4 -> 2.9 ms, `is:patch`
    3.4 -> 1.6 ms."""
    listed: list[int] = []
    for leaf, offset in searcher.leaf_searchers():
        reader = leaf.reader()
        numbers = _block_listed(reader, query)
        if numbers is None:
            found = query.docs(leaf)
        else:
            deleted = reader.deleted_docs_set if reader.has_deletions() else ()
            found = sorted(numbers.difference(deleted))
        listed.extend([offset + number for number in found] if offset else found)
    return listed


def _block_listed(reader: IndexReader, query: wq.Query) -> set[int] | None:
    """The documents of one segment's postings that `query` names, deleted ones
    included, or None for a query other than terms, OR and AND."""
    kind = type(query)  # exactly: subclasses (And's Ordered) mean more than these
    if kind is wq.Term:
        if (query.fieldname, query.text) not in reader:
            return set()
        matcher = reader.postings(query.fieldname, query.text)
        if isinstance(matcher, FilterMatcher):  # the segment's deletions: see above
            matcher = matcher.child
        if not isinstance(matcher, W3LeafMatcher):
            return None
        return _posting_blocks(matcher)
    if (kind is wq.Or or kind is wq.And) and query.subqueries:
        sets = []
        for part in query.subqueries:
            found = _block_listed(reader, part)
            if found is None:  # listed by Whoosh's matchers then: stop listing here
                return None
            sets.append(found)
        return set.union(*sets) if kind is wq.Or else set.intersection(*sets)
    return None


def _posting_blocks(matcher: W3LeafMatcher) -> set[int]:
    """Every document number of a term's postings, a block's array at a time."""
    numbers: set[int] = set()
    while matcher.is_active():  # the block walk is private to Whoosh's codec (pinned)
        if matcher._ids is None:  # noqa: SLF001
            matcher._read_ids()  # noqa: SLF001
        numbers.update(matcher._ids)  # noqa: SLF001
        matcher._next_block()  # noqa: SLF001
    return numbers


SKIP_LIMIT = 20_000  # up to this many candidates, always test each by skipping


def _matching(searcher: Searcher, query: wq.Query, candidates: list[int]) -> set[int]:
    """Which of `candidates` `query` matches. When there are fewer candidates than
    `query` has matches, its matcher skips to each candidate (a rare word minus a
    common kind, `scripts -is:reply`, took 374 ms at 1M messages listing every
    reply); otherwise it lists its matches once."""
    if len(candidates) > max(SKIP_LIMIT, query.estimate_size(searcher.reader())):
        return set(_listed(searcher, query))
    found: set[int] = set()
    matcher = query.matcher(searcher)
    for number in sorted(candidates):
        if not matcher.is_active():
            break
        if matcher.id() < number:
            matcher.skip_to(number)
            if not matcher.is_active():
                break
        if matcher.id() == number:
            found.add(number)
    return found


class FulltextWriter:
    """Buffers one batch of documents and commits them to the index in one go.

    Holds the index's write lock from creation (so a second writer fails at once) until
    `commit` or `cancel`. It stays usable after `commit`: the next `add` or `delete`
    takes the lock again, so a writer dropped right after its commit holds nothing.
    Leaving the `with` block discards anything not committed: the pipeline commits
    explicitly, right after the store's own commit, so the index never runs ahead.
    """

    def __init__(
        self, fulltext: Fulltext, *, assume_new: bool = False, wait: float = 0.0
    ) -> None:
        self._fulltext = fulltext
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
        _write_sidecar(
            self._fulltext.directory, self._fulltext.mark() | held | (mark or held)
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
            writer.add_document(**_fields(doc))

    def _hold(self) -> None:
        if self._writer is None:
            self._writer = self._acquire()

    def _acquire(self) -> IndexWriter:
        try:
            # Separate files, not one compound file per segment: Whoosh copies each
            # part of a compound segment into memory on every open (110 ms per search
            # process at 200k messages, growing with the index); plain files are read
            # where needed.
            writer = self._fulltext._index.writer(
                limitmb=WRITER_LIMIT_MB,
                timeout=self._wait,
                delay=0.25,
                compound=False,
            )
        except LockError:
            raise errors.IndexError_(
                f"the full-text index in {self._fulltext.directory} is being written by "
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
        yield offset, _column_array(column, count), deleted


def _live_seqs(reader: IndexReader) -> Iterator[tuple[int, int]]:
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
        FulltextWriter(fulltext, assume_new=True) as writer,
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


# --- the sidecar: last_seq and the format, written after each Whoosh commit ---------


def exists(directory: Path) -> bool:
    """Whether `directory` holds an index (a cheap look, for readers)."""
    return bool(whoosh.index.exists_in(str(directory)))


def read_mark(directory: Path) -> IndexMark:
    """The committed index's mark, read without opening the index (cheap to poll)."""
    return _read_sidecar(directory)


def _read_sidecar(directory: Path) -> IndexMark:
    try:
        data = json.loads((directory / SIDECAR).read_text(encoding="utf-8"))
        # An index from before the journal: the journal started empty after it.
        return IndexMark(int(data["last_seq"]), int(data.get("last_change", 0)))
    except FileNotFoundError:
        return IndexMark()
    except (ValueError, KeyError, TypeError) as error:
        raise errors.IndexError_(
            f"{directory / SIDECAR} is unreadable ({error}); run `e2g reindex`"
        ) from error


def _check_sidecar(directory: Path) -> None:
    path = directory / SIDECAR
    if not path.exists():
        return  # a crash after Whoosh's first commit: last_seq is 0, catch-up redoes all
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != FORMAT:
        raise errors.IndexError_(
            f"the full-text index in {directory} has format {data.get('format')}, "
            f"this e2g needs {FORMAT}; run `e2g reindex`"
        )


def _write_sidecar(directory: Path, mark: IndexMark) -> None:
    """Atomically replace the sidecar (write a temp file, then rename over)."""
    temporary = directory / f".{SIDECAR}.{os.getpid()}"
    temporary.write_text(
        json.dumps(
            {"format": FORMAT, "last_seq": mark.seq, "last_change": mark.change}
        ),
        encoding="utf-8",
    )
    temporary.replace(directory / SIDECAR)
