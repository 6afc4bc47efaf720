"""`e2g metrics [NAME...]`: the review metrics (e2g.api.metrics defines them), as a
table per metric, JSON lines, CSV or an SVG chart (e2g.render.metrics)."""

from __future__ import annotations

import csv
import io
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from e2g.cli import output
from e2g.cli.context import options
from e2g.cli.patches import ListOption
from e2g.errors import OutputError, UsageError

if TYPE_CHECKING:
    from e2g.api.metrics import MetricRow


class Period(StrEnum):
    month = "month"
    quarter = "quarter"
    year = "year"


def metrics(  # noqa: PLR0913 - the command's options
    ctx: typer.Context,
    names: Annotated[
        list[str] | None,
        typer.Argument(
            help="Metrics to show (default: all): first-response, time-to-accept, "
            "time-to-release, review-cycles, reviewed-share, acceptance, ignored, "
            "reviewer-load, absence-factor.",
            show_default=False,
        ),
    ] = None,
    by: Annotated[
        Period | None,
        typer.Option(
            "--by", help="One row per month, quarter or year.", show_default=False
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Posted (reviews: written) at or after this."),
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Posted before this moment.")
    ] = None,
    lists: ListOption = None,
    by_dir: Annotated[
        bool, typer.Option("--dir", help="One row per directory the patches touch.")
    ] = False,
    depth: Annotated[
        int, typer.Option("--depth", min=1, max=8, help="Directory depth for --dir.")
    ] = 1,
    person: Annotated[
        bool,
        typer.Option("--person", help="One row per author (reviews: per reviewer)."),
    ] = False,
    by_list: Annotated[
        bool, typer.Option("--per-list", help="One row per list.")
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option("--json", "--jsonl", help="One JSON object per metric and group."),
    ] = False,
    as_csv: Annotated[
        bool, typer.Option("--csv", help="CSV with a header line.")
    ] = False,
    svg: Annotated[
        Path | None,
        typer.Option(
            "--svg", help="Also write the charts to this SVG file.", show_default=False
        ),
    ] = None,
) -> None:
    """Review analytics from mail: time to first response, to accept and to release,
    review cycles, reviewed share, acceptance, ignored patches, reviewer load and
    the absence factor (`e2g help metrics` defines each)."""
    from e2g.api.metrics import Query, metrics, parse_names
    from e2g.api.queue.listing import parse_when

    groups = [
        name
        for name, on in (("dir", by_dir), ("person", person), ("list", by_list))
        if on
    ]
    if len(groups) > 1:
        raise UsageError("group by one of --dir, --person and --per-list, not several")
    query = Query(
        names=parse_names(names or []),
        by=str(by) if by is not None else None,
        since=parse_when(since) if since else None,
        until=parse_when(until) if until else None,
        lists=tuple(lists or ()),
        group=groups[0] if groups else None,
        depth=depth,
    )
    rows = metrics(options(ctx).settings(), query)
    if svg is not None:
        _write_svg(svg, rows)
    if as_json:
        from e2g.render.metrics import metric_json

        for row in rows:
            output.json_line(metric_json(row))
    elif as_csv:
        _csv(rows)
    else:
        _tables(rows)


def _write_svg(path: Path, rows: list[MetricRow]) -> None:
    from e2g.render.metrics import metrics_svg

    try:
        path.write_text(metrics_svg(rows), encoding="utf-8")
    except OSError as error:
        raise OutputError(
            f"cannot write the chart to {path}: {error.strerror or error}; "
            "pass an --svg path in a writable directory"
        ) from None


def _csv(rows: list[MetricRow]) -> None:
    from e2g.render.metrics import CSV_KEYS, metric_csv

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_KEYS)
    writer.writerows(metric_csv(row) for row in rows)
    output.write(buffer.getvalue())


def _tables(rows: list[MetricRow]) -> None:
    from e2g.render.metrics import metric_text, panels

    for index, (title, kept) in enumerate(panels(rows)):
        if index:
            output.out()
        output.out(title)
        table = [["period", "group", "figure"]]
        table += [
            [row.period or "all", row.group or "", metric_text(row)] for row in kept
        ]
        output.table(table, widths=[8, min(30, max(len(r[1]) for r in table)), 40])


def register(app: typer.Typer) -> None:
    app.command("metrics")(metrics)
