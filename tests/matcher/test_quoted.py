"""A reply that quotes a whole patch is a posting of it where the patch's own mail is
missing, and only a reply (its review) where the patch's mail is there too."""

from __future__ import annotations

import re
import sqlite3
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from e2g.index.schema import QUOTED_PENDING_KEY
from e2g.mail.patch import find_patch
from e2g.mail.quoted import quoted_patch_id
from tests.audit_world import ALICE, BOB, MAINT, World, linked, matched, quoted
from tests.conftest import git, store_sql

LOST = "lost@x"  # the patch mail the archive never got


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("quoted")
    world = World(root)
    shas = world.shas
    # The patch went to another list; here only the ping quoting it, and the answer.
    world.edit("a.c", 3, "int a3 = 33;")
    world.edit("a.c", 9, "int a9 = 99;")
    shas["rootless"] = world.commit("a: set a3 and a9")
    diff = world.diff_of(shas["rootless"])
    world._send(  # noqa: SLF001 - the test world's one way to send any subject
        "Re: [PATCH] a: set a3 and a9",
        f"Ping?\n\nOn Mon, 1 Mar 2021, Alice Author wrote:\n{quoted(diff)}\n",
        ALICE,
        "ping@x",
        LOST,
    )
    world._send(
        "Re: [PATCH] a: set a3 and a9", "Applied, thanks.\n", MAINT, "ok@x", "ping@x"
    )  # noqa: SLF001
    # The patch is here: Bob's reply quoting it whole is review, not a posting.
    world.edit("b.c", 3, "int b3 = 33;")
    shas["present"] = world.commit("b: set b3")
    posted = world.post("b: set b3", world.diff_of(shas["present"]), message_id="b1@x")
    world._send(  # noqa: SLF001
        "Re: [PATCH] b: set b3",
        f"{quoted(world.diff_of(shas['present']))}\n\nReviewed-by: {BOB}\n",
        BOB,
        "b1r@x",
        posted,
    )
    # A review commenting between the hunks quotes parts only: no posting of them.
    world.edit("c.c", 2, "int c2 = 22;")
    world.edit("c.c", 10, "int c10 = 100;")
    shas["commented"] = world.commit("c: set c2 and c10")
    first, second = re.split(
        r"(?m)^(?=@@)", world.diff_of(shas["commented"]), maxsplit=2
    )[1:]
    head = world.diff_of(shas["commented"]).split("@@")[0]
    world._send(  # noqa: SLF001
        "Re: [PATCH] c: set c2 and c10",
        f"{quoted(head + first)}\nWhy 22?\n\n{quoted(second)}\n",
        BOB,
        "c1r@x",
        "lost-c@x",
    )
    return matched(world)


def test_a_ping_quoting_a_lost_patch_is_its_posting(world) -> None:
    result = linked(world, "rootless")
    (posting,) = result.postings
    assert posting.message_id == "ping@x"
    assert posting.applied
    assert posting.method == "quoted"
    assert posting.kind == "reply"
    # The maintainer's answer below it is the thread's reply.
    assert posting.replies == 1
    assert any("mia@example.org" in who for who in posting.participants)


def test_a_quote_in_the_patch_thread_is_review_not_a_posting(world) -> None:
    result = linked(world, "present")
    assert [p.message_id for p in result.postings] == ["b1@x"]
    assert result.postings[0].method == "patch-id"
    assert result.postings[0].reviewers == (f"Reviewed-by: {BOB}",)


def test_a_review_quoting_parts_posts_nothing(world) -> None:
    assert linked(world, "commented").postings == ()
    settings, _ = world
    rows = store_sql(
        settings.store_path,
        "SELECT patch_id FROM messages WHERE message_id = ?",
        ("c1r@x",),
    )
    # Its first quote is a part of the patch: an id no commit has.
    (patch_id,) = rows[0]
    assert patch_id is not None
    assert (
        patch_id
        != store_sql(
            settings.store_path,
            "SELECT patch_id FROM messages WHERE message_id = 'ping@x'",
        )[0][0]
    )


def test_the_quote_keeps_the_commits_patch_id(world) -> None:
    settings, built = world
    shown = git(built.repo, "show", built.shas["rootless"])
    from_git = subprocess.run(
        ["git", "patch-id", "--stable"],
        input=shown,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[0]
    (stored,) = store_sql(
        settings.store_path,
        "SELECT patch_id FROM messages WHERE message_id = 'ping@x'",
    )[0]
    assert stored == from_git


DIFF = """diff --git a/f.c b/f.c
index 1111111..2222222 100644
--- a/f.c
+++ b/f.c
@@ -1,5 +1,5 @@
 int a;

-int b = 1;
+int b = 2;

 int c;
"""


def _plain_id(diff: str) -> str | None:
    _, patch = find_patch([diff])
    return patch.patch_id if patch else None


@pytest.mark.parametrize(
    "quote",
    [
        lambda line: f"> {line}",
        lambda line: f">{line}",
        lambda line: f"> {line}".rstrip(),  # a mailer that strips trailing spaces
    ],
    ids=["space", "bare", "stripped"],
)
def test_every_quoting_style_gives_the_patch_id(quote) -> None:
    text = "Applied, thanks.\n\nOn Mon, Alice wrote:\n" + "\n".join(
        quote(line) for line in DIFF.splitlines()
    )
    assert quoted_patch_id(text) == _plain_id(DIFF)


def test_deeper_quotes_and_unquoted_diffs_are_not_quoted_patches() -> None:
    deeper = "\n".join(f"> > {line}" for line in DIFF.splitlines())
    assert quoted_patch_id(deeper) is None
    assert quoted_patch_id(DIFF) is None
    assert quoted_patch_id("> diff --git a/f.c b/f.c\n> nothing else\n") is None


@given(
    st.lists(
        st.text(
            alphabet=st.characters(
                codec="utf-8",
                exclude_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029",
            ),
            max_size=30,
        ),
        min_size=1,
        max_size=12,
    )
)
def test_quoting_any_added_lines_keeps_the_id(lines: list[str]) -> None:
    body = "".join(f"+{line}\n" for line in lines)
    diff = (
        "diff --git a/new.txt b/new.txt\nnew file mode 100644\n"
        "index 0000000..1111111\n--- /dev/null\n+++ b/new.txt\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}"
    )
    text = "Ping?\n\n" + "".join(f"> {line}\n" for line in diff.splitlines())
    assert quoted_patch_id(text) == _plain_id(diff)


def _store_from_before(data_dir: Path, tmp_path: Path) -> Path:
    """A copy of `data_dir` as migration 16 leaves a store that held replies: no
    reply has a patch-id, and the mark asks the next ingest to read them."""
    import shutil

    data = tmp_path / "data"
    shutil.copytree(data_dir, data)
    with sqlite3.connect(data / "store.sqlite3") as connection:
        connection.execute("UPDATE messages SET patch_id = NULL WHERE kind = 'reply'")
        connection.execute(
            "INSERT INTO meta(key, value) VALUES (?, '0')", (QUOTED_PENDING_KEY,)
        )
    connection.close()
    return data


def test_a_store_from_before_reads_its_replies_once(world, tmp_path: Path) -> None:
    """Migration 16 marks a store that held replies; the next ingest reads them."""
    settings, built = world
    from e2g import config
    from e2g.api.core import ingest

    data = _store_from_before(settings.data_dir, tmp_path)
    store = data / "store.sqlite3"
    copy = config.resolve(data_dir=data, env={}, home=tmp_path)
    report = ingest(copy, [str(built.root / "list.mbox")], workers=1)
    assert report.quoted_read == 4  # ping@x, ok@x, b1r@x, c1r@x
    assert (
        store_sql(store, f"SELECT * FROM meta WHERE key = '{QUOTED_PENDING_KEY}'") == []
    )
    (found,) = store_sql(
        store, "SELECT patch_id FROM messages WHERE message_id = 'ping@x'"
    )[0]
    assert (
        found
        == store_sql(
            settings.store_path,
            "SELECT patch_id FROM messages WHERE message_id = 'ping@x'",
        )[0][0]
    )
    assert ingest(copy, [str(built.root / "list.mbox")], workers=1).quoted_read == 0


def _audits(world) -> dict[str, object]:
    from e2g.api.audit import AuditOptions, audit

    settings, built = world
    names = {sha: name for name, sha in built.shas.items()}
    found: dict[str, object] = {}
    audit(
        settings,
        repo=built.repo,
        options=AuditOptions(),
        on_commit=lambda one: found.__setitem__(names.get(one.sha, one.sha), one),
    )
    return found


def test_the_audit_reads_a_quoting_reply_as_the_patch_posted(world) -> None:
    from e2g.api.audit import Verdict

    audits = _audits(world)
    lost = audits["rootless"]
    # Posted (not "not-posted"): the quote carries the applied code itself.
    assert lost.verdict is Verdict.UNREVIEWED
    assert lost.applied is not None and lost.applied.message_id == "ping@x"
    assert lost.applied.same_code
    present = audits["present"]
    assert present.verdict is Verdict.REVIEWED
    assert [r.message_id for r in present.reviews] == ["b1r@x"]


def test_the_way_back_from_a_quoting_reply(world) -> None:
    from e2g.api.reverse import way_back

    settings, built = world
    answer = way_back(settings, "ping@x")
    assert (answer.message_id, answer.status) == ("ping@x", "applied")
    assert [c.sha for c in answer.commits] == [built.shas["rootless"]]
    # Bob's quote of a patch that is in the archive answers for that patch.
    assert way_back(settings, "b1r@x").message_id == "b1@x"


def test_a_killed_backfill_loses_nothing_and_resumes(world, tmp_path: Path) -> None:
    """SIGKILL before a batch of the backfill commits: the store keeps the mark and
    nothing half-done; the next ingest reads the replies again and finishes."""
    import json
    import os
    import sys

    from tests import fault_hook

    settings, built = world
    data = _store_from_before(settings.data_dir, tmp_path)
    store = data / "store.sqlite3"
    command = [sys.executable, "-m", "e2g", "--data-dir", str(data), "ingest"]
    command += ["--json", str(built.root / "list.mbox")]
    marker = tmp_path / "killed"
    env = {**os.environ, **fault_hook.environment(f"kill-once@ingest.quoted:{marker}")}
    root = Path(__file__).resolve().parents[2]  # where `tests.fault_hook` imports
    killed = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=120, cwd=root
    )
    assert killed.returncode == -9 and marker.exists()
    assert store_sql(
        store, "SELECT value FROM meta WHERE key = ?", (QUOTED_PENDING_KEY,)
    ) == [("0",)]
    assert store_sql(
        store,
        "SELECT count(*) FROM messages WHERE kind = 'reply' AND patch_id IS NOT NULL",
    ) == [(0,)]
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=120, cwd=root
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["quoted_read"] == 4
    assert store_sql(
        store, "SELECT patch_id FROM messages WHERE message_id = 'ping@x'"
    ) == store_sql(
        settings.store_path, "SELECT patch_id FROM messages WHERE message_id = 'ping@x'"
    )
    assert (
        store_sql(store, "SELECT * FROM meta WHERE key = ?", (QUOTED_PENDING_KEY,))
        == []
    )
