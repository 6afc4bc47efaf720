"""`e2g stats`: coverage of the matched commits, as a table, JSON or an SVG chart."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from e2g.cli import output
from e2g.cli.context import RepoOption, options
from e2g.errors import OutputError, UsageError

if TYPE_CHECKING:
    from e2g.api.stats import StatsResult
    from e2g.api.token_tree import TreeEntry


class By(StrEnum):
    dir = "dir"
    list = "list"
    year = "year"
    method = "method"
    tree = "tree"


def _render_stats(result: StatsResult) -> None:
    rows = [["", "commits", "matched", "share", "methods"]]
    for row in [*result.rows, result.total]:
        methods = ", ".join(
            f"{method} {count}" for method, count in row.by_method.most_common()
        )
        rows.append(
            [
                row.key,
                output.number(row.commits),
                output.number(row.matched),
                f"{row.share:.1%}",
                methods,
            ]
        )
    width = max(len(row[0]) for row in rows)
    output.table(rows, widths=[min(width, 40), 8, 8, 7])


def _render_token_stats(rows: list[TreeEntry], total: TreeEntry) -> None:
    table = [["", "files", "warm", "tokens", "commits", "reviewed"]]
    for row in [*rows, total]:
        share = f"{row.share:.1%}" if row.share is not None else "-"
        table.append(
            [
                row.name,
                output.number(row.files),
                output.number(row.warm),
                output.number(row.tokens),
                output.number(row.commits),
                share,
            ]
        )
    width = max(len(row[0]) for row in table)
    output.table(table, widths=[min(width, 40), 7, 7, 10, 8])


def _token_stats(
    ctx: typer.Context, repo: Path, rev: str | None, depth: int, *, as_json: bool
) -> None:
    from e2g.api.token_tree import tree_stats
    from e2g.render import tree_entry_json

    rows, total = tree_stats(options(ctx).settings(), repo=repo, rev=rev, depth=depth)
    if as_json:
        output.json_line(
            {
                "by": "dir",
                "tokens": True,
                "rows": [tree_entry_json(row) for row in rows],
                "total": tree_entry_json(total),
            }
        )
    else:
        _render_token_stats(rows, total)
    if total.warm < total.files and not options(ctx).quiet:
        output.err(
            f"e2g: warning: {total.files - total.warm:,} of {total.files:,} files are "
            "not warm and not counted: run `e2g tokens warm` to count them"
        )


def stats(  # noqa: PLR0913 - one parameter per command-line option
    ctx: typer.Context,
    repo: RepoOption = Path(),
    by: Annotated[
        By,
        typer.Option(
            "--by",
            help="Group by top-level directory, list, year, method or named tree "
            "and branch.",
        ),
    ] = By.dir,
    depth: Annotated[
        int, typer.Option("--depth", min=1, max=8, help="Directory depth for --by dir.")
    ] = 1,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the table as JSON.")
    ] = False,
    svg: Annotated[
        Path | None,
        typer.Option(
            "--svg", help="Also write a bar chart to this SVG file.", show_default=False
        ),
    ] = None,
    tokens: Annotated[
        bool,
        typer.Option(
            "--tokens",
            help="With --by dir: the code alive at --rev, per directory: its tokens, "
            "the commits that wrote them, and the share by commits e2g audit calls "
            "reviewed (from a warmed tree: e2g tokens warm).",
        ),
    ] = False,
    rev: Annotated[
        str | None,
        typer.Option(
            "--rev",
            help="With --tokens: the revision (default HEAD).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Coverage of the matched commits, as a table, JSON or a bar chart."""
    from e2g.api.stats import stats as coverage

    if tokens:
        if by != By.dir or svg is not None:
            raise UsageError(
                "--tokens counts per directory: give it with --by dir, without --svg"
            )
        _token_stats(ctx, repo, rev, depth, as_json=as_json)
        return
    if rev is not None:
        raise UsageError("--rev names the tree --tokens counts: give it with --tokens")
    from e2g.render import render_svg, stats_json

    result = coverage(options(ctx).settings(), repo=repo, by=str(by), depth=depth)
    if svg is not None:
        try:
            svg.write_text(render_svg(result), encoding="utf-8")
        except OSError as error:
            raise OutputError(
                f"cannot write the chart to {svg}: {error.strerror or error}; "
                "pass an --svg path in a writable directory"
            ) from None
    if as_json:
        output.json_line(stats_json(result))
    else:
        _render_stats(result)


def register(app: typer.Typer) -> None:
    app.command("stats")(stats)
