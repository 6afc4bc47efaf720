"""CLI concerns only: exit codes, the stdout/stderr split, --json shapes, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from tests.conftest import SAMPLE, git, mail, patch_body, sample_repo


def e2g(
    data: Path, *args: str, stdin: bytes | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "E2G_DEBUG"}
    return subprocess.run(
        [sys.executable, "-m", "e2g", "--data-dir", str(data), *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        env=env,
        # Never the checkout: a test that forgets -C must fail here, not find
        # whatever objects the developer's own repository happens to hold.
        cwd=cwd if cwd is not None else data.parent,
        timeout=120,
    )


def assert_one_line_error(
    result: subprocess.CompletedProcess[str], code: int, fragment: str
) -> None:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("e2g: error: ")
    assert fragment in result.stderr
    assert result.stdout == ""


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    path = tmp_path / "list.mbox"
    path.write_bytes(
        mail(1, subject="[PATCH] mm: fix frob leak", body=patch_body(1))
        + mail(
            2, subject="Re: [PATCH] mm: fix frob leak", in_reply_to="msg1@example.org"
        )
    )
    return path


def test_ingest_json_summary_on_stdout(tmp_path, archive):
    result = e2g(tmp_path / "d", "ingest", "--json", str(archive))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (
        summary["messages"],
        summary["new"],
        summary["patches"],
        summary["replies"],
    ) == (2, 2, 1, 1)
    assert result.stderr == ""


def test_ingest_summary_line_on_stderr_and_quiet(tmp_path, archive):
    result = e2g(tmp_path / "d", "ingest", str(archive))
    assert result.returncode == 0
    assert result.stdout == ""
    assert "2 messages (2 new): 1 patch, 0 covers, 0 pull requests, 1 reply" in (
        result.stderr
    )
    quiet = e2g(tmp_path / "d", "-q", "ingest", str(archive))
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")


def test_ingest_from_stdin(tmp_path, archive):
    result = e2g(tmp_path / "d", "ingest", "--json", "-", stdin=archive.read_bytes())
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["new"] == 2


def test_missing_archive_is_one_line_error(tmp_path):
    assert_one_line_error(
        e2g(tmp_path / "d", "ingest", str(tmp_path / "nope.mbox")), 1, "nope.mbox"
    )


def test_not_an_archive_is_one_line_error(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 10)
    assert_one_line_error(e2g(tmp_path / "d", "ingest", str(junk)), 1, "junk.bin")


def test_search_empty_store_and_no_hits(tmp_path, archive):
    assert_one_line_error(e2g(tmp_path / "d", "search", "frob"), 1, "e2g ingest")
    e2g(tmp_path / "d", "-q", "ingest", str(archive))
    none = e2g(tmp_path / "d", "search", "nothingmatchesthis")
    assert (none.returncode, none.stdout) == (0, "")
    hits = e2g(tmp_path / "d", "search", "--json", "frob")
    rows = [json.loads(line) for line in hits.stdout.splitlines()]
    # Newest first: the reply, then the patch.
    assert [row["message_id"] for row in rows] == [
        "msg2@example.org",
        "msg1@example.org",
    ]
    patches = e2g(tmp_path / "d", "search", "--json", "frob", "is:patch")
    rows = [json.loads(line) for line in patches.stdout.splitlines()]
    assert [row["message_id"] for row in rows] == ["msg1@example.org"]
    assert set(rows[0]) >= {
        "message_id",
        "subject",
        "author",
        "date",
        "list",
        "kind",
        "version",
        "files",
        "url",
    }


def test_bad_query_is_a_usage_error(tmp_path, archive):
    e2g(tmp_path / "d", "-q", "ingest", str(archive))
    assert_one_line_error(e2g(tmp_path / "d", "search", "d:garbage"), 2, "d:")
    for query, message in [
        ("(frob OR leak", "unbalanced '(': it is never closed (at column 1)"),
        ("frob OR", "OR needs a term after it (at column 6)"),
        ("x:foo", "unknown prefix x:"),
    ]:
        assert_one_line_error(e2g(tmp_path / "d", "search", query), 2, message)


def test_search_or_and_not_with_parentheses(tmp_path, archive):
    e2g(tmp_path / "d", "-q", "ingest", str(archive))

    def found(*query: str) -> list[str]:
        result = e2g(tmp_path / "d", "search", "--json", *query)
        assert result.returncode == 0, result.stderr
        return [json.loads(line)["message_id"] for line in result.stdout.splitlines()]

    both = ["msg2@example.org", "msg1@example.org"]
    assert found("nothingmatches", "OR", "frob") == both
    assert found("nothingmatches or frob") == []  # lower-case `or` is a word
    assert found("frob AND (is:cover OR is:reply)") == ["msg2@example.org"]
    assert found("NOT", "is:reply", "frob") == ["msg1@example.org"]
    # a negated clause is a query word wherever it is typed, `--` or not
    assert found("--", "-(is:reply OR is:cover)", "frob") == ["msg1@example.org"]
    assert found("frob", "-is:reply") == ["msg1@example.org"]
    assert found("-n", "5", "-(is:reply", "OR", "is:cover)", "frob") == [
        "msg1@example.org"
    ]
    assert found("-is:patch") == ["msg2@example.org"]


def test_link_outside_a_repository_and_unknown_revision(tmp_path, archive):
    e2g(tmp_path / "d", "-q", "ingest", str(archive))
    plain = tmp_path / "plain"
    plain.mkdir()
    assert_one_line_error(
        e2g(tmp_path / "d", "link", "--repo", str(plain), "HEAD"),
        1,
        "not a git repository",
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a").write_text("a\n")
    git(repo, "add", "a")
    git(
        repo,
        "-c",
        "user.name=A",
        "-c",
        "user.email=a@example.org",
        "commit",
        "-qm",
        "first",
    )
    assert_one_line_error(
        e2g(tmp_path / "d", "link", "--repo", str(repo), "no-such-rev"),
        1,
        "no-such-rev",
    )


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["ingest"], "Missing argument 'paths' (see '"),
        (["link", "--no-such-flag", "HEAD"], "No such option: --no-such-flag"),
        (["frobnicate"], "No such command 'frobnicate' (see '"),
        ([], "Missing command (see '"),
        (["match", "-j", "99"], "99 is not in the range"),
    ],
)
def test_usage_errors_are_one_line_and_exit_two(tmp_path, args, fragment):
    result = e2g(tmp_path / "d", *args)
    assert_one_line_error(result, 2, fragment)
    assert result.stderr.count("\n") == 1


def test_no_arguments_show_the_help_and_exit_two():
    result = subprocess.run(
        [sys.executable, "-m", "e2g"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "Usage: " in result.stdout and result.stderr == ""


def test_version_and_help(tmp_path):
    assert e2g(tmp_path / "d", "--version").stdout.startswith("e2g ")
    help_text = e2g(tmp_path / "d", "--help").stdout
    for command in ("ingest", "search", "link", "match", "stats", "reindex"):
        assert command in help_text


def test_optimize_merges_the_index_and_searches_answer_the_same(tmp_path, archive):
    data = tmp_path / "d"
    e2g(data, "-q", "ingest", str(archive))
    second = tmp_path / "more.mbox"
    second.write_bytes(mail(3, subject="[PATCH] mm: frob again", body=patch_body(3)))
    e2g(data, "-q", "ingest", str(second))
    before = e2g(data, "search", "--json", "frob").stdout
    result = e2g(data, "optimize")
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "2 segments merged into 1"
    assert e2g(data, "search", "--json", "frob").stdout == before
    assert len(before.splitlines()) == 3
    assert e2g(data, "optimize").stderr.strip() == (
        "the full-text index is one segment already"
    )


def test_optimize_gives_back_the_pages_deleted_mail_freed(tmp_path):
    """A public-inbox that deletes most of its mail leaves the store's file as
    large as before (SQLite keeps the free pages); optimize returns them."""
    import random

    from tests.ingest.test_public_inbox import Inbox

    noise = random.Random(7)
    inbox = Inbox.create(tmp_path / "frob.git")
    posts = []
    for number in range(1, 41):
        added = "".join(f"+{noise.getrandbits(256):064x}\n" for _ in range(300))
        body = (
            f"Fix.\n\n---\ndiff --git a/mm/n{number}.c b/mm/n{number}.c\n"
            f"--- a/mm/n{number}.c\n+++ b/mm/n{number}.c\n@@ -0,0 +1,300 @@\n{added}"
        )
        posts.append(mail(number, subject=f"[PATCH] mm: noise {number}", body=body))
        inbox.add(posts[-1])
    data = tmp_path / "d"
    e2g(data, "-q", "ingest", str(inbox.git_dir))
    for post in posts[8:]:
        inbox.delete(post)
    e2g(data, "-q", "ingest", str(inbox.git_dir))
    store = data / "store.sqlite3"
    before_bytes = store.stat().st_size
    kept = e2g(data, "search", "--json", "noise").stdout
    result = e2g(data, "optimize")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("store ") and lines[-1].endswith(
        "MB: free pages returned to the disk"
    )
    assert store.stat().st_size < before_bytes * 2 // 3
    assert e2g(data, "search", "--json", "noise").stdout == kept
    assert len(kept.splitlines()) == 8
    again = e2g(data, "optimize").stderr
    assert "free pages" not in again


def test_optimize_before_any_ingest_is_one_clear_line(tmp_path):
    result = e2g(tmp_path / "d", "optimize")
    assert result.returncode != 0 and result.stderr.count("\n") == 1
    assert "e2g ingest" in result.stderr


def test_a_rerun_skips_what_is_done_and_redo_matches_it_again(tmp_path):
    data = tmp_path / "d"
    e2g(data, "-q", "ingest", str(SAMPLE / "frob-devel.mbox"))
    repo = sample_repo(tmp_path / "repo")
    first = e2g(data, "match", "-C", str(repo), "--jsonl")
    assert first.returncode == 0, first.stderr
    answers = first.stdout.splitlines()
    assert len(answers) >= 10
    again = e2g(data, "match", "-C", str(repo), "--jsonl")
    assert again.stdout == "" and f"{len(answers)} already done" in again.stderr
    redone = e2g(data, "match", "-C", str(repo), "--jsonl", "--redo")
    assert redone.returncode == 0, redone.stderr
    assert sorted(redone.stdout.splitlines()) == sorted(answers)
    assert "0 already done" in redone.stderr
    # --all-results: every commit once, the stored ones as `link` gave them
    every = e2g(data, "match", "-C", str(repo), "--all-results")
    assert every.returncode == 0, every.stderr
    assert f"{len(answers)} already done" in every.stderr
    by_commit = {answer["commit"]: answer for answer in map(json.loads, answers)}
    stored = [json.loads(line) for line in every.stdout.splitlines()]
    assert sorted(answer["commit"] for answer in stored) == sorted(by_commit)
    unstored = ("rejected", "note")  # the candidates turned down are never stored
    dates = ("author_date", "commit_date")  # stored as instants: shown in UTC

    def comparable(answer: dict[str, object]) -> dict[str, object]:
        kept = {k: v for k, v in answer.items() if k not in unstored}
        for key in dates:
            kept[key] = datetime.fromisoformat(str(kept[key]))
        return kept

    for answer in stored:
        assert comparable(answer) == comparable(by_commit[answer["commit"]])


def test_match_on_a_repo_with_no_overlap_warns(tmp_path, archive):
    e2g(tmp_path / "d", "-q", "ingest", str(archive))
    repo = tmp_path / "old"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.c").write_text("int a;\n")
    git(repo, "add", "a.c")
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": "2005-04-07T12:00:00Z",
        "GIT_COMMITTER_DATE": "2005-04-07T12:00:00Z",
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@example.org",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@example.org",
    }
    git(repo, "commit", "-qm", "old: first", env=env)
    result = e2g(tmp_path / "d", "match", "-C", str(repo))
    assert result.returncode == 0, result.stderr
    assert "1 commit: 0 matched" in result.stderr
    assert "outside the archive" in result.stderr
    linked = e2g(tmp_path / "d", "link", "--json", "-C", str(repo), "HEAD")
    data = json.loads(linked.stdout)
    assert data["status"] == "no-match" and "outside the archive" in data["note"]
    # match reads a commit that predates the archive without its diff, and still
    # records and prints it with its files.
    rematch = e2g(tmp_path / "d2", "-q", "ingest", str(archive))
    assert rematch.returncode == 0
    lines = e2g(tmp_path / "d2", "-q", "match", "--jsonl", "-C", str(repo))
    (row,) = [json.loads(line) for line in lines.stdout.splitlines()]
    assert row["status"] == "no-match" and row["files"] == ["a.c"]
    assert "outside the archive" in row["note"]


def test_an_index_of_an_older_format_is_said_even_with_nothing_new(tmp_path, archive):
    """An upgrade that changed the index's format: re-running the same ingest has
    nothing to add, yet the index cannot serve a search; ingest says so (exit 3),
    in --json too, and search says what to run, with the same exit code."""
    data = tmp_path / "d"
    assert e2g(data, "-q", "ingest", str(archive)).returncode == 0
    sidecar = data / "fulltext" / "e2g-index.json"
    mark = json.loads(sidecar.read_text())
    sidecar.write_text(json.dumps({**mark, "format": mark["format"] - 1}))
    again = e2g(data, "ingest", "--json", str(archive))
    assert again.returncode == 3, again.stderr
    summary = json.loads(again.stdout)
    assert summary["new"] == 0 and summary["index_lag"] == 0
    assert "e2g reindex" in summary["index_problem"]
    assert again.stderr.startswith("e2g: error: ")
    assert "e2g reindex" in again.stderr and "cannot be used" in again.stderr
    assert_one_line_error(e2g(data, "search", "frob"), 3, "e2g reindex")
    assert e2g(data, "-q", "reindex").returncode == 0
    assert e2g(data, "ingest", "-q", str(archive)).returncode == 0
    assert e2g(data, "search", "frob").returncode == 0
