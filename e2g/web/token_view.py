"""What the token page shows of a `TokenResult`: each line cut into plain text and
coloured spans, and a legend entry per commit.

Colours are CSS classes, never inline styles (the CSP forbids those): `c0`..`c15`
by commit (the terminal's rule, `e2g.cli.tokens.colour`: the sha's first 7 hex
digits modulo 16) or by author (the same on a hash of the address), and `a0`..`a7`
by age, from the oldest commit shown to the newest. Pure: no IO, no framework.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple

if TYPE_CHECKING:
    from e2g.api.blame import Review
    from e2g.api.tokens import Span, TokenResult

ColourBy = Literal["commit", "author", "age"]
COLOURS = 16  # c0..c15
AGES = 8  # a0 (oldest) .. a7 (newest)


class Piece(NamedTuple):
    """Part of a line: a span of one commit (`sha`), or text between spans (None)."""

    text: str
    sha: str | None


class Line(NamedTuple):
    number: int
    pieces: tuple[Piece, ...]


class Entry(NamedTuple):
    """One commit of the legend, with what a span of it shows on hover."""

    review: Review
    colour: str  # the CSS class in the chosen colouring
    cell: str  # the review in one line
    title: str  # short sha, subject and review: the spans' hover text
    replies: int
    reviewers: tuple[str, ...]


class Author(NamedTuple):
    name: str
    colour: str
    commits: int


class TokenView(NamedTuple):
    lines: tuple[Line, ...]
    entries: dict[str, Entry]  # by sha, newest commit first
    authors: tuple[Author, ...]  # for the legend when colouring by author


def palette(key: str) -> int:
    """The colour (0..15) of a commit's sha, as the terminal picks it."""
    try:
        return int(key[:7], 16) % COLOURS
    except ValueError:
        return 0


def author_colour(email: str) -> int:
    """A stable colour for an author: the palette rule on a hash of the address."""
    digest = hashlib.sha1(email.strip().lower().encode("utf-8", "replace"))
    return palette(digest.hexdigest())


def line_pieces(text: str, spans: Sequence[Span]) -> tuple[Piece, ...]:
    """`text` cut at its spans (columns from 1, in characters): the spans coloured,
    what lies between them (whitespace) plain. A span that does not fit the line
    where it says is shown as plain text, never dropped."""
    pieces: list[Piece] = []
    at = 0
    for span in spans:
        start = span.column - 1
        end = start + len(span.text)
        if start < at or text[start:end] != span.text:
            continue
        if start > at:
            pieces.append(Piece(text[at:start], None))
        pieces.append(Piece(span.text, span.sha))
        at = end
    if at < len(text):
        pieces.append(Piece(text[at:], None))
    return tuple(pieces)


def _ages(reviews: Sequence[Review]) -> dict[str, int]:
    """Each commit's age bucket: 0 for the oldest shown, AGES - 1 for the newest."""
    stamps = {
        review.commit.sha: review.commit.author_date.timestamp() for review in reviews
    }
    if not stamps:
        return {}
    oldest, newest = min(stamps.values()), max(stamps.values())
    if newest <= oldest:
        return dict.fromkeys(stamps, AGES - 1)
    return {
        sha: min(AGES - 1, int((stamp - oldest) / (newest - oldest) * AGES))
        for sha, stamp in stamps.items()
    }


def token_view(
    result: TokenResult, *, by: ColourBy, cell: Callable[[Review], str]
) -> TokenView:
    """The page's lines and legend for `result`, coloured `by` commit, author or age."""
    reviews = sorted(
        result.reviews.values(),
        key=lambda review: review.commit.author_date.timestamp(),
        reverse=True,
    )
    ages = _ages(reviews)
    entries: dict[str, Entry] = {}
    authors: dict[str, Author] = {}
    for review in reviews:
        commit = review.commit
        if by == "age":
            colour = f"a{ages[commit.sha]}"
        elif by == "author":
            colour = f"c{author_colour(commit.author.email)}"
        else:
            colour = f"c{palette(commit.sha)}"
        summary = cell(review)
        entries[commit.sha] = Entry(
            review=review,
            colour=colour,
            cell=summary,
            title=f"{commit.sha[:8]} {commit.subject} · {summary}",
            replies=sum(posting.replies for posting in review.postings),
            reviewers=tuple(
                dict.fromkeys(
                    reviewer
                    for posting in review.postings
                    for reviewer in posting.reviewers
                )
            ),
        )
        key = commit.author.email.strip().lower()
        known = authors.get(key)
        authors[key] = Author(
            name=known.name if known else commit.author.name or commit.author.email,
            colour=f"c{author_colour(commit.author.email)}",
            commits=(known.commits if known else 0) + 1,
        )
    lines = tuple(
        Line(number, line_pieces(text, spans))
        for number, text, spans in result.line_spans()
    )
    ranked = sorted(authors.values(), key=lambda author: (-author.commits, author.name))
    return TokenView(lines=lines, entries=entries, authors=tuple(ranked))
