"""The search query language: text in, a small syntax tree out.

Pure functions on str, no IO and no Whoosh: `parse_query` turns what a user types into a
`Query` (an implicit AND of clauses), and `index.fulltext` translates that tree into
its engine's queries. Keeping the grammar here means the engine can change (SQLite
FTS5, tantivy) without users relearning anything. What a word is (folding, compounds,
paths) is `index.analysis`'s.

The grammar, in the style public-inbox/lei (Xapian) users know:

    query   := any                                 what the whole query must match
    any     := all ("OR" all)*                     either side matches
    all     := unary (["AND"] unary)*              every side matches (AND is implied)
    unary   := ("NOT" | "-")* (group | clause)     NOT and "-" negate
    group   := "(" any ")"                         at most MAX_NESTING deep
    clause  := prefix ":" value | value
    value   := word | '"' phrase '"'

Precedence: NOT binds tightest, then AND, then OR: `a b OR c` is `(a AND b) OR c`.
Only upper-case OR, AND and NOT are operators; `or` and `and` are words.

    s: subject:  subject words or phrase         f: from:   author name or address
    file:        a path, a directory, or a prefix of either ending in '*' (net/fro*)
    list: l:     a list id (or its name)
    d: date:     2019-01-01, 2019-01-01..2019-06-30, 2019-01-01.., ..2019-06-30
                 (each end may also be a month 2019-06 or a year 2019)
    is:          patch (a posting: a diff not sent as a Re: reply), cover, pull,
                 reply (a Re: reply with a diff too), other
    has:         diff (any message carrying a diff, replies included)
    v:           the patch version, a positive integer

A word with no known prefix (`mm:`, `net-next`, `io_uring`) is free text: it matches
subjects first, then bodies when they are indexed. Anything that cannot be parsed raises
`errors.QueryError` with one line saying what is wrong and at which column; nothing else
ever escapes `parse_query`.

The lexer is a small state machine over the characters, one token at a time:
  between tokens    skip whitespace; "(" and ")" are tokens; "-(" is a NOT; OR, AND
                    and NOT followed by whitespace, a parenthesis or the end are
                    operators; anything else starts a clause
  clause start      "-" marks it negated; `name:` with a known name starts a prefixed
                    value; anything else starts a free value
  value             '"' starts a phrase that runs to the next '"' (an unclosed quote is
                    an error); otherwise the value runs to the next whitespace, or to a
                    ")" that closes no "(" of its own (`kmalloc()` stays one word), and a
                    '"' inside it is an error (a phrase must be quoted as a whole)
Tokens then go to a recursive-descent parser whose depth MAX_NESTING bounds.
"""

from __future__ import annotations

import calendar
import re
from datetime import date
from enum import StrEnum
from typing import NamedTuple

from e2g.errors import QueryError

# Bounds on what a user (or a web form) can hand us: a query is small by nature.
MAX_QUERY = 2000
MAX_CLAUSES = 64
MAX_VERSION = 10_000
MAX_NESTING = 16  # parentheses inside parentheses: a query from the web is untrusted

KINDS = ("patch", "cover", "pull", "reply", "other")
FEATURES = ("diff",)  # has:


class Field(StrEnum):
    """What a clause searches."""

    TEXT = "text"  # free words: subject first, then body
    SUBJECT = "subject"
    FROM = "from"
    FILE = "file"
    LIST = "list"
    DATE = "date"
    KIND = "kind"
    HAS = "has"
    VERSION = "version"


PREFIXES: dict[str, Field] = {
    "s": Field.SUBJECT,
    "subject": Field.SUBJECT,
    "f": Field.FROM,
    "from": Field.FROM,
    "file": Field.FILE,
    "l": Field.LIST,
    "list": Field.LIST,
    "d": Field.DATE,
    "date": Field.DATE,
    "is": Field.KIND,
    "has": Field.HAS,
    "v": Field.VERSION,
}


class Match(NamedTuple):
    """A word or phrase to find in a text-like field (text, subject, from, file, list)."""

    field: Field
    value: str
    phrase: bool = False


class DateRange(NamedTuple):
    """Messages dated from `start` to `end`, both whole days and inclusive; None is open."""

    start: date | None
    end: date | None


class KindIs(NamedTuple):
    kind: str  # one of KINDS


class Has(NamedTuple):
    feature: str  # one of FEATURES


class VersionIs(NamedTuple):
    version: int


Term = Match | DateRange | KindIs | Has | VersionIs


class Not(NamedTuple):
    clause: Clause


class And(NamedTuple):
    """Every clause must match: a group in parentheses, or the sides of AND in one."""

    clauses: tuple[Clause, ...]


class Or(NamedTuple):
    """At least one clause must match."""

    clauses: tuple[Clause, ...]


Clause = Term | Not | And | Or


class Query(NamedTuple):
    """All clauses must match. At least one clause; possibly all negated. A plain
    query (no OR, no parentheses) holds only terms and negated terms."""

    clauses: tuple[Clause, ...]


_PREFIX = re.compile(r"([A-Za-z]+):")
_KNOWN = sorted(f"{name}:" for name in PREFIXES)
_PERIOD = re.compile(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?")


_OPERATOR = re.compile(r"(OR|AND|NOT)(?=[\s()]|\Z)")


class _Token(NamedTuple):
    kind: str  # "(", ")", "OR", "AND", "NOT", or "term"
    column: int
    term: Term | Not | None = None


def parse_query(text: str) -> Query:
    """Parse a search query; raise QueryError (only) when it cannot be understood."""
    if len(text) > MAX_QUERY:
        raise QueryError(
            f"query too long: {len(text)} characters (at most {MAX_QUERY})"
        )
    tokens = _tokens(text)
    if not tokens:
        raise QueryError(
            "empty query: give words to search for, or a prefix such as "
            "s:, f:, file:, list:, d:, is:, has:, v:"
        )
    parsed = _Parser(tokens).parse()
    return Query(parsed.clauses if isinstance(parsed, And) else (parsed,))


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    terms = 0
    position = _skip_space(text, 0)
    while position < len(text):
        start = position
        operator = _OPERATOR.match(text, position)
        if text[position] in "()":
            tokens.append(_Token(text[position], start))
            position += 1
        elif text.startswith("-(", position):
            tokens.append(_Token("NOT", start))
            position += 1
        elif operator:
            tokens.append(_Token(operator.group(1), start))
            position = operator.end()
        else:
            if terms == MAX_CLAUSES:
                raise QueryError(f"too many terms in the query (at most {MAX_CLAUSES})")
            terms += 1
            clause, position = _parse_clause(text, position)
            tokens.append(_Token("term", start, clause))
        position = _skip_space(text, position)
    return tokens


class _Parser:
    """Recursive descent over the tokens; each group adds three frames, and groups
    nest at most MAX_NESTING deep, so no query can exhaust the stack."""

    def __init__(self, tokens: list[_Token]) -> None:
        self._tokens = tokens
        self._at = 0

    def parse(self) -> Clause:
        parsed = self._any(0)
        if self._at < len(self._tokens):  # _any stops early only at a ")"
            raise _error("unbalanced ')': no '(' before it", self._peek_column())
        return parsed

    def _peek(self) -> str | None:
        return self._tokens[self._at].kind if self._at < len(self._tokens) else None

    def _peek_column(self) -> int:
        return self._tokens[self._at].column

    def _any(self, depth: int) -> Clause:
        clauses = [self._all(depth)]
        while self._peek() == "OR":
            self._operand_after(self._tokens[self._at])
            clauses.append(self._all(depth))
        return _joined(Or, clauses)

    def _all(self, depth: int) -> Clause:
        clauses = [self._unary(depth)]
        while self._peek() not in (None, ")", "OR"):
            if self._peek() == "AND":
                self._operand_after(self._tokens[self._at])
            clauses.append(self._unary(depth))
        return _joined(And, clauses)

    def _operand_after(self, operator: _Token) -> None:
        """Step over a binary operator, which must be followed by something to join."""
        self._at += 1
        if self._peek() in (None, ")", "OR", "AND"):
            raise _error(f"{operator.kind} needs a term after it", operator.column)

    def _unary(self, depth: int) -> Clause:
        negations = 0
        while self._peek() == "NOT":
            token = self._tokens[self._at]
            self._at += 1
            if self._peek() in (None, ")", "OR", "AND"):
                raise _error(f"{token.kind} needs a term after it", token.column)
            negations += 1
        token = self._tokens[self._at]
        self._at += 1
        if token.kind in ("OR", "AND"):
            raise _error(f"{token.kind} needs a term before it", token.column)
        if token.kind == ")":
            raise _error("unbalanced ')': no '(' before it", token.column)
        clause = token.term if token.term is not None else self._group(token, depth)
        for _ in range(negations % 2):
            clause = clause.clause if isinstance(clause, Not) else Not(clause)
        return clause

    def _group(self, opening: _Token, depth: int) -> Clause:
        if depth == MAX_NESTING:
            raise _error(
                f"parentheses nested too deeply (at most {MAX_NESTING})",
                opening.column,
            )
        if self._peek() == ")":
            raise _error("empty parentheses", opening.column)
        if self._peek() is None:
            raise _error("unbalanced '(': it is never closed", opening.column)
        inside = self._any(depth + 1)
        if self._peek() != ")":
            raise _error("unbalanced '(': it is never closed", opening.column)
        self._at += 1
        return inside


def _joined(kind: type[And] | type[Or], clauses: list[Clause]) -> Clause:
    """One clause, or the clauses joined, a nested join of the same kind flattened."""
    if len(clauses) == 1:
        return clauses[0]
    flat: list[Clause] = []
    for clause in clauses:
        flat.extend(clause.clauses if isinstance(clause, kind) else (clause,))
    return kind(tuple(flat))


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def _parse_clause(text: str, position: int) -> tuple[Term | Not, int]:
    """One clause starting at `position` (not whitespace); returns it and the end."""
    negated = text[position] == "-"
    if negated:
        position += 1
        if position == len(text) or text[position].isspace() or text[position] == ")":
            raise _error("'-' must be followed by a term to exclude", position)
        if text[position] == "-":
            raise _error("'--' is not a term; use one '-' to exclude", position)
    start = position
    field = Field.TEXT
    prefix = _PREFIX.match(text, position)
    if prefix and prefix.group(1).lower() in PREFIXES:
        field = PREFIXES[prefix.group(1).lower()]
        position = prefix.end()
        if text.startswith("(", position):
            name = prefix.group(0)
            raise _error(
                f"{name} takes a word or a quoted phrase, not a group; "
                f"write ({name}a OR {name}b)",
                start,
            )
    elif prefix is not None and _unknown_prefix(text, prefix):
        # `x:foo` would silently find nothing; `mm: fix` (a subsystem, then a
        # space), a URL and a quoted "x:foo" are searched as text.
        raise _error(
            f"unknown prefix {prefix.group(0)} (known: {', '.join(_KNOWN)}); "
            f'to search for the text, quote it: "{text[start:].split()[0]}"',
            start,
        )
    value, phrase, end = _read_value(text, position)
    if not value:
        label = text[start:position] or '""'
        raise _error(f"{label} needs a value", start)
    clause = _make_clause(field, value, phrase=phrase, column=start)
    return (Not(clause) if negated else clause), end


def _unknown_prefix(text: str, prefix: re.Match[str]) -> bool:
    after = text[prefix.end() : prefix.end() + 2]
    return bool(after) and not after[0].isspace() and after != "//"


def _read_value(text: str, position: int) -> tuple[str, bool, int]:
    """The word or quoted phrase at `position`: (value, is_phrase, end)."""
    if position < len(text) and text[position] == '"':
        close = text.find('"', position + 1)
        if close < 0:
            raise _error('unbalanced quote: this " is never closed', position)
        return text[position + 1 : close].strip(), True, close + 1
    end, opened = position, 0
    while end < len(text) and not text[end].isspace():
        if text[end] == '"':
            raise _error('unexpected " inside a word; quote the whole phrase', end)
        if text[end] == "(":
            opened += 1
        elif text[end] == ")":
            if not opened:
                break  # it closes a group: `(f:alice OR f:bob)`
            opened -= 1
        end += 1
    return text[position:end], False, end


def _make_clause(field: Field, value: str, *, phrase: bool, column: int) -> Term:
    if field is Field.DATE:
        return _parse_dates(value, column)
    if field is Field.KIND:
        kind = value.lower()
        if kind not in KINDS:
            raise _error(
                f"unknown is:{value}; expected one of {', '.join(KINDS)}", column
            )
        return KindIs(kind)
    if field is Field.HAS:
        feature = value.lower()
        if feature not in FEATURES:
            raise _error(
                f"unknown has:{value}; expected one of {', '.join(FEATURES)}", column
            )
        return Has(feature)
    if field is Field.VERSION:
        if (
            not (value.isascii() and value.isdigit())
            or not 0 < int(value) <= MAX_VERSION
        ):
            raise _error(
                f"v:{value} is not a version; expected a number like v:2", column
            )
        return VersionIs(int(value))
    if not any(character.isalnum() for character in value):
        raise _error(f"{value!r} has no letters or digits to search for", column)
    return Match(field, value, phrase=phrase)


def _parse_dates(value: str, column: int) -> DateRange:
    """`d:` values: a day, month or year, or a range of them with either end open."""
    if ".." not in value:
        first_day, last_day = _parse_period(value, column)
        return DateRange(first_day, last_day)
    first, _, last = value.partition("..")
    if not first and not last:
        raise _error("d:.. needs at least one date, as in d:2019-01-01..", column)
    start = _parse_period(first, column)[0] if first else None
    end = _parse_period(last, column)[1] if last else None
    if start and end and start > end:
        raise _error(f"d:{value} ends before it starts", column)
    return DateRange(start, end)


def _parse_period(text: str, column: int) -> tuple[date, date]:
    """'2019' -> the whole year, '2019-06' -> June, '2019-06-30' -> that day."""
    match = _PERIOD.fullmatch(text)
    if not match:
        raise _error(
            f"d:{text} is not a date; expected 2019-01-01, a range "
            "2019-01-01..2019-06-30, or an open range 2019-01-01.. or ..2019-06-30",
            column,
        )
    year, month, day = match.groups()
    try:
        if day is not None:
            single = date(int(year), int(month), int(day))
            return single, single
        if month is not None:
            last_day = calendar.monthrange(int(year), int(month))[1]
            return date(int(year), int(month), 1), date(int(year), int(month), last_day)
        return date(int(year), 1, 1), date(int(year), 12, 31)
    except (ValueError, calendar.IllegalMonthError) as error:
        raise _error(f"d:{text} is not a real date ({error})", column) from None


def _error(message: str, position: int) -> QueryError:
    return QueryError(f"{message} (at column {position + 1})")
