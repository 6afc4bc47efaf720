"""`e2g serve` outside any git repository: the mail, threads, search and the way
back are served; the pages of commits say that no repository is configured."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from e2g.web.app import create_app
from tests.web.conftest import WebData


@pytest.fixture(scope="module")
def mail_only(web_data: WebData) -> Iterator[TestClient]:
    app = create_app(web_data.settings, repo=None)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def test_mail_threads_and_search_need_no_repository(mail_only: TestClient) -> None:
    front = mail_only.get("/")
    assert front.status_code == 200
    search = mail_only.get("/api/v1/search", params={"q": "is:patch"})
    assert search.status_code == 200 and search.json()["hits"]
    thread = mail_only.get("/thread/patch-v2@example.org")
    assert thread.status_code == 200 and "patch-v2@example.org" in thread.text


@pytest.mark.parametrize(
    "path", ["/commit/{sha}", "/blame/{sha}/frob.c", "/api/v1/commits/{sha}"]
)
def test_commit_pages_say_that_no_repository_is_configured(
    mail_only: TestClient, web_data: WebData, path: str
) -> None:
    response = mail_only.get(path.format(sha=web_data.sha))
    assert response.status_code == 503
    assert "no git repository is configured" in response.text
    assert "-C REPO" in response.text


def test_serve_outside_a_repository_starts_and_says_so(
    web_data: WebData, tmp_path: Path
) -> None:
    """The command itself: outside any repository it gets past the checks (here to
    the port check, on a port taken on purpose), where it used to refuse."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        data = str(web_data.settings.data_dir)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "e2g",
                "--data-dir",
                data,
                "serve",
                "--port",
                str(port),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**os.environ, "GIT_CEILING_DIRECTORIES": str(tmp_path.parent)},
            check=False,
            timeout=60,
        )
    assert "not a git repository" not in done.stderr
    assert f"port {port} is in use" in done.stderr
