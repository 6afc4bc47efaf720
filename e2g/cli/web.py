"""`e2g serve`: the read-only web page and JSON API on a real ASGI server (uvicorn).

Bound to loopback unless --host says otherwise: the mail is public, but the machine
serving it need not be.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from e2g.cli import output
from e2g.cli.context import options
from e2g.config import Settings
from e2g.errors import E2gError, Interrupted, RepoError, UsageError

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def serve(
    ctx: typer.Context,
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on (loopback by default).")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", "-p", min=1, max=65535, help="TCP port.")
    ] = 8080,
    repo: Annotated[
        Path | None,
        typer.Option(
            "--repo",
            "-C",
            help="Git repository whose commits are looked up (default: the current directory).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve the web page and the REST API (read-only) until Ctrl-C."""
    try:
        import uvicorn

        from e2g.web.app import create_app
    except ModuleNotFoundError as error:
        raise UsageError(
            f"e2g serve needs the web extra ({error.name} is missing): pip install 'e2g[web]'"
        ) from None
    repository = _repository(repo)
    settings = options(ctx).settings()
    _check_can_serve(settings, host, port)
    app = create_app(settings, repo=repository)
    if not options(ctx).quiet:
        where = f"[{host}]" if ":" in host else host
        what = (
            f"for {repository}"
            if repository is not None
            else "(no git repository here: mail, threads, search and the way back; "
            "-C REPO adds commits, blame and tokens)"
        )
        output.err(
            f"e2g: serving {settings.data_dir} {what} on http://{where}:{port}/ (Ctrl-C stops)"
        )
        if host not in LOOPBACK:
            output.err(
                "e2g: warning: listening beyond loopback; anyone who can reach this port can read the store"
            )
    try:
        uvicorn.run(
            app,
            host=host,
            port=port,
            log_level="warning" if options(ctx).quiet else "info",
            access_log=options(ctx).verbose > 0,
            server_header=False,
        )
    except Interrupted:
        return  # Ctrl-C is how a server is stopped: a quiet, successful end


def _repository(repo: Path | None) -> Path | None:
    """The repository whose commits the pages show: --repo (which must be one), else
    the current directory when it is inside one, else None: the mail alone."""
    from e2g.git.repo import Repo

    if repo is None:
        try:
            Repo.open(Path.cwd())
        except RepoError:
            return None
        return Path.cwd().resolve()
    repository = repo.resolve()
    if not repository.is_dir():
        raise RepoError(f"{repository} is not a directory: pass --repo PATH")
    Repo.open(repository)  # a clear error now, not on every commit page
    return repository


def _check_can_serve(settings: Settings, host: str, port: int) -> None:
    """Refuse at start, in one line, what would otherwise fail on every page: no
    mail to serve, a port already taken."""
    import errno
    import socket

    from e2g.api.basis import no_mail, open_store

    with open_store(settings) as store:
        if store.max_seq() == 0:
            raise no_mail(settings)
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as error:
        reason = (
            "is in use by another program"
            if error.errno == errno.EADDRINUSE
            else f"cannot be listened on ({error.strerror})"
        )
        raise E2gError(f"{host} port {port} {reason}: pass --port N") from None


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
