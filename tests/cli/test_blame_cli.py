"""`e2g blame` as a command: exit codes, one-line errors, text and JSON lines."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from e2g import config
from e2g.api.core import ingest
from tests.cli.test_cli import assert_one_line_error, e2g
from tests.conftest import SAMPLE, sample_repo


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("blame-cli")
    repo = sample_repo(root / "repo")
    settings = config.resolve(data_dir=root / "data", env={}, home=root)
    ingest(settings, [str(SAMPLE / "frob-devel.mbox")], workers=1)
    return root / "data", repo


def test_text_has_a_header_per_run_then_numbered_lines(sample):
    data, repo = sample
    result = e2g(
        data, "blame", "mm/frob_alloc.c", "HEAD", "-L", "28,36", "-C", str(repo)
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("290878c9 2007-02-20 Peter Olsen")
    assert lines[0].endswith("outside the archive")
    assert lines[1].split()[0] == "28"
    headers = [line for line in lines if not line.startswith(" ")]
    assert any(" · frob-devel · " in line for line in headers)


def test_json_lines_one_object_per_run(sample):
    data, repo = sample
    result = e2g(data, "blame", "mm/frob_alloc.c", "-L", "30,35", "--json", cwd=repo)
    assert result.returncode == 0, result.stderr
    runs = [json.loads(line) for line in result.stdout.splitlines()]
    assert runs[0]["start"] == 30
    assert runs[-1]["end"] == 35
    assert sum(len(run["lines"]) for run in runs) == 6
    assert {run["status"] for run in runs} <= {"matched", "no-match", "outside-archive"}


def test_history_json_newest_first(sample):
    data, repo = sample
    result = e2g(
        data, "blame", "mm/frob_alloc.c", "--history", "-L", "30,35", "--json",
        "-C", str(repo),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    commits = [json.loads(line) for line in result.stdout.splitlines()]
    dates = [commit["date"] for commit in commits]
    assert len(commits) >= 2
    assert commits[-1]["status"] == "outside-archive"
    assert all("postings" in commit for commit in commits)
    assert dates[0] > dates[-1]


@pytest.mark.parametrize(
    ("arguments", "code", "fragment"),
    [
        (["no/such.c", "HEAD"], 1, "no file no/such.c in"),
        (["drivers/frob/firmware.bin", "HEAD"], 2, "binary file"),
        (["mm/frob_alloc.c", "-L", "5000,5010"], 2, "which has 56 lines"),
        (["mm/frob_alloc.c", "-L", "five"], 2, "bad line range"),
        (["mm/frob_alloc.c", "--history"], 2, "--history needs -L"),
        (["mm/frob_alloc.c", "no-such-rev"], 1, "unknown revision"),
    ],
)
def test_bad_input_is_one_line_and_an_exit_code(sample, arguments, code, fragment):
    data, repo = sample
    result = e2g(data, "blame", *arguments, "-C", str(repo))
    assert_one_line_error(result, code, fragment)


def _old_repository(root: Path) -> Path:
    """src/a.c written in 1995 and changed in 1996: years before any mail."""
    (root / "src").mkdir(parents=True)
    identity = ["-c", "user.name=Old", "-c", "user.email=old@example.org"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for text, stamp in (
        ("int a;\nint b;\n", "1995-01-01T00:00:00+00:00"),
        ("int a = 1;\nint b;\nint c;\n", "1996-06-01T00:00:00+00:00"),
    ):
        (root / "src" / "a.c").write_text(text)
        for arguments in (["add", "-A"], ["commit", "-q", "-m", f"a.c {stamp[:4]}"]):
            subprocess.run(
                ["git", "-C", str(root), *identity, *arguments],
                check=True,
                capture_output=True,
                env={
                    **os.environ,
                    "GIT_AUTHOR_DATE": stamp,
                    "GIT_COMMITTER_DATE": stamp,
                },
            )
    return root


ALL_OUTSIDE = (
    "e2g: warning: every commit is dated outside the archive's dates: ingest the "
    "list's archive of the same years (see `e2g search d:YEAR`)"
)


def test_a_file_older_than_the_archive_is_outside_it_warm_or_cold(tmp_path):
    """A repository never matched, in a fresh data dir: line blame and token blame,
    cold and then from the token cache, all answer `outside the archive`."""
    data = tmp_path / "data"
    settings = config.resolve(data_dir=data, env={}, home=tmp_path)
    ingest(settings, [str(SAMPLE / "frob-devel.mbox")], workers=1)
    old = _old_repository(tmp_path / "old")
    text = e2g(data, "blame", "src/a.c", "-C", str(old))
    lines = e2g(data, "blame", "src/a.c", "--json", "-C", str(old))
    cold = e2g(data, "blame", "src/a.c", "--tokens", "--json", "-C", str(old))
    assert (data / "tokens").is_dir()
    warm = e2g(data, "blame", "src/a.c", "--tokens", "--json", "-C", str(old))
    for result in (text, lines, cold, warm):
        assert result.returncode == 0, result.stderr
        assert result.stderr.splitlines() == [ALL_OUTSIDE]
    headers = [line for line in text.stdout.splitlines() if not line.startswith(" ")]
    assert len(headers) == 3  # 1996's line, 1995's, 1996's
    assert all(line.endswith("outside the archive") for line in headers)
    runs = [json.loads(line) for line in lines.stdout.splitlines()]
    spans = [json.loads(line) for line in cold.stdout.splitlines()]
    assert {run["status"] for run in runs} == {"outside-archive"}
    assert {span["status"] for span in spans} == {"outside-archive"}
    assert {run["commit"] for run in runs} == {span["commit"] for span in spans}
    assert len({span["commit"] for span in spans}) == 2
    assert warm.stdout == cold.stdout
    quiet = e2g(data, "-q", "blame", "src/a.c", "--tokens", "-C", str(old))
    assert (quiet.returncode, quiet.stderr) == (0, "")
