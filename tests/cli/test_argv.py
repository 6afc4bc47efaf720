"""Global options before or after the command, `-C` before it, as users type git."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from e2g.cli.argv import command_of, reorder
from tests.conftest import BASE_DATE, SAMPLE, mail, patch_body, sample_repo

COMMANDS = frozenset(
    {
        "blame",
        "help",
        "ingest",
        "link",
        "match",
        "optimize",
        "reindex",
        "search",
        "serve",
        "stats",
    }
)


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["link", "HEAD"], "link"),
        (["-q", "--data-dir", "link", "match", "A..B"], "match"),  # a value, then it
        (["--data-dir=d", "-vv", "search", "x"], "search"),
        (["-h", "link"], None),  # the help of e2g
        (["link", "-h"], "link"),
        (["HEAD"], None),
        ([], None),
    ],
)
def test_command_of(argv: list[str], command: str | None) -> None:
    assert command_of(argv, COMMANDS) == command


@pytest.mark.parametrize(
    ("typed", "given"),
    [
        (["ingest", "a.mbox", "-q"], ["-q", "ingest", "a.mbox"]),
        (["ingest", "-vv", "a.mbox", "--json"], ["-vv", "ingest", "a.mbox", "--json"]),
        (["search", "--data-dir", "D", "x"], ["--data-dir", "D", "search", "x"]),
        (["search", "--data-dir=D", "x"], ["--data-dir=D", "search", "x"]),
        (["-C", "R", "link", "HEAD"], ["link", "-C", "R", "HEAD"]),
        (["-q", "--repo", "R", "stats"], ["-q", "stats", "--repo", "R"]),
        (["--data-dir", "D", "-C", "R", "link", "x", "-v"],
         ["--data-dir", "D", "-v", "link", "-C", "R", "x"]),
        # after `--` nothing moves; a negated search word stays a search word
        (["search", "--", "-q"], ["search", "--", "-q"]),
        (["search", "-is:reply", "frob"], ["search", "NOT", "is:reply", "frob"]),
        # no command: typer says what is wrong
        (["--version"], ["--version"]),
        (["-C", "R"], ["-C", "R"]),
        (["nosuch", "-q"], ["nosuch", "-q"]),
    ],
)  # fmt: skip
def test_reorder(typed: list[str], given: list[str]) -> None:
    assert reorder(typed, COMMANDS) == given


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """`e2g ARGS...` as typed, in a new process."""
    return subprocess.run(
        [sys.executable, "-m", "e2g", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def ingested(data: Path) -> str:
    """A data dir holding the sample list, as the argument --data-dir takes."""
    done = run("--data-dir", str(data), "-q", "ingest", str(SAMPLE / "frob-devel.mbox"))
    assert done.returncode == 0, done.stderr
    return str(data)


def test_options_after_the_command_and_c_before_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    mbox = str(SAMPLE / "frob-devel.mbox")
    quiet = run("ingest", mbox, "--data-dir", str(data), "-q", "--json")
    assert quiet.returncode == 0, quiet.stderr
    assert json.loads(quiet.stdout)["new"] > 0 and quiet.stderr == ""
    repo = sample_repo(tmp_path / "repo")
    linked = run("-C", str(repo), "link", "HEAD", "--json", "--data-dir", str(data))
    assert linked.returncode == 0, linked.stderr
    assert "commit" in json.loads(linked.stdout)


def test_json_lines_are_asked_for_the_same_way_in_search_and_match(
    tmp_path: Path,
) -> None:
    """Both stream JSON lines: each takes --json and --jsonl."""
    data = ingested(tmp_path / "data")
    outputs = {
        flag: run("--data-dir", data, "search", flag, "frob").stdout
        for flag in ("--json", "--jsonl")
    }
    assert outputs["--json"] == outputs["--jsonl"] and outputs["--json"].count("\n") > 1
    for line in outputs["--json"].splitlines():
        assert "message_id" in json.loads(line)
    repo = sample_repo(tmp_path / "repo")
    matched = run("--data-dir", data, "-q", "match", "-C", str(repo), "--json")
    assert matched.returncode == 0, matched.stderr
    assert all("commit" in json.loads(line) for line in matched.stdout.splitlines())
    assert matched.stdout.count("\n") > 1


def test_exit_code_says_nothing_was_found(tmp_path: Path) -> None:
    """As `git diff --exit-code`: 4 when nothing was found, 0 otherwise (and 0 for
    an empty answer without the option); the output is the same either way."""
    data = ingested(tmp_path / "data")
    found = run("--data-dir", data, "search", "--exit-code", "frob")
    none = run("--data-dir", data, "search", "--exit-code", "zzzznothing")
    plain = run("--data-dir", data, "search", "zzzznothing")
    assert (found.returncode, none.returncode, plain.returncode) == (0, 4, 0)
    assert none.stdout == plain.stdout
    repo = sample_repo(tmp_path / "repo")
    root = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--max-parents=0", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[0]
    unposted = run(
        "--data-dir", data, "link", "-C", str(repo), root, "--exit-code", "--json"
    )
    assert unposted.returncode == 4, unposted.stderr
    assert json.loads(unposted.stdout)["status"] == "no-match"
    posted = json.loads((SAMPLE / "expected.json").read_text())["demo_commit"]
    matched = run("--data-dir", data, "link", "-C", str(repo), posted, "--exit-code")
    assert matched.returncode == 0, matched.stderr


def test_thread_groups_read_in_tree_order(tmp_path: Path) -> None:
    """A parent before its replies and siblings oldest first, even when a reply's
    clock ran behind its parent's: not date order, which would put msg3 second."""
    from e2g.api import threads
    from e2g.api.core import search
    from e2g.config import resolve

    at = [BASE_DATE + timedelta(minutes=minutes) for minutes in range(6)]
    archive = tmp_path / "thread.mbox"
    archive.write_bytes(
        mail(1, subject="[PATCH] frob: fix", body=patch_body(1), date=at[1])
        + mail(2, subject="Re: [PATCH] frob: fix", in_reply_to="msg1@example.org",
               date=at[5])
        + mail(3, subject="Re: [PATCH] frob: fix", in_reply_to="msg2@example.org",
               date=at[3])
        + mail(4, subject="Re: [PATCH] frob: fix", in_reply_to="msg1@example.org",
               date=at[4])
        + mail(5, subject="frob: an unrelated question", date=at[2])
    )  # fmt: skip
    data = tmp_path / "data"
    assert run("--data-dir", str(data), "-q", "ingest", str(archive)).returncode == 0
    settings = resolve(data_dir=data, env={}, home=tmp_path)
    hits = search(settings, "frob").hits
    groups = [[hit.message_id[:4] for hit in group]
              for group in threads.thread_groups(settings, hits)]  # fmt: skip
    assert groups == [["msg1", "msg4", "msg2", "msg3"], ["msg5"]]

    shown = run("--data-dir", str(data), "search", "--thread", "frob").stdout
    order = [line.split("<")[1][:4] for line in shown.splitlines()]
    assert order == ["msg1", "msg4", "msg2", "msg3", "msg5"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["search", "frob", "-is:reply"], ["search", "frob", "NOT", "is:reply"]),
        (
            ["search", "-n", "5", "-(a", "OR", "b)"],
            ["search", "-n", "5", "NOT", "(a", "OR", "b)"],
        ),
        (["search", "-n5", "-notme", "-q"], ["-q", "search", "-n5", "NOT", "notme"]),
        (["search", "--", "-x"], ["search", "--", "-x"]),
        (["search", "--limit=3", "-5", "-"], ["search", "--limit=3", "-5", "-"]),
        (["link", "-is:x"], ["link", "-is:x"]),
    ],
)
def test_a_negated_search_clause_is_no_option(
    argv: list[str], expected: list[str]
) -> None:
    assert reorder(argv, COMMANDS) == expected
