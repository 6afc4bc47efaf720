"""A message as the store writes it, pure: its files as rows (a file changed in two
diffs stored once), its raw bytes as a block part (each byte once: a body or diff
found verbatim in the raw mail is read back from it), and pending items cut into
runs that fit a block. StoreWriter writes what these give.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import NamedTuple, TypeVar

from e2g.model.mail import Message
from e2g.model.patch import FileChange


def file_rows(
    files: Sequence[FileChange],
) -> list[tuple[str, str | None, str, int, int, int, float | None]]:
    """One row per path: a mail that changes a file in two diffs (two parts, or a
    concatenated series) stores the file once, with both diffs' +/- counts, as the
    matcher's bounds need (its weight already covers both)."""
    by_path: dict[str, FileChange] = {}
    for change in files:
        seen = by_path.get(change.path)
        by_path[change.path] = (
            change
            if seen is None
            else replace(
                seen,
                added=seen.added + change.added,
                removed=seen.removed + change.removed,
            )
        )
    return [
        (
            change.path,
            change.old_path,
            str(change.status),
            int(change.binary),
            change.added,
            change.removed,
            change.weight,
        )
        for change in by_path.values()
    ]


class RawPart(NamedTuple):
    """A message's raw bytes as a block holds them: without its diff where the diff
    occurs verbatim (its diff block keeps it; diff_at says where it goes back), and where
    its body lies in them (body_at, body_size), so no `bodies` row is needed."""

    seq: int
    stored: bytes
    diff_at: int | None = None
    body_at: int | None = None
    body_size: int | None = None


def raw_part(seq: int, raw: bytes, message: Message) -> RawPart:
    """Store each byte once: a body or diff that occurs verbatim in the raw mail (a
    plain 8-bit or 7-bit UTF-8 part, most patches) is read back from it. The diff
    is looked for after the body, so the body's offsets hold in the stored bytes
    too (Store.body reads it without putting the diff back)."""
    body = message.body.encode() if message.body else b""
    body_at = raw.find(body) if body else -1
    after = body_at + len(body) if body_at >= 0 else 0
    diff = message.patch.diff.encode() if message.patch is not None else b""
    diff_at = raw.find(diff, after) if diff else -1
    return RawPart(
        seq,
        raw[:diff_at] + raw[diff_at + len(diff) :] if diff_at >= 0 else raw,
        diff_at if diff_at >= 0 else None,
        body_at if body_at >= 0 else None,
        len(body) if body_at >= 0 else None,
    )


_Item = TypeVar("_Item")


def runs(
    pending: Sequence[_Item], sizes: Sequence[int], most: int, size_limit: int
) -> Iterator[Sequence[_Item]]:
    """Consecutive runs of at most `most` items and about `size_limit` bytes (a
    larger item is a run of its own): reading one item decompresses its block, so
    a block stays small enough to read for one item."""
    start = 0
    while start < len(pending):
        end, size = start, 0
        while (
            end < len(pending)
            and end - start < most
            and (end == start or size + sizes[end] <= size_limit)
        ):
            size += sizes[end]
            end += 1
        yield pending[start:end]
        start = end
