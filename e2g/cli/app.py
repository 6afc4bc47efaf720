"""The console entry point: `main()` runs a command and is the one E2gError -> exit code handler.

The typer application (global options, logging, the command table) is
`e2g.cli.commands`, imported only when a command needs it: `e2g --version` answers
here without typer, and importing this module costs almost nothing, as every start
of `e2g` does it (`[project.scripts] e2g = "e2g.cli.app:main"`).
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING, NoReturn

from e2g import __version__

if TYPE_CHECKING:
    import typer

    # typer (0.26 to 0.28, as pinned) carries its own click; this is its usage error.
    from typer._click.exceptions import UsageError


def __getattr__(name: str) -> typer.Typer:
    """`e2g.cli.app.app`, the typer application, built when first asked for."""
    if name == "app":
        from e2g.cli.commands import build

        return build()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _interrupt(number: int, frame: FrameType | None) -> None:
    from e2g.errors import Interrupted

    # Not KeyboardInterrupt: click would turn that into "Aborted!" and exit 1.
    raise Interrupted(
        "interrupted; everything committed before is kept: run the same command to resume"
    )


def main() -> None:
    """Console entry point: run the app, map E2gError and Ctrl-C to one line and an exit code."""
    if sys.argv[1:] == ["--version"]:  # the answer needs no command line parser
        sys.stdout.write(f"e2g {__version__}\n")
        _exit(0)
    signal.signal(signal.SIGINT, _interrupt)
    from typer._click.exceptions import UsageError

    from e2g.cli import output
    from e2g.cli.argv import command_of, reorder
    from e2g.cli.commands import COMMANDS, build
    from e2g.errors import E2gError

    output.tolerate_unencodable()
    try:
        # Not standalone: a usage error comes back here, to be said in one line.
        args = reorder(sys.argv[1:], frozenset(COMMANDS))
        app = build(command_of(args, frozenset(COMMANDS)))
        code = app(args=args, standalone_mode=False)
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
    _leave(code)


def _leave(code: int | str | None) -> NoReturn:
    """End the process as sys.exit(code) would, without the interpreter's teardown.

    The command is done and its output flushed; what is left for the interpreter is
    to free every module and object one by one, about 20 ms of `e2g link`'s ~150
    (benchmarks/startup.py). The exit functions still run (logging's flush,
    multiprocessing's and tempfile's clean-up, coverage); with another thread still
    running, whose end the interpreter would wait for, the exit is sys.exit's own.
    """
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        sys.exit(code)
    if isinstance(code, str):  # sys.exit("text") prints the text and exits 1
        sys.stderr.write(f"{code}\n")
    atexit._run_exitfuncs()
    try:
        sys.stderr.flush()
    except (OSError, ValueError):  # closed or gone: nothing left to say there
        pass
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


def _reader_gone() -> NoReturn:
    """`e2g match --jsonl | head -1`: the reader went away; say nothing, exit 1.

    1, as typer does when the pipe breaks inside a command and as Python's docs
    advise: what was not written was not done (match keeps its committed batches).
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(1)
