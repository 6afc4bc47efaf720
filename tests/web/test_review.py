"""e2g.api.review on the web tests' real repo and ingest: the commit's text, and
what the replies to each posting said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2g import config
from e2g.api import core as api
from e2g.api import review
from e2g.api.link import link
from e2g.api.review import commit_text, excerpt_lines, posting_reviews, split_files
from e2g.api.threads import ThreadNode, split_blocks
from e2g.model.links import Posting
from tests.conftest import sample_repo

from .conftest import WebData, git

SAMPLE = Path(__file__).resolve().parents[2] / "sample-mbox"


def test_commit_text_reads_message_and_diff_per_file(web_data: WebData) -> None:
    text = commit_text(web_data.sha, repo=web_data.repo)
    assert text is not None and not text.cut
    assert text.message == (
        "Because two is better.\n\nSigned-off-by: Alice Example <alice@example.org>"
    )
    [change] = text.files
    assert (change.path, change.added, change.removed) == ("mm/frob.c", 1, 1)
    assert change.lines is not None
    assert change.lines[0] == "diff --git a/mm/frob.c b/mm/frob.c"
    assert "+\treturn 2;" in change.lines


def test_split_files_one_part_per_file() -> None:
    diff = "diff --git a/x b/x\n+1\ndiff --git a/y b/y\n-2\n"
    assert split_files(diff) == [
        ("diff --git a/x b/x", "+1"),
        ("diff --git a/y b/y", "-2"),
    ]
    assert split_files("") == []


def _node(body: str) -> ThreadNode:
    return ThreadNode(
        message=None,  # type: ignore[arg-type]  # excerpt_lines reads blocks only
        depth=1,
        body=body,
        blocks=split_blocks(body),
        trailers=(),
        diff=None,
    )


def test_excerpt_leaves_out_quotes_attribution_and_trailers() -> None:
    body = (
        "On Mon, Alice wrote:\n> quoted\n> more\n\nFirst own line.\n\n"
        "Second.\n> again\nThird.\nFourth.\nFifth.\n"
        "Reviewed-by: Bob <bob@example.org>\n"
    )
    assert excerpt_lines(_node(body)) == (
        "First own line.",
        "Second.",
        "Third.",
        "Fourth.",
    )
    assert excerpt_lines(_node("x" * 5000))[0] == "x" * 200


def test_posting_reviews_from_the_real_thread(web_data: WebData) -> None:
    result = link(web_data.settings, web_data.sha, repo=web_data.repo)
    reviews = posting_reviews(web_data.settings, result.postings)
    v2 = reviews["patch-v2@example.org"]
    assert [excerpt.message_id for excerpt in v2.excerpts] == [
        "review-1@example.org",
        "late-1@example.org",
    ]
    assert v2.excerpts[0].lines == ("Looks right to me.",)
    assert v2.excerpts[0].reviews == ("Reviewed-by: Bob Reviewer <bob@example.org>",)
    assert v2.more == 0
    assert reviews["patch-v1@example.org"].excerpts == ()
    assert all(isinstance(posting, Posting) for posting in result.postings)


def test_a_large_diff_is_cut_and_every_file_is_still_listed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", ".")
    for name in ("a.c", "b.c", "c.c"):
        lines = review.MAX_DIFF_LINES // 2 + 10
        (repo / name).write_text("".join(f"line {n}\n" for n in range(lines)))
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "big: three large files")
    sha = git(repo, "rev-parse", "HEAD").strip()
    text = review.commit_text(sha, repo=repo)
    assert text is not None and text.cut
    assert [change.path for change in text.files] == ["a.c", "b.c", "c.c"]
    first, second, third = (change.lines for change in text.files)
    assert first is not None and second is not None and third is None
    assert len(first) + len(second) == review.MAX_DIFF_LINES
    assert text.added == 3 * (review.MAX_DIFF_LINES // 2 + 10)


def test_a_cover_letters_own_patches_are_not_its_review(tmp_path: Path) -> None:
    for name in ("frob-devel.mbox", "sample-repo.bundle", "expected.json"):
        if not (SAMPLE / name).exists():
            pytest.skip(f"sample-mbox/{name} is not there")
    repo = sample_repo(tmp_path / "repo")
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    api.ingest(settings, [str(SAMPLE / "frob-devel.mbox")], workers=1)
    demo = json.loads((SAMPLE / "expected.json").read_text())["demo_commit"]
    result = link(settings, demo, repo=repo)
    [cover] = [posting for posting in result.postings if posting.kind == "cover"]
    found = posting_reviews(settings, [cover])[cover.message_id]
    assert [excerpt.author for excerpt in found.excerpts] == ["Grace Hopwood"]
    assert found.excerpts[0].lines[0] == "Applied, thanks!"
    assert found.more == 0
