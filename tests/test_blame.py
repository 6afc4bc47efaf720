"""`e2g blame` on the bundled sample: runs, their reviews, history, and bad input.

The sample repository is blamed against the sample archive, ingested for real;
the clone gets one more commit that moves a function to a new file, which
`git blame -M -C` must see through.
"""

from __future__ import annotations

import subprocess
from datetime import timedelta
from pathlib import Path

import pytest

from e2g import config, errors
from e2g.api.answers import repo_key
from e2g.api.basis import open_store
from e2g.api.blame import NOT_COMMITTED, OUTSIDE, all_outside, blame, history
from e2g.api.link import link
from e2g.api.match import match_commits
from e2g.git.blame import parse_blame
from e2g.git.repo import Repo
from e2g.render import blame_json, link_json, review_cell
from tests.conftest import git, sample_repo, sample_store

ETHTOOL = "285e9ca71b2039a5cfb794bd15d5b9de4dc7f6b7"  # v1 and v2 posted, v2 applied
UAF = "ea02043c"  # the maintainer edited a line when applying it
INITIAL = "290878c94e040c61d978ae11c15fe313bd380f93"  # before the archive's dates
MOVED = "frob_net_get_strings"
DATE = "2022-09-21T10:00:00+00:00"


def move_function(repo: Path) -> str:
    """A commit that moves frob_net_get_strings() from net/frob_stats.c to a new
    file net/frob_strings.c; its sha."""
    source = repo / "net" / "frob_stats.c"
    lines = source.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if MOVED in line)
    end = next(i for i in range(start, len(lines)) if lines[i] == "}\n") + 1
    moved = lines[start : end + 1]  # with the blank line after it
    source.write_text("".join(lines[:start] + lines[end + 1 :]))
    (repo / "net" / "frob_strings.c").write_text(
        '#include "frob_net.h"\n\n' + "".join(moved)
    )
    environment = {
        "GIT_AUTHOR_DATE": DATE,
        "GIT_COMMITTER_DATE": DATE,
        "GIT_AUTHOR_NAME": "Mover",
        "GIT_AUTHOR_EMAIL": "mover@example.org",
        "GIT_COMMITTER_NAME": "Mover",
        "GIT_COMMITTER_EMAIL": "mover@example.org",
        "PATH": "/usr/bin:/bin",
        "HOME": str(repo),
    }
    git(repo, "add", "-A", env=environment)
    git(repo, "commit", "-q", "-m", "net: frob: move strings", env=environment)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[config.Settings, Path]:
    settings, repo = sample_store(tmp_path_factory.mktemp("blame"))
    move_function(repo)
    return settings, repo


def run_of(result, sha: str):
    return next(run for run in result.runs if run.review.commit.sha.startswith(sha))


def test_unmatched_commits_are_matched_once_and_stored(sample):
    settings, repo = sample
    key = repo_key(Repo.open(repo))
    first = blame(settings, "mm/frob_alloc.c", "HEAD", repo=repo)
    shas = sorted({run.review.commit.sha for run in first.runs})
    with open_store(settings) as store:
        assert set(store.commit_statuses(key, shas)) == set(shas)
    again = blame(settings, "mm/frob_alloc.c", "HEAD", repo=repo)
    assert again == first
    assert [run.start for run in first.runs][0] == 1
    assert first.runs[-1].end == sum(len(run.lines) for run in first.runs)


def test_runs_are_consecutive_lines_of_one_commit(sample):
    settings, repo = sample
    result = blame(settings, "mm/frob_alloc.c", "HEAD", repo=repo)
    for before, after in zip(result.runs, result.runs[1:], strict=False):
        assert after.start == before.end + 1
        assert after.review.commit.sha != before.review.commit.sha
        assert len(before.lines) == before.end - before.start + 1


def test_multi_version_series_gives_every_version(sample):
    settings, repo = sample
    run = run_of(blame(settings, "net/frob_stats.c", "HEAD", repo=repo), ETHTOOL)
    assert run.review.status == "matched"
    assert {posting.version for posting in run.review.postings} >= {1, 2}
    applied = [posting for posting in run.review.postings if posting.applied]
    assert [posting.version for posting in applied] == [2]
    assert review_cell(run.review).startswith("v2 · frob-")


def test_postings_are_link_json_postings(sample):
    settings, repo = sample
    run = run_of(blame(settings, "net/frob_stats.c", "HEAD", repo=repo), ETHTOOL)
    shown = blame_json(run)
    assert list(shown) == [
        "start",
        "end",
        "commit",
        "subject",
        "author",
        "date",
        "status",
        "trees",
        "postings",
        "lines",
    ]
    linked = link_json(link(settings, ETHTOOL, repo=repo))
    assert {p["message_id"] for p in shown["postings"]} == {
        p["message_id"] for p in linked["postings"]
    }
    assert [list(p) for p in shown["postings"]] == [list(p) for p in linked["postings"]]


def test_maintainer_edited_commit_has_its_review(sample):
    settings, repo = sample
    run = run_of(blame(settings, "mm/frob_alloc.c", "HEAD", repo=repo), UAF)
    assert run.review.status == "matched"
    assert any(posting.applied for posting in run.review.postings)


def test_commit_before_the_archive_is_outside(sample):
    settings, repo = sample
    run = run_of(blame(settings, "mm/frob_alloc.c", "HEAD", repo=repo), INITIAL)
    assert run.review.status == OUTSIDE
    assert review_cell(run.review) == "outside the archive"


def test_moved_function_is_blamed_on_the_commit_that_wrote_it(sample):
    settings, repo = sample
    result = blame(settings, "net/frob_strings.c", "HEAD", repo=repo)
    moved = [run for run in result.runs if any(MOVED in line for line in run.lines)]
    assert [run.review.commit.sha for run in moved] == [ETHTOOL]
    assert moved[0].review.postings


def test_line_range_and_history_newest_first(sample):
    settings, repo = sample
    result = blame(settings, "mm/frob_alloc.c", "HEAD", repo=repo, lines=(30, 35))
    assert (result.runs[0].start, result.runs[-1].end) == (30, 35)
    reviews = history(settings, "mm/frob_alloc.c", "HEAD", repo=repo, lines=(30, 35))
    dates = [review.commit.commit_date for review in reviews]
    assert dates == sorted(dates, reverse=True)
    assert reviews[-1].commit.sha == INITIAL
    assert any(review.postings for review in reviews)


def test_uncommitted_lines_are_not_committed_yet(sample, tmp_path):
    settings, repo = sample
    work = sample_repo(tmp_path / "work")
    path = work / "mm" / "frob_alloc.c"
    path.write_text("/* a new first line */\n" + path.read_text())
    result = blame(settings, "mm/frob_alloc.c", repo=work, lines=(1, 40))
    assert result.runs[0].review.status == NOT_COMMITTED
    assert review_cell(result.runs[0].review) == "not committed yet"
    assert result.runs[0].lines == ("/* a new first line */",)


def test_ignore_revs_file_at_the_top_is_honoured(sample, tmp_path):
    settings, repo = sample
    work = sample_repo(tmp_path / "work")
    plain = blame(settings, "mm/frob_alloc.c", "HEAD", repo=work, lines=(32, 33))
    (work / ".git-blame-ignore-revs").write_text(plain.runs[0].review.commit.sha + "\n")
    ignored = blame(settings, "mm/frob_alloc.c", "HEAD", repo=work, lines=(32, 33))
    assert plain.runs[0].review.commit.sha not in {
        run.review.commit.sha for run in ignored.runs
    }


@pytest.mark.parametrize(
    ("path", "lines", "error", "fragment"),
    [
        ("no/such.c", None, errors.NotFound, "no file no/such.c in"),
        ("mm", None, errors.UsageError, "is a directory"),
        ("drivers/frob/firmware.bin", None, errors.UsageError, "binary file"),
        ("mm/frob_alloc.c", (5000, 5010), errors.UsageError, "which has 56 lines"),
        ("mm/frob_alloc.c", (9, 3), errors.UsageError, "bad line range"),
    ],
)
def test_bad_input_is_one_clear_error(sample, path, lines, error, fragment):
    settings, repo = sample
    with pytest.raises(error, match=fragment):
        blame(settings, path, "HEAD", repo=repo, lines=lines)


def test_unmatched_repository_outside_the_archive_is_outside_it(sample, tmp_path):
    settings, _ = sample
    old = tmp_path / "old"
    subprocess.run(["git", "init", "-q", str(old)], check=True)
    (old / "a.c").write_text("int a;\n")
    environment = {
        "GIT_AUTHOR_DATE": "1995-01-01T00:00:00+00:00",
        "GIT_COMMITTER_DATE": "1995-01-01T00:00:00+00:00",
        "GIT_AUTHOR_NAME": "Old",
        "GIT_AUTHOR_EMAIL": "old@example.org",
        "GIT_COMMITTER_NAME": "Old",
        "GIT_COMMITTER_EMAIL": "old@example.org",
        "PATH": "/usr/bin:/bin",
        "HOME": str(old),
    }
    git(old, "add", "a.c", env=environment)
    git(old, "commit", "-q", "-m", "old", env=environment)
    result = blame(settings, "a.c", "HEAD", repo=old)
    assert [run.review.status for run in result.runs] == [OUTSIDE]
    assert all_outside(run.review for run in result.runs)
    with open_store(settings) as store:  # nothing to match: nothing stored
        assert not store.has_commits(repo_key(Repo.open(old)))


def test_match_commits_matches_exactly_the_shas_given(sample, tmp_path):
    settings, _ = sample
    work = sample_repo(tmp_path / "work")
    key = repo_key(Repo.open(work))
    wanted = [ETHTOOL, INITIAL]
    assert match_commits(settings, wanted, repo=work) == 1
    with open_store(settings) as store:
        assert store.has_commits(key)
        everything = Repo.open(work).rev_list()
        assert set(store.commit_statuses(key, everything)) == set(wanted)


PORCELAIN = (
    b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1 1 2\n"
    b"author Ann\nauthor-mail <ann@example.org>\nauthor-time 1600000000\n"
    b"author-tz -0230\ncommitter Ann\ncommitter-mail <ann@example.org>\n"
    b"committer-time 1600000100\ncommitter-tz +9959\nsummary first\n"
    b"boundary\nfilename a.c\n\tint a;\n"
    b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 2 2\n"
    b"\tbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb 1 1 1\n"
    b"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb 1 3 1\n"
    b"author Bob\nauthor-mail <bob@example.org>\nauthor-time 1600000200\n"
    b"author-tz +0000\nsummary second \xff\nprevious "
    b"cccccccccccccccccccccccccccccccccccccccc a.c\nfilename a.c\n\t\xfe\n"
)


def test_parse_blame_reads_porcelain_and_its_odd_lines():
    found = parse_blame(PORCELAIN)
    assert [(line.sha[0], line.number, line.text) for line in found.lines] == [
        ("a", 1, "int a;"),
        (
            "a",
            2,
            "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb 1 1 1",
        ),  # text, not a header
        ("b", 3, "\ufffd"),
    ]
    first, second = found.commits
    assert (first.summary, first.author.email) == ("first", "ann@example.org")
    assert first.author_date.utcoffset() == -timedelta(hours=2, minutes=30)
    assert first.commit_date.timestamp() == 1600000100  # +9959: kept in UTC
    assert second.summary == "second \ufffd"
