"""`e2g link`, `match` and `stats` on bad input and awkward repositories.

Bad input (an unknown revision, no repository, no store, no mail) gives one line on
stderr, a meaningful exit code and no traceback. Awkward commits (root, merge,
shallow boundary, huge, binary-only, renamed, a non-UTF-8 message) do not crash and
give the documented JSON. The repositories are real git repositories built on a
clone of sample-mbox/sample-repo.bundle, with commits dated inside the sample
archive's dates so that the matcher really reads their diffs.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli import assert_one_line_error, e2g
from tests.conftest import SAMPLE, clone, commit_object

# Inside frob-devel.mbox's dates (2022-08-29 .. 2022-09-26).
WHEN = "2022-09-21T10:00:00+00:00"
IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada Awkward",
    "GIT_AUTHOR_EMAIL": "ada@example.org",
    "GIT_COMMITTER_NAME": "Ada Awkward",
    "GIT_COMMITTER_EMAIL": "ada@example.org",
    "GIT_AUTHOR_DATE": WHEN,
    "GIT_COMMITTER_DATE": WHEN,
}
LINK_KEYS = {"commit", "subject", "status", "postings", "rejected"}
ROOT_SHA = "290878c94e040c61d978ae11c15fe313bd380f93"  # sample: "Initial import ..."
POSTED_SHA = "209384fb529bf6fe997864b22b56c937b7c4ce3b"  # sample: matched by patch-id


def run_git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args],
        input=stdin,
        capture_output=True,
        check=True,
        env={**os.environ, **IDENTITY},
    )
    return result.stdout.decode().strip()


def commit(repo: Path, subject: str) -> str:
    run_git(repo, "add", "-A")
    run_git(repo, "commit", "-q", "-m", subject)
    return run_git(repo, "rev-parse", "HEAD")


def raw_commit(repo: Path, message: bytes) -> str:
    """A commit of everything, whose message is not UTF-8 and names no encoding."""
    run_git(repo, "add", "-A")
    return commit_object(
        repo, message, identity=b"Ada Awkward <ada@example.org> 1663754400 +0000"
    )


@pytest.fixture(scope="module")
def awkward(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The sample history, then one commit of each awkward shape and a merge."""
    repo = tmp_path_factory.mktemp("awkward") / "repo"
    bundle = SAMPLE / "sample-repo.bundle"
    subprocess.run(
        ["git", "clone", "-q", "-b", "main", str(bundle), str(repo)],
        check=True,
        capture_output=True,
    )
    shas = {"path": str(repo), "root": ROOT_SHA, "posted": POSTED_SHA}
    line = "".join(f"{i:07d} {'x' * 91}\n" for i in range(1000))  # 100 kB
    (repo / "big.txt").write_text(line * 52)  # 5.2 MB
    shas["big"] = commit(repo, "big: add a 5 MB file")
    many = repo / "many"
    many.mkdir()
    for number in range(3000):
        (many / f"f{number:04d}.c").write_text(f"int f{number};\n")
    (many / "table.c").write_text("".join(f"int row{i};\n" for i in range(20)))
    shas["many"] = commit(repo, "many: add 3,000 files")
    (repo / "blob.bin").write_bytes(bytes(range(256)) * 8)
    shas["binary"] = commit(repo, "blob: add a binary-only file")
    run_git(repo, "mv", "many/f0001.c", "many/renamed.c")
    shas["rename"] = commit(repo, "many: rename f0001.c")
    run_git(repo, "mv", "many/table.c", "many/ring.c")
    ring = (many / "ring.c").read_text().replace("int row3;", "long row3;")
    (many / "ring.c").write_text(ring)
    shas["rename-edit"] = commit(repo, "many: rename table.c to ring.c, widen row3")
    (repo / "latin.txt").write_text("x\n")
    shas["non-utf8"] = raw_commit(repo, b"latin: caf\xe9 \xff\xfe bytes\n\nbody \xe9\n")
    run_git(repo, "checkout", "-q", "-b", "side", "HEAD~1")
    (repo / "side.txt").write_text("side\n")
    shas["side"] = commit(repo, "side: add side.txt")
    run_git(repo, "checkout", "-q", "main")
    run_git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch 'side'", "side")
    shas["merge"] = run_git(repo, "rev-parse", "HEAD")
    run_git(repo, "branch", "posted", POSTED_SHA)
    return shas


@pytest.fixture(scope="module")
def mail(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding frob-devel.mbox; tests that write links copy it."""
    data = tmp_path_factory.mktemp("mail") / "data"
    result = e2g(data, "-q", "ingest", str(SAMPLE / "frob-devel.mbox"))
    assert result.returncode == 0, result.stderr
    return data


@pytest.fixture
def data(mail: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(mail, copy)
    return copy


def repo_of(awkward: dict[str, str]) -> Path:
    return Path(awkward["path"])


def link_json(data: Path, repo: Path, rev: str) -> dict[str, object]:
    result = e2g(data, "link", "--json", "-C", str(repo), rev)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    (line,) = result.stdout.splitlines()
    found: dict[str, object] = json.loads(line)
    assert set(found) >= LINK_KEYS
    return found


def one_line(result: subprocess.CompletedProcess[str], code: int, start: str) -> None:
    """One line on stderr that begins with `start`; nothing on stdout."""
    assert_one_line_error(result, code, start)
    assert result.stderr.startswith(start), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr


# -- bad input -------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["link", "match", "stats"])
def test_a_path_that_does_not_exist(mail, tmp_path, command):
    args = ["HEAD"] if command == "link" else []
    result = e2g(mail, command, "-C", str(tmp_path / "missing"), *args)
    one_line(result, 1, "e2g: error: no such directory: ")


@pytest.mark.parametrize("command", ["match", "stats"])
def test_a_directory_that_is_not_a_repository(mail, tmp_path, command):
    result = e2g(mail, command, "-C", str(tmp_path))
    one_line(result, 1, "e2g: error: not a git repository: ")


@pytest.mark.parametrize(
    "revs", [["no-such-branch"], ["HEAD..no-such-branch"], ["--", "--all"]]
)
def test_match_unknown_revision(mail, awkward, revs):
    result = e2g(mail, "match", "-C", awkward["path"], *revs)
    one_line(result, 1, f"e2g: error: unknown revision '{revs[-1]}'")


def test_link_takes_an_option_like_revision_as_a_revision(mail, awkward):
    result = e2g(mail, "link", "-C", awkward["path"], "--", "--all")
    one_line(result, 1, "e2g: error: unknown revision '--all'")


@pytest.mark.parametrize("command", ["link", "match", "stats"])
def test_a_data_dir_without_a_store(tmp_path, awkward, command):
    args = ["HEAD~1"] if command == "link" else []
    result = e2g(tmp_path / "nothing", command, "-C", awkward["path"], *args)
    one_line(result, 1, "e2g: error: no store in ")
    assert "e2g ingest" in result.stderr
    assert not (tmp_path / "nothing").exists()  # reading creates nothing


def test_a_store_with_no_messages(tmp_path, awkward):
    empty = tmp_path / "empty.mbox"
    empty.write_bytes(b"")
    data = tmp_path / "data"
    assert e2g(data, "-q", "ingest", str(empty)).returncode == 0
    for command, args in (("link", ["HEAD~1"]), ("match", [])):
        result = e2g(data, command, "-C", awkward["path"], *args)
        one_line(result, 1, "e2g: error: the store in ")
        assert "holds no mail: run `e2g ingest ARCHIVE` first" in result.stderr
    result = e2g(data, "stats", "-C", awkward["path"])
    one_line(result, 1, "e2g: error: no commits of ")


@pytest.mark.parametrize("command", ["link", "match", "stats"])
def test_a_store_file_with_no_schema(tmp_path, awkward, command):
    data = tmp_path / "data"
    data.mkdir()
    (data / "store.sqlite3").write_bytes(b"")  # SQLite takes it for an empty database
    args = ["HEAD~1"] if command == "link" else []
    result = e2g(data, command, "-C", awkward["path"], *args)
    one_line(result, 1, "e2g: error: the store at ")
    assert "is empty: run `e2g ingest ARCHIVE` first" in result.stderr


def test_stats_before_any_match(mail, awkward):
    result = e2g(mail, "stats", "-C", awkward["path"])
    one_line(result, 1, "e2g: error: no commits of ")
    assert "run `e2g match` in that repository first" in result.stderr


def test_stats_bad_grouping_and_unwritable_chart(data, awkward):
    bad = e2g(data, "stats", "-C", awkward["path"], "--by", "nonsense")
    one_line(bad, 2, "e2g: error: Invalid value for '--by': 'nonsense' is not one of")
    assert "e2g stats -h')" in bad.stderr
    assert e2g(data, "-q", "match", "-C", awkward["path"]).returncode == 0
    for target in ("/nonexistent/dir/x.svg", str(data)):
        result = e2g(data, "stats", "-C", awkward["path"], "--svg", target)
        one_line(result, 1, f"e2g: error: cannot write the chart to {target}: ")


# -- awkward repositories --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "files"),
    [
        ("big", ["big.txt"]),
        ("many", None),  # 3,001 files
        ("binary", ["blob.bin"]),
        ("rename", ["many/renamed.c"]),
        ("rename-edit", ["many/ring.c"]),
        ("non-utf8", ["latin.txt"]),
    ],
)
def test_link_awkward_commits(mail, awkward, name, files):
    found = link_json(mail, repo_of(awkward), awkward[name])
    assert found["commit"] == awkward[name]
    assert found["status"] == "no-match"
    assert found["postings"] == []
    if files is None:
        assert isinstance(found["files"], list)
        assert len(found["files"]) == 3001
    else:
        assert found["files"] == files


def test_link_a_root_commit(mail, awkward):
    found = link_json(mail, repo_of(awkward), ROOT_SHA)
    assert (found["commit"], found["status"]) == (ROOT_SHA, "no-match")
    assert "drivers/frob/frob.c" in str(found["files"])
    assert "outside the archive" in str(found["note"])


def test_non_utf8_message_in_text_and_on_an_ascii_terminal(mail, awkward):
    found = link_json(mail, repo_of(awkward), awkward["non-utf8"])
    assert found["subject"] == "latin: caf\ufffd \ufffd\ufffd bytes"
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    env.pop("E2G_DEBUG", None)
    for extra in ([], ["--json"]):
        result = subprocess.run(
            [sys.executable, "-m", "e2g", "--data-dir", str(mail), "link", *extra]
            + ["-C", awkward["path"], awkward["non-utf8"]],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr
        assert "latin: caf\\ufffd" in result.stdout
    assert json.loads(result.stdout)["subject"] == found["subject"]


def test_link_a_merge_answers_for_what_it_merged(mail, awkward):
    """A merge is answered with its pull request (none here) and the commits it
    brought in (issue 26), not refused."""
    text = e2g(mail, "link", "-C", awkward["path"], "HEAD")
    assert text.returncode == 0, text.stderr
    assert "no pull request found" in text.stdout
    assert "brought in" in text.stdout
    found = e2g(mail, "link", "--json", "-C", awkward["path"], "HEAD")
    assert found.returncode == 0, found.stderr
    answer = json.loads(found.stdout)
    assert answer["merge"] is True
    assert answer["merged"]


def test_match_counts_merges_as_skipped(data, awkward):
    result = e2g(data, "match", "--jsonl", "-C", awkward["path"])
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(set(row) >= LINK_KEYS for row in rows)
    shas = [row["commit"] for row in rows]
    assert awkward["merge"] not in shas
    names = ("big", "many", "binary", "rename", "rename-edit", "non-utf8", "side")
    assert {awkward[name] for name in names} <= set(shas)
    assert len(shas) == len(set(shas)) == 18 + len(names)
    assert f"{len(shas)} commits: 13 matched" in result.stderr
    assert "1 merge skipped" in result.stderr
    only_merge = e2g(data, "match", "-C", awkward["path"], "HEAD^!")
    assert only_merge.returncode == 0
    assert "0 commits: 0 matched" in only_merge.stderr
    assert "1 merge skipped" in only_merge.stderr


def test_shallow_clone_boundaries(mail, awkward, tmp_path):
    """A depth-1 clone of a merge: git calls the tip a root commit with no parents."""
    tip = clone(Path(awkward["path"]), tmp_path / "tip", "--depth", "1")
    found = link_json(mail, tip, "HEAD")
    assert (found["commit"], found["status"], found["files"]) == (
        awkward["merge"],
        "no-match",
        [],
    )
    assert "git fetch --deepen=1" in found["note"]
    posted = clone(
        Path(awkward["path"]), tmp_path / "posted", "--depth", "1", "-b", "posted"
    )
    # Its diff is unknown, but the author date and subject still find the posting.
    assert link_json(mail, posted, "HEAD")["status"] == "matched"
    data = tmp_path / "data"
    shutil.copytree(mail, data)
    result = e2g(data, "match", "-C", str(tip))
    assert result.returncode == 0, result.stderr
    assert "1 commit: 0 matched (none), 1 no match" in result.stderr
    assert "0 merges skipped" in result.stderr


def test_bare_repository_and_a_subdirectory_are_one_repository(data, awkward, tmp_path):
    bare = tmp_path / "bare.git"
    run_git(tmp_path, "clone", "-q", "--bare", awkward["path"], str(bare))
    assert link_json(data, bare, POSTED_SHA)["status"] == "matched"
    subdirectory = repo_of(awkward) / "many"
    assert link_json(data, subdirectory, POSTED_SHA)["status"] == "matched"
    assert e2g(data, "-q", "match", "-C", str(subdirectory)).returncode == 0
    # stats from the work tree's root finds what match stored from its subdirectory
    by_root = e2g(data, "stats", "--json", "-C", awkward["path"])
    assert by_root.returncode == 0, by_root.stderr
    total = json.loads(by_root.stdout)["total"]
    assert (total["commits"], total["matched"]) == (25, 13)
    assert e2g(data, "-q", "match", "-C", str(bare)).returncode == 0
    by_bare = e2g(data, "stats", "--json", "--by", "method", "-C", str(bare))
    assert json.loads(by_bare.stdout)["total"]["commits"] == 25


def closed_pipe_run(data: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run e2g with stdout a pipe whose reader is gone, block-buffered as for a user."""
    reader, writer = os.pipe()
    os.close(reader)
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("E2G_DEBUG", "PYTHONUNBUFFERED")
    }
    try:
        return subprocess.run(
            [sys.executable, "-m", "e2g", "--data-dir", str(data), *args],
            stdout=writer,
            stderr=subprocess.PIPE,
            env=env,
            timeout=120,
        )
    finally:
        os.close(writer)


def test_a_reader_that_went_away(data, awkward):
    """`e2g match --jsonl | head -1`: quiet, exit 1 (what was not written was not
    done), whether the pipe breaks mid-run or in the last flush."""
    repo = awkward["path"]
    runs = [
        closed_pipe_run(data, "match", "--jsonl", "-C", repo),
        closed_pipe_run(data, "link", "-C", repo, POSTED_SHA),
    ]
    assert e2g(data, "-q", "match", "-C", repo).returncode == 0
    runs.append(closed_pipe_run(data, "stats", "-C", repo))
    for result in runs:
        assert (result.returncode, result.stderr) == (1, b""), result.args


def test_match_on_an_unweighed_store_says_how_to_speed_it_up(data, awkward):
    connection = sqlite3.connect(data / "store.sqlite3")
    connection.execute("UPDATE files SET weight = NULL")
    connection.execute(
        "INSERT INTO meta(key, value) VALUES ('file_weights_pending', '1')"
    )
    connection.commit()
    connection.close()
    result = e2g(data, "match", "-C", awkward["path"])
    assert result.returncode == 0, result.stderr
    assert "e2g: note: this store was written by an older e2g" in result.stderr
    quiet = e2g(data, "-q", "match", "-C", awkward["path"])
    assert (quiet.returncode, quiet.stderr) == (0, "")


def test_match_on_a_store_not_sorted_for_the_stable_process_says_so(data, awkward):
    # Schema 18 left the fill of messages.process to the next ingest: until it runs,
    # a review patch is known by its subject alone, and the run says so.
    connection = sqlite3.connect(data / "store.sqlite3")
    connection.execute(
        "INSERT INTO meta(key, value) VALUES ('process_kinds_pending', '0')"
    )
    connection.commit()
    connection.close()
    note = "e2g: note: the mail this store held before is not yet sorted"
    result = e2g(data, "match", "-C", awkward["path"])
    assert result.returncode == 0, result.stderr
    assert note in result.stderr
    quiet = e2g(data, "-q", "match", "-C", awkward["path"])
    assert (quiet.returncode, quiet.stderr) == (0, "")
    connection = sqlite3.connect(data / "store.sqlite3")
    connection.execute("DELETE FROM meta WHERE key = 'process_kinds_pending'")
    connection.commit()
    connection.close()
    assert note not in e2g(data, "match", "-C", awkward["path"]).stderr


def test_quiet_ingest_keeps_damage_out_of_stderr_but_in_its_json(
    tmp_path: Path,
) -> None:
    """`-q` prints nothing but errors and results: a truncated archive is not an
    error (what was read is kept), yet the --json summary must still say so."""
    import gzip
    import json

    from tests.conftest import mail

    whole = gzip.compress(b"".join(mail(n) for n in range(1, 40)))
    archive = tmp_path / "cut.mbox.gz"
    archive.write_bytes(whole[: len(whole) * 2 // 3])
    for quiet in (["-q"], []):
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "e2g",
                "--data-dir",
                str(tmp_path / f"d{len(quiet)}"),
                *quiet,
                "ingest",
                "--json",
                str(archive),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        summary = json.loads(result.stdout)
        assert any("truncated" in line for line in summary["warnings"]), summary
        assert ("truncated" in result.stderr) == (not quiet), result.stderr
