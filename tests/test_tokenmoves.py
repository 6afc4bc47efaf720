"""e2g.git.tokenmoves reads a diff of two token views in time that grows with the
diff, not with its square (a translation catalog's diff of 9,196 changes took 75 s):
on diffs of views of every shape (blocks moved, swapped, edited, repeated tokens),
its moves are those of the plain statement of the rule, which searched by slicing
and counting from the start."""

from __future__ import annotations

import difflib
from itertools import groupby

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from e2g.git import tokenmoves
from e2g.git.tokenmoves import MOVE_CONTEXT, moved_lines


def _diff(old: list[str], new: list[str]) -> bytes:
    lines = difflib.unified_diff(
        [f"{token}\n" for token in old],
        [f"{token}\n" for token in new],
        "a/t",
        "b/t",
        n=MOVE_CONTEXT,
    )
    return "".join(lines).encode()


def _plain_changes(diff: bytes) -> list[tuple[object, object]]:
    """Each change, its context read from copies of all that lies before and after
    it (as first written)."""
    items = tokenmoves._items(diff)
    runs = [
        [at for at, _ in run]
        for changed, run in groupby(enumerate(items), lambda x: x[1][0] in b"-+")
        if changed
    ]
    return [
        tokenmoves._sides(
            items[run[0] : run[-1] + 1],
            tokenmoves._context(reversed(items[: run[0]]))[::-1],
            tokenmoves._context(items[run[-1] + 1 :]),
            number,
        )
        for number, run in enumerate(runs)
    ]


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
    """The changes are those read from copies; a match's line found by bisection
    is the one counted from the start."""
    diff = _diff(*views)
    assert list(tokenmoves._changes(diff)) == _plain_changes(diff)
    counted = moved_lines(diff)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            tokenmoves, "bisect_left", lambda breaks, at: sum(b < at for b in breaks)
        )
        assert moved_lines(diff) == counted


def test_a_short_block_moved_below_the_next_is_found() -> None:
    f = ["int", "f", "(", ")", "{", "}"]
    g = ["int", "g", "(", "x", ")", "{", "return", "x", ";", "}"]
    diff = _diff([*f, *g], [*g, *f])
    # The diff removed f from the top and added it at the bottom: each of f's
    # lines in the new view (11-16) repeats its line in the old (1-6).
    assert moved_lines(diff) == {11 + k: 1 + k for k in range(len(f))}
