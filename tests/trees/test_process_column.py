"""messages.process (schema 18): each mail's step of the backport process, written
at ingest and filled in by the next ingest for mail stored before; process_mails
reads it through an index, and classifies what it reads while the fill is pending,
so its answers are the same either way."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from e2g import config, faults
from e2g.api.basis import open_store
from e2g.api.core import ingest
from e2g.api.match import match_tree
from e2g.api.process_mails import process_mails
from e2g.index.db import connect
from e2g.index.schema import MIGRATIONS, PROCESS_PENDING_KEY, SCHEMA_VERSION
from e2g.index.store_writer import StoreWriter
from e2g.ingest.pipeline import fill_process_kinds
from e2g.mail.backport import PROCESS_METHODS
from tests import fault_hook
from tests.conftest import mail, patch_body, store_sql
from tests.trees.world import build

TITLE = "frob: fix the frobber"
# message id -> (subject, extra headers, replying to, the process column)
MAILS: dict[str, tuple[str, tuple[str, ...], str | None, str | None]] = {
    "patch@x": (f"[PATCH] {TITLE}", (), None, None),
    "reply@x": (f"Re: [PATCH] {TITLE}", (), "patch@x", None),
    "autosel@x": (f"[PATCH AUTOSEL 6.1 12/40] {TITLE}", (), None, "autosel"),
    "autosel-reply@x": (
        f"Re: [PATCH AUTOSEL 6.1 12/40] {TITLE}",
        (),
        "autosel@x",
        None,
    ),
    "review@x": (f"[PATCH 6.1 012/100] {TITLE}", (), None, "stable-review"),
    # A patch for the 5.13 release (io_uring's habit), not a stable tree's: its body
    # says nothing of stable, so it is nobody's process mail.
    "release@x": (f"[PATCH 5.13 1/2] {TITLE}", (), None, None),
    "header@x": (
        f"[PATCH] {TITLE}",
        ("X-stable: review", "X-stable-base: Linux 5.15.120"),
        None,
        "stable-review",
    ),
    "failed@x": (
        f'FAILED: patch "[PATCH] {TITLE}" failed to apply to 6.1-stable tree',
        (),
        None,
        "failed",
    ),
    "queued@x": (
        f'Patch "{TITLE}" has been added to the 6.1-stable tree',
        (),
        None,
        "queued",
    ),
    "next@x": (
        "linux-next: manual merge of the frob tree with the net tree",
        (),
        None,
        "next-merge",
    ),
}

BODIES = {
    "review@x": "6.1-stable review patch.  If anyone has any objections, please "
    "let me know.\n",
}


def _archive(path: Path) -> Path:
    path.write_bytes(
        b"".join(
            mail(
                number,
                subject=subject,
                message_id=message_id,
                in_reply_to=parent,
                extra=extra,
                body=BODIES.get(message_id, "Hello.\n")
                if message_id != "patch@x"
                else patch_body(number),
            )
            for number, (message_id, (subject, extra, parent, _)) in enumerate(
                MAILS.items()
            )
        )
    )
    return path


def _settings(data: Path) -> config.Settings:
    return config.resolve(data_dir=data, env={}, home=data.parent)


def _processes(store: Path) -> dict[str, str | None]:
    return dict(store_sql(store, "SELECT message_id, process FROM messages"))


def _pending(store: Path) -> list[tuple[str]]:
    return store_sql(
        store, "SELECT value FROM meta WHERE key = ?", (PROCESS_PENDING_KEY,)
    )


def _as_schema_17(data: Path, into: Path) -> Path:
    """A copy of the data dir `data` as e2g of schema 17 left it: no process column,
    nor the later migrations' commits_subject index (the store is then migrated by
    whatever opens it next)."""
    shutil.copytree(data, into)
    connection = sqlite3.connect(into / "store.sqlite3", isolation_level=None)
    connection.executescript(
        "BEGIN;DROP INDEX commits_subject;DROP INDEX messages_process;"
        "ALTER TABLE messages DROP COLUMN process;"
        f"DELETE FROM meta WHERE key = '{PROCESS_PENDING_KEY}';"
        "DROP TABLE queue;DROP TABLE queue_links;DROP TABLE events;"
        "DELETE FROM meta WHERE key LIKE 'queue_%';"
        "PRAGMA user_version = 17;COMMIT;"
    )
    connection.close()
    return into


def _answers(settings: config.Settings) -> list[object]:
    with open_store(settings) as store:
        return [
            process_mails(store, [TITLE, "frob: another title"], version=version)
            for version in ("6.1", "5.15", "4.19", None)
        ]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, config.Settings]:
    root = tmp_path_factory.mktemp("process")
    archive = _archive(root / "list.mbox")
    settings = _settings(root / "data")
    ingest(settings, [str(archive)], workers=1)
    return archive, settings


def test_ingest_stores_each_mails_process_step(
    fresh: tuple[Path, config.Settings],
) -> None:
    _, settings = fresh
    assert _processes(settings.store_path) == {
        message_id: process for message_id, (*_, process) in MAILS.items()
    }
    assert _pending(settings.store_path) == []


def test_process_mails_read_from_the_column(
    fresh: tuple[Path, config.Settings],
) -> None:
    _, settings = fresh
    with open_store(settings) as store:
        assert store.process_classified()
    six, five, four, anyone = _answers(settings)
    assert six == {
        TITLE: [
            ("autosel@x", "autosel", "autosel mail for 6.1"),
            ("review@x", "stable-review", "stable-review mail for 6.1"),
            ("failed@x", "failed", "failed mail for 6.1"),
            ("queued@x", "queued", "queued mail for 6.1"),
        ]
    }
    assert five == {
        TITLE: [("header@x", "stable-review", "stable-review mail for 5.15")]
    }
    assert four == {}
    assert [mid for mid, _, _ in anyone[TITLE]] == [  # type: ignore[index]
        "autosel@x",
        "review@x",
        "header@x",
        "failed@x",
        "queued@x",
    ]


def test_a_store_of_schema_17_answers_while_pending_and_is_filled_once(
    fresh: tuple[Path, config.Settings], tmp_path: Path
) -> None:
    """Migration 18 marks a store that held messages; until the next ingest fills
    the column, process_mails classifies what it reads (answers the same, not
    none); that ingest fills it and removes the mark."""
    archive, settings = fresh
    old = _settings(_as_schema_17(settings.data_dir, tmp_path / "data"))
    with open_store(old) as store:
        assert not store.process_classified()
    assert store_sql(old.store_path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert _pending(old.store_path) == [("0",)]
    assert set(_processes(old.store_path).values()) == {None}
    assert _answers(old) == _answers(settings)
    report = ingest(old, [str(archive)], workers=1)
    assert report.classified == len(MAILS)
    assert _pending(old.store_path) == []
    assert _processes(old.store_path) == _processes(settings.store_path)
    assert _answers(old) == _answers(settings)
    assert ingest(old, [str(archive)], workers=1).classified == 0


def test_an_interrupted_fill_keeps_its_batches_and_resumes(
    fresh: tuple[Path, config.Settings],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, settings = fresh
    old = _settings(_as_schema_17(settings.data_dir, tmp_path / "data"))
    with open_store(old):
        pass  # migrated: the mark is set
    passes: list[str] = []

    def second_batch_fails(name: str) -> None:
        passes.append(name)
        if passes.count("ingest.process") == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(faults, "point", second_batch_fails)
    with StoreWriter(old.store_path) as writer, pytest.raises(KeyboardInterrupt):
        fill_process_kinds(writer, batch=4)
    seqs = [seq for (seq,) in store_sql(old.store_path, "SELECT seq FROM messages")]
    assert _pending(old.store_path) == [(str(sorted(seqs)[3]),)]
    done = store_sql(
        old.store_path, "SELECT seq FROM messages WHERE process IS NOT NULL"
    )
    assert done and all(seq <= sorted(seqs)[3] for (seq,) in done)
    assert _answers(old) == _answers(settings)  # still pending: classified on read
    monkeypatch.undo()
    with StoreWriter(old.store_path) as writer:
        assert fill_process_kinds(writer, batch=4) == len(MAILS) - 4
    assert _pending(old.store_path) == []
    assert _processes(old.store_path) == _processes(settings.store_path)


def test_a_killed_fill_loses_nothing_and_resumes(
    fresh: tuple[Path, config.Settings], tmp_path: Path
) -> None:
    """SIGKILL before a batch of the fill commits: the store keeps the mark and no
    half-written column; the next `e2g ingest` fills it all and says how many."""
    archive, settings = fresh
    data = _as_schema_17(settings.data_dir, tmp_path / "data")
    store = data / "store.sqlite3"
    command = [sys.executable, "-m", "e2g", "--data-dir", str(data), "ingest"]
    command += ["--json", str(archive)]
    marker = tmp_path / "killed"
    env = {**os.environ, **fault_hook.environment(f"kill-once@ingest.process:{marker}")}
    root = Path(__file__).resolve().parents[2]  # where `tests.fault_hook` imports
    killed = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=120, cwd=root
    )
    assert killed.returncode == -9 and marker.exists()
    assert _pending(store) == [("0",)]
    assert set(_processes(store).values()) == {None}
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=120, cwd=root
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["classified"] == len(MAILS)
    assert _pending(store) == []
    assert _processes(store) == _processes(settings.store_path)


def _old_store(path: Path, *, messages: bool) -> None:
    """A store of schema 17 as an older e2g made it, with one bare message or none."""
    old = sqlite3.connect(path, isolation_level=None)
    old.executescript(
        f"BEGIN;{';'.join(MIGRATIONS[:17])};PRAGMA user_version = 17;COMMIT;"
    )
    if messages:
        old.execute(
            "INSERT INTO messages(seq, message_id, subject, subject_key, author_name, "
            "author_email, date_raw, date_source, thread_root, kind, body) VALUES "
            "(1, 'a@x', 's', 's', 'A', 'a@example.org', '', 'none', 'a@x', 'other', '')"
        )
    old.close()


@pytest.mark.parametrize("messages", [True, False])
def test_migration_18_marks_only_a_store_with_messages(
    tmp_path: Path, *, messages: bool
) -> None:
    path = tmp_path / "store.sqlite3"
    _old_store(path, messages=messages)
    connect(path).close()
    assert _pending(path) == ([("0",)] if messages else [])
    assert store_sql(path, "SELECT process FROM messages") == (
        [(None,)] if messages else []
    )
    plan = store_sql(
        path,
        "EXPLAIN QUERY PLAN SELECT seq FROM messages "
        "WHERE process IS NOT NULL AND subject_key IN ('a', 'b')",
    )
    assert "messages_process" in str(plan)


def test_a_key_range_holds_keys_past_u_ffff(
    fresh: tuple[Path, config.Settings], tmp_path: Path
) -> None:
    """subjects_by_key_prefix and has_subject_key_starting end a prefix's range
    the same way: a key that goes on with a character past U+FFFF is in it."""
    settings = _settings(tmp_path / "data")
    archive = tmp_path / "list.mbox"
    archive.write_bytes(mail(1, subject="frob: \U0001f600 smile", message_id="s@x"))
    ingest(settings, [str(archive)], workers=1)
    with open_store(settings) as store:
        assert store.has_subject_key_starting("frob: ")
        assert [row.message_id for row in store.subjects_by_key_prefix("frob: ")] == [
            "s@x"
        ]


def test_a_tree_matched_while_pending_links_the_same_process_mails(
    tmp_path: Path,
) -> None:
    """`e2g match --tree` of a stable branch on a store whose fill is pending links
    each backport's process mails as on a store filled at ingest."""
    world = build(tmp_path)

    def settings_for(data: Path) -> config.Settings:
        return config.resolve(
            data_dir=data,
            env={"XDG_CONFIG_HOME": str(world.config.parent.parent)},
            home=data.parent,
        )

    fresh = settings_for(tmp_path / "fresh")
    ingest(fresh, [str(world.archive)], workers=1)
    old = settings_for(_as_schema_17(fresh.data_dir, tmp_path / "old"))
    links: list[list[tuple[str, str, str]]] = []
    for settings in (fresh, old):
        for name in ("mainline", "stable"):
            match_tree(settings, name, jobs=1)
        links.append(
            sorted(
                (sha, mid, method)
                for sha, mid, method in store_sql(
                    settings.store_path,
                    "SELECT commit_sha, message_id, method FROM links",
                )
                if method in PROCESS_METHODS
            )
        )
    assert _pending(old.store_path) == [("0",)]
    assert links[0] == links[1]
    # D's FAILED notice is for 1.0-stable; D is backported to linux-1.1.y.
    assert {mid for _, mid, _ in links[0]} == {
        f"process-{name}@example.org" for name in "ABC"
    }


def test_a_patch_tagged_with_its_release_is_still_the_commits_posting(
    tmp_path: Path,
) -> None:
    # "[PATCH 5.13 1/3]": the release the patch is for (io_uring's habit), with no
    # word of stable in its body: stored as no process mail, and matched.
    from e2g.api.link import link
    from tests.conftest import SAMPLE, sample_repo

    data = (SAMPLE / "frob-devel.mbox").read_bytes()  # not all of it is UTF-8
    tagged = "Subject: [PATCH 5.13 1/3] mm: fix leak in frob_alloc()\n"
    archive = tmp_path / "tagged.mbox"
    archive.write_bytes(
        data.replace(
            b"Subject: [PATCH 1/3] mm: fix leak in frob_alloc()\n", tagged.encode()
        )
    )
    assert tagged.encode() in archive.read_bytes()
    settings = _settings(tmp_path / "data")
    ingest(settings, [str(archive)], workers=1)
    repo = sample_repo(tmp_path / "repo")
    processes = store_sql(
        settings.store_path,
        "SELECT process FROM messages WHERE subject = ?",
        (tagged.removeprefix("Subject: ").strip(),),
    )
    assert processes == [(None,)]
    sha = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%H", "--grep=fix leak in frob_alloc"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()[0]
    result = link(settings, sha, repo=repo)
    assert tagged.removeprefix("Subject: ").strip() in {
        posting.subject for posting in result.postings
    }
