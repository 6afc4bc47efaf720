"""e2g.git.tokenmoves reads a diff of two token views in time that grows with the
diff, not with its square (a translation catalog's diff of 9,196 changes took 75 s):
on diffs of views of every shape (blocks moved, swapped, edited, repeated tokens),
its moves are those of the plain statement of the rule, which searched by slicing
and counting from the start."""

from __future__ import annotations

import difflib
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from e2g.git import tokenmoves
from e2g.git.tokenmoves import MOVE_CONTEXT, MOVE_SCORE, moved_lines


def _diff(old: list[str], new: list[str]) -> bytes:
    lines = difflib.unified_diff(
        [f"{token}\n" for token in old],
        [f"{token}\n" for token in new],
        "a/t",
        "b/t",
        n=MOVE_CONTEXT,
    )
    return "".join(lines).encode()


def _plain(diff: bytes) -> dict[int, int]:
    """moved_lines as first written: each change's context read from copies of
    everything before and after it, each match's line counted from the start."""
    changes = list(_plain_changes(diff))
    removed = [sum(line.changed for line in old_side) for old_side, _ in changes]
    sources: list[tokenmoves._Line | None] = []
    for old_side, _ in changes:
        sources += [None, *old_side]
    sources.append(None)
    hay = b"\n".join(b"\0" if line is None else line.token for line in sources)
    found: dict[int, int] = {}
    for _, new_side in changes:
        block = [line for line in new_side if line.changed]
        score = sum(len(re.findall(rb"[A-Za-z0-9]", line.token)) for line in block)
        if len(block) < 2 or not 0 < score < MOVE_SCORE:
            continue
        needle = b"\n" + b"\n".join(line.token for line in block) + b"\n"
        at = hay.find(needle)
        while at != -1:
            first = hay.count(b"\n", 0, at) + 1
            run = sources[first : first + len(block)]
            if tokenmoves._whole(run, removed):
                found.update(
                    (target.line, source.line)
                    for source, target in zip(run, block, strict=True)
                    if source is not None
                )
                break
            at = hay.find(needle, at + 1)
    return found


def _plain_changes(diff: bytes):  # type: ignore[no-untyped-def]
    items: list[tuple[bytes, bytes, int, int]] = []
    old_line = new_line = 0
    for raw in diff.split(b"\n"):
        hunk = tokenmoves.HUNK.match(raw)
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
    index = number = 0
    Line = tokenmoves._Line
    while index < len(items):
        if items[index][0] not in (b"-", b"+"):
            index += 1
            continue
        end = index
        while end < len(items) and items[end][0] in (b"-", b"+"):
            end += 1
        before = tokenmoves._context(reversed(items[:index]))[::-1]
        after = tokenmoves._context(items[end:])
        change = items[index:end]
        yield (
            [Line(t, o, False, number) for t, o, _ in before]
            + [Line(t, o, True, number) for kind, t, o, _ in change if kind == b"-"]
            + [Line(t, o, False, number) for t, o, _ in after],
            [Line(t, n, False, number) for t, _, n in before]
            + [Line(t, n, True, number) for kind, t, _, n in change if kind == b"+"]
            + [Line(t, n, False, number) for t, _, n in after],
        )
        index = end
        number += 1


# Tokens as views have them: punctuation that repeats, short words, numbers.
_TOKENS = st.sampled_from(["{", "}", ";", "(", ")", "x", "y", "1", "int", "return"])
_BLOCKS = st.lists(st.lists(_TOKENS, min_size=1, max_size=6), min_size=1, max_size=12)


@st.composite
def _edited(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """A view as blocks, and a later one: blocks moved, dropped, added, edited."""
    blocks = draw(_BLOCKS)
    later = list(blocks)
    for _ in range(draw(st.integers(0, 4))):
        action = draw(st.sampled_from(["move", "drop", "add", "edit"]))
        if action == "move" and len(later) > 1:
            block = later.pop(draw(st.integers(0, len(later) - 1)))
            later.insert(draw(st.integers(0, len(later))), block)
        elif action == "drop" and later:
            later.pop(draw(st.integers(0, len(later) - 1)))
        elif action == "add":
            later.insert(
                draw(st.integers(0, len(later))),
                draw(st.lists(_TOKENS, min_size=1, max_size=6)),
            )
        elif action == "edit" and later:
            at = draw(st.integers(0, len(later) - 1))
            later[at] = [*later[at], draw(_TOKENS)]
    return [t for b in blocks for t in b], [t for b in later for t in b]


@settings(max_examples=300, deadline=None)
@given(_edited())
def test_moves_are_the_plain_statements(views: tuple[list[str], list[str]]) -> None:
    diff = _diff(*views)
    assert moved_lines(diff) == _plain(diff)


def test_a_short_block_moved_below_the_next_is_found() -> None:
    f = ["int", "f", "(", ")", "{", "}"]
    g = ["int", "g", "(", "x", ")", "{", "return", "x", ";", "}"]
    diff = _diff([*f, *g], [*g, *f])
    # The diff removed f from the top and added it at the bottom: each of f's
    # lines in the new view (11-16) repeats its line in the old (1-6).
    assert moved_lines(diff) == {11 + k: 1 + k for k in range(len(f))}
    assert _plain(diff) == moved_lines(diff)
