"""A ping quoting the commit's exact patch, in the thread of the patch's own mail,
is never the applied posting: the patch's mail is, whatever rule found it.

The mailer changed the posted diff slightly (a context line), so the patch mail's
patch-id is not the commit's and only its date (git am keeps it as the author
date) finds it; the author's ping months later quotes the commit's own diff whole,
an equal patch-id."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta

import pytest

from e2g.api.link import link
from tests.audit_world import ALICE, COMMIT_DATE, MAINT, World, matched, quoted
from tests.conftest import git, mail

PATCH, PING = "patch@x", "ping@x"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    world = World(tmp_path_factory.mktemp("quoted-ping"))
    world.edit("a.c", 5, "int a5 = 55;")
    # Written (the author date) when posted; committed after the ping.
    env = {
        **world.env(ALICE, MAINT, 0),
        "GIT_COMMITTER_DATE": (COMMIT_DATE + timedelta(days=91)).isoformat(),
    }
    git(world.repo, "commit", "-q", "-a", "-m", "a: set a5", env=env)
    sha = world.shas["pinged"] = git(world.repo, "rev-parse", "HEAD").strip()
    diff = world.diff_of(sha)
    posted = diff.replace(" int a3 = 3;", " int a3 = 30;")
    assert posted != diff
    world.mails.append(
        mail(
            1,
            subject="[PATCH] a: set a5",
            body=f"A5 is 55.\n\nSigned-off-by: {ALICE}\n---\n{posted}",
            sender=ALICE,
            message_id=PATCH,
            date=COMMIT_DATE,
        )
    )
    world.mails.append(
        mail(
            2,
            subject="Re: [PATCH] a: set a5",
            body=f"Ping?\n\nOn Wed, 10 Mar 2021, Alice Author wrote:\n{quoted(diff)}",
            sender=ALICE,
            message_id=PING,
            in_reply_to=PATCH,
            date=COMMIT_DATE + timedelta(days=90),
        )
    )
    return matched(world)


def test_the_patch_mail_is_applied_not_the_ping_quoting_it(world) -> None:
    result = link(world[0], world[1].shas["pinged"], repo=world[1].repo)
    applied = [p for p in result.postings if p.applied]
    assert [p.message_id for p in applied] == [PATCH]
    assert applied[0].kind == "patch"
    assert applied[0].method != "quoted"
    # The ping is the patch's reply, not a posting of it.
    assert PING not in {p.message_id for p in result.postings}
    assert applied[0].replies == 1


def test_link_does_not_say_the_patch_mail_is_missing(world) -> None:
    settings, built = world
    command = [sys.executable, "-m", "e2g", "--data-dir", str(settings.data_dir)]
    command += ["link", "-C", str(built.repo), built.shas["pinged"]]
    run = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "E2G_PAGER": "cat"},
    )
    assert f"<{PATCH}>" in run.stdout
    assert "found by author-date" in run.stdout
    assert "the applied version" in run.stdout
    assert "not in the archive" not in run.stdout
