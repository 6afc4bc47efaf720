"""End to end on the bundled sample: ingest its archives, match its repository, and
compare with sample-mbox/expected.json (the sample's ground truth)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2g import config
from e2g.api.link import link
from e2g.api.match import match
from e2g.api.stats import stats
from e2g.render import link_json, render_svg
from tests.conftest import SAMPLE, sample_store

EXPECTED = json.loads((SAMPLE / "expected.json").read_text())


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[config.Settings, Path]:
    return sample_store(tmp_path_factory.mktemp("sample"))


@pytest.mark.parametrize("case", EXPECTED["commits"], ids=lambda case: case["sha"][:10])
def test_every_sample_commit_links_to_its_postings(sample, case):
    settings, repo = sample
    result = link_json(link(settings, case["sha"], repo=repo, ignore_trailers=True))
    patches = {p["message_id"] for p in result["postings"] if p["kind"] == "patch"}
    assert patches == set(case["postings"]), result["rejected"]
    applied = [p["message_id"] for p in result["postings"] if p["applied"]]
    assert applied == ([case["applied_posting"]] if case["applied_posting"] else [])
    covers = {p["message_id"] for p in result["postings"] if p["kind"] == "cover"}
    assert covers == set(case.get("covers", []))
    assert result["status"] == ("matched" if case["postings"] else "no-match")


def test_negative_shows_rejected_candidates_with_reasons(sample):
    settings, repo = sample
    negative = next(
        c for c in EXPECTED["commits"] if not c["postings"] and c.get("link_trailer")
    )
    result = link(settings, negative["sha"], repo=repo)
    assert result.status == "no-match"
    assert result.rejected and all(rejected.reason for rejected in result.rejected)


def test_match_then_stats(sample):
    settings, repo = sample
    summary = match(settings, [], repo=repo, ignore_trailers=True, jobs=1)
    expected_matched = sum(1 for case in EXPECTED["commits"] if case["postings"])
    assert (summary.commits, summary.matched) == (
        len(EXPECTED["commits"]),
        expected_matched,
    )
    # No new mail since: neither matched nor unmatched commits are looked at again.
    again = match(settings, [], repo=repo, jobs=1)
    assert (again.commits, again.skipped) == (0, len(EXPECTED["commits"]))
    by_dir = stats(settings, repo=repo, by="dir")
    assert by_dir.total.commits == len(EXPECTED["commits"])
    assert {row.key for row in by_dir.rows} >= {"mm", "net", "lib"}
    by_year = stats(settings, repo=repo, by="year")
    assert [row.key for row in by_year.rows] == sorted(row.key for row in by_year.rows)
    svg = render_svg(by_dir)
    assert svg.startswith("<svg") and "mm" in svg
