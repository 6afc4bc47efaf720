"""`e2g audit` as a command: the text lines and summary, JSON lines, the SARIF file,
--fail-on's exit code and its one-line usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.audit_world import build
from tests.cli.test_cli import assert_one_line_error, e2g


@pytest.fixture(scope="module")
def world(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, Path, dict[str, str]]:
    settings, repo, shas = build(tmp_path_factory.mktemp("audit-cli"))
    return settings.data_dir, repo, shas


def test_one_line_per_commit_then_the_summary(world):
    data, repo, shas = world
    result = e2g(data, "audit", "-C", str(repo), "--by", "committer")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    changed = next(line for line in lines if line.startswith(shas["changed"][:12]))
    assert changed.split()[1] == "changed-after-review"
    assert "+1 -1 in b.c" in changed
    unbacked = next(line for line in lines if line.startswith(shas["reviewed"][:12]))
    assert "1 tag with no mail behind: Reviewed-by Carol Tester" in unbacked
    assert (
        "15 commits: 4 reviewed, 1 reviewed-trivial-change, 2 changed-after-review"
        in result.stdout
    )
    assert "2 outside-archive, 1 not-posted" in result.stdout
    assert (
        "archive: 2021-03-01 .. 2021-04-09 (frob-devel.lists.example.org); "
        "2 commits without a posting lie outside these dates" in result.stdout
    )
    assert "coverage of the 11 commits neither exempt nor outside" in result.stdout
    assert "strict 36.4% (reviewed), lenient 63.6%" in result.stdout
    assert (
        "3 of 4 backed by a mail from that person (1 more on commits outside the "
        "archive)" in result.stdout
    )
    assert any(line.startswith("mia@example.org ") for line in lines)


def test_diff_shows_the_hunk_changed_after_review(world):
    data, repo, shas = world
    result = e2g(data, "audit", f"{shas['changed']}^!", "-C", str(repo), "--diff")
    assert result.returncode == 0, result.stderr
    assert "    edited hunk in b.c" in result.stdout
    assert "      ++int b8 = 88;" in result.stdout


def test_json_lines_end_with_the_summary(world):
    data, repo, shas = world
    result = e2g(data, "audit", "--json", "-C", str(repo))
    assert result.returncode == 0, result.stderr
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    *commits, last = objects
    assert set(last) == {"summary"}
    assert last["summary"]["counts"]["reviewed"] == 4
    assert last["summary"]["counts"]["outside-archive"] == 2
    assert last["summary"]["audited"] == 11
    assert last["summary"]["archive"]["lists"] == ["frob-devel.lists.example.org"]
    assert last["summary"]["archive"]["first"].startswith("2021-03-01T12:01")
    assert len(commits) == 15
    by_sha = {one["commit"]: one for one in commits}
    assert by_sha[shas["trivial"]]["verdict"] == "reviewed-trivial-change"
    assert by_sha[shas["changed"]]["delta"]["from_version"] == 2


def test_sarif_file_and_fail_on_exit_4(world, tmp_path):
    data, repo, _ = world
    sarif = tmp_path / "audit.sarif"
    result = e2g(
        data, "-q", "audit", "-C", str(repo), "--sarif", str(sarif),
        "--fail-on", "not-posted,changed-after-review",
    )  # fmt: skip
    assert result.returncode == 4, result.stderr
    log = json.loads(sarif.read_text())
    assert log["version"] == "2.1.0"
    results = log["runs"][0]["results"]
    assert len(results) == 11
    outside = [one for one in results if one["ruleId"] == "outside-archive"]
    assert [one["level"] for one in outside] == ["note", "note"]
    passing = e2g(data, "-q", "audit", "-C", str(repo), "--fail-on", "uncertain")
    assert passing.returncode == 0, passing.stderr


def test_unknown_verdict_and_unwritable_sarif_are_one_line_errors(world, tmp_path):
    data, repo, _ = world
    assert_one_line_error(
        e2g(data, "audit", "-C", str(repo), "--fail-on", "unreviewed"), 2, "no verdict"
    )
    result = e2g(
        data, "audit", "-C", str(repo), "--json",
        "--sarif", str(tmp_path / "no" / "such" / "dir.sarif"),
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.startswith("e2g: error: cannot write the SARIF log")
