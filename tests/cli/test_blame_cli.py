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


def test_never_matched_repository_outside_the_archive(sample, tmp_path):
    data, _ = sample
    old = tmp_path / "old"
    (old / "src").mkdir(parents=True)
    (old / "src" / "a.c").write_text("int a;\n")
    stamp = "1995-01-01T00:00:00+00:00"
    identity = ["-c", "user.name=Old", "-c", "user.email=old@example.org"]
    for arguments in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "old"]):
        subprocess.run(
            ["git", "-C", str(old), *identity, *arguments],
            check=True,
            capture_output=True,
            env={
                **os.environ,
                "GIT_AUTHOR_DATE": stamp,
                "GIT_COMMITTER_DATE": stamp,
            },
        )
    result = e2g(data, "blame", "src/a.c", "-C", str(old))
    assert_one_line_error(result, 1, "was never matched")
