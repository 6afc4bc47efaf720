"""Reader for Mailman 2 pipermail archives: the period files "2005-March.txt(.gz)".

Owns recognising pipermail period file names and reading them in date order (which
is not name order: "2005-April" sorts before "2005-March"). Each file is mbox-like, with
separators such as "From jdoe at example.org  Tue Mar  1 10:00:00 2005"; messages are
yielded as they are (mail.message restores "user at host" addresses). Mailman's
archiver escapes body "From " lines as ">From ", which archives.mbox undoes.

Pipermail names: monthly "2005-March", yearly "2005", quarterly "2005q1", weekly
"Week-of-Mon-20050307" and daily "20050307", each ".txt" or ".txt.gz". Web servers often
decompress a ".txt.gz" on download and keep the name; such a file is plain text and is
read as such (compression is sniffed from the bytes, never taken from the name).

The list hint is the archive directory's name (archives/public/<list>/). Checkpoints
are archives.maildir's file-sequence tokens, with sizes, since the current month grows.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from pathlib import Path

from e2g.archives.maildir import FileEntry, read_file_sequence
from e2g.archives.mbox import read_mbox
from e2g.model.mail import RawMessage

_MONTHS = {
    name.lower(): number for number, name in enumerate(calendar.month_name) if name
}
_PERIOD = re.compile(
    r"(?:(?P<year>\d{4})(?:-(?P<month>[A-Za-z]+)|q(?P<quarter>[1-4]))?"
    r"|Week-of-Mon-(?P<week>\d{8})|(?P<day>\d{8}))\.txt(?:\.gz)?",
)


def period_key(name: str) -> tuple[int, int, int] | None:
    """(year, month, day) a pipermail file covers, or None for another name."""
    match = _PERIOD.fullmatch(name)
    if match is None:
        return None
    digits = match["week"] or match["day"]
    if digits:
        return int(digits[:4]), int(digits[4:6]), int(digits[6:])
    if match["month"]:
        month = _MONTHS.get(match["month"].lower())
        return None if month is None else (int(match["year"]), month, 0)
    if match["quarter"]:
        return int(match["year"]), 3 * int(match["quarter"]) - 2, 0
    return int(match["year"]), 0, 0


def is_pipermail_file(path: Path) -> bool:
    return path.is_file() and period_key(path.name) is not None


def list_periods(path: Path) -> list[FileEntry]:
    """The period files directly in path, oldest first."""
    dated = []
    for file in path.iterdir():
        key = period_key(file.name)
        if key is not None and file.is_file():
            dated.append((key, file.name, file))
    dated.sort()
    return [
        FileEntry(name, file, f"{name}\0{file.stat().st_size}")
        for _, name, file in dated
    ]


def list_name(path: Path) -> str | None:
    """The list a pipermail file or directory belongs to: its directory's name."""
    folder = path.parent if path.is_file() else path
    return folder.name or None


def read_pipermail(
    path: Path, *, source: str, list_hint: str | None, checkpoint: str | None
) -> Iterator[tuple[RawMessage, str | None]]:
    """Messages of one period file, or of every period file in a directory."""
    if path.is_file():
        return read_mbox(
            path, source=source, list_hint=list_hint, checkpoint=checkpoint
        )

    def read_entry(
        entry: FileEntry, inner: str | None
    ) -> Iterator[tuple[RawMessage, str | None]]:
        return read_mbox(
            entry.path,
            source=source,
            list_hint=list_hint,
            checkpoint=inner,
            position_prefix=f"{entry.relative}:",
        )

    return read_file_sequence(list_periods(path), read_entry, checkpoint=checkpoint)
