"""The token page and /api/v1/tokens: each token's span coloured by its commit (or
author, or age) with its commit and review on hover, a legend whose entries the
panel shows, mail and commit text escaped, large files paged, and the one script
allowed on that page only."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from e2g import config
from e2g.api import core as api
from e2g.api.match import match
from e2g.api.tokens import Span
from e2g.web.app import (
    CONTENT_SECURITY_POLICY,
    SCRIPT_CONTENT_SECURITY_POLICY,
    create_app,
)
from e2g.web.token_view import Piece, line_pieces, palette
from tests.web.conftest import WebData, _commit, git, patch_mail

HTML = {"accept": "text/html"}
BREAKOUT = "</script><script>alert(1)</script>"
SPAN_KEYS = {
    "line",
    "column",
    "text",
    "commit",
    "subject",
    "author",
    "date",
    "status",
    "trees",
    "postings",
}


def spans_of(text: str, sha: str) -> list[str]:
    """The opening tags of the spans of commit `sha` on a page."""
    return re.findall(rf'<span class="t [^"]*"[^>]*data-commit="{sha}"[^>]*>', text)


def test_token_page_colours_each_span_by_its_commit_with_its_review(client, web_data):
    page = client.get(f"/tokens/{web_data.sha}/mm/frob.c")
    assert page.status_code == 200, page.text
    # `return 1;` became `return 2;`: only the literal is the later commit's.
    line = page.text[page.text.index('id="L3"') :].split("\n", 1)[0]
    assert re.search(rf'data-commit="{web_data.sha}"[^>]*>2</span>', line), line
    assert re.search(rf'data-commit="{web_data.first}"[^>]*>return</span>', line), line
    later = spans_of(page.text, web_data.sha)
    assert later, page.text
    for tag in later:
        assert f'class="t c{palette(web_data.sha)}"' in tag
        assert 'tabindex="0"' in tag
        assert (
            f'title="{web_data.sha[:8]} mm: frob returns two · v2 · frob-devel' in tag
        )
    earlier = spans_of(page.text, web_data.first)
    assert f'class="t c{palette(web_data.first)}"' in earlier[0]
    assert "mm: add frob" in earlier[0]


def test_token_page_has_a_legend_with_each_commits_review(client, web_data):
    page = client.get(f"/tokens/{web_data.sha}/mm/frob.c")
    text = page.text
    assert f'id="c-{web_data.sha}"' in text
    assert f'id="c-{web_data.first}"' in text
    # newest commit first
    assert text.index(f'id="c-{web_data.sha}"') < text.index(f'id="c-{web_data.first}"')
    detail = text[text.index(f'id="detail-{web_data.sha}"') :]
    detail = detail[: detail.index("</details>")]
    assert f'href="/commit/{web_data.sha}"' in detail
    assert 'href="/thread/patch-v2@example.org#focus"' in detail
    assert 'href="/thread/patch-v1@example.org#focus"' in detail
    assert "Reviewed-by: Bob Reviewer &lt;bob@example.org&gt;" in detail
    assert "replies" in detail
    assert "frob-devel.lists.example.org" in detail
    assert f'<span class="swatch c{palette(web_data.sha)}"></span>' in detail


def test_token_page_colours_by_author_and_by_age(client, web_data):
    by_age = client.get(f"/tokens/{web_data.sha}/mm/frob.c?by=age")
    assert by_age.status_code == 200
    assert all('class="t a7"' in tag for tag in spans_of(by_age.text, web_data.sha))
    assert all('class="t a0"' in tag for tag in spans_of(by_age.text, web_data.first))
    assert "older 2021-02-01" in by_age.text
    assert "<strong>age</strong>" in by_age.text
    by_author = client.get(f"/tokens/{web_data.sha}/mm/frob.c?by=author")
    assert by_author.status_code == 200
    # one author wrote both commits: one colour, one legend line
    classes = {
        re.search(r'class="t (c\d+)"', tag).group(1)  # type: ignore[union-attr]
        for tag in spans_of(by_author.text, web_data.sha)
        + spans_of(by_author.text, web_data.first)
    }
    assert len(classes) == 1
    assert "Alice Example" in by_author.text and "2 commits" in by_author.text
    assert client.get(f"/tokens/{web_data.sha}/mm/frob.c?by=mood").status_code == 400


def test_token_page_loads_only_its_static_script(client, web_data):
    page = client.get(f"/tokens/{web_data.sha}/mm/frob.c")
    assert re.findall(r"<script\b[^>]*>", page.text) == [
        '<script src="/static/tokens.js">'
    ]
    assert "</script>" in page.text  # the one tag, closed, and empty
    assert not re.search(r"<script\b[^>]*>[^<]", page.text)
    assert not re.search(r"\son[a-z]+\s*=", page.text), "no inline event handler"
    assert not re.search(r"\sstyle\s*=", page.text), "no inline style"
    script = client.get("/static/tokens.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert "token-panel" in script.text
    assert client.get("/static/other.js").status_code == 404


def test_csp_allows_own_scripts_on_the_token_page_only(client, web_data):
    page = client.get(f"/tokens/{web_data.sha}/mm/frob.c")
    policy = page.headers["content-security-policy"]
    assert policy == SCRIPT_CONTENT_SECURITY_POLICY
    directives = dict(
        (part.strip().split(" ", 1) + [""])[:2] for part in policy.split(";")
    )
    assert directives["script-src"] == "'self'"
    assert directives["default-src"] == "'none'"
    assert directives["style-src"] == "'self'"
    assert "unsafe" not in policy
    for url in (f"/blame/{web_data.sha}/mm/frob.c", "/", "/static/tokens.js"):
        assert client.get(url).headers["content-security-policy"] == (
            CONTENT_SECURITY_POLICY
        )
    assert "script-src" not in CONTENT_SECURITY_POLICY
    missing = client.get(f"/tokens/{web_data.sha}/no/such.c", headers=HTML)
    assert "<script" not in missing.text


def test_token_api_gives_the_json_spans(client, web_data):
    answer = client.get(f"/api/v1/tokens/{web_data.sha}/mm/frob.c")
    assert answer.status_code == 200, answer.text
    spans = answer.json()
    assert all(set(span) == SPAN_KEYS for span in spans)
    two = next(span for span in spans if span["line"] == 3 and span["text"] == "2")
    assert two["commit"] == web_data.sha
    assert two["column"] == 9  # after a tab and "return " (characters, from 1)
    assert two["subject"] == "mm: frob returns two"
    assert two["status"] == "matched"
    assert two["author"] == "Alice Example <alice@example.org>"
    assert {posting["version"] for posting in two["postings"]} >= {1, 2}
    assert {"message_id", "url", "replies", "reviewers"} <= set(two["postings"][0])
    first = spans[0]
    assert (first["line"], first["column"], first["commit"]) == (1, 1, web_data.first)


def test_links_between_line_and_token_blame_and_from_the_commit_page(client, web_data):
    blame = client.get(f"/blame/{web_data.sha}/mm/frob.c")
    assert f'href="/tokens/{web_data.sha}/mm/frob.c"' in blame.text
    tokens = client.get(f"/tokens/{web_data.sha}/mm/frob.c")
    assert f'href="/blame/{web_data.sha}/mm/frob.c"' in tokens.text
    assert f'href="/api/v1/tokens/{web_data.sha}/mm/frob.c"' in tokens.text
    commit = client.get(f"/commit/{web_data.sha}")
    assert f'href="/tokens/{web_data.sha}/mm/frob.c"' in commit.text


@pytest.mark.parametrize(
    ("rev", "path", "status"),
    [
        ("SHA", "no/such.c", 404),
        ("SHA", "mm", 400),
        ("SHA", "mm/frob.c?page=2", 400),
        ("-x", "mm/frob.c", 400),
        ("a..b", "mm/frob.c", 400),
        ("no-such-branch", "mm/frob.c", 404),
    ],
)
def test_bad_token_requests(client, web_data, rev, path, status):
    rev = web_data.sha if rev == "SHA" else rev
    page = client.get(f"/tokens/{rev}/{path}", headers=HTML)
    assert page.status_code == status, page.text
    answer = client.get(f"/api/v1/tokens/{rev}/{path}")
    assert answer.status_code == status, answer.text
    assert answer.json()["error"]["status"] == status


# --- a store of its own: a commit and a posting whose subjects are markup ------------


@pytest.fixture(scope="module")
def hostile(
    web_data: WebData, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[TestClient, str, str]]:
    """A clone with a 2,500-line file and a commit whose subject, posting and lines
    try to close the page's script and open one; that patch ingested and matched."""
    root = tmp_path_factory.mktemp("hostile-tokens")
    repo = root / "repo"
    git(root, "clone", "-q", str(web_data.repo), str(repo))
    big = _commit(
        repo, "big.c", "".join(f"int line{n};\n" for n in range(1, 2501)), "big"
    )
    sha = _commit(
        repo,
        "mm/frob.c",
        f'int frob(void)\n{{\n\treturn 2; /* {BREAKOUT} */\n}}\nchar *s = "{BREAKOUT}";\n',
        f"mm: {BREAKOUT} & more",
    )
    archive = root / "hostile.mbox"
    archive.write_bytes(
        patch_mail(
            repo,
            sha,
            version=1,
            message_id="hostile-patch@example.org",
            date="Tue, 02 Mar 2021 10:00:00 +0000",
        )
    )
    settings = config.resolve(data_dir=root / "data", env={}, home=root / "home")
    api.ingest(settings, [str(archive)], workers=1)
    match(settings, ["main"], repo=repo, jobs=1)
    app = create_app(settings, repo=Path(repo))
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client, sha, big


def test_markup_in_commits_mail_and_code_cannot_break_out(hostile):
    client, sha, _ = hostile
    page = client.get(f"/tokens/{sha}/mm/frob.c")
    assert page.status_code == 200, page.text
    assert "alert" in page.text
    assert re.findall(r"<script\b[^>]*>", page.text) == [
        '<script src="/static/tokens.js">'
    ]
    assert page.text.count("</script>") == 1
    escaped = "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"
    # in the spans' titles, the lines, the legend and the panel's data
    assert f"mm: {escaped} &amp; more" in page.text
    assert any(escaped in tag for tag in spans_of(page.text, sha))
    detail = page.text[page.text.index(f'id="detail-{sha}"') :]
    detail = detail[: detail.index("</details>")]
    assert "v1 · frob-devel" in detail, detail  # the hostile patch was matched
    assert f"[PATCH] mm: {escaped} &amp; more" in detail  # the posting's subject
    assert 'href="/thread/hostile-patch@example.org#focus"' in detail
    answer = client.get(f"/api/v1/tokens/{sha}/mm/frob.c").json()
    assert any(span["subject"] == f"mm: {BREAKOUT} & more" for span in answer)


def test_a_large_file_is_paged_as_the_blame_page(hostile):
    client, _, big = hostile
    first = client.get(f"/tokens/{big}/big.c")
    assert first.status_code == 200
    assert 'id="L1000"' in first.text
    assert 'id="L1001"' not in first.text
    assert "page 1 of 3" in first.text
    assert 'href="?page=2&amp;by=commit" rel="next"' in first.text
    last = client.get(f"/tokens/{big}/big.c?page=3&by=age")
    assert 'id="L2001"' in last.text and 'id="L2500"' in last.text
    assert 'id="L2000"' not in last.text
    assert f'href="/blame/{big}/big.c?page=3"' in last.text
    assert client.get(f"/tokens/{big}/big.c?page=4").status_code == 400
    second = client.get(f"/api/v1/tokens/{big}/big.c?page=2").json()
    assert (second[0]["line"], second[-1]["line"]) == (1001, 2000)
    whole = client.get(f"/api/v1/tokens/{big}/big.c").json()
    assert whole[-1]["line"] == 2500
    assert client.get(f"/api/v1/tokens/{big}/big.c?page=4").status_code == 400


def test_line_pieces_keep_the_text_between_spans_and_never_drop_text():
    spans = [Span(1, 2, "if (x", "a" * 40), Span(1, 8, ">=", "b" * 40)]
    assert line_pieces("\tif (x >= 1)", spans) == (
        Piece("\t", None),
        Piece("if (x", "a" * 40),
        Piece(" ", None),
        Piece(">=", "b" * 40),
        Piece(" 1)", None),
    )
    # a span that does not fit the line where it says is left as plain text
    assert line_pieces("abc", [Span(1, 2, "zz", "a" * 40)]) == (Piece("abc", None),)
    assert palette("c225ab8883d0fea03bae28921832d64daf4bdde4") == (
        int("c225ab8", 16) % 16
    )
