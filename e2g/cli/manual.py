"""`e2g help TOPIC`: reference pages read in the terminal, as `git help` offers.

`e2g help query` is the query language's page below: only text, its grammar lives in
`e2g.index.query`, and tests/cli/test_manual.py checks that this page names every
prefix and value it knows. `e2g help COMMAND` is the command's reference page
(docs/commands/COMMAND.md, read through `e2g.reference`), as written.
"""

from __future__ import annotations

from typing import Annotated

import typer

from e2g import reference
from e2g.cli import output

QUERY = """\
e2g search QUERY -- the query language (the search page and /api/v1/search too)

TERMS
    frob leak            both words, in subjects, then in bodies when indexed
    "use after free"     a phrase
    mm:  io_uring/poll:  a subsystem prefix of a subject, and its parents
    s:WORD  subject:     subject words (s:"a phrase" too)
    f:WORD  from:        author name, address, its local part or domain
    file:PATH            a path (file:mm/slab.c), a directory (file:mm/), a base
                         name (file:slab.c), or a prefix of any of them ending in
                         '*' (file:net/fro* finds net/frobnicate.c)
    list:ID  l:NAME      a list id (io-uring.vger.kernel.org) or its name (io-uring)
    d:  date:            2019-01-01, 2019-06, 2019, a range 2019-01..2019-06-30, or an
                         open one 2019.. ..2019-06; a message with no usable date is
                         in no range
    is:KIND              patch (a posting: a message with a diff that is not a Re:
                         reply), cover, pull, reply (replies that carry a diff too),
                         other
    has:diff             any message carrying a diff, replies included
                         (has:diff is:reply: fix-ups offered in reviews)
    v:N                  patch version N

OPERATORS
    a b      a AND b     both (AND is implied between terms)
    a OR b               either
    NOT a    -a          not a; -(a OR b) too
    ( ... )              a group, at most 16 deep

    NOT binds tighter than AND, and AND tighter than OR: `a b OR c` is
    `(a AND b) OR c`. Only upper-case OR, AND and NOT are operators; `or` and
    `and` are words. A prefix takes one word or a quoted phrase: write
    (s:mm OR s:net), not s:(mm OR net).

ERRORS
    An unknown prefix (x:foo), an unknown is: or has: value, an unbalanced quote
    or parenthesis, or an operator with nothing to join is one line naming the
    column; the command exits with 2 (the API answers 400, code bad-query). To
    search for text with a colon, quote it: "x:foo".

EXAMPLES
    e2g search 'ethtool OR alice'
    e2g search 's:mm AND (f:alice OR f:bob) d:2024..'
    e2g search 'NOT is:reply file:net/fro*'
    e2g search frob -is:reply         (a -clause is no option: it reads as NOT)
"""

TOPICS = {"query": QUERY}


def topics() -> list[str]:
    """The query language, then every reference page (the commands, and `e2g`)."""
    return [*TOPICS, *reference.names()]


def help_topic(
    topic: Annotated[
        str | None,
        typer.Argument(
            help="query (the search query language), a command's name, or e2g "
            "(global options, exit codes).",
            show_default=False,
            metavar="TOPIC",
        ),
    ] = None,
) -> None:
    """Show a reference page: `e2g help query` for the search query language,
    `e2g help COMMAND` for a command's."""
    if topic is None:
        output.out(
            f"topics: {', '.join(topics())} (e2g help TOPIC); e2g -h for commands"
        )
        return
    name = topic.lower()
    page = TOPICS.get(name) or reference.text(name)
    if page is None:
        raise typer.BadParameter(
            f"no help topic {topic!r}; topics: {', '.join(topics())}",
            param_hint="TOPIC",
        )
    with output.paged():
        output.out(page.rstrip("\n"))


def register(app: typer.Typer) -> None:
    app.command("help")(help_topic)
