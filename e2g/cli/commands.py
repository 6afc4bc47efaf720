"""The typer application: the global options, logging set-up, and the command table.

Built by `e2g.cli.app.main()`, never by the import of `e2g.cli.app`: a light command
(`e2g --version`) pays for neither typer nor the commands' modules. A command line
that names a command gets an app with that command's module alone (typer turns every
registered command's signature into click options on each run); help and errors
without a command get them all. Command modules import `e2g.api` inside their
commands, so the store, the index and the matcher load with the command that needs
them.
"""

from __future__ import annotations

import logging
import sys
from functools import cache
from importlib import import_module
from pathlib import Path
from typing import Annotated

import typer

from e2g import __version__
from e2g.cli.context import State

# Every command, and the module under e2g.cli whose `register(app)` adds it, in help
# order. To add a command, add its line here. An optional module (e2g.cli.web, with
# the `web` extra) is skipped when it is missing.
COMMANDS = {
    "ingest": "ingest",
    "reindex": "ingest",
    "optimize": "ingest",
    "sync": "sync",
    "search": "search",
    "link": "link",
    "patches": "patches",
    "events": "patches",
    "series": "patches",
    "ty": "patches",
    "match": "match",
    "stats": "stats",
    "metrics": "metrics",
    "audit": "audit",
    "blame": "blame",
    "tokens": "tokens",
    "serve": "web",
    "help": "manual",
}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"e2g {__version__}")
        raise typer.Exit()


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


@cache
def build(command: str | None = None) -> typer.Typer:
    """The app with `command`'s module registered, or with every module for None."""
    app = typer.Typer(
        name="e2g",
        help="Where was this commit reviewed? Link git commits to the mailing-list messages that carried them.",
        no_args_is_help=True,
        add_completion=True,  # --install-completion, --show-completion
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(global_options)
    modules = COMMANDS.values() if command is None else [COMMANDS[command]]
    for name in dict.fromkeys(modules):
        try:
            module = import_module(f"e2g.cli.{name}")
        except ModuleNotFoundError as err:
            if err.name and err.name.startswith("e2g.cli"):
                continue
            raise
        module.register(app)
    return app
