"""Rendering: results on stdout (text or JSON lines), progress and summaries on stderr.

The only module that prints. Progress is drawn only on a terminal, at most ~10 times a
second, and never when --quiet or --json asked for silence on stderr chatter.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO

from e2g.words import count as count  # the one rule of plurals, for every command

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

REDRAW_SECONDS = 0.1


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


@contextlib.contextmanager
def paged() -> Iterator[None]:
    """Long human output through a pager on a terminal, as git does: `$E2G_PAGER`,
    else `$PAGER`, else `less` (with `LESS=FRX` unless set: it quits at once when
    the text fits the screen). An empty value or `cat` turns it off; a pager that
    cannot start is skipped. Never for pipes and files: scripts see plain output."""
    command = os.environ.get("E2G_PAGER", os.environ.get("PAGER", "less")).strip()
    if not sys.stdout.isatty() or command in ("", "cat"):
        yield
        return
    env = {**os.environ, "LESS": os.environ.get("LESS", "FRX")}
    try:  # through the shell, as git runs its pager: the value may carry options
        pager = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        yield
        return
    assert pager.stdin is not None
    stdout = sys.stdout
    sys.stdout = io.TextIOWrapper(
        pager.stdin, encoding=stdout.encoding, errors="replace"
    )
    try:
        yield
    except BrokenPipeError:
        pass  # the user quit the pager early
    finally:
        try:
            sys.stdout.close()
        except BrokenPipeError:
            pass
        sys.stdout = stdout
        pager.wait()


def write(text: str) -> None:
    """Text on stdout as it is (a document: an mbox, a feed)."""
    sys.stdout.write(text)


def err(text: str) -> None:
    sys.stderr.write(text + "\n")


def warn_all_outside() -> None:
    """What `match` and `blame` say when every commit they answered is dated
    outside the archive's dates (each is `outside the archive`, not an error)."""
    err(
        "e2g: warning: every commit is dated outside the archive's dates: "
        "ingest the list's archive of the same years (see `e2g search d:YEAR`)"
    )


def _default(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def tolerate_unencodable() -> None:
    """Never fail on a character stdout's encoding lacks (a latin-1 locale,
    PYTHONIOENCODING=ascii): text shows it as a backslash escape, JSON as \\uXXXX."""
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="backslashreplace")


def _speaks_unicode(stream: TextIO) -> bool:
    try:
        return codecs.lookup(stream.encoding or "utf-8").name.startswith("utf")
    except LookupError:
        return False


def json_line(data: Mapping[str, Any], stream: TextIO | None = None) -> None:
    target = stream or sys.stdout
    target.write(json_text(data, target) + "\n")


def json_text(data: object, stream: TextIO | None = None) -> str:
    """`data` as json_line() writes it to `stream` (default stdout), without the newline."""
    target = stream or sys.stdout
    return json.dumps(data, ensure_ascii=not _speaks_unicode(target), default=_default)


def number(value: int) -> str:
    return f"{value:,}"


def megabytes(value: int) -> str:
    return f"{value / 1e6:,.1f} MB"


def terminal_width() -> int:
    return shutil.get_terminal_size((100, 24)).columns


def corrected_date(source: str, raw: str) -> str:
    """The footnote of a date marked `*`: where it came from, what the header said
    (bounded, control characters shown as ?)."""
    said = "".join(char if char.isprintable() else "?" for char in raw[:200])
    header = f'the Date: header said "{said}"' if said else "there was no Date: header"
    return f"* date taken from {_DATE_SOURCES.get(source, source)}: {header}"


# model.DateSource values, in words.
_DATE_SOURCES = {
    "received": "the Received: headers",
    "from-line": "the mbox From line",
    "neighbours": "the messages archived around it",
    "none": "nowhere",
}


def trees(names: Iterable[str]) -> str:
    """The named trees' branches beside a commit or a run, as every command writes
    them: ` [mainline/master, stable/linux-6.1.y]`; nothing for none."""
    shown = ", ".join(names)
    return f" [{shown}]" if shown else ""


def truncate(text: str, width: int) -> str:
    text = " ".join(text.split())
    if width <= 1:
        return text[:width]
    return text if len(text) <= width else text[: width - 1] + "…"


def table(rows: Iterable[Iterable[str]], *, widths: list[int] | None = None) -> None:
    """Aligned columns; the last column takes the rest of the terminal and is truncated."""
    materialised = [list(row) for row in rows]
    if not materialised:
        return
    columns = len(materialised[0])
    if widths is None:
        widths = [max(len(row[i]) for row in materialised) for i in range(columns - 1)]
    # Fit a terminal; into a pipe, keep whole lines for grep and cut.
    rest = (
        max(20, terminal_width() - sum(widths) - 2 * (columns - 1))
        if sys.stdout.isatty()
        else 1 << 20
    )
    for row in materialised:
        cells = [
            cell.ljust(width)[:width]
            for cell, width in zip(row[:-1], widths, strict=False)
        ]
        out("  ".join([*cells, truncate(row[-1], rest)]).rstrip())


class ProgressBar:
    """A throttled rich progress line on stderr; a no-op when stderr is not a terminal."""

    def __init__(
        self, description: str, *, enabled: bool, total: float | None = None
    ) -> None:
        self._enabled = enabled and sys.stderr.isatty()
        self._last = 0.0
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._description = description
        self._total = total

    def __enter__(self) -> ProgressBar:
        if self._enabled:
            # rich costs ~100 ms to import: only a terminal run pays it.
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                auto_refresh=False,  # no thread: the ingest forks parse workers
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task(
                self._description, total=self._total, status=""
            )
        return self

    def update(
        self, *, completed: float | None = None, status: str = "", force: bool = False
    ) -> None:
        if self._progress is None or self._task is None:
            return
        moment = time.monotonic()
        if not force and moment - self._last < REDRAW_SECONDS:
            return
        self._last = moment
        self._progress.update(self._task, completed=completed, status=status)
        self._progress.refresh()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
