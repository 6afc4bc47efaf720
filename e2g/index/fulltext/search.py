"""`Fulltext`: the index's handle (open, catch-up mark, writer, optimize) and its
searches, newest first or by relevance.

Newest-first searches list the matching documents from the posting blocks and
the date column, never scoring every hit; readers never block, as Whoosh locks
writers only and a searcher sees the last commit."""

from __future__ import annotations

import heapq
import pickle
import struct
import time as clock
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import whoosh.index
import whoosh.query as wq
from whoosh.codec.whoosh3 import W3LeafMatcher
from whoosh.matching.wrappers import FilterMatcher
from whoosh.reading import IndexReader
from whoosh.searching import Searcher

from e2g import errors
from e2g.index import query as ql
from e2g.index.fulltext.columns import Columns, DateColumn
from e2g.index.fulltext.query import Plan, Window, engine_query, translate, window_of
from e2g.index.fulltext.schema import build_schema
from e2g.index.fulltext.sidecar import (
    IndexMark,
    check_sidecar,
    read_sidecar,
    write_sidecar,
)
from e2g.index.fulltext.write import FulltextWriter, live_seqs

if TYPE_CHECKING:
    from e2g.index.store import Store


SORTS = ("date", "relevance")
OPEN_ATTEMPTS = 5  # a writer's commit can delete the files we are opening


class Found(NamedTuple):
    """A document a search found: its message's store seq, and its score (0.0 by
    date)."""

    seq: int
    score: float


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
        self._columns: Columns | None = None  # the columns of self._searcher

    @classmethod
    def open(cls, directory: Path, *, create: bool = True) -> Fulltext:
        """Open the index in `directory`, creating an empty one if allowed and absent.

        Raises IndexError_ when the index is missing (and `create` is false), broken,
        or written by an incompatible e2g: `e2g reindex` rebuilds it from the store.
        """
        try:
            if whoosh.index.exists_in(str(directory)):
                check_sidecar(directory)
                return cls(directory, _retrying(whoosh.index.open_dir, str(directory)))
            if not create:
                raise errors.IndexError_(
                    f"no full-text index in {directory}; run `e2g reindex` to build it"
                )
            directory.mkdir(parents=True, exist_ok=True)
            index = whoosh.index.create_in(str(directory), build_schema())
            write_sidecar(directory, IndexMark())
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
        return read_sidecar(self.directory)

    def lag(self, store: Store) -> int:
        """How many of `store`'s changes the committed index does not hold yet."""
        mark = self.mark()
        return store.index_lag(last_seq=mark.seq, last_change=mark.change)

    def seqs(self) -> list[int]:
        """The seq of every live document, ascending, repeats kept (a consistency
        check; memory grows with the index)."""
        with self._index.searcher() as searcher:
            return sorted(seq for _, seq in live_seqs(searcher.reader()))

    def count(self) -> int:
        return int(self._index.doc_count())

    def writer(self, *, wait: float = 0.0, assume_new: bool = False) -> FulltextWriter:
        """A writer for one or more batches; raises IndexError_ if another one is
        still open after `wait` seconds. `assume_new`: a rebuild's fresh index,
        where no document has a seq to replace."""
        return FulltextWriter(
            self.directory, self._index, wait=wait, assume_new=assume_new
        )

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
            columns = Columns.open(searcher)
            if columns is not None:
                self._searcher, self._columns = searcher, columns
                return searcher
            searcher.close()  # a commit merged away a segment it had not opened yet
            clock.sleep(0.05)
        raise errors.IndexError_(
            f"the full-text index in {self.directory} changed under every read; "
            "is a writer merging it? Try again"
        )

    def _columns_of(self, searcher: Searcher) -> Columns:
        assert searcher is self._searcher and self._columns is not None
        return self._columns

    def _dates(self, searcher: Searcher) -> DateColumn:
        """The date column of `searcher`'s documents, read when it was opened."""
        return self._columns_of(searcher).dates

    def _generation(self) -> int:
        return int(self._index.latest_generation())


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
    engine = engine_query(clause)
    if engine is not None:
        return set(_listed(searcher, engine))
    if isinstance(clause, ql.DateRange):
        return set(_in_window(searcher, dates, window_of(clause)))
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
