"""The typer application: global options, logging, and the one E2gError -> exit code handler.

Each command lives in its own module and only parses flags, calls `e2g.api`, and
renders. `main()` is the console entry point.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Annotated, NoReturn

import typer

# typer (0.26 to 0.28, as pinned) carries its own click; this is its usage error.
from typer._click.exceptions import UsageError

from e2g import __version__
from e2g.cli import output
from e2g.cli.argv import reorder
from e2g.cli.context import State
from e2g.errors import E2gError, Interrupted

app = typer.Typer(
    name="e2g",
    help="Where was this commit reviewed? Link git commits to the mailing-list messages that carried them.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion, --show-completion
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"e2g {__version__}")
        raise typer.Exit()


@app.callback()
def global_options(
    ctx: typer.Context,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            help="Store location (default: $E2G_DATA_DIR, else $XDG_DATA_HOME/e2g).",
            show_default=False,
        ),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option("--quiet", "-q", help="Print nothing but errors and results."),
    ] = False,
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose",
            "-v",
            count=True,
            metavar="",  # a counted flag (-v, -vv), not a number to type
            show_default=False,
            help="More logging on stderr (-vv for debug).",
        ),
    ] = 0,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version,
            is_eager=True,
            help="Show the version and exit.",
        ),
    ] = False,
) -> None:
    ctx.obj = State(data_dir=data_dir, quiet=quiet, verbose=verbose)
    level = (
        logging.ERROR
        if quiet
        else (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbose, 2)]
    )
    logging.basicConfig(
        level=level,
        format="e2g: %(levelname)s: %(message)s",
        stream=sys.stderr,
        force=True,
    )
    for handler in logging.getLogger().handlers:
        # The level is the handler's too: a logger set lower to collect records
        # (the ingest's warnings) must not print them past -q.
        handler.setLevel(level)
    if verbose == 0 and not quiet:
        # Per-message parse warnings are counted in the summary; show them with -v.
        for name in ("e2g.ingest", "e2g.mail", "e2g.archives"):
            logging.getLogger(name).setLevel(logging.ERROR)


def _register() -> None:
    from e2g.cli import ingest, search

    ingest.register(app)
    search.register(app)
    for name in ("link", "web", "manual"):
        try:
            module = __import__(f"e2g.cli.{name}", fromlist=["register"])
        except ModuleNotFoundError as err:
            if err.name and err.name.startswith("e2g.cli"):
                continue
            raise
        module.register(app)


_register()


def _interrupt(number: int, frame: FrameType | None) -> None:
    # Not KeyboardInterrupt: click would turn that into "Aborted!" and exit 1.
    raise Interrupted(
        "interrupted; everything committed before is kept: run the same command to resume"
    )


def main() -> None:
    """Console entry point: run the app, map E2gError and Ctrl-C to one line and an exit code."""
    signal.signal(signal.SIGINT, _interrupt)
    output.tolerate_unencodable()
    try:
        # Not standalone: a usage error comes back here, to be said in one line.
        code = app(args=reorder(sys.argv[1:], _command_names()), standalone_mode=False)
    except UsageError as err:
        _usage_error(err)
    except E2gError as err:
        if os.environ.get("E2G_DEBUG"):
            raise
        sys.stderr.write(f"e2g: error: {err}\n")
        _exit(err.exit_code)
    except SystemExit as done:  # typer ends every run with sys.exit()
        _exit(done.code)
    except BrokenPipeError:
        _reader_gone()
    _exit(code if isinstance(code, int) else 0)


def _command_names() -> frozenset[str]:
    return frozenset(
        command.name or getattr(command.callback, "__name__", "")
        for command in app.registered_commands
    )


def _usage_error(err: UsageError) -> NoReturn:
    """`e2g: error: ...` and where the help is, in one line, exit 2 (as git does)."""
    context = err.ctx
    if type(err).__name__ == "NoArgsIsHelpError":  # typer has shown the help
        _exit(2)
    where = context.command_path if context is not None else "e2g"
    message = err.format_message().rstrip(".")
    sys.stderr.write(f"e2g: error: {message} (see '{where} -h')\n")
    _exit(2)


def _exit(code: int | str | None) -> NoReturn:
    """sys.exit(code), flushing stdout first, while a closed pipe can still be handled.

    Left to the interpreter's exit, a failed flush prints "Exception ignored ...
    BrokenPipeError" and exits 120 (`e2g link REV | head -c 10` when the output
    fits in the buffer).
    """
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _reader_gone()
    sys.exit(code)


def _reader_gone() -> NoReturn:
    """`e2g match --jsonl | head -1`: the reader went away; say nothing, exit 1.

    1, as typer does when the pipe breaks inside a command and as Python's docs
    advise: what was not written was not done (match keeps its committed batches).
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(1)
