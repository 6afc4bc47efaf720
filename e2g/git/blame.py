"""`git blame --porcelain` read into lines and the commits that wrote them.

Apart from repo.py so that the commands that never blame (link, match, search)
do not create its types."""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta, timezone
from typing import NamedTuple

from e2g.git.objects import FULL_SHA
from e2g.model import MAX_SUBJECT, Address


class BlameCommit(NamedTuple):
    """What `git blame --porcelain` says of a commit, the first time it names it."""

    sha: str
    summary: str
    author: Address
    author_date: datetime
    commit_date: datetime


class BlameLine(NamedTuple):
    sha: str
    number: int  # the line's number in the blamed file, from 1
    text: str
    original: int = 0  # its number in the commit that wrote it, from 1


class Blame(NamedTuple):
    lines: tuple[BlameLine, ...]
    commits: tuple[BlameCommit, ...]  # each once, in order of first appearance
    # (sha, path) of every origin: the path the lines had in that commit
    paths: frozenset[tuple[str, str]] = frozenset()


def parse_blame(output: bytes) -> Blame:
    """`git blame --porcelain` output: a header line "SHA ORIG FINAL [COUNT]" per
    line, the commit's fields after the first header naming it, then the line
    itself after a tab. Text is decoded for display (invalid UTF-8 replaced)."""
    lines: list[BlameLine] = []
    fields: dict[str, dict[str, str]] = {}
    paths: set[tuple[str, str]] = set()
    sha, number, original = "", 0, 0
    for raw in output.split(b"\n"):
        if raw.startswith(b"\t"):
            text = raw[1:].decode("utf-8", "replace")
            lines.append(BlameLine(sha, number, text, original))
            continue
        words = raw.decode("utf-8", "replace").split(" ", 1)
        if len(words[0]) in (40, 64) and FULL_SHA.fullmatch(words[0]):
            numbers = words[1].split()
            sha, number, original = words[0], int(numbers[1]), int(numbers[0])
            fields.setdefault(sha, {})
        elif sha and len(words) == 2:
            if words[0] == "filename":  # after each group whose commit had several
                paths.add((sha, words[1]))
            fields[sha].setdefault(words[0], words[1])
    return Blame(
        lines=tuple(lines),
        commits=tuple(_blame_commit(sha, known) for sha, known in fields.items()),
        paths=frozenset(paths),
    )


def _blame_commit(sha: str, fields: dict[str, str]) -> BlameCommit:
    return BlameCommit(
        sha=sha,
        summary=fields.get("summary", "")[:MAX_SUBJECT],
        author=Address(
            fields.get("author", ""),
            fields.get("author-mail", "").strip("<>"),
        ),
        author_date=_blame_date(fields, "author"),
        commit_date=_blame_date(fields, "committer"),
    )


def _blame_date(fields: dict[str, str], who: str) -> datetime:
    """An aware datetime in the person's own offset, from "-time" and "-tz"."""
    stamp = fields.get(f"{who}-time", "0")
    moment = datetime.fromtimestamp(int(stamp) if stamp.isdigit() else 0, UTC)
    zone = _offset(fields.get(f"{who}-tz", ""))
    return moment if zone is None else moment.astimezone(zone)


@functools.cache
def _offset(text: str) -> timezone | None:
    """git's "+0130" as a timezone (strptime per commit cost 0.06 s of a 340-commit
    blame); None for one Python refuses (git allows +9959) or none."""
    if len(text) != 5 or text[0] not in "+-" or not text[1:].isdigit():
        return None
    minutes = int(text[1:3]) * 60 + int(text[3:])
    if minutes >= 24 * 60:
        return None
    return timezone((-1 if text[0] == "-" else 1) * timedelta(minutes=minutes))
