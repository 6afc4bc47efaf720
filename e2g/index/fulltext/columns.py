"""The columns a search reads whole: each document's date (newest first without
scoring) and its store seq (the key of every hit).

A searcher opens both as soon as it opens: a writer deletes the files of the
segments its commit merged away, and a column opened later would be missing."""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from typing import Any

from whoosh.searching import Searcher


def date_values(searcher: Searcher) -> array[int]:
    """The date column of every document, indexed by document number."""
    values: array[int] = array("q")
    for leaf, offset in searcher.leaf_searchers():
        reader = leaf.reader()
        values.extend([0] * (offset - len(values)))
        count = reader.doc_count_all()
        has = reader.has_column("date")
        column = reader.column_reader("date", translate=False) if has else None
        values.extend(column_array(column, count))
    return values


# Reading the column file directly: 0.5 ms instead of 106 ms for 100,000 documents,
# once per searcher, for every newest-first search (benchmarks/tricks.py).
def column_array(column: Any, count: int) -> array[int]:
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


class Columns:
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
    def open(cls, searcher: Searcher) -> Columns | None:
        """The columns of `searcher`, or None when a segment is already gone."""
        offsets: list[int] = []
        readers: list[Any] = []
        try:
            dates = DateColumn(date_values(searcher))
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
