"""The tree's page (/tree/REV/PATH) and its JSON twin, and `e2g stats --by dir
--tokens`: per file and directory the living tokens, their commits, and the share
written by commits the audit calls reviewed; what is not warm said so, a file's
path sent to its tokens, large directories paged."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from e2g.api import token_tree
from e2g.api.token_warm import warm
from e2g.web.app import create_app
from tests.web.conftest import WebData, git

HTML = {"accept": "text/html"}
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def data(web_data: WebData, tmp_path: Path) -> WebData:
    """The web's store in a data dir of this test's own (it warms a tree there)."""
    target = tmp_path / "data"
    shutil.copytree(web_data.settings.data_dir, target)
    return dataclasses.replace(
        web_data, settings=web_data.settings._replace(data_dir=target)
    )


@pytest.fixture
def client(data: WebData) -> Iterator[TestClient]:
    app = create_app(data.settings, repo=data.repo, cache_entries=0)
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def head(data: WebData) -> str:
    return git(data.repo, "rev-parse", "HEAD").strip()


def test_an_unwarmed_tree_lists_its_files_and_says_so(client, data) -> None:
    at = head(data)
    page = client.get(f"/tree/{at}", headers=HTML)
    assert page.status_code == 200
    assert "never warmed" in page.text and f"e2g tokens warm {at[:12]}" in page.text
    assert f'href="/tree/{at}/kernel"' in page.text
    assert "not warm" in page.text
    listed = client.get(f"/api/v1/tree/{at}").json()
    assert listed["warmed_rev"] is None
    assert listed["total"]["files"] == 2 and listed["total"]["warm"] == 0


def test_a_warmed_tree_counts_tokens_commits_and_reviewed_share(client, data) -> None:
    warm(data.settings, repo=data.repo, jobs=1)
    at = head(data)
    listed = client.get(f"/api/v1/tree/{at}").json()
    assert listed["warmed_rev"] == at and listed["judged"] is True
    entries = {entry["name"]: entry for entry in listed["entries"]}
    assert [entry["kind"] for entry in listed["entries"]] == ["dir", "dir"]
    mm, kernel = entries["mm"], entries["kernel"]
    # `int frob ( void ) { return 2 ; }`: `2` is the reviewed commit's, the rest
    # the first commit's (older than the archive).
    assert (mm["tokens"], mm["commits"], mm["reviewed_tokens"]) == (10, 2, 1)
    assert mm["tokens_by_verdict"] == {"outside-archive": 9, "reviewed": 1}
    assert (kernel["tokens"], kernel["commits"], kernel["reviewed_tokens"]) == (7, 1, 0)
    assert listed["total"]["tokens"] == 17 and listed["total"][
        "reviewed_share"
    ] == round(1 / 17, 4)
    page = client.get(f"/tree/{at}/mm", headers=HTML).text
    assert f'href="/tokens/{at}/mm/frob.c"' in page
    assert f'href="/blame/{at}/mm/frob.c"' in page
    assert "10.0%" in page and "never warmed" not in page
    older = client.get(f"/tree/{data.first}", headers=HTML).text
    assert f'warmed at <a href="/tree/{at}"' in older


def test_a_files_path_goes_to_its_tokens_and_a_missing_one_is_404(client, data) -> None:
    at = head(data)
    moved = client.get(f"/tree/{at}/mm/frob.c", follow_redirects=False)
    assert moved.status_code in (302, 307)
    assert moved.headers["location"] == f"/tokens/{at}/mm/frob.c"
    assert client.get(f"/tree/{at}/nowhere", headers=HTML).status_code == 404
    assert client.get(f"/api/v1/tree/{at}/nowhere").status_code == 404
    assert client.get("/tree/not-a-rev", headers=HTML).status_code in (400, 404)


def test_tree_is_e2gs_own_first_segment_never_a_lists_name(client, data) -> None:
    # lore's /<list>/ shapes come after e2g's routes: /tree/<x>/ is never a list's.
    assert "tree" in client.app.state.own_pages
    at = head(data)
    assert client.get(f"/tree/{at}/", headers=HTML).status_code == 200


def test_a_large_directory_is_paged(
    client, data, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(token_tree, "PAGE_ENTRIES", 1)
    at = head(data)
    first = client.get(f"/api/v1/tree/{at}").json()
    second = client.get(f"/api/v1/tree/{at}?page=2").json()
    assert (first["pages"], first["count"]) == (2, 2)
    assert [e["name"] for e in first["entries"] + second["entries"]] == [
        "kernel",
        "mm",
    ]
    assert first["total"] == second["total"]  # the directory, whichever page
    assert 'rel="next"' in client.get(f"/tree/{at}", headers=HTML).text
    assert client.get(f"/api/v1/tree/{at}?page=3").status_code == 404


def test_stats_by_dir_tokens_prints_the_same_counts(data) -> None:
    def e2g(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "e2g",
                "--data-dir",
                str(data.settings.data_dir),
                *args,
            ],
            capture_output=True,
            text=True,
            cwd=data.repo,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
        )

    cold = e2g("stats", "--by", "dir", "--tokens")
    assert cold.returncode == 1 and "e2g tokens warm" in cold.stderr
    assert e2g("tokens", "warm", "-q").returncode == 0
    table = e2g("stats", "--by", "dir", "--tokens")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["files", "warm", "tokens", "commits", "reviewed"]
    assert lines[1].split() == ["mm", "1", "1", "10", "2", "10.0%"]
    assert lines[-1].split() == ["total", "2", "2", "17", "3", "5.9%"]
    found = json.loads(e2g("stats", "--by", "dir", "--tokens", "--json").stdout)
    assert [row["path"] for row in found["rows"]] == ["mm", "kernel"]
    assert found["total"]["reviewed_tokens"] == 1
    refused = e2g("stats", "--by", "year", "--tokens")
    assert refused.returncode == 2 and "--by dir" in refused.stderr
