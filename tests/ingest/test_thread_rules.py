"""e2g.mail.threads: roots, display order and replies below, on awkward real shapes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from e2g.mail.threads import display_order, ghost_root, replies_below, root_candidates


@dataclass(frozen=True)
class Mail:
    message_id: str
    parent_id: str | None
    seq: int
    date: datetime | None = None


def at(day: int) -> datetime:
    return datetime(2024, 1, day, tzinfo=UTC)


def test_root_candidates_nearest_first_without_itself() -> None:
    assert root_candidates("c", "b", ("a", "b")) == ["b", "a", "b"]
    assert root_candidates("c", None, ("a",)) == []  # no parent: a thread of its own
    assert root_candidates("c", "c", ("c", "", "a")) == ["a"]


def test_ghost_root_is_the_oldest_named_ancestor() -> None:
    assert ghost_root("c", "b", ("a", "b")) == "a"
    assert ghost_root("c", "b", ()) == "b"
    assert ghost_root("c", None, ()) == "c"
    assert ghost_root("c", "c", ("c",)) == "c"


def test_display_order_children_after_parents_oldest_first() -> None:
    mails = [
        Mail("late-reply", "root", 4, at(5)),
        Mail("root", None, 1, at(1)),
        Mail("early-reply", "root", 2, at(2)),
        Mail("reply-to-early", "early-reply", 3, at(3)),
        Mail("undated", "root", 5, None),
    ]
    order = [(m.message_id, depth) for m, depth, _, _ in display_order(mails)]
    assert order == [
        ("root", 0),
        ("early-reply", 1),
        ("reply-to-early", 2),
        ("late-reply", 1),
        ("undated", 1),
    ]


def test_display_order_flags_ghost_parents_and_loops() -> None:
    mails = [
        Mail("orphan", "never-archived", 1, at(1)),
        Mail("x", "y", 2, at(2)),
        Mail("y", "x", 3, at(3)),
        Mail("self", "self", 4, at(4)),
    ]
    flags = {
        m.message_id: (depth, ghost, loop)
        for m, depth, ghost, loop in display_order(mails)
    }
    assert flags == {
        "orphan": (0, True, False),
        "self": (0, False, True),
        "x": (0, False, True),  # the loop is entered at its oldest member
        "y": (1, False, False),
    }


def test_replies_below_skip_excluded_branches_and_loops() -> None:
    links = [
        ("p", None, "P"),
        ("r1", "p", "R1"),
        ("r2", "r1", "R2"),
        ("v2", "p", "V2"),  # another posting of the patch: its replies are its own
        ("r3", "v2", "R3"),
        ("loop-a", "r2", "LA"),
        ("r2", "loop-a", "R2-again"),
    ]
    assert replies_below("p", links, exclude={"v2"}) == ["R1", "R2", "LA"]
    assert replies_below("v2", links) == ["R3"]
    assert replies_below("nothing", links) == []


@given(st.lists(st.integers(min_value=-1, max_value=30), max_size=30))
def test_display_order_shows_every_message_once(parents: list[int]) -> None:
    mails = [
        Mail(
            f"m{index}", None if parent < 0 else f"m{parent}", index, at(1 + index % 28)
        )
        for index, parent in enumerate(parents)
    ]
    shown = [m.message_id for m, _, _, _ in display_order(mails)]
    assert sorted(shown) == sorted(m.message_id for m in mails)
    below = replies_below(
        "m0", [(m.message_id, m.parent_id, m.message_id) for m in mails]
    )
    assert len(below) == len(set(below)) and "m0" not in below
