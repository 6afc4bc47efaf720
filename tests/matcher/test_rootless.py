"""Which mails are a commit's postings where the archive is incomplete or the diffs
repeat: a thread whose first mail is lost, and a change redone by reverting its
revert (equal diffs, different commits)."""

from __future__ import annotations

import pytest

from e2g.mail.subject import revert_depth
from e2g.matcher.postings import series_sibling
from tests.audit_world import ALICE, BOB, MAINT, World, linked, matched, quoted
from tests.conftest import git
from tests.matcher.test_scoring import _POSTED


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("rootless")
    world = World(root)
    shas = world.shas
    send = world._send  # noqa: SLF001 - the test world's one way to send any subject

    # The patch went to another list; Bob's review here names Alice and quotes a
    # part of it (no whole patch: no patch-id), then Mia answers Bob.
    world.edit("d.c", 3, "int d3 = 33;")
    shas["lost"] = world.commit("d: set d3")
    send(
        "Re: [PATCH] d: set d3",
        f"On Mon, 1 Mar 2021, Alice Author wrote:\n{quoted('+int d3 = 33;')}\n"
        f"Looks right.\n\nReviewed-by: {BOB}\n",
        BOB,
        "d-review@x",
        "d-lost@x",
    )
    send("Re: [PATCH] d: set d3", "Applied.\n", MAINT, "d-applied@x", "d-review@x")
    # The same subject under a lost mail, but nothing says it was Alice's: no answer.
    world.edit("e.c", 3, "int e3 = 33;")
    shas["unrelated"] = world.commit("e: set e3")
    send("Re: e: set e3", "Which tree?\n", BOB, "e-q@x", "e-lost@x")

    # A change, its revert and the revert of the revert: the first and the last
    # have one diff. Each was posted.
    world.edit("f.c", 3, "int f3 = 33;")
    shas["change"] = world.commit("f: set f3")
    world.post("f: set f3", world.diff_of(shas["change"]), message_id="f1@x")
    for name in ("revert", "redo"):
        git(world.repo, "revert", "--no-edit", "HEAD", env=world.env(ALICE, MAINT, 1))
        shas[name] = git(world.repo, "rev-parse", "HEAD").strip()
        summary = git(world.repo, "log", "-1", "--format=%s").strip()
        world.post(summary, world.diff_of(shas[name]), message_id=f"f-{name}@x")

    return matched(world)


def test_a_thread_that_names_the_author_is_a_low_confidence_posting(world) -> None:
    (posting,) = linked(world, "lost").postings
    assert (posting.message_id, posting.method, posting.kind) == (
        "d-review@x",
        "thread",
        "reply",
    )
    assert posting.applied
    assert posting.score == pytest.approx(0.6)
    # Every stored mail of the thread answers the lost patch: the review too.
    assert posting.replies == 2
    assert posting.reviewers == (f"Reviewed-by: {BOB}",)
    (evidence,) = posting.evidence
    assert "a reply quotes Alice Author" in evidence.detail


def test_a_thread_nothing_ties_to_the_author_is_no_posting(world) -> None:
    assert linked(world, "unrelated").postings == ()


@pytest.mark.parametrize(
    ("name", "message_id"),
    [("change", "f1@x"), ("revert", "f-revert@x"), ("redo", "f-redo@x")],
)
def test_a_redone_change_and_its_first_posting_stay_apart(
    world, name: str, message_id: str
) -> None:
    assert [p.message_id for p in linked(world, name).postings] == [message_id]


def test_a_series_sibling_is_no_version() -> None:
    one = _POSTED._replace(series_id=7, part=1, total=2, patch_id="1" * 40)
    assert not series_sibling(one, one)
    assert series_sibling(one, one._replace(part=2, patch_id="2" * 40))
    # The same diff sent twice in one series is a copy, not a sibling.
    assert not series_sibling(one, one._replace(part=2))
    assert not series_sibling(one, one._replace(series_id=8, part=2, patch_id="2" * 40))
    assert not series_sibling(one._replace(series_id=None), one._replace(part=2))


def test_revert_depth() -> None:
    assert revert_depth("f: set f3") == 0
    assert revert_depth('revert "f: set f3"') == 1
    assert revert_depth('Revert "Revert "f: set f3""') == 2
    assert revert_depth('reapply "revert "x""') == 2
    assert revert_depth('reverted "x" is no revert') == 0


def test_the_audit_calls_a_lost_patch_s_thread_uncertain(world) -> None:
    from e2g.api.audit import AuditOptions, Verdict, audit

    settings, built = world
    found = {}
    audit(
        settings,
        repo=built.repo,
        options=AuditOptions(),
        on_commit=lambda one: found.__setitem__(one.sha, one),
    )
    lost = found[built.shas["lost"]]
    assert lost.verdict is Verdict.UNCERTAIN
    assert "found by thread" in lost.evidence
    unrelated = found[built.shas["unrelated"]]
    assert unrelated.applied is None
    assert unrelated.verdict in (Verdict.NOT_POSTED, Verdict.OUTSIDE)


def test_the_way_back_from_a_lost_patch_s_thread(world) -> None:
    from e2g.api.reverse import way_back

    settings, built = world
    for asked in ("d-review@x", "d-applied@x"):
        answer = way_back(settings, asked)
        assert answer.message_id == "d-review@x"
        assert answer.status == "applied"
        assert [c.sha for c in answer.commits] == [built.shas["lost"]]
        assert [c.method for c in answer.commits] == ["thread"]


def test_the_commit_page_says_a_lost_patch_s_thread_is_not_sure(world) -> None:
    from fastapi.testclient import TestClient

    from e2g.web.app import create_app

    settings, built = world
    with TestClient(create_app(settings, repo=built.repo)) as client:
        page = client.get(f"/commit/{built.shas['lost']}")
    assert page.status_code == 200
    assert "not sure: its first mail is not in the archive" in page.text
    assert "a reply quotes Alice Author" in page.text
