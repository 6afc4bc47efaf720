"""Safety: hostile mail rendered inert, strict headers everywhere, bounded inputs,
no file paths from requests, no writes to the store, reads beside a running ingest."""

from __future__ import annotations

import hashlib
import re
import threading
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from e2g.api import core as api
from e2g.web.app import CONTENT_SECURITY_POLICY, create_app
from e2g.web.render import safe_href

from .conftest import BIG, WebData, build, mail

HTML = {"accept": "text/html"}
EXPECTED_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)


def main_of(text: str) -> str:
    return text[text.index("<main>") :]


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/thread/evil-1@example.org",
        "/search?q=frob",
        "/static/style.css",
        "/raw/evil-1@example.org",
        "/api/v1/messages/evil-1@example.org",
        "/api/v1/messages/bad%20id",
        "/nowhere",
        "/api/v1/openapi.json",
        "/commit/-x",
        "/stats.svg",
    ],
)
def test_security_headers_on_every_response(client, url):
    response = client.get(url, headers=HTML)
    assert CONTENT_SECURITY_POLICY == EXPECTED_CSP
    assert response.headers["content-security-policy"] == EXPECTED_CSP
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"


def test_headers_and_error_shape_on_a_crash(web_data: WebData, monkeypatch):
    app = create_app(web_data.settings, repo=web_data.repo)

    def explode(*args, **kwargs):
        raise RuntimeError("boom <script>")

    monkeypatch.setattr("e2g.api.threads.message_view", explode)
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.get("/api/v1/messages/evil-1@example.org")
    assert response.status_code == 500
    assert response.json() == {
        "error": {
            "status": 500,
            "code": "internal",
            "message": "internal error; the server log has the details",
        }
    }
    assert response.headers["content-security-policy"] == EXPECTED_CSP


def test_script_subject_body_and_author_are_inert(client):
    for url in (
        "/thread/evil-1@example.org",
        "/search?q=frob",
        "/search?q=" + quote("<script>"),
    ):
        text = main_of(client.get(url, headers=HTML).text)
        assert "<script" not in text.lower(), url
        assert "<img" not in text.lower(), url
    text = client.get("/thread/evil-1@example.org", headers=HTML).text
    assert "[PATCH] &lt;script&gt;alert(1)&lt;/script&gt; frob" in text
    assert "&lt;img src=x onerror=alert(2)&gt;" in text
    assert (
        "Eve &amp; &#34;q&#34; onmouseover=alert" in text
    )  # quotes cannot end an attribute
    assert (
        'title="Date: header said &#34;&gt;&lt;script&gt;alert(4)&lt;/script&gt;"'
        in text
    )


def test_javascript_url_in_mail_is_never_an_href(client):
    text = main_of(client.get("/thread/evil-pull@example.org", headers=HTML).text)
    assert "javascript:alert(1) main" in text  # shown as text
    assert not re.search(r"href=\"\s*javascript", text, re.IGNORECASE)


def test_javascript_url_template_is_never_an_href(web_data: WebData):
    hostile = web_data.settings._replace(
        default_url_template="javascript:alert('{message_id}')"
    )
    with TestClient(create_app(hostile, repo=web_data.repo)) as client:
        for url in (f"/commit/{web_data.sha}", "/thread/late-1@example.org"):
            text = main_of(client.get(url, headers=HTML).text)
            assert "thread-link" in text or "<article" in text
            assert "javascript" not in text.lower(), url


@pytest.mark.parametrize(
    ("url", "safe"),
    [
        ("https://lore.kernel.org/r/x@y", True),
        ("http://example.org/", True),
        ("HTTPS://EXAMPLE.ORG/x", True),
        ("javascript:alert(1)", False),
        ("JAVASCRIPT:alert(1)", False),
        (" javascript:alert(1)", False),
        ("java\tscript:alert(1)", False),
        ("javascript://example.org/%0aalert(1)", False),
        ("data:text/html,<script>", False),
        ("vbscript:x", False),
        ("//evil.example/", False),
        ("https:///nohost", False),
        ("https://ex ample.org", False),
        ("https://example.org/\u2028", False),
        ("", False),
        (None, False),
        ("https://e.org/" + "a" * 3000, False),
        ("http://[::1", False),
    ],
)
def test_safe_href(url, safe):
    found = safe_href(url)
    assert (found is not None and found == url) is safe


def test_one_megabyte_header(client):
    response = client.get("/thread/evil-big@example.org", headers=HTML)
    assert response.status_code == 200
    assert len(response.content) < 200_000  # bounded, not a megabyte echoed back
    assert "<script" not in main_of(response.text).lower()
    body = client.get("/api/v1/messages/evil-big@example.org").json()
    assert len(body["subject"]) <= 2048
    raw = client.get("/raw/evil-big@example.org")
    assert len(raw.content) > BIG  # the raw download is the mail as archived
    assert raw.headers["content-type"] == "message/rfc822"


@pytest.mark.parametrize(
    "url",
    [
        "/static/../e2g/web/app.py",
        "/static/%2e%2e/app.py",
        "/static/..%2fapp.py",
        "/static/style.css/../../app.py",
        "/raw/..%2F..%2F..%2Fetc%2Fpasswd",
        "/thread/..%2F..%2Fpyproject.toml",
        "/raw/%2Fetc%2Fpasswd@x",
    ],
)
def test_no_file_is_read_from_a_request_path(client, url):
    response = client.get(url)
    assert response.status_code in (400, 404)
    assert b"root:" not in response.content and b"import" not in response.content


def test_revision_never_reaches_git_as_an_option(
    client, web_data: WebData, tmp_path: Path
):
    target = tmp_path / "written-by-git"
    for rev in (f"--output={target}", f"-o{target}", "--all"):
        response = client.get("/api/v1/commits/" + quote(rev, safe=""))
        assert response.status_code == 400
    assert not target.exists()


def _fingerprint(data_dir: Path) -> dict[str, str]:
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(data_dir.iterdir())
        if path.is_file()
    }


def test_serving_never_writes_the_store(client, web_data: WebData):
    before = _fingerprint(web_data.settings.data_dir)
    for url in (
        "/",
        f"/commit/{web_data.sha}",
        "/thread/late-1@example.org",
        "/search?q=frob",
        "/stats",
        "/api/v1/threads/patch-v2@example.org",
        "/raw/review-1@example.org",
        "/go?q=patch-v1@example.org",
    ):
        assert client.get(url).status_code in (200, 303), url
    after = _fingerprint(web_data.settings.data_dir)
    assert {
        name: digest for name, digest in after.items() if not name.endswith("-shm")
    } == {name: digest for name, digest in before.items() if not name.endswith("-shm")}


def test_reads_beside_a_running_ingest(tmp_path: Path):
    data = build(tmp_path)
    batches = []
    for batch in range(6):
        messages = [
            mail(
                f"more-{batch}-{n}@example.org",
                f"Re: [PATCH v2] mm: frob returns two ({batch}.{n})",
                "More review.\n",
                reply_to="patch-v2@example.org",
            )
            for n in range(150)
        ]
        path = tmp_path / f"more-{batch}.mbox"
        path.write_bytes(b"".join(messages))
        batches.append(path)
    failures: list[BaseException] = []

    def ingest_all() -> None:
        try:
            for path in batches:
                api.ingest(data.settings, [str(path)], workers=1)
        except BaseException as error:  # reported by the main thread
            failures.append(error)

    writer = threading.Thread(target=ingest_all)
    statuses: list[int] = []
    with TestClient(
        create_app(data.settings, repo=data.repo), raise_server_exceptions=False
    ) as client:
        writer.start()
        while writer.is_alive() or len(statuses) < 30:
            for url in (
                "/thread/patch-v2@example.org",
                "/api/v1/threads/review-1@example.org",
                f"/api/v1/commits/{data.sha}",
                "/api/v1/search?q=frob",
                "/",
            ):
                statuses.append(client.get(url).status_code)
        writer.join()
        final = client.get("/api/v1/threads/patch-v2@example.org").json()
    assert not failures
    assert set(statuses) == {200}
    assert final["total"] == 3 + 6 * 150
