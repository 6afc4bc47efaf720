"""lore's URL shapes, so b4, lei and a pasted lore link work against `e2g serve`.

    /<list>/<msgid>/             the thread page (also /T/, /t/ and #fragments)
    /<list>/<msgid>/raw          the message's bytes as stored
    /<list>/<msgid>/t.mbox.gz    the whole thread, mboxrd, gzipped
    /<list>/?q=QUERY&x=m         the search's hits, mboxrd, gzipped (GET or POST,
                                 as public-inbox takes it; t=1: their whole threads)
    /<list>/?q=QUERY             the search page
    /<msgid>/, /r/<msgid>        redirect to /all/<msgid>/

`<list>` is the list's short name (e2g.mail.lists: io-uring for
io-uring.vger.kernel.org), its whole id, or `all`. These routes are registered after
every other, so they never shadow e2g's own (/commit/, /thread/, /api/, ...), and a
first segment that is one of those is refused. The Message-ID is read from the path
whatever it holds ("/" included), checked as every page checks one, and is never
joined into a file path.
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.applications import Starlette

from e2g import errors
from e2g.api import lore, threads
from e2g.web.context import WebContext, web_context
from e2g.web.pages import thread_page
from e2g.web.render import check_message_id, message_path

router = APIRouter(include_in_schema=False)
Context = Annotated[WebContext, Depends(web_context)]

# What may follow a Message-ID in a lore URL, and what it asks for.
SUFFIXES = (
    ("/t.mbox.gz", "mbox"),
    ("/raw", "raw"),
    ("/T/", "page"),
    ("/t/", "page"),
    ("/T", "page"),
    ("/t", "page"),
    ("/", "page"),
)
Query_ = Annotated[str, Query(max_length=2000)]


def _split(rest: str) -> tuple[str, str]:
    """(Message-ID, what is asked) from the path after the list's name."""
    for suffix, asked in SUFFIXES:
        if rest.endswith(suffix) and len(rest) > len(suffix):
            return rest[: -len(suffix)], asked
    return rest, "page"


def _list(request: Request, context: WebContext, name: str) -> str | None:
    if name in own_pages(request.app):
        raise errors.NotFound(f"no page /{name}/ here")
    return lore.find_list(context.settings, name)


def own_pages(app: Starlette) -> frozenset[str]:
    """The first path segments of e2g's own pages, never a list's name (set by
    create_app from the routers it includes before lore's, `first_segments`)."""
    found: frozenset[str] = getattr(app.state, "own_pages", frozenset())
    return found


def first_segments(routers: Sequence[APIRouter], *prefixes: str) -> frozenset[str]:
    """The first path segments the routes of `routers` take, and `prefixes`' (a
    router included under a prefix): read from the routes, so a page added later
    is never taken for a list's name."""
    paths = [getattr(route, "path", "") for one in routers for route in one.routes]
    return frozenset(
        path.strip("/").split("/", 1)[0]
        for path in [*paths, *prefixes]
        if not path.startswith("/{")
    ) - {""}


@router.get("/r/{message_id:path}")
def redirector(message_id: str) -> RedirectResponse:
    """lore's /r/<msgid> redirector."""
    wanted = check_message_id(_split(message_id)[0])
    return RedirectResponse(f"/all/{message_path(wanted)}/", status_code=302)


@router.api_route("/{name}/", methods=["GET", "POST"])
def list_search(  # noqa: PLR0913 - FastAPI parameters
    request: Request,
    context: Context,
    name: str,
    q: Query_ = "",
    x: Annotated[str, Query(max_length=10)] = "",
    t: Annotated[str, Query(max_length=10)] = "",
) -> Response:
    """A list's search (public-inbox's `?q=`): an mbox.gz with `x=m`, else the
    search page. `/<msgid>/` without a list goes to `/all/<msgid>/`."""
    if "@" in name and not q:
        wanted = check_message_id(name)
        return RedirectResponse(f"/all/{message_path(wanted)}/", status_code=302)
    list_id = _list(request, context, name)
    if x != "m":
        query = f"({q}) list:{list_id}" if list_id and q.strip() else q
        return RedirectResponse(
            "/search?" + urlencode({"q": query}) if query.strip() else "/",
            status_code=303,
        )
    if not q.strip():
        raise errors.UsageError("x=m needs a query: ?q=QUERY&x=m")
    mbox = lore.search_mbox(
        context.settings, q, list_id=list_id, whole_threads=t == "1"
    )
    return _gzipped(mbox, "results.mbox.gz")


@router.get("/{name}/{rest:path}")
def message(request: Request, context: Context, name: str, rest: str) -> Response:
    """A message by Message-ID under a list's name: its thread page, its raw
    bytes, or its whole thread as an mbox.gz."""
    _list(request, context, name)
    message_id, asked = _split(rest)
    wanted = check_message_id(message_id)
    if asked == "page":
        page: HTMLResponse = thread_page(wanted, context)
        return page
    if asked == "raw":
        data = threads.raw_message(context.settings, wanted)
        if data is None:
            raise errors.NotFound(f"no message <{wanted}> in the store")
        return Response(data, media_type="text/plain")
    mbox = lore.thread_mbox(context.settings, wanted)
    if mbox is None:
        raise errors.NotFound(f"no message <{wanted}> in the store")
    return _gzipped(mbox, "t.mbox.gz")


def _gzipped(mbox: bytes, name: str) -> Response:
    return Response(
        gzip.compress(mbox, compresslevel=6, mtime=0),
        media_type="application/gzip",
        headers={"content-disposition": f'attachment; filename="{name}"'},
    )
