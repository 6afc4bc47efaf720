"""The blame page and /api/v1/blame: runs link to their commits, text is escaped,
large files are paged, and the commit page links each file to its blame."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from e2g.web.app import create_app
from tests.web.conftest import SCRIPT, WebData, _commit, git


def test_blame_page_links_each_run_to_its_commit_with_its_review(client, web_data):
    page = client.get(f"/blame/{web_data.sha}/mm/frob.c")
    assert page.status_code == 200, page.text
    assert f'href="/commit/{web_data.sha}"' in page.text
    assert f'href="/commit/{web_data.first}"' in page.text
    assert "v2 · frob-devel" in page.text
    assert "\treturn 2;" in page.text
    assert 'id="L4"' in page.text


def test_blame_api_gives_the_json_runs(client, web_data):
    answer = client.get(f"/api/v1/blame/{web_data.sha}/mm/frob.c")
    assert answer.status_code == 200, answer.text
    runs = answer.json()
    assert [(run["start"], run["end"]) for run in runs] == [(1, 2), (3, 3), (4, 4)]
    middle = runs[1]
    assert middle["commit"] == web_data.sha
    assert middle["status"] == "matched"
    assert {posting["version"] for posting in middle["postings"]} >= {1, 2}
    assert middle["lines"] == ["\treturn 2;"]


def test_commit_page_links_its_files_to_their_blame(client, web_data):
    page = client.get(f"/commit/{web_data.sha}")
    assert page.status_code == 200
    assert f'href="/blame/{web_data.sha}/mm/frob.c"' in page.text


@pytest.mark.parametrize(
    ("path", "status"),
    [("no/such.c", 404), ("mm", 400), ("mm/frob.c?page=2", 400)],
)
def test_bad_blame_requests(client, web_data, path, status):
    assert client.get(f"/blame/{web_data.sha}/{path}").status_code == status
    assert client.get(f"/api/v1/blame/{web_data.sha}/{path}").status_code == status


@pytest.fixture(scope="module")
def hostile(
    web_data: WebData, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[TestClient, str]]:
    """A clone with a file whose name and lines are markup, and a 2,500-line file."""
    repo = tmp_path_factory.mktemp("hostile") / "repo"
    git(repo.parent, "clone", "-q", str(web_data.repo), str(repo))
    _commit(repo, "big.c", "".join(f"int line{n};\n" for n in range(1, 2501)), "big")
    sha = _commit(repo, f"{SCRIPT}.c", f"{SCRIPT}\n<b>bold</b> & co\n", SCRIPT)
    app = create_app(web_data.settings, repo=Path(repo))
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client, sha


def test_blame_page_escapes_paths_lines_and_subjects(hostile):
    client, sha = hostile
    page = client.get(f"/blame/{sha}/<script>alert(1)</script>.c")
    assert page.status_code == 200, page.text
    assert SCRIPT not in page.text
    assert "<b>bold" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; co" in page.text
    # The web never matches (it is read-only): this clone's commits are not matched.
    assert "not matched yet" in page.text


def test_large_file_is_paged(hostile):
    client, sha = hostile
    first = client.get(f"/blame/{sha}/big.c")
    assert first.status_code == 200
    assert 'id="L1000"' in first.text
    assert 'id="L1001"' not in first.text
    assert "page 1 of 3" in first.text
    last = client.get(f"/blame/{sha}/big.c?page=3")
    assert 'id="L2001"' in last.text
    assert 'id="L2500"' in last.text
    assert client.get(f"/blame/{sha}/big.c?page=4").status_code == 400
    whole = client.get(f"/api/v1/blame/{sha}/big.c").json()
    assert whole[-1]["end"] == 2500


def test_a_deleted_file_links_to_its_blame_at_the_parent(web_data, tmp_path):
    """A file the commit deleted is not in its tree: its link blames the parent,
    where the deleted lines still are, and that page exists."""
    repo = tmp_path / "repo"
    git(tmp_path, "clone", "-q", str(web_data.repo), str(repo))
    git(repo, "rm", "-q", "mm/frob.c")
    git(repo, "commit", "-q", "-m", "mm: drop frob")
    sha = git(repo, "rev-parse", "HEAD").strip()
    app = create_app(web_data.settings, repo=Path(repo))
    with TestClient(app, raise_server_exceptions=False) as client:
        page = client.get(f"/commit/{sha}")
        assert page.status_code == 200, page.text
        assert f'href="/blame/{sha}~1/mm/frob.c"' in page.text
        assert f'href="/blame/{sha}/mm/frob.c"' not in page.text
        before = client.get(f"/blame/{sha}~1/mm/frob.c")
        assert before.status_code == 200, before.text
        assert "\treturn 2;" in before.text


def test_a_repository_older_than_the_archive_is_outside_it(web_data, tmp_path):
    """Never matched, every commit years before the mail: the pages answer each
    run `outside the archive`, as the command does, not a 404."""
    repo = tmp_path / "old"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", ".")
    sha = _commit(repo, "a.c", "int a;\n", "old", date="1995-01-01T00:00:00+00:00")
    app = create_app(web_data.settings, repo=repo)
    with TestClient(app, raise_server_exceptions=False) as client:
        for page in (f"/blame/{sha}/a.c", f"/tokens/{sha}/a.c"):
            answer = client.get(page)
            assert answer.status_code == 200, answer.text
            assert "outside the archive" in answer.text
        runs = client.get(f"/api/v1/blame/{sha}/a.c").json()
        assert [run["status"] for run in runs] == ["outside-archive"]
