"""Moves git's -M cannot see, read from a commit's own diff of two token views.

git pairs a moved block with its old place only when the block holds 20 letters
and digits; a three-line function moved below the next holds fewer. A change that
adds exactly what another change of the same commit removed moved that block
(`moved_lines`); only the commits owning runs of tokens short enough for -M to
miss (`short_runs`) have their diffs read. Pure: bytes and strings in, line maps
out. e2g.git.tokenview follows the tokens back through what these find.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

MOVE_SCORE = 20
MOVE_CONTEXT = 3  # lines of context around a change: how far it may slide up
_WORD = re.compile(rb"[A-Za-z0-9]")
_NEWLINE = re.compile(rb"\n")
HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


class _Line(NamedTuple):
    """A line of one side of a diff's change."""

    token: bytes
    line: int  # in that side's view
    changed: bool  # removed or added there; False: context around the change
    change: int  # which change of the diff, from 0


_Side = list[_Line]


def moved_lines(diff: bytes) -> dict[int, int]:
    """In a diff of two views (MOVE_CONTEXT lines of context): the lines of each
    change that adds nothing but a run of tokens the diff removed elsewhere, in
    the same order (a block moved whole), each with the line of the old view it
    repeats.

    The diff aligned everything that stayed in order, so a change whose added
    tokens all reappear, in order, among those another removed is a moved block.
    Each removed run is read with the context around it: where the diff could as
    well have drawn a change a token higher or lower (the `def` before a moved
    Python function repeats the next function's, the `; }` after a moved C
    function the previous one's), its choice is arbitrary, and the moved run may
    begin in the context of the change it left (it must take one removed token at
    least). A block counts when it holds two tokens or more, a word among them
    (letters or digits): a lone `;` or `) ;` met in two changes is no move. A
    change that also adds new tokens is not a block moved whole: git's -M judges
    those (by their 20 letters and digits)."""
    changes = list(_changes(diff))
    removed = [sum(line.changed for line in old_side) for old_side, _ in changes]
    # Every change's old side, one token a line, the changes apart (a NUL line
    # never is a token): a run is found by one substring search, not a diff.
    sources: list[_Line | None] = []
    for old_side, _ in changes:
        sources += [None, *old_side]
    sources.append(None)
    hay = b"\n".join(b"\0" if line is None else line.token for line in sources)
    # Where each line of `hay` starts: a match's line by bisection, not by
    # counting from the start (po/ru.po of git.git: one diff 75 s -> under 1 s).
    breaks = [at.start() for at in _NEWLINE.finditer(hay)]
    found: dict[int, int] = {}
    for _, new_side in changes:
        block = [line for line in new_side if line.changed]
        score = sum(len(_WORD.findall(line.token)) for line in block)
        if len(block) < 2 or not 0 < score < MOVE_SCORE:
            continue
        needle = b"\n" + b"\n".join(line.token for line in block) + b"\n"
        at = hay.find(needle)
        while at != -1:
            first = bisect_left(breaks, at) + 1  # the index in sources
            run = sources[first : first + len(block)]
            if _whole(run, removed):
                found.update(
                    (target.line, source.line)
                    for source, target in zip(run, block, strict=True)
                    if source is not None
                )
                break
            at = hay.find(needle, at + 1)
    return found


def short_runs(owners: Sequence[str], texts: Sequence[str]) -> list[int]:
    """The tokens (by index) of each run of consecutive tokens blamed on one
    commit (`owners`: each token's view commit) that is
    short enough for git's -M to miss it had it moved (two tokens or more, fewer
    than MOVE_SCORE letters and digits): only their commits' diffs are read (a
    commit's diff costs git a diff of the whole view; git-p4.py has 425 commits
    owning tokens)."""
    found: list[int] = []
    start = 0
    for index in range(1, len(owners) + 1):
        if index < len(owners) and owners[index] == owners[start]:
            continue
        score = sum(len(_WORD.findall(text.encode())) for text in texts[start:index])
        if index - start >= 2 and 0 < score < MOVE_SCORE:
            found += range(start, index)
        start = index
    return found


def _whole(run: Sequence[_Line | None], removed: Sequence[int]) -> bool:
    """Whether `run` (of one change's old side) is all that change removed, drawn
    a few tokens higher or lower (some of its context in, as many of its removed
    tokens out): then its tokens moved, and nothing else of that change did."""
    lines = [line for line in run if line is not None]
    return (
        len(lines) == len(run)
        and any(line.changed for line in lines)
        and len({line.change for line in lines}) == 1
        and len(lines) == removed[lines[0].change]
    )


def _changes(diff: bytes) -> Iterator[tuple[_Side, _Side]]:
    """Each change of a unified diff (its removed and added lines, one run), each
    side with the context lines before and after it in that side's view."""
    items = _items(diff)
    index = number = 0
    while index < len(items):
        if items[index][0] not in (b"-", b"+"):
            index += 1
            continue
        end = index
        while end < len(items) and items[end][0] in (b"-", b"+"):
            end += 1
        # Read outward from the change, never by copying what lies before it or
        # after it (each copy as long as the diff: quadratic in its changes).
        before = _context(items[at] for at in range(index - 1, -1, -1))[::-1]
        after = _context(items[at] for at in range(end, len(items)))
        yield _sides(items[index:end], before, after, number)
        index = end
        number += 1


def _sides(
    change: Sequence[tuple[bytes, bytes, int, int]],
    before: Sequence[tuple[bytes, int, int]],
    after: Sequence[tuple[bytes, int, int]],
    number: int,
) -> tuple[_Side, _Side]:
    """A change's old side and new side, each with its context."""
    return (
        [_Line(t, o, False, number) for t, o, _ in before]
        + [_Line(t, o, True, number) for kind, t, o, _ in change if kind == b"-"]
        + [_Line(t, o, False, number) for t, o, _ in after],
        [_Line(t, n, False, number) for t, _, n in before]
        + [_Line(t, n, True, number) for kind, t, _, n in change if kind == b"+"]
        + [_Line(t, n, False, number) for t, _, n in after],
    )


def _items(diff: bytes) -> list[tuple[bytes, bytes, int, int]]:
    """(kind, token, old line, new line) of each line of the diff's hunks."""
    items: list[tuple[bytes, bytes, int, int]] = []
    old_line = new_line = 0
    for raw in diff.split(b"\n"):
        hunk = HUNK.match(raw)
        kind, text = raw[:1], raw[1:]
        if hunk is not None:
            old_line, new_line = int(hunk[1]), int(hunk[3])
            items.append((b"@", b"", 0, 0))
        elif kind == b" ":
            items.append((kind, text, old_line, new_line))
            old_line, new_line = old_line + 1, new_line + 1
        elif kind == b"-" and not raw.startswith(b"--- "):
            items.append((kind, text, old_line, 0))
            old_line += 1
        elif kind == b"+" and not raw.startswith(b"+++ "):
            items.append((kind, text, 0, new_line))
            new_line += 1
    return items


def _context(
    items: Iterable[tuple[bytes, bytes, int, int]],
) -> list[tuple[bytes, int, int]]:
    """The context lines (token, old line, new line) at the start of `items`, up to
    MOVE_CONTEXT, stopping at a hunk's start or a change."""
    found: list[tuple[bytes, int, int]] = []
    for kind, text, old_line, new_line in items:
        if kind != b" " or len(found) == MOVE_CONTEXT:
            break
        found.append((text, old_line, new_line))
    return found
