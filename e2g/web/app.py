"""`create_app(settings, repo=...)`: the ASGI application behind `e2g serve`.

It wires the HTML pages (`web.pages`) and the JSON API (`web.rest`) to one read-only
store, and owns the two things every response shares: the security headers (a strict
Content-Security-Policy, nosniff, no referrer; only the token page may run a script, and
only ours from /static/) and the error shape. Under /api/ every
4xx/5xx is `{"error": {"status", "code", "message"}}`; pages get the same facts as HTML.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path, PurePath

import jinja2
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from e2g import __version__, errors, words
from e2g.config import Settings
from e2g.web import lore, metrics_view, pages, patchwork, queue_view, rest
from e2g.web.context import CACHE_ENTRIES, ResultCache, WebContext
from e2g.web.render import BadInput, diff_lines, message_path, safe_href

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
# The token page's panel is the one script: a static file of ours (/static/tokens.js),
# no inline script, handler or style. Every other page keeps a policy with no scripts.
SCRIPT_PAGES = ("/tokens/",)
SCRIPT_CONTENT_SECURITY_POLICY = f"{CONTENT_SECURITY_POLICY}; script-src 'self'"
SECURITY_HEADERS = (
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
)

# E2gError subclass -> (HTTP status, error code); first match wins.
ERROR_STATUS: tuple[tuple[type[errors.E2gError], int, str], ...] = (
    (errors.NotFound, 404, "not-found"),
    (errors.UnknownCommit, 404, "unknown-commit"),
    (errors.QueryError, 400, "bad-query"),
    (errors.UsageError, 400, "bad-request"),
    (errors.EmptyStore, 503, "no-store"),
    (errors.NotMatched, 404, "not-matched"),
    (errors.IndexError_, 503, "index-unavailable"),
    (errors.RepoError, 503, "repo-unavailable"),
    (errors.StoreError, 503, "store-unavailable"),
)
HEADINGS = {
    400: "Bad request",
    404: "Not found",
    405: "Method not allowed",
    500: "Server error",
    503: "Unavailable",
}


def _day(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d") if moment else "????-??-??"


def _stamp(moment: datetime | None) -> str:
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
        if moment
        else "date unknown"
    )


def make_templates(settings: Settings) -> jinja2.Environment:
    """Autoescaping on for every template; mail content is never marked safe."""
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        auto_reload=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(
        day=_day,
        stamp=_stamp,
        mid_path=message_path,
        href=safe_href,
        diff_lines=diff_lines,
        list_url=settings.url_for,
        basename=_basename,
        count=words.count,
    )
    environment.globals.update(version=__version__, data_dir=str(settings.data_dir))
    return environment


def _basename(path: str) -> str:
    """A repository's name as pages show it: the last part of its path."""
    return PurePath(path).name or path


def error_response(
    request: Request,
    status: int,
    code: str,
    message: str,
    *,
    search_for: str | None = None,
) -> Response:
    """The JSON error shape under /api/ (and for non-HTML clients), an HTML page elsewhere."""
    if request.url.path.startswith("/api/") or "text/html" not in request.headers.get(
        "accept", "text/html"
    ):
        return JSONResponse(
            {"error": {"status": status, "code": code, "message": message}},
            status_code=status,
        )
    context: WebContext = request.app.state.e2g
    page = context.templates.get_template("error.html").render(
        status=status,
        heading=HEADINGS.get(status, "Error"),
        message=message,
        search_for=search_for,
    )
    return HTMLResponse(page, status_code=status)


class SecurityHeaders:
    """Pure ASGI middleware: the headers on every response, and the last-resort 500.

    This is the server's boundary, so it is the one place in the web layer that catches
    broadly: a bug in one request becomes a 500 in the error shape (logged with its
    traceback), never a dropped connection or a page without the security headers.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_secured(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS:
                    headers[name] = value
                if str(scope.get("path", "")).startswith(SCRIPT_PAGES):
                    headers["content-security-policy"] = SCRIPT_CONTENT_SECURITY_POLICY
            await send(message)

        try:
            await self.app(scope, receive, send_secured)
        except Exception:
            log.exception("request failed: %s", scope.get("path", "?")[:200])
            if started:
                raise
            response = error_response(
                Request(scope),
                500,
                "internal",
                "internal error; the server log has the details",
            )
            await response(scope, receive, send_secured)


def _install_errors(app: FastAPI) -> None:
    async def on_e2g(request: Request, error: Exception) -> Response:
        assert isinstance(error, errors.E2gError)
        for kind, status, code in ERROR_STATUS:
            if isinstance(error, kind):
                search_for = (
                    request.path_params.get("rev")
                    if kind is errors.UnknownCommit
                    else None
                )
                return error_response(
                    request, status, code, str(error), search_for=search_for
                )
        # Any other E2gError is a fact about the data, not a bug: e.g. stats before
        # `e2g match` ran. The server cannot answer until someone acts on it.
        return error_response(request, 503, "unavailable", str(error))

    async def on_bad_input(request: Request, error: Exception) -> Response:
        assert isinstance(error, BadInput)
        return error_response(request, 400, error.code, error.message)

    async def on_http(request: Request, error: Exception) -> Response:
        assert isinstance(error, StarletteHTTPException)
        code = {404: "not-found", 405: "method-not-allowed"}.get(
            error.status_code, "http-error"
        )
        message = error.detail if isinstance(error.detail, str) else "request failed"
        return error_response(request, error.status_code, code, message)

    async def on_validation(request: Request, error: Exception) -> Response:
        assert isinstance(error, RequestValidationError)
        problems = [
            f"{'.'.join(str(part) for part in problem.get('loc', ()))}: {problem.get('msg', 'invalid')}"
            for problem in error.errors()[:5]
        ]
        return error_response(
            request, 400, "bad-request", "; ".join(problems)[:1000] or "bad request"
        )

    app.add_exception_handler(errors.E2gError, on_e2g)
    app.add_exception_handler(BadInput, on_bad_input)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(RequestValidationError, on_validation)


def create_app(
    settings: Settings, *, repo: Path | None, cache_entries: int = CACHE_ENTRIES
) -> FastAPI:
    """The whole web application for one store and one git repository (None: the
    mail only; the pages of commits say that no repository is configured)."""
    # Imported here, before the server's threads start: Whoosh is imported with
    # stand-ins briefly in sys.modules (e2g.index.whoosh_imports), which another
    # thread's import must not see.
    import e2g.index.fulltext  # noqa: F401, PLC0415

    app = FastAPI(
        title="e2g",
        version=__version__,
        description="Read-only API: commits linked to the mailing-list messages that carried them.",
        openapi_url="/api/v1/openapi.json",
        docs_url=None,  # the Swagger/ReDoc pages need scripts the CSP forbids
        redoc_url=None,
    )
    app.state.e2g = WebContext(
        settings=settings,
        repository=repo,
        templates=make_templates(settings),
        cache=ResultCache(cache_entries),
        stylesheet=(HERE / "static" / "style.css").read_bytes(),
        script=(HERE / "static" / "tokens.js").read_bytes(),
    )
    app.add_middleware(SecurityHeaders)
    _install_errors(app)
    own = (
        pages.router,
        queue_view.pages,
        metrics_view.pages,
        rest.router,
        queue_view.rest,
        metrics_view.rest,
    )
    for router in own:
        app.include_router(router)
    # Patchwork's API at its version and at /api/ (the latest, as Patchwork).
    app.include_router(patchwork.router, prefix=f"/api/{patchwork.VERSION}")
    app.include_router(patchwork.router, prefix="/api")
    app.state.own_pages = lore.first_segments(own, "/api/")
    # Last: lore's /<list>/<msgid>/ shapes take only what no route above takes.
    app.include_router(lore.router)
    return app
