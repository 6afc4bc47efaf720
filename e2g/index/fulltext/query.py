"""The query language's tree (`e2g.index.query`) as Whoosh queries: a `Plan` of
what the index answers and what the date column narrows."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, time
from typing import NamedTuple

import whoosh.query as wq

from e2g.index import analysis
from e2g.index import query as ql

# --- query translation: index.query's tree to Whoosh queries -------------------------

Window = tuple[int, int]  # inclusive bounds on the date column, in seconds


class Plan(NamedTuple):
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
        engine = engine_query(inner)
        if isinstance(inner, ql.DateRange):
            (excluded if negated else windows).append(window_of(inner))
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


def engine_query(clause: ql.Clause) -> wq.Query | None:
    """`clause` as one Whoosh query, or None when it holds a date range or a
    negation (a column Whoosh does not index; a Not Whoosh runs badly, see Plan)."""
    if isinstance(clause, ql.Match | ql.KindIs | ql.Has | ql.VersionIs):
        return _clause(clause)
    if isinstance(clause, ql.And | ql.Or):
        parts = [engine_query(inner) for inner in clause.clauses]
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


def window_of(clause: ql.DateRange) -> Window:
    # 0 is "undated": in no range, not even one that starts on 1970-01-01.
    low = max(_day_start(clause.start), 1) if clause.start else 1
    high = _day_start(clause.end) + 86_399 if clause.end else 2**62
    return low, high


def _day_start(day: date) -> int:
    return int(datetime.combine(day, time(0), UTC).timestamp())
