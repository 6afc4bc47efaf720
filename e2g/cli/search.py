"""`e2g search QUERY`: full-text search over subjects, authors, files (and bodies if indexed)."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from e2g.cli import output
from e2g.cli.context import NOTHING_FOUND, ExitCode, options

if TYPE_CHECKING:
    from e2g.api.core import SearchHit


class Sort(StrEnum):
    date = "date"
    relevance = "relevance"


def _row(hit: SearchHit) -> list[str]:
    date = hit.date.strftime("%Y-%m-%d") if hit.date else "????-??-??"
    date += "*" if hit.date_corrected else ""  # explained in a footnote
    first_list = (hit.lists[0] if hit.lists else "-").split(".")[0]
    author = hit.author_name or hit.author_email
    return [
        date,
        output.truncate(first_list, 14),
        output.truncate(author, 22),
        f"{hit.subject}  <{hit.message_id}>",
    ]


def search(  # noqa: PLR0913 - the command's options
    ctx: typer.Context,
    query: Annotated[
        list[str],
        typer.Argument(
            help='Words, "phrases", and prefixes: s: f: file: list: d:FROM..TO is: has: v: ; OR, AND, NOT, (groups); -term negates. `e2g help query` for the whole language.',
            show_default=False,
        ),
    ],
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=10_000, help="Hits to show.")
    ] = 20,
    offset: Annotated[
        int, typer.Option("--offset", min=0, max=1_000_000, help="Skip this many hits.")
    ] = 0,
    sort: Annotated[
        Sort, typer.Option("--sort", help="Newest first, or best match first.")
    ] = Sort.date,
    thread: Annotated[
        bool,
        typer.Option(
            "--thread",
            help="Group hits by thread, each group in the thread's tree order.",
        ),
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", "--jsonl", help="One JSON object per hit on stdout (JSON lines)."
        ),
    ] = False,
    exit_code: ExitCode = False,
) -> None:
    """Search every list in the store; newest first."""
    from e2g.api import core as api
    from e2g.render import hit_json

    settings = options(ctx).settings()
    result = api.search(
        settings, " ".join(query), limit=limit, offset=offset, sort=str(sort)
    )
    hits, total = result.hits, result.total
    if result.note:  # even with -q: the answer may miss messages
        output.err(f"e2g: warning: {result.note}")
    if as_json:
        for hit in hits:
            output.json_line(hit_json(hit, settings))
    else:
        groups = None
        if thread:
            from e2g.api import threads

            groups = threads.thread_groups(settings, hits)
        with output.paged():
            _render(ctx, hits, total=total, offset=offset, groups=groups)
    if exit_code and not total:
        raise typer.Exit(NOTHING_FOUND)


def _render(
    ctx: typer.Context,
    hits: list[SearchHit],
    *,
    total: int,
    offset: int,
    groups: list[list[SearchHit]] | None,
) -> None:
    if groups is not None:
        for group in groups:
            output.table([_row(group[0])], widths=[11, 14, 22])
            output.table(
                (["", "", "", "  " + row[3]] for row in map(_row, group[1:])),
                widths=[11, 14, 22],
            )
    else:
        output.table((_row(hit) for hit in hits), widths=[11, 14, 22])
    for hit in hits:
        if hit.date_corrected:
            note = output.corrected_date(hit.date_source, hit.date_raw)
            output.out(f"{note} <{hit.message_id}>")
    if not options(ctx).quiet and total > len(hits) + offset:
        output.err(
            f"{output.number(total)} hits; showing {offset + 1}-{offset + len(hits)} (--limit/--offset for more)"
        )


def register(app: typer.Typer) -> None:
    app.command("search")(search)
