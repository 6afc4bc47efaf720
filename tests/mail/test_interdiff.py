"""mail.interdiff: a commit's hunks against the posted patch's."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from e2g.mail.interdiff import compare, hunks


def _diff(path: str, *bodies: list[str]) -> str:
    lines = [f"diff --git a/{path} b/{path}", "index 1111111..2222222 100644"]
    lines += [f"--- a/{path}", f"+++ b/{path}"]
    for number, body in enumerate(bodies):
        lines.append(f"@@ -{10 * number + 1},3 +{10 * number + 1},3 @@ int f(void)")
        lines += body
    return "\n".join(lines) + "\n"


FIRST = [" a", "-b", "+c", " d"]
SECOND = [" x", "-y", "+z", " w"]
THIRD = [" p", "-q", "+r", " s"]


def test_hunks_carry_their_file_and_header() -> None:
    found = hunks(_diff("mm/frob.c", FIRST, SECOND) + _diff("lib/x.c", THIRD))
    assert [(hunk.path, hunk.lines) for hunk in found] == [
        ("mm/frob.c", tuple(FIRST)),
        ("mm/frob.c", tuple(SECOND)),
        ("lib/x.c", tuple(THIRD)),
    ]
    assert found[1].header.startswith("@@ -11,3 +11,3 @@")


def test_moved_line_numbers_are_still_identical() -> None:
    posted = _diff("mm/frob.c", FIRST)
    applied = posted.replace("@@ -1,3 +1,3 @@", "@@ -40,3 +42,3 @@")
    result = compare(posted, applied)
    assert result.same and result.identical == 1


def test_edited_dropped_and_added_hunks() -> None:
    posted = _diff("mm/frob.c", FIRST, SECOND) + _diff("lib/x.c", THIRD)
    edited = [" a", "-b", "+c2", " d"]
    applied = (
        _diff("mm/frob.c", edited) + _diff("lib/x.c", THIRD) + _diff("new.c", SECOND)
    )
    result = compare(posted, applied)
    assert result.identical == 1
    kinds = [(change.kind, change.path) for change in result.changes]
    assert kinds == [
        ("edited", "mm/frob.c"),
        ("dropped", "mm/frob.c"),
        ("added", "new.c"),
    ]
    edit = result.changes[0].shown()
    assert "-+c" in edit and "++c2" in edit


_LINE = st.text(alphabet="abc", min_size=0, max_size=3)
_BODY = st.lists(
    st.tuples(st.sampled_from(" +-"), _LINE).map("".join), min_size=1, max_size=6
)


@given(st.lists(_BODY, min_size=1, max_size=5), st.lists(_BODY, min_size=0, max_size=5))
def test_no_hunk_is_lost_either_way(
    posted: list[list[str]], other: list[list[str]]
) -> None:
    one, two = _diff("f.c", *posted), _diff("f.c", *other) if other else ""
    assert compare(one, one).same
    forward, backward = compare(one, two), compare(two, one)
    assert forward.identical == backward.identical
    # Every hunk of each side is identical, edited, dropped or added: none is lost.
    for result, left, right in ((forward, one, two), (backward, two, one)):
        left_seen = sum(change.posted is not None for change in result.changes)
        right_seen = sum(change.applied is not None for change in result.changes)
        assert result.identical + left_seen == len(hunks(left))
        assert result.identical + right_seen == len(hunks(right))
