"""/audit, /api/v1/audit and the audit's verdict on the commit and front pages, on the
repository and list built for the audit (tests/audit_world.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from e2g.api.audit import range_key
from e2g.api.match import match
from e2g.web.app import create_app
from e2g.web.context import store_signature
from tests.audit_world import build
from tests.conftest import clone, git
from tests.test_audit import IDENTITY


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    settings, repo, shas = build(tmp_path_factory.mktemp("audit-web"))
    match(settings, [], repo=repo, jobs=1)  # the web only reads
    return settings, repo, shas


@pytest.fixture(scope="module")
def audited(built) -> Iterator[tuple[TestClient, dict[str, str]]]:
    settings, repo, shas = built
    with TestClient(
        create_app(settings, repo=Path(repo)), raise_server_exceptions=False
    ) as client:
        yield client, shas


def test_audit_page_has_the_summary_and_a_row_per_commit(audited):
    client, shas = audited
    page = client.get("/audit")
    assert page.status_code == 200, page.text
    assert "of the 11 neither exempt nor outside the archive" in page.text
    assert "strict coverage <strong>36.4%</strong>" in page.text
    assert "spans 2021-03-01 .. 2021-04-09" in page.text
    assert "3 of 4 review tags backed by a mail" in page.text
    for sha in shas.values():
        assert f'href="/commit/{sha}"' in page.text
    assert '<span class="tag warn">changed-after-review</span>' in page.text
    assert "Reviewed-by Carol Tester: no mail behind it" in page.text
    assert "<script" not in page.text


def test_verdicts_filter_the_table(audited):
    client, shas = audited
    page = client.get("/audit", params={"verdict": "changed-after-review"})
    assert page.status_code == 200
    assert f'href="/commit/{shas["changed"]}"' in page.text
    assert f'href="/commit/{shas["maintainer-edit"]}"' in page.text
    assert f'href="/commit/{shas["reviewed"]}"' not in page.text
    assert "<strong>changed-after-review</strong>" in page.text


def test_outside_archive_is_a_filter_with_a_neutral_badge(audited):
    client, shas = audited
    page = client.get("/audit", params={"verdict": "outside-archive"})
    assert page.status_code == 200
    assert "<strong>outside-archive</strong>" in page.text
    assert f'href="/commit/{shas["postdates"]}"' in page.text
    assert f'href="/commit/{shas["not-posted"]}"' not in page.text
    assert '<span class="tag ">outside-archive</span>' in page.text


def test_api_gives_audit_json_lines_as_one_object(audited):
    client, shas = audited
    answer = client.get("/api/v1/audit", params={"range": f"{shas['changed']}^!"})
    assert answer.status_code == 200, answer.text
    data = answer.json()
    (one,) = data["commits"]
    assert one["commit"] == shas["changed"]
    assert one["verdict"] == "changed-after-review"
    assert one["delta"]["from_version"] == 2
    assert data["summary"]["counts"]["changed-after-review"] == 1
    assert data["cut"] is False


@pytest.mark.parametrize(
    "bad", ["--output=/tmp/x", "HEAD;rm", "a" * 401, " ".join(["HEAD"] * 9), "@{-1}"]
)
def test_a_bad_range_is_a_400(audited, bad):
    client, _ = audited
    assert client.get("/audit", params={"range": bad}).status_code == 400
    assert client.get("/api/v1/audit", params={"range": bad}).status_code == 400


def test_commit_page_shows_the_audit_verdict(audited):
    client, shas = audited
    page = client.get(f"/commit/{shas['self-acked']}")
    assert page.status_code == 200
    assert '<span class="tag warn">posted-unreviewed</span>' in page.text
    assert f'href="/audit?range={shas["self-acked"]}%5E%21"' in page.text


def test_front_page_badges_are_verdicts_not_reviewed(audited):
    client, shas = audited
    page = client.get("/")
    assert page.status_code == 200
    assert "Recent commits found on a list" in page.text
    assert ">posted-unreviewed</a>" in page.text
    assert ">reviewed</a>" in page.text
    assert '<span class="tag ok">reviewed</span>' not in page.text


def test_the_audit_page_is_cached_until_its_range_moves(built, tmp_path):
    """Cached under the range's object names: the same page again from the cache,
    a new commit on HEAD another key (never the stale page), a range git cannot
    name no entry."""
    settings, repo, _ = built
    other = clone(repo, tmp_path / "other")
    with TestClient(create_app(settings, repo=other)) as client:
        first = client.get("/audit")
        assert first.status_code == 200
        cache = client.app.state.e2g.cache
        key = ("audit-page", False, *range_key(other, ()))
        assert cache.get(key, store_signature(settings)) is not None
        assert client.get("/audit").text == first.text
        (other / "n.c").write_text("int n;\n")
        git(other, "add", "n.c")
        git(other, "commit", "-q", "-m", "n: add n.c", env=IDENTITY)
        moved = client.get("/audit")
        assert "n: add n.c" in moved.text
        assert "n: add n.c" not in first.text
        assert range_key(other, ("no-such-branch",)) is None
        assert (
            client.get("/audit", params={"range": "no-such-branch"}).status_code != 200
        )
