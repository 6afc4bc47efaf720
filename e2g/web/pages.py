"""The HTML pages: front page and box, commit, thread, raw download, search, stats,
line and token blame, audit.

Each handler checks its inputs (bounded, validated), calls one `e2g.api` function and
renders one autoescaped template. Forms are GET forms; the one script is the token
page's panel (static/tokens.js), and that page reads without it.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from e2g import errors, reference
from e2g.api import core as api
from e2g.api import threads
from e2g.model.links import LinkResult, Posting
from e2g.web.audit_view import (
    MAX_RANGE,
    audit_page,
    check_range,
    commit_verdict,
    tag_class,
    verdicts_of,
)
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
from e2g.web.render import (
    check_message_id,
    check_path,
    check_rev,
    message_candidate,
    message_path,
    route_box,
)
from e2g.web.token_view import ColourBy, token_view

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 20
MAX_PAGE = 500  # 10,000 hits deep is as far as anyone pages

Context = Annotated[WebContext, Depends(web_context)]
Links = Annotated[Linking, Depends(linking)]


def render(
    context: WebContext, name: str, *, status: int = 200, **values: Any
) -> HTMLResponse:
    page = context.templates.get_template(name).render(**values)
    return HTMLResponse(page, status_code=status, headers={"cache-control": "no-cache"})


@router.get("/static/style.css")
def stylesheet(context: Context) -> Response:
    # Served from memory: no request value is ever joined into a file path.
    return Response(
        context.stylesheet,
        media_type="text/css",
        headers={"cache-control": "public, max-age=3600"},
    )


@router.get("/static/tokens.js")
def token_script(context: Context) -> Response:
    # Served from memory, as the stylesheet.
    return Response(
        context.script,
        media_type="text/javascript",
        headers={"cache-control": "public, max-age=3600"},
    )


@router.get("/")
def front(context: Context) -> HTMLResponse:
    try:
        counts = api.counts(context.settings)
        busy = threads.discussed_threads(context.settings)
        # Reviewed commits first: on a real tree most commits never reached a list.
        reviewed, unmatched = [], []
        if context.repository is not None:
            reviewed = threads.recent_commits(
                context.settings, repo=context.repository, status="matched"
            )
            unmatched = threads.recent_commits(
                context.settings, repo=context.repository, status="no-match", limit=5
            )
    except errors.EmptyStore:
        counts, busy, reviewed, unmatched = None, [], [], []
    return render(
        context,
        "index.html",
        counts=counts,
        busy=busy,
        reviewed=reviewed,
        verdicts=verdicts_of(context, [commit.sha for commit in reviewed]),
        tag_class=tag_class,
        unmatched=unmatched,
    )


@router.get("/go")
def go(
    context: Context, q: Annotated[str, Query(max_length=2000)] = ""
) -> RedirectResponse:
    """The box: route a commit id, a Message-ID or a query to its page."""
    candidate = message_candidate(q)
    known = candidate is not None and threads.has_message(context.settings, candidate)
    target = route_box(q, known_message=known)
    if not q.strip():
        url = "/"
    elif target.kind == "commit":
        url = f"/commit/{target.value}"
    elif target.kind == "message":
        url = f"/thread/{message_path(target.value)}#focus"
    else:
        url = context_url("/search", q=target.value)
    return RedirectResponse(url, status_code=303)


def context_url(path: str, **query: str) -> str:
    return f"{path}?{urlencode(query)}"


def ordered_postings(result: LinkResult, order: str) -> list[Posting]:
    """Newest version first (latest date breaks ties), or series order (v1 first)."""

    def stamp(posting: Posting) -> float:
        return posting.date.timestamp() if posting.date else 0.0

    if order == "series":
        return sorted(
            result.postings, key=lambda p: (p.version, p.kind != "cover", stamp(p))
        )
    return sorted(result.postings, key=lambda p: (-p.version, -stamp(p)))


@router.get("/commit/{rev:path}")
def commit_page(
    rev: str,
    context: Context,
    links: Links,
    order: Literal["newest", "series"] = "newest",
) -> HTMLResponse:
    result = link_result(context, links, check_rev(rev))
    details = commit_details(context, links, result)
    return render(
        context,
        "commit.html",
        audit=commit_verdict(context, result.commit.sha),
        tag_class=tag_class,
        commit=result.commit,
        text=details.text,
        reviews=details.reviews,
        postings=ordered_postings(result, order),
        upstream=result.upstream,
        trees=result.trees,
        own=result.own,
        merged=result.merged,
        rejected=result.rejected[:20],
        order=order,
        box_value=rev,
    )


@router.get("/audit")
def audit_page_view(
    context: Context,
    range_: Annotated[str, Query(alias="range", max_length=MAX_RANGE)] = "",
    verdict: Annotated[str, Query(max_length=40)] = "",
    strict: bool = False,
) -> HTMLResponse:
    """The audit of a range (default HEAD): the summary, then a row per commit,
    verdicts as filters."""
    from e2g.api.audit import Verdict

    found = audit_page(context, check_range(range_), strict=strict)
    shown = [one for one in found.audits if not verdict or one.verdict == verdict]
    return render(
        context,
        "audit.html",
        page=found,
        shown=shown,
        verdicts=list(Verdict),
        chosen=verdict,
        range_text=range_,
        strict=strict,
        tag_class=tag_class,
    )


@router.get("/blame/{rev}/{path:path}")
def blame_page(
    rev: str,
    path: str,
    context: Context,
    links: Links,
    page: Annotated[int, Query(ge=1, le=100_000)] = 1,
) -> HTMLResponse:
    """The file at `rev` with a gutter per run: its commit and review, paged."""
    from e2g.api.blame import PAGE_LINES

    result = blame_result(context, links, check_path(path), check_rev(rev), page)
    return render(
        context,
        "blame.html",
        result=result,
        rev=rev,
        page=page,
        pages=max(1, -(-result.total // PAGE_LINES)),
        cell=links.review_cell,
        box_value=rev,
    )


@router.get("/tokens/{rev}/{path:path}")
def tokens_page(  # noqa: PLR0913 - FastAPI parameters
    rev: str,
    path: str,
    context: Context,
    links: Links,
    page: Annotated[int, Query(ge=1, le=100_000)] = 1,
    by: ColourBy = "commit",
) -> HTMLResponse:
    """The file at `rev`, each token coloured by the commit that wrote it (or its
    author, or its age), with a legend; a click on a token opens its review."""
    from e2g.api.blame import PAGE_LINES

    result = token_result(context, links, check_path(path), check_rev(rev), page)
    return render(
        context,
        "tokens.html",
        result=result,
        view=token_view(result, by=by, cell=links.review_cell),
        rev=rev,
        page=page,
        pages=max(1, -(-result.total // PAGE_LINES)),
        by=by,
        box_value=rev,
    )


@router.get("/tree/{rev}")
@router.get("/tree/{rev}/{path:path}")
def tree_page(
    rev: str,
    context: Context,
    links: Links,
    path: str = "",
    page: Annotated[int, Query(ge=1, le=100_000)] = 1,
) -> Response:
    """A directory of the tree at `rev`: each file's and directory's living tokens,
    their commits and the share by reviewed commits; a file goes to its tokens."""
    from e2g.api.token_tree import PAGE_ENTRIES

    wanted = check_path(path.strip("/")) if path.strip("/") else ""
    try:
        listing = tree_result(context, links, wanted, check_rev(rev), page)
    except errors.IsAFile:
        return RedirectResponse(f"/tokens/{quote(rev)}/{quote(wanted)}")
    crumbs = []
    parts = listing.path.split("/") if listing.path else []
    for number, name in enumerate(parts, start=1):
        crumbs.append({"name": name, "path": "/".join(parts[:number])})
    return render(
        context,
        "tree.html",
        listing=listing,
        crumbs=crumbs,
        rev=rev,
        page_size=PAGE_ENTRIES,
        box_value=rev,
    )


@router.get("/thread/{message_id:path}")
def thread_page(message_id: str, context: Context) -> HTMLResponse:
    wanted = check_message_id(message_id)
    view = threads.thread_view(context.settings, wanted)
    if view is None:
        raise errors.NotFound(f"no message <{wanted}> in the store")
    first = view.nodes[0].message if view.nodes else None
    title = (first.subject if first else "") or "(no subject)"
    return render(
        context,
        "thread.html",
        view=view,
        title=title,
        applied=applied_to(context, wanted),
    )


@router.get("/raw/{message_id:path}")
def raw_download(message_id: str, context: Context) -> Response:
    wanted = check_message_id(message_id)
    data = threads.raw_message(context.settings, wanted)
    if data is None:
        raise errors.NotFound(f"no message <{wanted}> in the store")
    # The file name is ours, never the mail's: a hash of the Message-ID.
    name = hashlib.sha1(wanted.encode("utf-8", "replace")).hexdigest()[:16]
    return Response(
        data,
        media_type="message/rfc822",
        headers={"content-disposition": f'attachment; filename="message-{name}.eml"'},
    )


@router.get("/search")
def search_page(
    request: Request,
    context: Context,
    q: Annotated[str, Query(max_length=2000)] = "",
    page: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 1,
    sort: Literal["date", "relevance"] = "date",
) -> HTMLResponse:
    hits: list[Any] = []
    total, problem, notice = 0, None, None
    if q.strip():
        try:
            result = api.search(
                context.settings,
                q,
                limit=PAGE_SIZE,
                offset=(page - 1) * PAGE_SIZE,
                sort=sort,
            )
            hits, total, notice = result.hits, result.total, result.note
        except errors.QueryError as error:
            problem = str(error)
    pages = max(1, min(MAX_PAGE, -(-total // PAGE_SIZE)))
    first = (page - 1) * PAGE_SIZE + 1
    return render(
        context,
        "search.html",
        query=q,
        sort=sort,
        hits=hits,
        total=total,
        page=page,
        pages=pages,
        first=first,
        last=first + len(hits) - 1,
        problem=problem,
        notice=notice,
        box_value=q,
        status=400 if problem else 200,
    )


@router.get("/stats")
def stats_page(
    context: Context, links: Links, by: StatsBy = "dir", depth: StatsDepth = 1
) -> HTMLResponse:
    result = stats_result(context, links, by, depth)
    return render(context, "stats.html", rows=result.rows, by=by, depth=depth)


@router.get("/stats.svg")
def stats_chart(
    context: Context, links: Links, by: StatsBy = "dir", depth: StatsDepth = 1
) -> Response:
    # Shown through <img>: an SVG there can never run a script, and the page itself
    # marks nothing as safe.
    svg = links.render_svg(stats_result(context, links, by, depth))
    return Response(
        svg, media_type="image/svg+xml", headers={"cache-control": "no-cache"}
    )


# --- the command reference (docs/commands), and the API's own documentation ----------


@router.get("/docs")
def reference_index(context: Context) -> HTMLResponse:
    """Every command's reference page, and where the API's documentation is."""
    return render(context, "docs.html", pages=reference.pages())


@router.get("/docs/{name}")
def reference_page(context: Context, name: str) -> HTMLResponse:
    """One command's reference page, its Markdown shown as text (autoescaped)."""
    text = reference.text(name)
    if text is None:
        raise errors.NotFound(f"no reference page {name!r}: see /docs")
    return render(
        context, "doc.html", page_name=name, text=text, pages=reference.names()
    )


# The API's own documentation: forms, no scripts (the CSP allows none).


@router.get("/redoc")
def docs_redirect() -> RedirectResponse:
    return RedirectResponse("/api/v1/", status_code=303)


@router.get("/openapi.json")
def openapi_redirect() -> RedirectResponse:
    return RedirectResponse("/api/v1/openapi.json", status_code=303)


@router.get("/api/v1/")
def api_docs(request: Request, context: Context) -> HTMLResponse:
    """Every endpoint of the REST API with its parameters, and a form to try it."""
    return render(context, "api.html", endpoints=_endpoints(request))


@router.get("/api/v1/try")
def api_try(request: Request) -> RedirectResponse:
    """The docs page's forms land here: the endpoint's URL with the values filled in
    (path values cannot be filled by a plain form). Only the API's own endpoints."""
    values = dict(request.query_params)
    wanted = values.pop("endpoint", "")
    known = {endpoint["path"]: endpoint for endpoint in _endpoints(request)}
    if wanted not in known:
        raise errors.UsageError(f"no such endpoint {wanted!r}")
    path = wanted
    for parameter in known[wanted]["parameters"]:
        if parameter["in"] == "path":
            value = values.pop(parameter["name"], "").strip()
            if not value:
                raise errors.UsageError(f"{parameter['name']} is required")
            path = path.replace("{" + parameter["name"] + "}", quote(value, safe="@"))
    query = urlencode({name: value for name, value in values.items() if value})
    return RedirectResponse(path + (f"?{query}" if query else ""), status_code=303)


def _endpoints(request: Request) -> list[dict[str, Any]]:
    schema = request.app.openapi()
    found = []
    for path, methods in schema.get("paths", {}).items():
        operation = methods.get("get")
        if operation is None:
            continue
        parameters = [
            {
                "name": parameter["name"],
                "in": parameter["in"],
                "required": bool(parameter.get("required")),
                "default": parameter.get("schema", {}).get("default"),
                "choices": parameter.get("schema", {}).get("enum"),
            }
            for parameter in operation.get("parameters", [])
        ]
        found.append(
            {
                "path": path.replace(":path}", "}"),
                "summary": operation.get("summary", ""),
                "parameters": parameters,
            }
        )
    return found
