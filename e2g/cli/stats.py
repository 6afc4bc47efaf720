"""`e2g stats`: coverage of the matched commits, as a table, JSON or an SVG chart."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from e2g.cli import output
from e2g.cli.context import RepoOption, options
from e2g.errors import OutputError

if TYPE_CHECKING:
    from e2g.api.stats import StatsResult


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


def stats(
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
) -> None:
    """Coverage of the matched commits, as a table, JSON or a bar chart."""
    from e2g.api.stats import stats as coverage
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
