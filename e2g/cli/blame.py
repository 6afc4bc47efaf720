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
    """`-L START,END` as two line numbers (from 1); a clear error otherwise."""
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
) -> None:
    """Show each line of a file with the review of the commit that wrote it."""
    from e2g.api import blame as api
    from e2g.render import blame_json, review_json

    lines = parse_range(line_range) if line_range is not None else None
    settings = options(ctx).settings()
    if history:
        if lines is None:
            raise UsageError(
                "--history needs -L START,END: the lines whose history to show"
            )
        reviews = api.history(settings, path, rev, repo=repo, lines=lines)
        if as_json:
            for review in reviews:
                output.json_line(review_json(review))
            return
        with output.paged():
            render_history(reviews)
        return
    result = api.blame(settings, path, rev, repo=repo, lines=lines)
    if as_json:
        for run in result.runs:
            output.json_line(blame_json(run))
        return
    with output.paged():
        render_blame(result)


def register(app: typer.Typer) -> None:
    app.command("blame")(blame)
