"""`e2g blame`: each line of a file with the review of the commit that wrote it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from e2g.cli import output
from e2g.cli.context import RepoOption, options
from e2g.errors import UsageError

if TYPE_CHECKING:
    from e2g.api.blame import BlameResult, Review


def parse_range(text: str) -> tuple[int, int]:
    """`-L START,END` (or `-L LINE`, one line) as two line numbers (from 1); a
    clear error otherwise."""
    if text.strip().isdigit():
        return int(text), int(text)
    start, comma, end = text.partition(",")
    if not comma or not start.strip().isdigit() or not end.strip().isdigit():
        raise UsageError(
            f"bad line range {text!r}: give -L START,END, two line numbers (-L 10,20)"
        )
    return int(start), int(end)


def _header(review: Review) -> str:
    from e2g.render import review_cell

    commit = review.commit
    return (
        f"{commit.sha[:8]} {commit.author_date:%Y-%m-%d} "
        f"{output.truncate(commit.author.name, 20):<20}  {review_cell(review)}"
        f"{output.trees(review.trees)}"
    )


def render_blame(result: BlameResult) -> None:
    """git blame's shape, one header per run: sha, date, author, the review."""
    last = result.runs[-1].end if result.runs else 0
    width = len(str(last))
    for run in result.runs:
        output.out(_header(run.review))
        for number, text in enumerate(run.lines, start=run.start):
            output.out(f"  {number:>{width}}  {text}")


def render_history(reviews: list[Review]) -> None:
    """Each commit that changed the lines, newest first, with its postings."""
    for review in reviews:
        output.out(_header(review))
        output.out(f"    {review.commit.subject}")
        for posting in review.postings:
            date = posting.date.strftime("%Y-%m-%d") if posting.date else "????-??-??"
            mark = "*" if posting.applied else " "
            output.out(f"  {mark} v{posting.version} {date} <{posting.message_id}>")
            if posting.url:
                output.out(f"      {posting.url}")
        output.out()


def show_history(reviews: list[Review], *, as_json: bool) -> None:
    """Commits that changed some code, newest first: JSON lines, or paged text."""
    from e2g.render import review_json

    if as_json:
        for review in reviews:
            output.json_line(review_json(review))
        return
    with output.paged():
        render_history(reviews)


def blame(  # noqa: PLR0913 - one parameter per command-line option
    ctx: typer.Context,
    path: Annotated[
        str,
        typer.Argument(
            help="The file, relative to the top of the repository.",
            show_default=False,
        ),
    ],
    rev: Annotated[
        str | None,
        typer.Argument(
            help="The revision to blame (default: the work tree, as git blame).",
            show_default=False,
        ),
    ] = None,
    line_range: Annotated[
        str | None,
        typer.Option(
            "-L",
            metavar="START,END",
            help="Only these lines (numbered from 1).",
            show_default=False,
        ),
    ] = None,
    repo: RepoOption = Path(),
    as_json: Annotated[
        bool,
        typer.Option("--json", help="One JSON object per run (JSON lines)."),
    ] = False,
    history: Annotated[
        bool,
        typer.Option(
            "--history",
            help="Every commit that changed the -L lines (as git log -L), newest "
            "first, each with its postings.",
        ),
    ] = False,
    tokens: Annotated[
        bool,
        typer.Option(
            "--tokens",
            help="Blame each token, not each line: a renamed identifier, a split "
            "line or a changed literal leaves the rest of the line to the commits "
            "that wrote it.",
        ),
    ] = False,
    column: Annotated[
        int | None,
        typer.Option(
            "--column",
            min=1,
            help="With --tokens -L LINE: the history of the token at this column "
            "(or give PATH:LINE:COLUMN).",
            show_default=False,
        ),
    ] = None,
    color: Annotated[
        str,
        typer.Option(
            "--color",
            metavar="WHEN",
            help="Colour tokens by commit: auto (on a terminal), always or never.",
        ),
    ] = "auto",
) -> None:
    """Show each line of a file with the review of the commit that wrote it."""
    from e2g.api import blame as api
    from e2g.render import blame_json

    if tokens:
        if history:
            raise UsageError(
                "--history follows lines; with --tokens give PATH:LINE:COLUMN (or "
                "-L LINE --column COLUMN) for the history of one token"
            )
        blame_tokens(ctx, path, rev, line_range, repo, as_json, column, color)
        return
    if column is not None:
        raise UsageError("--column needs --tokens: it names one token of a line")
    lines = parse_range(line_range) if line_range is not None else None
    settings = options(ctx).settings()
    if history:
        if lines is None:
            raise UsageError(
                "--history needs -L START,END: the lines whose history to show"
            )
        reviews = api.history(settings, path, rev, repo=repo, lines=lines)
        show_history(reviews, as_json=as_json)
        return
    result = api.blame(settings, path, rev, repo=repo, lines=lines)
    if as_json:
        for run in result.runs:
            output.json_line(blame_json(run))
    else:
        with output.paged():
            render_blame(result)
    if not options(ctx).quiet and api.all_outside(run.review for run in result.runs):
        output.warn_all_outside()


def blame_tokens(  # noqa: PLR0913 - the options of `blame --tokens`
    ctx: typer.Context,
    path: str,
    rev: str | None,
    line_range: str | None,
    repo: Path,
    as_json: bool,
    column: int | None,
    color: str,
) -> None:
    """`blame --tokens`: every token's commit, or (with a column) one token's history."""
    from e2g.api import tokens as api
    from e2g.api.blame import all_outside
    from e2g.cli.tokens import render_tokens, split_location, use_color
    from e2g.render import token_span_lines

    painted = use_color(color)
    path, line, at = split_location(path)
    if at is not None:
        if line_range is not None or column is not None:
            raise UsageError(
                "give PATH:LINE:COLUMN or -L LINE --column COLUMN, not both"
            )
        line_range, column = str(line), at
    lines = parse_range(line_range) if line_range is not None else None
    settings = options(ctx).settings()
    if column is not None:
        if lines is None or lines[0] != lines[1]:
            raise UsageError("--column needs -L LINE: one line, whose token to follow")
        reviews = api.token_history(
            settings, path, rev, repo=repo, line=lines[0], column=column
        )
        show_history(reviews, as_json=as_json)
        return
    result = api.token_blame(settings, path, rev, repo=repo, lines=lines)
    if as_json:
        for text in token_span_lines(result.spans, result.reviews, output.json_text):
            output.out(text)
    else:
        with output.paged():
            render_tokens(result, color=painted)
    if not options(ctx).quiet and all_outside(result.reviews.values()):
        output.warn_all_outside()


def register(app: typer.Typer) -> None:
    app.command("blame")(blame)
