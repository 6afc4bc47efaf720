"""A repository and a list archive built for the patch queue: one patch per state.

Built on tests.audit_world's World (a real git repository in a temp dir, patches cut
from `git format-patch`, mail ingested and matched for real). Mail is dated from
BASE_DATE on; the repository's commits span it. `build` returns the settings, the
world, and the Message-ID of each case by its name.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from e2g import config
from tests.audit_world import ALICE, BOB, CAROL, World, matched
from tests.conftest import BASE_DATE, patch_body

# A "now" at which nothing is quiet yet, and one at which the archive's patches
# have been quiet for longer than the default 90 days.
FRESH = BASE_DATE + timedelta(days=20)
QUIET = BASE_DATE + timedelta(days=200)


def unapplied(world: World, path: str, text: str, subject: str) -> str:
    """The diff of a change to line 3 of `path`, committed and taken back: posted,
    never applied."""
    world.edit(path, 3, text)
    sha = world.commit(subject)
    diff = world.diff_of(sha)
    from tests.conftest import git

    git(world.repo, "reset", "-q", "--hard", "HEAD~1")
    return diff


def build(root: Path) -> tuple[config.Settings, World, dict[str, str]]:
    world = World(root)
    ids: dict[str, str] = {}

    world.edit("a.c", 3, "int a3 = 33;")
    applied = world.commit(
        "a: set a3\n\nSigned-off-by: Alice Author <alice@example.org>"
    )
    ids["applied"] = world.post("a: set a3", world.diff_of(applied), message_id="a@x")

    ids["superseded"] = world.post(
        "b: set b3", unapplied(world, "b.c", "int b3 = 30;", "b"), message_id="b1@x"
    )
    ids["new"] = world.post(
        "b: set b3",
        unapplied(world, "b.c", "int b3 = 31;", "b"),
        version=2,
        message_id="b2@x",
    )
    ids["reviewed"] = world.post(
        "c: set c3", unapplied(world, "c.c", "int c3 = 303;", "c"), message_id="c@x"
    )
    world.reply(
        "c@x",
        "Looks right.\n\nReviewed-by: Bob Reviewer <bob@example.org>\n",
        message_id="c-r@x",
    )
    ids["under-review"] = world.post(
        "d: set d3", unapplied(world, "d.c", "int d3 = 304;", "d"), message_id="d@x"
    )
    world.reply("d@x", "Why three and not four?\n", message_id="d-r@x")
    world.reply("d-r@x", "Because.\n", sender=ALICE, message_id="d-rr@x")
    ids["rejected"] = world.post(
        "e: set e3", unapplied(world, "e.c", "int e3 = 305;", "e"), message_id="e@x"
    )
    world.reply(
        "e@x",
        "Acked-by: Carol Tester <carol@example.org>\n",
        sender=CAROL,
        message_id="e-r1@x",
    )
    world.reply(
        "e@x",
        "No.\n\nNacked-by: Bob Reviewer <bob@example.org>\n",
        sender=BOB,
        message_id="e-r2@x",
    )
    ids["own-reply"] = world.post(
        "f: set f3", unapplied(world, "f.c", "int f3 = 306;", "f"), message_id="f@x"
    )
    world.reply("f@x", "Ping.\n", sender=ALICE, message_id="f-r@x")
    ids["untracked"] = world.post(
        "mm: frob the frob", patch_body(7).split("---\n", 1)[1], message_id="u@x"
    )

    # Hostile mail: markup in the subject and the sender's name.
    ids["hostile"] = world.post(
        "i: <script>alert(1)</script>",
        unapplied(world, "i.c", "int i3 = 309;", "i"),
        sender='"Eve <b>&amp;" <alice@example.org>',
        message_id="i@x",
    )

    # A series of two: the first part applied, the second never.
    cover = world.cover("g and h", version=1, parts=2, message_id="gh0@x")
    world.edit("g.c", 3, "int g3 = 33;")
    first = world.commit("g: set g3\n\nSigned-off-by: Alice Author <alice@example.org>")
    ids["series-applied"] = world.post(
        "g: set g3", world.diff_of(first), part="1/2", parent=cover, message_id="gh1@x"
    )
    ids["series-open"] = world.post(
        "h: set h3",
        unapplied(world, "h.c", "int h3 = 308;", "h"),
        part="2/2",
        parent=cover,
        message_id="gh2@x",
    )
    ids["cover"] = cover
    world.announce(days=30)
    settings, _ = matched(world)
    return settings, world, ids
