"""The patch queue on the web: /patches (a form, paged, links that keep its filters),
its JSON twin /api/v1/patches, /api/v1/events, the Atom feeds /patches.atom and
/events.atom with the same filters, and /series/ID with its twin /api/v1/series/ID
(every version of a series: e2g series).

Each handler checks its inputs (bounded), calls e2g.api.queue.listing and renders
an autoescaped template or a feed built with ElementTree (which escapes every text
and attribute it writes: mail content never reaches the XML unescaped).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from typing import Annotated
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from e2g import __version__
from e2g.api.queue import listing, states, versions
from e2g.index.store import EventFilter, QueueFilter
from e2g.render.queue import event_json, patch_json, series_json
from e2g.web.context import WebContext, web_context
from e2g.web.render import check_message_id
from e2g.web.rest import ERRORS

pages = APIRouter(include_in_schema=False)
rest = APIRouter(prefix="/api/v1", responses=ERRORS)
Context = Annotated[WebContext, Depends(web_context)]

PAGE_SIZE = 50
MAX_PAGE = 2000
FEED_ENTRIES = 50
MAX_LIMIT = 1000
FILES_SHOWN = 100  # files of one part's change listed on /series/ID
ATOM = "http://www.w3.org/2005/Atom"
Text = Annotated[str, Query(max_length=200)]


class Filters:
    """The filters of every queue view, as the query string gives them."""

    def __init__(  # noqa: PLR0913 - the query string's fields
        self,
        q: Annotated[str, Query(max_length=2000)] = "",
        state: Annotated[list[str] | None, Query(max_length=20)] = None,
        list_: Annotated[list[str] | None, Query(alias="list", max_length=20)] = None,
        from_: Annotated[str, Query(alias="from", max_length=200)] = "",
        since: Text = "",
        until: Text = "",
        flat: bool = False,
    ) -> None:
        self.q = q
        self.flat = flat
        self.state = [
            part for value in state or [] for part in value.split(",") if part
        ]
        self.lists = [value for value in list_ or [] if value]
        self.author = from_
        self.since = since
        self.until = until

    def wanted(self, *, limit: int, offset: int) -> QueueFilter:
        return QueueFilter(
            states=listing.parse_states(",".join(self.state) or None),
            lists=tuple(self.lists),
            author=self.author,
            since=listing.parse_when(self.since) if self.since else None,
            until=listing.parse_when(self.until) if self.until else None,
            limit=limit,
            offset=offset,
        )

    def query(self, **more: object) -> str:
        """The query string that keeps these filters (and `more`)."""
        pairs: list[tuple[str, object]] = []
        pairs += [("q", self.q)] if self.q else []
        pairs += [("state", state) for state in self.state]
        pairs += [("list", name) for name in self.lists]
        pairs += [("from", self.author)] if self.author else []
        pairs += [("since", self.since)] if self.since else []
        pairs += [("until", self.until)] if self.until else []
        pairs += [("flat", 1)] if self.flat else []
        pairs += list(more.items())
        return urlencode(pairs)


QueueFilters = Annotated[Filters, Depends()]


@pages.get("/patches")
def patches_page(
    context: Context,
    filters: QueueFilters,
    page: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 1,
    n: Annotated[int, Query(ge=1, le=200)] = PAGE_SIZE,
) -> HTMLResponse:
    found = listing.patches(
        context.settings,
        query=filters.q,
        wanted=filters.wanted(limit=n, offset=(page - 1) * n),
    )
    pages_ = max(1, min(MAX_PAGE, -(-found.total // n)))
    size = {"n": n} if n != PAGE_SIZE else {}
    if filters.flat:  # one row per patch version: each its own group
        found = found._replace(series=[_alone(view) for view in found.patches])
    body = context.templates.get_template("patches.html").render(
        page=found,
        filters=filters,
        states=states.STATES,
        chosen=set(listing.parse_states(",".join(filters.state) or None)),
        number=page,
        pages=pages_,
        newer=filters.query(**size, page=page - 1) if page > 1 else None,
        older=filters.query(**size, page=page + 1) if page < pages_ else None,
        feed=filters.query(),
        box_value=filters.q,
    )
    return HTMLResponse(body, headers={"cache-control": "no-cache"})


def _alone(view: listing.PatchView) -> listing.SeriesView:
    return listing.SeriesView(
        message_id=view.message_id,
        subject=view.subject,
        state=view.state,
        tally="",
        parts=(view,),
        total=1,
    )


@rest.get("/patches", summary="The patch queue (e2g patches --json), newest first")
def patches_api(
    context: Context,
    filters: QueueFilters,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 100,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> JSONResponse:
    found = listing.patches(
        context.settings,
        query=filters.q,
        wanted=filters.wanted(limit=limit, offset=offset),
    )
    return JSONResponse(
        {
            "total": found.total,
            "limit": limit,
            "offset": offset,
            "note": found.note,
            "patches": [patch_json(view) for view in found.patches],
        }
    )


@pages.get("/series/{message_id:path}")
def series_page(message_id: str, context: Context) -> HTMLResponse:
    history = versions.series_history(context.settings, check_message_id(message_id))
    latest = history.versions[-1] if history.versions else None
    body = context.templates.get_template("series.html").render(
        history=history,
        title=(latest.subject if latest else "") or "(no subject)",
        files_shown=FILES_SHOWN,
    )
    return HTMLResponse(body, headers={"cache-control": "no-cache"})


@rest.get(
    "/series/{message_id:path}",
    summary="Every version of a series and what changed (e2g series --json)",
)
def series_api(message_id: str, context: Context) -> JSONResponse:
    history = versions.series_history(context.settings, check_message_id(message_id))
    return JSONResponse(series_json(history))


def _event_filter(
    since: str, from_: str, lists: list[str] | None, *, limit: int, newest: bool
) -> EventFilter:
    after, moment = listing.since_filter(since or None)
    return EventFilter(
        after_id=after,
        since=moment,
        author=from_,
        lists=tuple(value for value in lists or [] if value),
        limit=limit,
        newest_first=newest,
    )


@rest.get("/events", summary="What changed in the queue (e2g events --json)")
def events_api(
    context: Context,
    since: Text = "",
    from_: Annotated[str, Query(alias="from", max_length=200)] = "",
    list_: Annotated[list[str] | None, Query(alias="list", max_length=20)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 100,
) -> JSONResponse:
    wanted = _event_filter(since, from_, list_, limit=limit, newest=False)
    found = listing.events(context.settings, wanted)
    return JSONResponse({"events": [event_json(event) for event in found]})


@pages.get("/patches.atom")
def patches_feed(request: Request, context: Context, filters: QueueFilters) -> Response:
    found = listing.patches(
        context.settings,
        query=filters.q,
        wanted=filters.wanted(limit=FEED_ENTRIES, offset=0),
    )
    base = str(request.base_url).rstrip("/")
    feed = _feed(
        title="e2g patches" + (f": {filters.query()}" if filters.query() else ""),
        feed_id=f"{base}/patches.atom?{filters.query()}",
        link=f"{base}/patches?{filters.query()}",
        entries=[_patch_entry(view, base) for view in found.patches],
    )
    return _atom(feed)


@pages.get("/events.atom")
def events_feed(
    request: Request,
    context: Context,
    since: Text = "",
    from_: Annotated[str, Query(alias="from", max_length=200)] = "",
    list_: Annotated[list[str] | None, Query(alias="list", max_length=20)] = None,
) -> Response:
    wanted = _event_filter(since, from_, list_, limit=FEED_ENTRIES, newest=True)
    found = listing.events(context.settings, wanted)
    base = str(request.base_url).rstrip("/")
    feed = _feed(
        title="e2g events",
        feed_id=f"{base}/events.atom",
        link=f"{base}/patches",
        entries=[_event_entry(event, base) for event in found],
    )
    return _atom(feed)


class Entry:
    def __init__(  # noqa: PLR0913 - an entry's parts
        self,
        *,
        entry_id: str,
        title: str,
        updated: datetime,
        author: str,
        email: str,
        link: str,
        summary: str,
    ) -> None:
        self.entry_id, self.title, self.updated = entry_id, title, updated
        self.author, self.email, self.link, self.summary = author, email, link, summary


def _patch_entry(view: listing.PatchView, base: str) -> Entry:
    untracked = view.state == states.UNTRACKED
    state = view.state + (f" ({view.mail_state})" if untracked else "")
    commits = ", ".join(
        commit.commit[:12] + (f" in {commit.release}" if commit.release else "")
        for commit in view.commits
    )
    moment = view.last_activity or view.date or datetime(1970, 1, 1, tzinfo=UTC)
    return Entry(
        entry_id=f"urn:e2g:patch:{quote(view.message_id, safe='@')}:{view.state}",
        title=f"[{state}] {view.subject}",
        updated=moment,
        author=view.author_name or view.author_email,
        email=view.author_email,
        link=f"{base}/thread/{quote(view.message_id, safe='@')}",
        summary=f"{state}; {view.list}"
        + (f"; applied as {commits}" if commits else "")
        + (f"; superseded by <{view.superseded_by}>" if view.superseded_by else ""),
    )


def _event_entry(event: listing.EventView, base: str) -> Entry:
    change = " → ".join(part for part in (event.from_state, event.to_state) if part)
    landed = " ".join(
        part
        for part in (event.commit and event.commit[:12], event.tree, event.release)
        if part
    )
    return Entry(
        entry_id=f"urn:e2g:event:{event.id}",
        title=f"{event.kind}{f' {change}' if change else ''}: {event.subject}",
        updated=event.found,
        author=event.author_name or event.author_email,
        email=event.author_email,
        link=f"{base}/thread/{quote(event.message_id, safe='@')}",
        summary=" ".join(part for part in (event.kind, change, landed) if part),
    )


def _feed(*, title: str, feed_id: str, link: str, entries: list[Entry]) -> bytes:
    """An Atom document (RFC 4287): the feed's id, title, updated and author, and
    each entry's id, title, updated, author, link and summary."""
    ET.register_namespace("", ATOM)
    root = ET.Element(f"{{{ATOM}}}feed")
    _text(root, "id", feed_id)
    _text(root, "title", title)
    newest = max((entry.updated for entry in entries), default=None)
    _text(root, "updated", _stamp(newest or datetime(1970, 1, 1, tzinfo=UTC)))
    ET.SubElement(root, f"{{{ATOM}}}link", rel="alternate", href=link)
    author = ET.SubElement(root, f"{{{ATOM}}}author")
    _text(author, "name", "e2g")
    _text(root, "generator", "e2g").set("version", __version__)
    for entry in entries:
        item = ET.SubElement(root, f"{{{ATOM}}}entry")
        _text(item, "id", entry.entry_id)
        _text(item, "title", entry.title)
        _text(item, "updated", _stamp(entry.updated))
        person = ET.SubElement(item, f"{{{ATOM}}}author")
        _text(person, "name", entry.author or entry.email or "unknown")
        if entry.email:
            _text(person, "email", entry.email)
        ET.SubElement(item, f"{{{ATOM}}}link", rel="alternate", href=entry.link)
        _text(item, "summary", entry.summary)
    return bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True))


def _text(parent: ET.Element, name: str, value: str) -> ET.Element:
    element = ET.SubElement(parent, f"{{{ATOM}}}{name}")
    element.text = _clean(value)
    return element


def _clean(value: str) -> str:
    """Text XML 1.0 may carry: mail can hold control characters it may not."""
    return "".join(
        char
        for char in value[:2000]
        if char in "\t\n\r"
        or (" " <= char <= "\ud7ff")
        or ("\ue000" <= char <= "\ufffd")
        or char >= "\U00010000"
    )


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _atom(body: bytes) -> Response:
    return Response(
        body,
        media_type="application/atom+xml",
        headers={"cache-control": "no-cache"},
    )
