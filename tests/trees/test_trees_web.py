"""Trees on the web: a backport's banner, the "In trees" section and the REST keys."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from e2g import config
from e2g.web.app import create_app
from tests.trees.test_trees import matched  # noqa: F401 - the module fixture
from tests.trees.world import World


@pytest.fixture(scope="module")
def client(matched: tuple[World, config.Settings]) -> TestClient:  # noqa: F811
    world, settings = matched
    return TestClient(create_app(settings, repo=world.repo))


def test_a_backport_page(
    client: TestClient,
    matched: tuple[World, config.Settings],  # noqa: F811
) -> None:
    world, _ = matched
    page = client.get(f"/commit/{world.shas['A-1.0']}")
    assert page.status_code == 200
    html = page.text
    assert f'Backport of <a href="/commit/{world.shas["A"]}">' in html
    assert "(mainline)" in html
    assert "<h2>In trees</h2>" in html
    assert "v1.0.1" in html and "v1.1" in html
    assert "[PATCH AUTOSEL 1.0 1/3] frob: A" in html  # the backport's own mail


def test_an_upstream_page_lists_its_backports(
    client: TestClient,
    matched: tuple[World, config.Settings],  # noqa: F811
) -> None:
    world, _ = matched
    html = client.get(f"/commit/{world.shas['A']}").text
    assert "Backport of" not in html
    assert f'<a href="/commit/{world.shas["A-1.0"]}">' in html


def test_the_rest_keys(
    client: TestClient,
    matched: tuple[World, config.Settings],  # noqa: F811
) -> None:
    world, _ = matched
    body = client.get(f"/api/v1/commits/{world.shas['B-1.0']}").json()
    assert body["upstream"] == {
        "commit": world.shas["B"],
        "repo": str(world.repo),
        "how": "commit-upstream",
        "tree": "mainline",
    }
    assert [(t["tree"], t["branch"], t["release"]) for t in body["trees"]] == [
        ("mainline", "master", "v1.1"),
        ("stable", "linux-1.0.y", "v1.0.1"),
    ]
    assert set(body["trees"][0]) == {
        "repo",
        "tree",
        "branch",
        "commit",
        "how",
        "release",
        "merge",
    }
    plain = client.get(f"/api/v1/commits/{world.shas['S-1.0']}").json()
    assert plain["upstream"] is None


def test_a_merge_page(
    client: TestClient,
    matched: tuple[World, config.Settings],  # noqa: F811
) -> None:
    world, _ = matched
    page = client.get(f"/commit/{world.shas['merge']}")
    assert page.status_code == 200
    assert "[GIT PULL] frob for 1.3" in page.text
    assert "frob: T1" in page.text and "frob: T2" in page.text
    body = client.get(f"/api/v1/commits/{world.shas['merge']}").json()
    assert body["merge"] is True
    assert body["postings"][0]["message_id"] == "pull-1.3@example.org"


def test_the_audit_page_names_each_commits_trees(
    client: TestClient,
    matched: tuple[World, config.Settings],  # noqa: F811
) -> None:
    world, _ = matched
    page = client.get("/audit", params={"range": f"{world.shas['B-1.0']}^!"})
    assert page.status_code == 200
    assert '<span class="muted">[stable/linux-1.0.y]</span>' in page.text
    body = client.get("/api/v1/audit", params={"range": f"{world.shas['B']}^!"}).json()
    assert [one["trees"] for one in body["commits"]] == [["mainline/master"]]


def test_a_patch_s_thread_page_names_the_trees_that_applied_it(
    client: TestClient,
    matched: tuple[World, config.Settings],  # noqa: F811
) -> None:
    world, _ = matched
    html = client.get("/thread/A@example.org").text
    assert "In trees: mainline/master" in html
    assert f'stable/linux-1.0.y <a href="/commit/{world.shas["A-1.0"]}">' in html


def test_the_front_page_names_each_commits_trees(client: TestClient) -> None:
    html = client.get("/").text
    assert "Recent commits found on a list" in html
    assert " · mainline/master</span>" in html
    assert " · stable/linux-1.0.y</span>" in html
