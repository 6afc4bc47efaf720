"""`e2g link MESSAGE-ID`: from a posted patch to the commit that applied it.

The sample archive holds a two-patch series posted as v1 and applied as v2, replies,
and single patches; an extra archive written here adds a series of which one patch
was applied (a cross-post of a sample patch) and one never was, and a patch posted
after the repository's last commit."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.cli.test_cli import assert_one_line_error, e2g
from tests.conftest import SAMPLE, git, mail, patch_body, sample_repo

V1_COVER = "20220905234500.1201-1-keiko@example.com"
V1_PATCH_2 = "20220905234500.1201-3-keiko@example.com"
V2_COVER = "20220912120000.2302-1-keiko@example.com"
V2_PATCH_2 = "20220912120000.2302-3-keiko@example.com"
REPLY_TO_V1_PATCH_2 = "YxhSxq1m5c8y2Jk9@example.org"
ROUND_UP = "LO2P265MB51230A1B2C3D4E5F60718293@LO2P265MB5123.example.com"
EXTRA_COVER = "extra-0@example.org"
LATE_PATCH = "late-1@example.org"


def _extra_archive(path: Path, repo: Path) -> Path:
    """A series posted 2022-09-10: 1/2 re-posts an applied sample patch, 2/2 was never
    applied; and a patch dated after the repository's last commit."""
    applied = git(repo, "format-patch", "-1", "--stdout", "209384fb529b")
    diff = applied[applied.index("\n---\n") + 1 :]
    sender = "Samir Haddad <samir@example.com>"
    when = datetime(2022, 9, 10, 8, 0, tzinfo=UTC)
    cover = mail(
        0,
        subject="[PATCH 0/2] mm: frob pool sizing",
        sender=sender,
        message_id=EXTRA_COVER,
        date=when,
        body="Two changes to the pool size.\n",
    )
    parts = [
        mail(
            number,
            subject=f"[PATCH {number}/2] {title}",
            sender=sender,
            message_id=f"extra-{number}@example.org",
            in_reply_to=EXTRA_COVER,
            date=when.replace(minute=number),
            body=body,
        )
        for number, title, body in (
            (
                1,
                "mm: round frob pool size up to a power of two",
                "Round up.\n\n" + diff,
            ),
            (2, "mm: frob: never applied", patch_body(40)),
        )
    ]
    late = mail(
        9,
        subject="[PATCH] mm: frob: posted after the last commit",
        message_id=LATE_PATCH,
        date=datetime(2023, 5, 1, tzinfo=UTC),
        body=patch_body(50),
    )
    path.write_bytes(cover + b"".join(parts) + late)
    return path


@pytest.fixture(scope="module")
def matched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A store of the sample archives plus the extra one, with the sample repo matched."""
    root = tmp_path_factory.mktemp("way-back")
    repo = sample_repo(root / "repo")
    data = root / "data"
    extra = _extra_archive(root / "extra.mbox", repo)
    archives = [
        str(SAMPLE / "frob-devel.mbox"),
        str(SAMPLE / "frob-net.mbox.gz"),
        str(SAMPLE / "pipermail"),
        str(extra),
    ]
    assert e2g(data, "ingest", "-q", *archives).returncode == 0
    assert e2g(data, "match", "-q", "--all", "-C", str(repo)).returncode == 0
    return data, repo


def _answers(result: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def _sha(repo: Path, subject: str) -> str:
    return git(repo, "log", "--format=%H", "-F", f"--grep={subject}").split()[0]


def test_an_applied_patch_names_its_commit(matched: tuple[Path, Path]) -> None:
    data, repo = matched
    (answer,) = _answers(e2g(data, "link", "--json", f"<{ROUND_UP}>"))
    assert answer["status"] == "applied"
    (commit,) = answer["commits"]  # type: ignore[misc]
    assert commit["commit"] == _sha(repo, "mm: round frob pool size")
    assert commit["posting"] == ROUND_UP
    assert commit["method"] == "patch-id"
    assert set(commit) >= {
        "commit",
        "repo",
        "subject",
        "date",
        "method",
        "score",
        "posting",
    }


def test_a_v1_patch_answers_with_the_commit_that_applied_v2(
    matched: tuple[Path, Path],
) -> None:
    data, repo = matched
    (answer,) = _answers(e2g(data, "link", "--json", V1_PATCH_2))
    assert answer["status"] == "superseded"
    (commit,) = answer["commits"]  # type: ignore[misc]
    assert commit["commit"] == _sha(repo, "report per-queue counters via ethtool")
    assert commit["posting"] == V2_PATCH_2
    assert commit["posting_version"] == 2
    assert V2_PATCH_2 in str(answer["note"])


def test_a_reply_answers_for_the_patch_it_replies_to(
    matched: tuple[Path, Path],
) -> None:
    data, _ = matched
    (answer,) = _answers(e2g(data, "link", "--json", REPLY_TO_V1_PATCH_2))
    assert answer["asked"] == REPLY_TO_V1_PATCH_2
    assert answer["message_id"] == V1_PATCH_2
    assert answer["status"] == "superseded"


def test_cover_letters_tally_their_series(matched: tuple[Path, Path]) -> None:
    data, _ = matched
    url = f"https://lore.kernel.org/all/{V2_COVER}/T/#u"
    v2, v1, extra = _answers(e2g(data, "link", "--json", url, V1_COVER, EXTRA_COVER))
    assert (v2["status"], v2["series"]["applied"], v2["series"]["total"]) == (  # type: ignore[index]
        "applied",
        2,
        2,
    )
    assert v1["status"] == "superseded"
    assert [patch["status"] for patch in v1["series"]["patches"]] == [  # type: ignore[index]
        "superseded",
        "superseded",
    ]
    # One patch of the extra series was applied (a re-post), the other never was.
    series = extra["series"]
    assert extra["status"] == "partly applied"
    assert (series["applied"], series["total"]) == (1, 2)  # type: ignore[index]
    assert [patch["status"] for patch in series["patches"]] == [  # type: ignore[index]
        "applied",
        "not applied",
    ]


def test_the_human_tally_and_not_applied(matched: tuple[Path, Path]) -> None:
    data, _ = matched
    shown = e2g(data, "link", EXTRA_COVER)
    assert shown.returncode == 0, shown.stderr
    assert "partly applied: 1 of 2 patches applied" in shown.stdout
    assert "not applied" in shown.stdout
    assert "mm: frob: never applied" in shown.stdout


def test_a_patch_after_every_matched_commit_is_unknown(
    matched: tuple[Path, Path],
) -> None:
    data, _ = matched
    (answer,) = _answers(e2g(data, "link", "--json", LATE_PATCH))
    assert answer["status"] == "unknown"
    assert answer["commits"] == []
    assert "2023-05-01" in str(answer["note"])
    assert e2g(data, "link", "--exit-code", LATE_PATCH).returncode == 4


def test_stdin_and_a_mix_of_commits_and_message_ids(matched: tuple[Path, Path]) -> None:
    data, repo = matched
    sha = _sha(repo, "mm: round frob pool size")
    lines = f"{ROUND_UP}\n\n{sha}\n".encode()
    by_id, by_sha = _answers(
        e2g(data, "link", "--json", "-C", str(repo), "-", stdin=lines)
    )
    assert by_id["commits"][0]["commit"] == sha  # type: ignore[index]
    assert by_sha["commit"] == sha
    assert ROUND_UP in [posting["message_id"] for posting in by_sha["postings"]]  # type: ignore[attr-defined]


def test_unknown_and_non_patch_messages_are_one_line_errors(
    matched: tuple[Path, Path],
) -> None:
    data, _ = matched
    assert_one_line_error(
        e2g(data, "link", "nobody@nowhere.example"), 1, "no message <nobody@nowhere"
    )
    chatter = e2g(data, "search", "--json", "is:other", "--limit", "1")
    (other,) = _answers(chatter)
    assert_one_line_error(
        e2g(data, "link", str(other["message_id"])), 2, "is not a patch"
    )


def test_one_bad_argument_among_several_is_reported_and_the_rest_answered(
    matched: tuple[Path, Path],
) -> None:
    data, _ = matched
    result = e2g(data, "link", "--json", "nobody@nowhere.example", ROUND_UP)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert "nobody@nowhere.example" in result.stderr
    (answer,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert answer["message_id"] == ROUND_UP


def test_diff_shows_the_maintainers_edit(matched: tuple[Path, Path]) -> None:
    data, repo = matched
    (answer,) = _answers(
        e2g(data, "link", "--json", "--diff", "-C", str(repo), V1_PATCH_2)
    )
    (found,) = answer["diff"]  # type: ignore[misc]
    assert found["commit"] == _sha(repo, "report per-queue counters via ethtool")
    (change,) = found["changes"]
    assert (change["change"], change["path"]) == ("edited", "net/frob_stats.c")
    assert '-+\t\tsprintf(data, "rx_queue_%d_packets", i);' in change["lines"]
    assert '++\t\tethtool_sprintf(&data, "rx_queue_%d_packets", i);' in change["lines"]
    shown = e2g(data, "link", "--diff", "-C", str(repo), V2_PATCH_2)
    assert "the same hunks" in shown.stdout


def test_a_cover_letter_counts_replies_to_itself_not_its_series(
    matched: tuple[Path, Path],
) -> None:
    """The extra series' cover has no reply of its own: its two patches hang below it
    in the thread but are the series, not review of the cover."""
    data, repo = matched
    sha = _sha(repo, "mm: round frob pool size")
    result = e2g(data, "link", "--json", "-C", str(repo), sha)
    assert result.returncode == 0, result.stderr
    postings = json.loads(result.stdout)["postings"]
    (cover,) = [p for p in postings if p["message_id"] == EXTRA_COVER]
    assert cover["replies"] == 0, cover
    assert cover["participants"] == [], cover
