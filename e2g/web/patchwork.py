"""Patchwork's REST API, read-only, at /api/1.3/ (and /api/, its latest version),
so git-pw, pwclient and Patchwork's other clients read e2g's patch queue.

The JSON is Patchwork's (docs/api/schemas/v1.3/patchwork.yaml in Patchwork's
repository names every field): lists are JSON arrays paged by `page` and
`per_page` (30 a page, at most 250) with a `Link` header naming the next and
previous pages; objects embed their project, submitter and series as Patchwork
does. The values come from e2g.api.patchwork (ids, states mapped to Patchwork's
names); the fields e2g has nothing for hold Patchwork's empty value (`delegate`
null, `check` "pending", `tags` {}, `related` []), and `e2g_state` beside `state`
keeps e2g's own name. Every write (POST, PUT, PATCH, DELETE) answers 405.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from e2g import errors
from e2g.api import patchwork as pw
from e2g.api.queue.listing import parse_when
from e2g.index.store import CoverFilter, EventFilter, Person, QueueFilter
from e2g.model.stored import StoredMessage
from e2g.web.context import WebContext, web_context
from e2g.web.render import message_path

VERSION = "1.3"
PER_PAGE = 30
MAX_PER_PAGE = 250
MAX_PAGE = 100_000

router = APIRouter(include_in_schema=False)
Context = Annotated[WebContext, Depends(web_context)]
Page = Annotated[int, Query(ge=1, le=MAX_PAGE)]
PerPage = Annotated[int, Query(ge=1, le=MAX_PER_PAGE)]
Text = Annotated[str, Query(max_length=500)]
Texts = Annotated[list[str] | None, Query(max_length=50)]


class Urls:
    """Absolute URLs of this server, as Patchwork gives them."""

    def __init__(self, request: Request) -> None:
        self.base = str(request.base_url).rstrip("/")
        self.api = f"{self.base}/api/{VERSION}"

    def of(self, kind: str, number: int, tail: str = "") -> str:
        return f"{self.api}/{kind}/{number}/{tail}"

    def page(self, message_id: str) -> str:
        return f"{self.base}/thread/{message_path(message_id)}"


def _date(moment: datetime | None) -> str | None:
    """Patchwork's dates: UTC, no offset."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S") if moment else None


def _when(text: str) -> int | None:
    if not text:
        return None
    try:
        return parse_when(text)
    except errors.UsageError as error:
        raise errors.UsageError(f"since/before: {error}") from None


def _project(urls: Urls, project: pw.Project | None, context: WebContext) -> Any:
    if project is None:
        return None
    template = context.settings.url_for("{}", project.list_id)
    return {
        "id": project.id,
        "url": urls.of("projects", project.id),
        "name": project.list_id,
        "link_name": project.link_name,
        "list_id": project.list_id,
        "list_email": project.list_id.replace(".", "@", 1),
        "web_url": f"{urls.base}/patches?list={project.list_id}",
        "scm_url": "",
        "webscm_url": "",
        "list_archive_url": f"{urls.base}/{project.link_name}/",
        "list_archive_url_format": template.replace("%7B%7D", "{}")
        if template
        else f"{urls.base}/{project.link_name}/{{}}/",
        "commit_url_format": "",
    }


def _person(urls: Urls, person: Person | None) -> Any:
    if person is None:
        return None
    return {
        "id": person.id,
        "url": urls.of("people", person.id),
        "name": person.name,
        "email": person.email,
    }


def _series_brief(urls: Urls, brief: pw.SeriesBrief) -> dict[str, Any]:
    return {
        "id": brief.id,
        "url": urls.of("series", brief.id),
        "web_url": urls.of("series", brief.id),
        "name": brief.name,
        "date": _date(brief.date),
        "version": brief.version,
        "mbox": urls.of("series", brief.id, "mbox/"),
    }


def _embedded(urls: Urls, message: StoredMessage, kind: str) -> dict[str, Any]:
    return {
        "id": message.seq,
        "url": urls.of(kind, message.seq),
        "web_url": urls.page(message.message_id),
        "msgid": f"<{message.message_id}>",
        "list_archive_url": None,
        "date": _date(message.date),
        "name": message.subject,
        "mbox": urls.of(kind, message.seq, "mbox/"),
    }


def _submission(
    urls: Urls, one: pw.Submission, context: WebContext, kind: str
) -> dict[str, Any]:
    message = one.message
    submitter = Person(
        one.submitter or 0, message.credited_name, message.credited_email
    )
    found = _embedded(urls, message, kind) | {
        "project": _project(urls, one.project, context),
        "list_archive_url": context.settings.url_for(
            message.message_id, one.project.list_id if one.project else None
        ),
        "submitter": _person(urls, submitter),
        "series": [_series_brief(urls, one.series)] if one.series else [],
        "comments": urls.page(message.message_id),
    }
    if kind == "covers":
        return found
    row = one.row
    state = row.state if row else ""
    return found | {
        "commit_ref": pw.commit_ref(row),
        "pull_url": message.pull_url,
        "state": pw.SLUGS.get(state, state),
        "e2g_state": state,
        "archived": False,
        "hash": message.patch_id,
        "delegate": None,
        "check": "pending",
        "checks": urls.of("patches", message.seq, "checks/"),
        "tags": {},
        "related": [],
    }


def _detail(
    urls: Urls, one: pw.Submission, context: WebContext, kind: str
) -> dict[str, Any]:
    details = pw.details(context.settings, one.message.seq)
    found = _submission(urls, one, context, kind) | {
        "headers": details.headers,
        "content": details.content,
    }
    if kind == "patches":
        found |= {"diff": details.diff, "prefixes": _prefixes(one.message.subject)}
    return found


def _prefixes(subject: str) -> list[str]:
    """The words of the subject's leading [...] groups: ["PATCH", "v3", "1/4"]."""
    found: list[str] = []
    text = subject.strip()
    while text.startswith("[") and "]" in text and len(found) < 20:
        inside, _, text = text[1:].partition("]")
        found += inside.replace(",", " ").split()
        text = text.strip()
    return found


def _paged(
    request: Request, items: Sequence[Any], *, total: int, page: int, per_page: int
) -> JSONResponse:
    """A page of a list with Patchwork's Link header (rel next, prev)."""
    links = []
    if page * per_page < total:
        links.append(f'<{request.url.include_query_params(page=page + 1)}>; rel="next"')
    if page > 1:
        links.append(f'<{request.url.include_query_params(page=page - 1)}>; rel="prev"')
    headers = {"link": ", ".join(links)} if links else {}
    return JSONResponse(list(items), headers=headers)


def _mbox(data: bytes, name: str) -> Response:
    return Response(
        data,
        media_type="application/mbox",
        headers={"content-disposition": f"attachment; filename={name}"},
    )


def _index(request: Request) -> dict[str, str]:
    urls = Urls(request)
    kinds = ("bundles", "covers", "events", "patches", "people", "projects")
    return {kind: f"{urls.api}/{kind}/" for kind in (*kinds, "series", "users")}


@router.get("/")
def index(request: Request) -> JSONResponse:
    """The resources, as Patchwork's API root lists them."""
    return JSONResponse(_index(request))


@router.get("/projects/")
def projects(request: Request, context: Context) -> JSONResponse:
    urls = Urls(request)
    found = pw.projects(context.settings)
    return JSONResponse([_project(urls, one, context) for one in found])


@router.get("/projects/{name}/")
def project(request: Request, context: Context, name: str) -> JSONResponse:
    found = pw.project_named(context.settings, name[:300])
    if found is None:
        raise errors.NotFound(
            f"no project {name[:100]!r}: see /api/{VERSION}/projects/"
        )
    return JSONResponse(_project(Urls(request), found, context))


def _lists(context: WebContext, text: str) -> tuple[str, ...]:
    if not text:
        return ()
    found = pw.project_named(context.settings, text)
    return (found.list_id,) if found else ("-",)


def _series_heads(context: WebContext, text: str) -> tuple[str, ...]:
    if not text:
        return ()
    found = pw.one_series(context.settings, int(text)) if text.isdigit() else None
    if found is None:
        return ("-",)
    head = found.cover or found.patches[0]
    return (head.message_id,)


@router.get("/patches/")
def patches(  # noqa: PLR0913 - Patchwork's filters
    request: Request,
    context: Context,
    project: Text = "",
    state: Texts = None,
    submitter: Text = "",
    series: Text = "",
    since: Text = "",
    before: Text = "",
    msgid: Text = "",
    archived: Text = "",
    q: Text = "",
    order: Text = "id",
    page: Page = 1,
    per_page: PerPage = PER_PAGE,
) -> JSONResponse:
    """Patchwork's patch list: filters as Patchwork takes them, oldest id first
    unless `order` says otherwise (id, date, name, each with a "-")."""
    wanted = QueueFilter(
        states=pw.states_of(state) if state else (),
        lists=_lists(context, project),
        since=_when(since),
        until=_when(before),
        limit=0 if archived == "true" else per_page,  # nothing is archived
        offset=(page - 1) * per_page,
        series=_series_heads(context, series),
        author_email=pw.person_email(context.settings, submitter) if submitter else "",
        subject=q,
        message_id=msgid.strip().strip("<>"),
        order=order,
    )
    found = pw.patches(context.settings, wanted)
    urls = Urls(request)
    items = [_submission(urls, one, context, "patches") for one in found.patches]
    total = 0 if archived == "true" else found.total
    return _paged(request, items, total=total, page=page, per_page=per_page)


def _patch(context: WebContext, number: int, kind: str) -> pw.Submission:
    found = pw.submission(context.settings, number, kind=kind)
    if found is None:
        label = "patch" if kind == "patch" else "cover letter"
        raise errors.NotFound(f"no {label} {number}")
    return found


@router.get("/patches/{number}/")
def patch(request: Request, context: Context, number: int) -> JSONResponse:
    found = _patch(context, number, "patch")
    return JSONResponse(_detail(Urls(request), found, context, "patches"))


@router.get("/patches/{number}/mbox/")
def patch_mbox(context: Context, number: int) -> Response:
    found = _patch(context, number, "patch")
    return _mbox(pw.mbox(context.settings, [found.message.seq]), f"{number}.patch")


@router.get("/patches/{number}/checks/")
def patch_checks(context: Context, number: int) -> JSONResponse:
    _patch(context, number, "patch")
    return JSONResponse([])


@router.get("/covers/")
def covers(  # noqa: PLR0913 - Patchwork's filters
    request: Request,
    context: Context,
    project: Text = "",
    submitter: Text = "",
    series: Text = "",
    since: Text = "",
    before: Text = "",
    msgid: Text = "",
    q: Text = "",
    order: Text = "id",
    page: Page = 1,
    per_page: PerPage = PER_PAGE,
) -> JSONResponse:
    wanted = CoverFilter(
        lists=_lists(context, project),
        author_email=pw.person_email(context.settings, submitter) if submitter else "",
        since=_when(since),
        until=_when(before),
        message_id=msgid.strip().strip("<>"),
        subject=q,
        series_ids=(int(series),) if series.isdigit() else ((-1,) if series else ()),
        newest_first=order.startswith("-"),
        limit=per_page,
        offset=(page - 1) * per_page,
    )
    found, total = pw.covers(context.settings, wanted)
    urls = Urls(request)
    items = [_submission(urls, one, context, "covers") for one in found]
    return _paged(request, items, total=total, page=page, per_page=per_page)


@router.get("/covers/{number}/")
def cover(request: Request, context: Context, number: int) -> JSONResponse:
    found = _patch(context, number, "cover")
    return JSONResponse(_detail(Urls(request), found, context, "covers"))


@router.get("/covers/{number}/mbox/")
def cover_mbox(context: Context, number: int) -> Response:
    found = _patch(context, number, "cover")
    return _mbox(pw.mbox(context.settings, [found.message.seq]), f"{number}.mbox")


def _series(urls: Urls, one: pw.SeriesView, context: WebContext) -> dict[str, Any]:
    row = one.row
    brief = pw.SeriesBrief(row.id, one.name, row.version, None)
    head = one.cover or one.patches[0]
    total = row.total or len(one.patches)
    return _series_brief(urls, brief) | {
        "date": _date(head.date),
        "project": _project(urls, one.project, context),
        "submitter": _person(urls, one.submitter),
        "total": total,
        "received_total": len(one.patches),
        "received_all": len(one.patches) >= total,
        "cover_letter": _embedded(urls, one.cover, "covers") if one.cover else None,
        "patches": [_embedded(urls, part, "patches") for part in one.patches],
    }


@router.get("/series/")
def series_list(  # noqa: PLR0913 - Patchwork's filters
    request: Request,
    context: Context,
    project: Text = "",
    submitter: Text = "",
    since: Text = "",
    before: Text = "",
    q: Text = "",
    order: Text = "id",
    page: Page = 1,
    per_page: PerPage = PER_PAGE,
) -> JSONResponse:
    wanted = QueueFilter(
        lists=_lists(context, project),
        author_email=pw.person_email(context.settings, submitter) if submitter else "",
        since=_when(since),
        until=_when(before),
        subject=q,
        limit=per_page,
        offset=(page - 1) * per_page,
    )
    found, total = pw.series_page(
        context.settings, wanted, newest_first=order.startswith("-")
    )
    urls = Urls(request)
    items = [_series(urls, one, context) for one in found]
    return _paged(request, items, total=total, page=page, per_page=per_page)


def _one_series(context: WebContext, number: int) -> pw.SeriesView:
    found = pw.one_series(context.settings, number)
    if found is None:
        raise errors.NotFound(f"no series {number}")
    return found


@router.get("/series/{number}/")
def series(request: Request, context: Context, number: int) -> JSONResponse:
    found = _one_series(context, number)
    return JSONResponse(_series(Urls(request), found, context))


@router.get("/series/{number}/mbox/")
def series_mbox(context: Context, number: int) -> Response:
    """The series' patches, by part, as one mbox (as Patchwork's: no cover letter)."""
    found = _one_series(context, number)
    seqs = [part.seq for part in found.patches]
    return _mbox(pw.mbox(context.settings, seqs), f"series-{number}.patch")


@router.get("/people/")
def people(
    request: Request,
    context: Context,
    q: Text = "",
    page: Page = 1,
    per_page: PerPage = PER_PAGE,
) -> JSONResponse:
    found, total = pw.people(
        context.settings, text=q, limit=per_page, offset=(page - 1) * per_page
    )
    urls = Urls(request)
    items = [_person(urls, one) | {"user": None} for one in found]
    return _paged(request, items, total=total, page=page, per_page=per_page)


@router.get("/people/{number}/")
def person(request: Request, context: Context, number: int) -> JSONResponse:
    found = pw.person(context.settings, number)
    if found is None:
        raise errors.NotFound(f"no person {number}")
    return JSONResponse(_person(Urls(request), found) | {"user": None})


@router.get("/users/")
@router.get("/bundles/")
def nobody() -> JSONResponse:
    """e2g has no accounts and no bundles: always an empty list."""
    return JSONResponse([])


@router.get("/events/")
def events(  # noqa: PLR0913 - Patchwork's filters
    request: Request,
    context: Context,
    project: Text = "",
    category: Text = "",
    since: Text = "",
    page: Page = 1,
    per_page: PerPage = PER_PAGE,
) -> JSONResponse:
    """The queue's events, newest first as Patchwork lists them."""
    kinds = tuple(k for k, c in pw.CATEGORIES.items() if c == category) or (
        ("-",) if category else ()
    )
    wanted = EventFilter(
        since=_when(since),
        lists=_lists(context, project),
        kinds=kinds,
        limit=page * per_page + 1,
        newest_first=True,
    )
    found = pw.events(context.settings, wanted)
    shown = found[(page - 1) * per_page : page * per_page]
    urls = Urls(request)
    items = [_event(urls, one, context) for one in shown]
    total = len(found)
    return _paged(request, items, total=total, page=page, per_page=per_page)


def _event(urls: Urls, one: pw.Event, context: WebContext) -> dict[str, Any]:
    row = one.row
    payload: dict[str, Any] = {}
    if one.patch is not None:
        payload["patch"] = _embedded(urls, one.patch, "patches")
    if one.series is not None and one.series.series_id is not None:
        head = one.series
        brief = pw.SeriesBrief(
            head.series_id or 0, head.subject, head.version, head.date
        )
        payload["series"] = _series_brief(urls, brief)
    if one.category == "patch-state-changed":
        payload["previous_state"] = pw.SLUGS.get(row.from_state, row.from_state)
        payload["current_state"] = pw.SLUGS.get(row.to_state, row.to_state)
    return {
        "id": row.id,
        "category": one.category,
        "project": _project(urls, one.project, context),
        "date": _date(datetime.fromtimestamp(row.found, UTC)),
        "actor": None,
        "payload": payload,
    }


@router.api_route("/{rest:path}", methods=["POST", "PUT", "PATCH", "DELETE"])
def refuse_writes(rest: str) -> Response:
    raise StarletteHTTPException(
        405,
        detail="e2g serves Patchwork's API read-only: states are derived from the "
        "archive and the repository, never set",
    )
