"""The review metrics on the web: /metrics (a GET form with `e2g metrics`' choices,
a chart and a table per metric), /metrics.svg (the charts alone) and the JSON twin
/api/v1/metrics (`e2g metrics --json`'s objects).

Each point, bar and table row links to the queue's /patches with the filter behind
it (its period as since/until, its list, author or directory, the states the metric
counts). The charts are drawn on the server (e2g.render.metrics) and shown inline so
their links work: every text in them is escaped there, and the page's security
policy runs no script anyway.
"""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query
from fastapi.responses import HTMLResponse, JSONResponse, Response
from markupsafe import Markup

from e2g.api import metrics as metric_api
from e2g.api.metrics import MetricRow
from e2g.api.metrics.numbers import NO_FILES, TOP, period_bounds
from e2g.api.queue.listing import parse_when
from e2g.render.metrics import metric_json, metric_text, metrics_svg, panel_svg, panels
from e2g.web.context import WebContext, web_context
from e2g.web.rest import ERRORS

pages = APIRouter(include_in_schema=False)
rest = APIRouter(prefix="/api/v1", responses=ERRORS)
Context = Annotated[WebContext, Depends(web_context)]
Text = Annotated[str, Query(max_length=200)]

# The states of /patches each metric counts (all: every state).
STATES = {
    metric_api.TIME_TO_ACCEPT: "applied",
    metric_api.TIME_TO_RELEASE: "applied",
    metric_api.REVIEW_CYCLES: "applied",
    metric_api.REVIEWED_SHARE: "applied",
    metric_api.ACCEPTANCE: "applied,not-applied,rejected",
    metric_api.IGNORED: "new,not-applied",
}


class Choices:
    """`e2g metrics`' choices, as the query string gives them."""

    def __init__(  # noqa: PLR0913 - the form's fields
        self,
        name: Annotated[list[str] | None, Query(max_length=20)] = None,
        by: Literal["", "month", "quarter", "year"] = "",
        group: Literal["", "dir", "person", "list"] = "",
        depth: Annotated[int, Query(ge=1, le=8)] = 1,
        since: Text = "",
        until: Text = "",
        list_: Annotated[list[str] | None, Query(alias="list", max_length=20)] = None,
    ) -> None:
        self.names = [part for value in name or [] for part in value.split(",") if part]
        self.by, self.group, self.depth = by, group, depth
        self.since, self.until = since, until
        self.lists = [
            part for value in list_ or [] for part in value.split(",") if part
        ]

    def query(self) -> metric_api.Query:
        return metric_api.Query(
            names=metric_api.parse_names(self.names),
            by=self.by or None,
            since=parse_when(self.since) if self.since else None,
            until=parse_when(self.until) if self.until else None,
            lists=tuple(self.lists),
            group=self.group or None,
            depth=self.depth,
        )

    def string(self) -> str:
        pairs = [("name", name) for name in self.names]
        pairs += [
            (key, value)
            for key, value in (("by", self.by), ("group", self.group))
            if value
        ]
        pairs += [("depth", str(self.depth))] if self.group == "dir" else []
        pairs += [("since", self.since)] if self.since else []
        pairs += [("until", self.until)] if self.until else []
        pairs += [("list", name) for name in self.lists]
        return urlencode(pairs)

    def patches(self, row: MetricRow) -> str:
        """/patches with the filter of the patches behind `row`."""
        pairs: list[tuple[str, str]] = [("state", STATES.get(row.metric, "all"))]
        since, until = self.since, self.until
        if row.period is not None:
            since, until = period_bounds(row.period)
        pairs += [("since", since)] if since else []
        pairs += [("until", until)] if until else []
        lists = [row.group] if self.group == "list" and row.group else self.lists
        pairs += [("list", name) for name in lists]
        if self.group == "person" and row.group and row.metric not in REVIEWS:
            pairs.append(("from", row.group))
        if self.group == "dir" and row.group and row.group not in (TOP, NO_FILES):
            pairs.append(("q", f"file:{row.group}/"))
        return "/patches?" + urlencode(pairs)


REVIEWS = (metric_api.REVIEWER_LOAD, metric_api.ABSENCE_FACTOR)
MetricChoices = Annotated[Choices, Depends()]


@pages.get("/metrics")
def metrics_page(context: Context, choices: MetricChoices) -> HTMLResponse:
    rows = metric_api.metrics(context.settings, choices.query())
    charts = [
        {
            "title": title,
            "svg": Markup(panel_svg(title, kept, link=choices.patches)),  # noqa: S704 - escaped by e2g.render.metrics
            "rows": [
                {
                    "period": row.period or "all",
                    "group": row.group or "",
                    "figure": metric_text(row),
                    "href": choices.patches(row),
                }
                for row in kept
            ],
        }
        for title, kept in panels(rows)
    ]
    body = context.templates.get_template("metrics.html").render(
        charts=charts,
        choices=choices,
        names=metric_api.METRICS,
        chosen=set(choices.names) or set(metric_api.METRICS),
        query=choices.string(),
    )
    return HTMLResponse(body, headers={"cache-control": "no-cache"})


@pages.get("/metrics.svg")
def metrics_chart(context: Context, choices: MetricChoices) -> Response:
    rows = metric_api.metrics(context.settings, choices.query())
    return Response(
        metrics_svg(rows, link=choices.patches),
        media_type="image/svg+xml",
        headers={"cache-control": "no-cache"},
    )


@rest.get("/metrics", summary="Review metrics (e2g metrics --json)")
def metrics_api(context: Context, choices: MetricChoices) -> JSONResponse:
    rows = metric_api.metrics(context.settings, choices.query())
    return JSONResponse({"metrics": [metric_json(row) for row in rows]})
