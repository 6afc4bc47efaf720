"""The query language (e2g.index.query) and text analysis (e2g.index.analysis): pure, no index needed."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from e2g.errors import QueryError
from e2g.index import analysis
from e2g.index import query as ql
from e2g.index.query import (
    DateRange,
    Field,
    KindIs,
    Match,
    Not,
    Query,
    VersionIs,
    parse_query,
)


@pytest.mark.parametrize(
    ("text", "clause"),
    [
        ("s:slab", Match(Field.SUBJECT, "slab")),
        ("subject:slab", Match(Field.SUBJECT, "slab")),
        ("f:axboe", Match(Field.FROM, "axboe")),
        ("from:axboe@kernel.dk", Match(Field.FROM, "axboe@kernel.dk")),
        ("file:mm/slab.c", Match(Field.FILE, "mm/slab.c")),
        (
            "list:io-uring.vger.kernel.org",
            Match(Field.LIST, "io-uring.vger.kernel.org"),
        ),
        ("l:io-uring", Match(Field.LIST, "io-uring")),
        ("is:patch", KindIs("patch")),
        ("is:Cover", KindIs("cover")),
        ("v:2", VersionIs(2)),
        ("has:diff", ql.Has("diff")),
        ("has:DIFF", ql.Has("diff")),
        ("mm:", Match(Field.TEXT, "mm:")),
        ("net-next", Match(Field.TEXT, "net-next")),
        ("S:Slab", Match(Field.SUBJECT, "Slab")),
        ('s:"use after free"', Match(Field.SUBJECT, "use after free", phrase=True)),
        ('"use after free"', Match(Field.TEXT, "use after free", phrase=True)),
        ("http://example.org/x", Match(Field.TEXT, "http://example.org/x")),
    ],
)
def test_every_prefix(text: str, clause: object) -> None:
    assert parse_query(text) == Query((clause,))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("d:2019-01-01..2019-06-30", DateRange(date(2019, 1, 1), date(2019, 6, 30))),
        ("d:2019-01-01..", DateRange(date(2019, 1, 1), None)),
        ("d:..2019-06-30", DateRange(None, date(2019, 6, 30))),
        ("d:2019-01-01", DateRange(date(2019, 1, 1), date(2019, 1, 1))),
        ("date:2019-02", DateRange(date(2019, 2, 1), date(2019, 2, 28))),
        ("d:2020", DateRange(date(2020, 1, 1), date(2020, 12, 31))),
        ("d:2019..2020-02", DateRange(date(2019, 1, 1), date(2020, 2, 29))),
    ],
)
def test_dates(text: str, expected: DateRange) -> None:
    assert parse_query(text).clauses == (expected,)


def test_clauses_and_negation() -> None:
    parsed = parse_query('  mm: -is:reply  f:"Jens Axboe" -f:bot ')
    assert parsed.clauses == (
        Match(Field.TEXT, "mm:"),
        Not(KindIs("reply")),
        Match(Field.FROM, "Jens Axboe", phrase=True),
        Not(Match(Field.FROM, "bot")),
    )


def test_a_hyphen_inside_a_word_is_not_negation() -> None:
    assert parse_query("5.10-rc1").clauses == (Match(Field.TEXT, "5.10-rc1"),)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty query"),
        ("   ", "empty query"),
        ('s:"use after', "unbalanced quote"),
        ('foo "bar', "column 5"),
        ("d:garbage", "d:garbage is not a date"),
        ("d:2019-02-30", "not a real date"),
        ("d:2019-13", "not a real date"),
        ("d:..", "needs at least one date"),
        ("d:2020-01-01..2019-01-01", "ends before it starts"),
        ("is:bogus", "unknown is:bogus; expected one of patch, cover, pull, reply"),
        ("x:foo", "unknown prefix x: (known: d:, date:"),
        ("fix -auther:bob", 'quote it: "auther:bob"'),
        ("v:x", "v:x is not a version"),
        ("v:0", "v:0 is not a version"),
        ("s:", "s: needs a value"),
        ("fix -", "'-' must be followed"),
        ("--foo", "'--'"),
        ('a"b"', 'unexpected "'),
        ('""', "needs a value"),
        ("!!!", "no letters or digits"),
        ("has:attachment", "unknown has:attachment; expected one of diff"),
        ("x " * 70, "too many terms"),
        ("x" * 3000, "query too long"),
    ],
)
def test_parse_errors_say_what_and_where(text: str, fragment: str) -> None:
    with pytest.raises(QueryError) as raised:
        parse_query(text)
    message = str(raised.value)
    assert fragment in message
    assert "\n" not in message


def test_error_column_points_at_the_clause() -> None:
    with pytest.raises(QueryError, match=r"at column 9\)"):
        parse_query("s:slab  d:nope")


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list('ab :-".019dsfilvx\t\u00e9')), max_size=40)
)
def test_parser_raises_only_query_error_on_query_like_text(text: str) -> None:
    try:
        parsed = parse_query(text)
    except QueryError:
        return
    assert parsed.clauses


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_parser_raises_only_query_error_on_any_text(text: str) -> None:
    try:
        parse_query(text)
    except QueryError:
        pass


# --- analysis -------------------------------------------------------------------------


def test_fold_removes_case_and_accents() -> None:
    assert analysis.fold("José PÉREZ") == "jose perez"
    # letters that are not base+accent (æ, ð) stay as they are, only lower-cased
    assert analysis.fold("Ævar Arnfjörð") == "ævar arnfjorð"


def test_word_tokens_keep_compounds_and_subsystem_prefixes() -> None:
    tokens = list(analysis.word_tokens("[PATCH v2] mm/slab: fix io_uring net-next"))
    words = [word for _, word in tokens]
    for expected in ["mm/slab", "mm", "slab", "mm/slab:", "mm:", "io_uring", "io"]:
        assert expected in words
    assert "uring" in words and "net-next" in words and "next" in words
    positions = {word: position for position, word in tokens}
    # parts sit at consecutive positions so that phrases over them match
    assert positions["uring"] == positions["io"] + 1
    assert positions["fix"] == positions["slab"] + 1
    assert positions["mm:"] == positions["mm/slab"] == positions["mm"]


def test_query_words_keep_the_colon() -> None:
    assert analysis.query_words("mm:") == ["mm:"]
    assert analysis.query_words("IO_uring") == ["io_uring"]
    assert analysis.phrase_words("Use-After free") == ["use", "after", "free"]


def test_author_tokens() -> None:
    tokens = analysis.author_tokens("José Pérez", "Jose.Perez@Example.ORG")
    assert tokens == [
        "jose",
        "perez",
        "jose.perez@example.org",
        "jose.perez",
        "example.org",
    ]


def test_path_tokens_have_every_directory_prefix() -> None:
    assert analysis.path_tokens(["drivers/net/tun.c", "./mm/slab.c"]) == [
        "drivers/",
        "drivers/net/",
        "drivers/net/tun.c",
        "tun.c",
        "mm/",
        "mm/slab.c",
        "slab.c",
    ]


def test_list_tokens() -> None:
    assert analysis.list_tokens(["IO-uring.vger.kernel.org"]) == [
        "io-uring.vger.kernel.org",
        "io-uring",
    ]


@pytest.mark.parametrize(
    "text",
    ["mm: fix", "io_uring: fix", "https://lore.kernel.org/r/x", '"x:foo"', "fix 12:30"],
)
def test_a_colon_in_text_is_not_a_prefix(text: str) -> None:
    """A subsystem and a space, a URL, a quoted phrase, a time: searched as text."""
    assert parse_query(text).clauses


# --- OR, AND, NOT and parentheses -----------------------------------------------------

ETHTOOL = Match(Field.TEXT, "ethtool")
ALICE = Match(Field.TEXT, "alice")


@pytest.mark.parametrize(
    ("text", "clauses"),
    [
        ("ethtool OR alice", (ql.Or((ETHTOOL, ALICE)),)),
        ("ethtool AND alice", (ETHTOOL, ALICE)),
        ("ethtool alice", (ETHTOOL, ALICE)),  # AND is implied
        ("NOT is:reply", (Not(KindIs("reply")),)),
        ("-is:reply", (Not(KindIs("reply")),)),
        ("NOT NOT ethtool", (ETHTOOL,)),
        ("ethtool or alice", (ETHTOOL, Match(Field.TEXT, "or"), ALICE)),
        ("ethtool and", (ETHTOOL, Match(Field.TEXT, "and"))),
        (
            "s:mm AND (f:alice OR f:bob)",
            (
                Match(Field.SUBJECT, "mm"),
                ql.Or((Match(Field.FROM, "alice"), Match(Field.FROM, "bob"))),
            ),
        ),
        # NOT binds tighter than AND, which binds tighter than OR
        (
            "ethtool alice OR NOT v:2",
            (ql.Or((ql.And((ETHTOOL, ALICE)), Not(VersionIs(2)))),),
        ),
        ("-(ethtool OR alice)", (Not(ql.Or((ETHTOOL, ALICE))),)),
        ("NOT (ethtool alice)", (Not(ql.And((ETHTOOL, ALICE))),)),
        ("(ethtool (alice))", (ETHTOOL, ALICE)),  # a group in a join is flattened
        ("a OR (b OR c)", (ql.Or(tuple(Match(Field.TEXT, w) for w in "abc")),)),
        ("kmalloc() OR alice", (ql.Or((Match(Field.TEXT, "kmalloc()"), ALICE)),)),
        ("(f:alice)", (Match(Field.FROM, "alice"),)),
        ("NOTE ORACLE", (Match(Field.TEXT, "NOTE"), Match(Field.TEXT, "ORACLE"))),
        ('"a OR b"', (Match(Field.TEXT, "a OR b", phrase=True),)),
    ],
)
def test_boolean_operators_and_groups(text: str, clauses: tuple[object, ...]) -> None:
    assert parse_query(text).clauses == clauses


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ethtool OR", "OR needs a term after it (at column 9)"),
        ("OR ethtool", "OR needs a term before it (at column 1)"),
        ("ethtool AND", "AND needs a term after it (at column 9)"),
        ("ethtool AND OR alice", "AND needs a term after it (at column 9)"),
        ("ethtool NOT", "NOT needs a term after it (at column 9)"),
        ("(ethtool OR alice", "unbalanced '(': it is never closed (at column 1)"),
        ("s:mm (f:alice OR f:bob", "unbalanced '(': it is never closed (at column 6)"),
        ("ethtool OR alice)", "unbalanced ')': no '(' before it (at column 17)"),
        (") ethtool", "unbalanced ')': no '(' before it (at column 1)"),
        ("ethtool ()", "empty parentheses (at column 9)"),
        ("(ethtool OR)", "OR needs a term after it (at column 10)"),
        ("s:(mm OR net)", "s: takes a word or a quoted phrase, not a group"),
        ("(" * 17 + "a" + ")" * 17, "parentheses nested too deeply (at most 16)"),
        ("ethtool -)", "'-' must be followed by a term to exclude"),
    ],
)
def test_bad_boolean_queries_say_what_and_where(text: str, message: str) -> None:
    with pytest.raises(QueryError) as raised:
        parse_query(text)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_nesting_up_to_the_bound_parses() -> None:
    deepest = "(" * ql.MAX_NESTING + "a" + ")" * ql.MAX_NESTING
    assert parse_query(deepest).clauses == (Match(Field.TEXT, "a"),)


@pytest.mark.parametrize(
    "text",
    [
        "(" * 5000,
        ")" * 5000,
        "-(" * 900,
        "NOT " * 400 + "a",
        "(a OR " * 300 + "b" + ")" * 300,
    ],
)
def test_hostile_nesting_is_a_clear_error_or_a_query(text: str) -> None:
    """No recursion blow-up on untrusted queries: one clear error, or a query."""
    try:
        parse_query(text[: ql.MAX_QUERY])
    except QueryError as error:
        assert "\n" not in str(error)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["(", ")", "-(", "OR", "AND", "NOT", "or", "a", "s:b", "-c", "d:2019", " "]
        ),
        max_size=30,
    )
)
def test_boolean_parser_raises_only_query_error(pieces: list[str]) -> None:
    text = " ".join(pieces)
    try:
        parsed = parse_query(text)
    except QueryError as error:
        assert "(at column " in str(error) or "empty query" in str(error)
        return
    assert parsed.clauses


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('()- ORANDTab:"s\t')), max_size=60))
def test_parser_raises_only_query_error_on_operator_soup(text: str) -> None:
    try:
        parse_query(text)
    except QueryError:
        pass
