"""The JSON API under /api/v1/: commits, messages, threads, search, stats, audit.

Objects are the same as the CLI's `--json` output: the shapes of `e2g.render`.
Every failure answers with the one error shape, documented in the OpenAPI schema.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from e2g import errors
from e2g.api import core as api
from e2g.api import threads
from e2g.render import (
    commit_page_json,
    hit_json,
    message_json,
    stats_json,
    thread_json,
    way_back_json,
)
from e2g.render.audit import audit_json, audit_summary_json
from e2g.web.audit_view import MAX_RANGE, audit_page, check_range
from e2g.web.context import (
    Linking,
    StatsBy,
    StatsDepth,
    WebContext,
    applied_to,
    blame_result,
    commit_details,
    link_result,
    linking,
    stats_result,
    token_result,
    tree_result,
    web_context,
)
from e2g.web.render import check_message_id, check_path, check_rev

MAX_LIMIT = 100
MAX_OFFSET = 10_000


class ErrorDetail(BaseModel):
    status: int
    code: str
    message: str


class ErrorBody(BaseModel):
    error: ErrorDetail


ERRORS: dict[int | str, dict[str, Any]] = {
    400: {
        "model": ErrorBody,
        "description": "A parameter is malformed or out of bounds",
    },
    404: {"model": ErrorBody, "description": "Not in the store or the repository"},
    503: {"model": ErrorBody, "description": "No store, index or repository to read"},
}

router = APIRouter(prefix="/api/v1", responses=ERRORS)

Context = Annotated[WebContext, Depends(web_context)]
Links = Annotated[Linking, Depends(linking)]


@router.get(
    "/commits/{rev:path}",
    summary="A commit and every posting of its patch (e2g link --json), with its "
    "message, diff and review excerpts (the commit page's)",
)
def commit(rev: str, context: Context, links: Links) -> JSONResponse:
    result = link_result(context, links, check_rev(rev))
    details = commit_details(context, links, result)
    return JSONResponse(
        links.link_json(result) | commit_page_json(details.text, details.reviews)
    )


@router.get(
    "/blame/{rev}/{path:path}",
    summary="Each run of a file's lines with its commit's postings (e2g blame --json)",
)
def blame(
    rev: str,
    path: str,
    context: Context,
    links: Links,
    page: Annotated[int | None, Query(ge=1, le=100_000)] = None,
) -> JSONResponse:
    """The whole file, or page `page` (1,000 lines each, as the blame page)."""
    result = blame_result(context, links, check_path(path), check_rev(rev), page)
    return JSONResponse([links.blame_json(run) for run in result.runs])


@router.get(
    "/tokens/{rev}/{path:path}",
    summary="Each span of a file's tokens with the postings of the commit that wrote it "
    "(e2g blame --tokens --json)",
)
def tokens(
    rev: str,
    path: str,
    context: Context,
    links: Links,
    page: Annotated[int | None, Query(ge=1, le=100_000)] = None,
) -> JSONResponse:
    """The whole file, or page `page` (1,000 lines each, as the token page). A span is
    consecutive tokens of one line from one commit; `line` and `column` count from 1,
    `column` in characters."""
    result = token_result(context, links, check_path(path), check_rev(rev), page)
    return JSONResponse(
        [links.token_span_json(span, result.reviews[span.sha]) for span in result.spans]
    )


@router.get(
    "/tree/{rev}",
    summary="The tree's top directory: tokens, commits and the reviewed share per entry",
)
@router.get(
    "/tree/{rev}/{path:path}",
    summary="A directory of the tree: tokens, commits and the reviewed share per entry",
)
def tree(
    rev: str,
    context: Context,
    links: Links,
    path: str = "",
    page: Annotated[int, Query(ge=1, le=100_000)] = 1,
) -> JSONResponse:
    """The directory summed (`total`) and page `page` of its entries (200 each),
    directories first: per entry its text `files` and how many are `warm` (counted),
    `tokens`, `commits` (distinct, that wrote them), `reviewed_tokens` and
    `reviewed_share` (by commits e2g audit calls reviewed), `tokens_by_verdict`, and
    `skipped` (why a file is not blamed)."""
    wanted = check_path(path.strip("/")) if path.strip("/") else ""
    listing = tree_result(context, links, wanted, check_rev(rev), page)
    return JSONResponse(links.tree_json(listing))


@router.get(
    "/messages/{message_id:path}", summary="One message: headers, body, trailers, diff"
)
def message(message_id: str, context: Context) -> JSONResponse:
    wanted = check_message_id(message_id)
    view = threads.message_view(context.settings, wanted)
    if view is None:
        raise errors.NotFound(f"no message <{wanted}> in the store")
    data = message_json(view, context.settings)
    applied = applied_to(context, wanted)
    answer = way_back_json(applied) if applied is not None else None
    data["applied"] = None if answer is None else answer["status"]
    data["commits"] = [] if answer is None else answer["commits"]
    return JSONResponse(data)


@router.get(
    "/threads/{message_id:path}",
    summary="The whole thread a message belongs to, as a tree",
)
def thread(message_id: str, context: Context) -> JSONResponse:
    wanted = check_message_id(message_id)
    view = threads.thread_view(context.settings, wanted)
    if view is None:
        raise errors.NotFound(f"no message <{wanted}> in the store")
    return JSONResponse(thread_json(view, context.settings))


@router.get("/search", summary="Full-text search, the query language of e2g search")
def search(
    context: Context,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 20,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    sort: Literal["date", "relevance"] = "date",
) -> JSONResponse:
    result = api.search(context.settings, q, limit=limit, offset=offset, sort=sort)
    return JSONResponse(
        {
            "query": q,
            "total": result.total,
            "limit": limit,
            "offset": offset,
            "hits": [hit_json(hit, context.settings) for hit in result.hits],
            # Store changes the index lacked when searched (0: the answer is complete),
            # and, when not 0, what to run.
            "index_lag": result.index_lag,
            "index_note": result.note,
        }
    )


@router.get(
    "/audit",
    summary="A verdict per commit of a range on whether the code that landed was "
    "reviewed (e2g audit --json, read-only: commits never matched are uncertain)",
)
def audit(
    context: Context,
    range_: Annotated[str, Query(alias="range", max_length=MAX_RANGE)] = "",
    strict: bool = False,
) -> JSONResponse:
    """The newest 5,000 commits of `range` (revisions as git takes them; default
    HEAD): one object per commit, as `e2g audit --json` gives them, and the summary."""
    found = audit_page(context, check_range(range_), strict=strict)
    return JSONResponse(
        {
            "commits": [audit_json(one) for one in found.audits],
            "cut": found.cut,
        }
        | audit_summary_json(found.summary)
    )


@router.get("/stats", summary="Coverage of the repository's commits (e2g stats --json)")
def stats(
    context: Context, links: Links, by: StatsBy = "dir", depth: StatsDepth = 1
) -> JSONResponse:
    result = stats_result(context, links, by, depth)
    return JSONResponse(stats_json(result))
