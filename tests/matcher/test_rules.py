"""Each matching rule's switch (e2g.matcher.rules) turns that rule off, and only it:
one commit per rule whose answer the rule changes, matched with every rule on and
with that one off."""

from __future__ import annotations

import pytest

from e2g.api.basis import open_store
from e2g.git.repo import Repo
from e2g.mail.patch import diff_lines
from e2g.matcher.batch import request_for
from e2g.matcher.cascade import Matcher
from e2g.matcher.rules import (
    LOST_THREADS,
    PROCESS_MAILS,
    QUOTED_REPLIES,
    REVERT_DEPTH,
    RULES,
    SERIES_SIBLINGS,
    Rules,
)
from tests.audit_world import ALICE, BOB, MAINT, World, ingested, quoted
from tests.conftest import git

SASHA = "Sasha Levin <sashal@example.org>"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    world = World(tmp_path_factory.mktemp("rules"))
    shas = world.shas
    send = world._send  # noqa: SLF001 - the test world's one way to send any subject

    # quoted-replies: the patch went elsewhere; a ping quoting it whole is here.
    world.edit("a.c", 3, "int a3 = 33;")
    shas["quoted"] = world.commit("a: set a3")
    ping = "Ping?\n\nOn Mon, 1 Mar 2021, Alice Author wrote:\n"
    send(
        "Re: [PATCH] a: set a3",
        ping + quoted(world.diff_of(shas["quoted"])),
        ALICE,
        "a-ping@x",
        "a-lost@x",
    )

    # lost-threads: only a review quoting a part of it and naming the author.
    world.edit("b.c", 3, "int b3 = 33;")
    shas["lost"] = world.commit("b: set b3")
    send(
        "Re: [PATCH] b: set b3",
        f"On Mon, 1 Mar 2021, Alice Author wrote:\n{quoted('+int b3 = 33;')}\nOK.\n",
        BOB,
        "b-review@x",
        "b-lost@x",
    )

    # revert-depth: a change and the revert of its revert carry one diff.
    world.edit("c.c", 3, "int c3 = 33;")
    shas["change"] = world.commit("c: set c3")
    world.post("c: set c3", world.diff_of(shas["change"]), message_id="c1@x")
    for name in ("revert", "redo"):
        git(world.repo, "revert", "--no-edit", "HEAD", env=world.env(ALICE, MAINT, 1))
        shas[name] = git(world.repo, "rev-parse", "HEAD").strip()
        summary = git(world.repo, "log", "-1", "--format=%s").strip()
        world.post(summary, world.diff_of(shas[name]), message_id=f"c-{name}@x")

    # series-siblings: two parts of one series under one generic subject.
    world.cover("d: tidy", version=1, parts=2, message_id="d0@x")
    for part, (path, text) in enumerate((("d.c", "int d3 = 33;"), ("e.c", "x")), 1):
        world.edit(path, 3, text)
        shas[f"part{part}"] = world.commit("d: tidy", days=2)
        diff = world.diff_of(shas[f"part{part}"])
        world.post(
            "d: tidy", diff, message_id=f"d{part}@x", part=f"{part}/2", parent="d0@x"
        )

    # process-mails: the patch, and AUTOSEL picking it for a stable tree.
    world.edit("f.c", 3, "int f3 = 33;")
    shas["picked"] = world.commit("f: set f3", days=3)
    diff = world.diff_of(shas["picked"])
    world.post("f: set f3", diff, message_id="f1@x")
    send(
        "[PATCH AUTOSEL 6.1 1/3] f: set f3",
        f"From: {ALICE}\n\n[ Upstream commit 1234 ]\n\nSigned-off-by: {SASHA}\n---\n"
        + diff,
        SASHA,
        "f-autosel@x",
        None,
    )
    world.announce(days=30)
    return ingested(world), world


def _answer(world, name: str, *off: str) -> list[tuple[str, str, bool]]:
    """(Message-ID, method, applied) of each posting of commit `name`, matched
    with the rules `off` turned off (trailers ignored)."""
    settings, built = world
    (commit,) = Repo.open(built.repo).commits([built.shas[name]])
    with open_store(settings) as store:
        matcher = Matcher(
            store,
            lines_of=diff_lines,
            url_for=settings.url_for,
            rules=Rules.without(*off),
        )
        result = matcher.match(request_for(commit, ignore_trailers=True))
    return [(p.message_id, p.method, p.applied) for p in result.postings]


def test_quoted_replies(world) -> None:
    assert _answer(world, "quoted") == [("a-ping@x", "quoted", True)]
    # Off, the ping is no candidate; its thread, under a lost root, still names
    # Alice: the lost-thread rule offers it, unsure.
    assert _answer(world, "quoted", QUOTED_REPLIES) == [("a-ping@x", "thread", True)]
    assert _answer(world, "quoted", QUOTED_REPLIES, LOST_THREADS) == []


def test_lost_threads(world) -> None:
    assert _answer(world, "lost") == [("b-review@x", "thread", True)]
    assert _answer(world, "lost", LOST_THREADS) == []


def test_revert_depth(world) -> None:
    assert _answer(world, "change") == [("c1@x", "patch-id", True)]
    assert _answer(world, "redo") == [("c-redo@x", "patch-id", True)]
    # Off, the change and the revert of its revert are one patch's postings, and
    # the change's applied posting is the later one, its redo.
    both = [("c-redo@x", "patch-id", True), ("c1@x", "patch-id", False)]
    assert _answer(world, "change", REVERT_DEPTH) == both
    assert _answer(world, "redo", REVERT_DEPTH) == both


def test_series_siblings(world) -> None:
    cover = ("d0@x", "cover", False)
    assert _answer(world, "part1") == [("d1@x", "patch-id", True), cover]
    # Off, the other part (same subject, same series) is taken for a version.
    assert _answer(world, "part1", SERIES_SIBLINGS) == [
        ("d2@x", "version", False),
        ("d1@x", "patch-id", True),
        cover,
    ]


def test_process_mails(world) -> None:
    assert _answer(world, "picked") == [("f1@x", "patch-id", True)]
    # Off, AUTOSEL's copy is a candidate like any, and the later posting: applied.
    assert _answer(world, "picked", PROCESS_MAILS) == [
        ("f-autosel@x", "patch-id", True),
        ("f1@x", "patch-id", False),
    ]


def test_every_rule_on_is_the_default() -> None:
    assert Rules() == Rules.without()
    assert all(Rules().on(rule) for rule in RULES)
    assert not Rules.without(LOST_THREADS).on(LOST_THREADS)
    with pytest.raises(ValueError, match="unknown matching rule"):
        Rules.without("no-such-rule")
