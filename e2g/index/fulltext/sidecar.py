"""The sidecar beside the index: how far it follows the store (`IndexMark`: the
highest message seq and the store's last index journal revision) and its format.

It is written only after Whoosh's own commit, atomically, so a crash leaves the
index behind the store, never ahead of it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NamedTuple

import whoosh.index

from e2g import errors
from e2g.index.fulltext.schema import FORMAT

SIDECAR = "e2g-index.json"


class IndexMark(NamedTuple):
    """How far the index follows the store: every message up to `seq`, and the
    store's journal of other changes (new lists, deletions) up to `change`."""

    seq: int = 0
    change: int = 0

    def __or__(self, other: IndexMark) -> IndexMark:
        return IndexMark(max(self.seq, other.seq), max(self.change, other.change))


def exists(directory: Path) -> bool:
    """Whether `directory` holds an index (a cheap look, for readers)."""
    return bool(whoosh.index.exists_in(str(directory)))


def read_mark(directory: Path) -> IndexMark:
    """The committed index's mark, read without opening the index (cheap to poll)."""
    return read_sidecar(directory)


def read_sidecar(directory: Path) -> IndexMark:
    try:
        data = json.loads((directory / SIDECAR).read_text(encoding="utf-8"))
        # An index from before the journal: the journal started empty after it.
        return IndexMark(int(data["last_seq"]), int(data.get("last_change", 0)))
    except FileNotFoundError:
        return IndexMark()
    except (ValueError, KeyError, TypeError) as error:
        raise errors.IndexError_(
            f"{directory / SIDECAR} is unreadable ({error}); run `e2g reindex`"
        ) from error


def check_sidecar(directory: Path) -> None:
    path = directory / SIDECAR
    if not path.exists():
        return  # a crash after Whoosh's first commit: last_seq is 0, catch-up redoes all
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != FORMAT:
        raise errors.IndexError_(
            f"the full-text index in {directory} has format {data.get('format')}, "
            f"this e2g needs {FORMAT}; run `e2g reindex`"
        )


def write_sidecar(directory: Path, mark: IndexMark) -> None:
    """Atomically replace the sidecar (write a temp file, then rename over)."""
    temporary = directory / f".{SIDECAR}.{os.getpid()}"
    temporary.write_text(
        json.dumps(
            {"format": FORMAT, "last_seq": mark.seq, "last_change": mark.change}
        ),
        encoding="utf-8",
    )
    temporary.replace(directory / SIDECAR)
