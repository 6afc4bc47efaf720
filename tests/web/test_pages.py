"""The HTML pages against a real ingest, and their rendering with a fake linker."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from e2g import config
from e2g.api import core as api
from e2g.api.review import CommitText, Excerpt, FileDiff, PostingReview
from e2g.model import Address
from e2g.model.links import CommitInfo, LinkResult, Posting, Rejected
from e2g.web.app import create_app
from e2g.web.context import linking

from .conftest import SCRIPT, WebData, mail

HTML = {"accept": "text/html"}


def page(client: TestClient, url: str, status: int = 200) -> str:
    response = client.get(url, headers=HTML)
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("text/html")
    return response.text


def test_front_page(client, web_data: WebData):
    text = page(client, "/")
    assert '<form class="box big" action="/go" method="get"' in text
    assert "[PATCH v2] mm: frob returns two" in text  # busiest thread
    assert f'href="/commit/{web_data.sha}"' in text  # linked by `e2g match`
    # reviewed commits first, then the unmatched ones, each under its own label
    reviewed = text.index("Recent commits found on a list")
    unmatched = text.index("Recent commits with no posting found")
    assert reviewed < text.index(f'href="/commit/{web_data.sha}"') < unmatched
    assert unmatched < text.index(f'href="/commit/{web_data.unposted}"')
    assert "no posting found</span>" in text
    # every count agrees with its noun: the store holds one list
    assert '<p class="counts">8 messages · 2 patches · 6 threads · 1 list</p>' in text
    assert "<script" not in text


@pytest.mark.parametrize(
    ("typed", "target"),
    [
        ("{sha}", "/commit/{sha}"),
        ("{short}", "/commit/{short}"),
        ("  {short}  ", "/commit/{short}"),
        ("<patch-v1@example.org>", "/thread/patch-v1@example.org#focus"),
        ("patch-v1@example.org", "/thread/patch-v1@example.org#focus"),
        (
            "https://lore.kernel.org/frob/patch-v1@example.org/",
            "/thread/patch-v1@example.org#focus",
        ),
        ("alice@example.org", "/search?q=alice%40example.org"),
        ("s:frob returns", "/search?q=s%3Afrob+returns"),
        ("", "/"),
    ],
)
def test_box_routes(client, web_data: WebData, typed, target):
    short = web_data.sha[:10]
    response = client.get(
        "/go",
        params={"q": typed.format(sha=web_data.sha, short=short)},
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert response.headers["location"] == target.format(sha=web_data.sha, short=short)


def test_commit_page_lists_every_posting_newest_first(client, web_data: WebData):
    text = page(client, f"/commit/{web_data.sha[:8]}")
    assert "<h1>mm: frob returns two</h1>" in text
    assert web_data.sha in text and "mm/frob.c" in text
    links = re.findall(r'class="thread-link" href="([^"]+)"', text)
    assert links == [
        "/thread/patch-v2@example.org#focus",
        "/thread/patch-v1@example.org#focus",
    ]
    # frob-devel is not a list lore carries: no link that would lead nowhere
    assert "lore.kernel.org" not in text and "list archive" not in text
    assert "Reviewed-by: Bob Reviewer &lt;bob@example.org&gt;" in text
    assert "applied" in text and "patch-id" in text
    series = page(client, f"/commit/{web_data.sha}?order=series")
    assert re.findall(r'class="thread-link" href="([^"]+)"', series) == list(
        reversed(links)
    )


def test_commit_page_no_match(client, web_data: WebData):
    text = page(client, f"/commit/{web_data.unposted}")
    assert "<h2>No match</h2>" in text
    assert "thread-link" not in text


def test_unknown_commit_page_offers_a_search(client):
    text = page(client, "/commit/" + "e" * 12, status=404)
    assert 'href="/search?q=eeeeeeeeeeee"' in text


def test_thread_page(client):
    text = page(client, "/thread/late-1@example.org")
    assert text.count("<article") == 3
    assert 'class="msg depth-2 focus" id="focus"' in text
    assert '<details class="quote"><summary>quoted text (3 lines)</summary>' in text
    assert (
        '<span class="del">-\treturn 1;</span><span class="add">+\treturn 2;</span>'
        in text
    )
    assert (
        '<pre class="trailers">Reviewed-by: Bob Reviewer &lt;bob@example.org&gt;</pre>'
        in text
    )
    assert '<ul class="reviews">' in text
    assert "date corrected" in text and "1970" in text
    assert 'href="/raw/patch-v2@example.org"' in text


def test_thread_page_marks_ghost_parent(client):
    text = page(client, "/thread/ghost-reply@example.org")
    assert "reply to a message not in the store" in text
    assert "the first message was never archived" in text


def test_thread_page_errors(client):
    assert "Not found" in page(client, "/thread/nobody@example.org", status=404)
    assert "Bad request" in page(client, "/thread/has%20space@example.org", status=400)


def test_raw_download(client):
    response = client.get("/raw/review-1@example.org")
    assert response.status_code == 200
    assert response.headers["content-type"] == "message/rfc822"
    assert re.fullmatch(
        r'attachment; filename="message-[0-9a-f]{16}\.eml"',
        response.headers["content-disposition"],
    )
    assert b"Message-ID: <review-1@example.org>" in response.content
    assert b"Reviewed-by: Bob Reviewer" in response.content


def test_search_page(client):
    text = page(client, "/search?q=s:frob")
    assert re.search(r"\d+ hits; 1–\d+ shown", text)
    assert 'href="/thread/patch-v1@example.org#focus"' in text
    empty = page(client, "/search")
    assert "hits" not in empty
    bad = page(client, '/search?q=s:"unclosed', status=400)
    assert 'class="error"' in bad


def test_search_page_takes_or_and_parentheses(client):
    text = page(client, "/search?q=" + quote("(f:carol OR f:bob) -is:patch"))
    assert 'href="/thread/late-1@example.org#focus"' in text
    assert 'href="/thread/review-1@example.org#focus"' in text
    assert "patch-v2@example.org#focus" not in text
    bad = page(client, "/search?q=" + quote("f:carol OR"), status=400)
    assert "OR needs a term after it (at column 9)" in bad
    hint = page(client, "/search")
    assert "<code>OR</code>" in hint and "<code>has:diff</code>" in hint


def test_search_page_is_paged(client):
    text = page(client, "/search?q=s:frob&page=1")
    total = int(re.search(r"(\d+) hits", text).group(1))
    if total > 20:
        assert 'rel="next"' in text
    assert page(client, "/search?q=frob&page=501", status=400)


def test_stats_page_and_chart(client):
    text = page(client, "/stats")
    assert "<code>mm</code>" in text and "<code>kernel</code>" in text
    assert '<img class="chart" src="/stats.svg?by=dir&amp;depth=1"' in text
    chart = client.get("/stats.svg")
    assert chart.headers["content-type"].startswith("image/svg+xml")
    assert chart.text.lstrip().startswith("<svg")


def test_stylesheet(client):
    response = client.get("/static/style.css")
    assert response.headers["content-type"].startswith("text/css")
    assert ".depth-12" in response.text
    assert client.get("/static/other.css").status_code == 404


# --- rendering with a fake linker (FastAPI dependency override) ----------------------

WHEN = datetime(2021, 3, 1, 10, tzinfo=UTC)


def fake_result(*, url: str, matched: bool = True) -> LinkResult:
    commit = CommitInfo(
        sha="a" * 40,
        subject=f"{SCRIPT} subject",
        author=Address(f"{SCRIPT}", "x@example.org"),
        author_date=WHEN,
        commit_date=WHEN,
        files=("a/b.c",),
    )
    posting = Posting(
        message_id='p"1@example.org',
        subject=f"[PATCH] {SCRIPT}",
        date=WHEN,
        author=Address("<b>bold</b>", "b@example.org"),
        lists=("l.example.org",),
        version=3,
        kind="patch",
        applied=True,
        method="trailer",
        score=1.0,
        url=url,
        thread_root="p1@example.org",
        replies=4,
        reviewers=(f"Reviewed-by: {SCRIPT}",),
    )
    rejected = (
        Rejected(
            message_id="r@example.org",
            subject=f"{SCRIPT}",
            score=0.3,
            reason="<i>diff</i>",
        ),
    )
    return LinkResult(
        commit=commit, postings=(posting,) if matched else (), rejected=rejected
    )


class FakeLinking:
    def __init__(self, result: LinkResult) -> None:
        self.result = result

    def link(self, settings, rev, *, repo):
        return self.result

    def link_json(self, result):
        return {"commit": result.commit.sha}

    def stats(self, settings, *, repo, by, depth):
        raise AssertionError("not used")

    def render_svg(self, result):
        raise AssertionError("not used")

    def commit_text(self, sha, *, repo):
        hostile = f"+{SCRIPT}"
        return CommitText(
            sha=sha,
            message=f"{SCRIPT}\n<img src=x onerror=alert(1)>",
            files=(
                FileDiff(f"{SCRIPT}.c", 1, 0, False, ("diff --git a/x b/x", hostile)),
                FileDiff("late.c", 9, 9, False, None),
            ),
            more_files=0,
            cut=True,
        )

    def posting_reviews(self, settings, postings):
        excerpt = Excerpt(
            message_id="r1@example.org",
            author=f"{SCRIPT} reviewer",
            date=WHEN,
            lines=(f"{SCRIPT} looks fine", "<b>but</b>"),
            reviews=(f"Acked-by: {SCRIPT}",),
        )
        return {
            posting.message_id: PostingReview(posting.message_id, (excerpt,), more=3)
            for posting in postings
        }


def fake_client(web_data: WebData, result: LinkResult) -> TestClient:
    app = create_app(web_data.settings, repo=web_data.repo, cache_entries=0)
    app.dependency_overrides[linking] = lambda: FakeLinking(result)
    return TestClient(app)


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        " javascript:x",
        "data:text/html,x",
        "//evil.example",
    ],
)
def test_fake_posting_with_hostile_url_and_markup(web_data: WebData, url):
    text = page(fake_client(web_data, fake_result(url=url)), "/commit/" + "a" * 40)
    main = text[text.index("<main>") :]
    assert "list archive" not in main  # the link is dropped, not rewritten
    assert "javascript" not in main.lower()
    assert not re.search(r'href="\s*(javascript|data|//)', main, re.IGNORECASE)
    assert "<script" not in text and "<b>" not in text and "<i>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; subject" in text
    assert 'href="/thread/p%221@example.org#focus"' in text


def test_fake_hostile_commit_text_and_review_are_escaped(web_data: WebData):
    text = page(fake_client(web_data, fake_result(url="")), "/commit/" + "a" * 40)
    assert "<script" not in text and "<img" not in text and "<b>" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text  # the commit message
    assert '<span class="add">+&lt;script&gt;alert(1)&lt;/script&gt;</span>' in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; looks fine" in text  # an excerpt
    assert "Acked-by: &lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "3 more replies" in text
    # every file of the diffstat has its anchor, the one past the cut too
    assert text.count('href="#file-') == 2
    assert 'id="file-1"' in text and 'id="file-2"' in text
    assert "This diff is cut short" in text and "git show aaaaaaaaaaaa" in text


def test_fake_no_match_shows_rejected(web_data: WebData):
    text = page(
        fake_client(web_data, fake_result(url="https://ok.example/x", matched=False)),
        "/commit/" + "a" * 40,
    )
    assert "<h2>No match</h2>" in text
    assert "&lt;i&gt;diff&lt;/i&gt;" in text
    assert 'href="/thread/r@example.org#focus"' in text


def test_templates_mark_nothing_safe():
    templates = Path(__file__).resolve().parents[2] / "e2g" / "web" / "templates"
    for template in templates.glob("*.html"):
        source = template.read_text()
        assert "|safe" not in source.replace(" ", ""), template
        assert "autoescape" not in source, template
        assert "Markup" not in source, template


def test_the_api_docs_page_lists_every_endpoint_with_a_form(client) -> None:
    text = page(client, "/api/v1/")
    for path in (
        "/api/v1/commits/{rev}",
        "/api/v1/messages/{message_id}",
        "/api/v1/threads/{message_id}",
        "/api/v1/search",
        "/api/v1/stats",
    ):
        assert f"<code>GET {path}</code>" in text
        assert f'name="endpoint" value="{path}"' in text
    assert "<script" not in text
    assert 'href="/api/v1/">API docs</a>' in page(client, "/")
    for old in ("/redoc", "/openapi.json"):
        moved = client.get(old, follow_redirects=False)
        assert moved.status_code == 303 and moved.headers["location"].startswith(
            "/api/v1/"
        )


def test_docs_lists_every_reference_page_and_keeps_the_api_docs_reachable(
    client,
) -> None:
    from e2g import reference

    index = page(client, "/docs")
    assert 'href="/api/v1/">API docs</a>' in index
    assert 'href="/docs">Docs</a>' in page(client, "/")
    names = reference.names()
    assert {"audit", "link", "search", "serve", "e2g"} <= set(names)
    for name in names:
        assert f'href="/docs/{name}"' in index, name
        shown = page(client, f"/docs/{name}")
        # The Markdown as text, escaped: a page's `<id>` never becomes markup.
        assert '<pre class="reference">' in shown
        first = (reference.text(name) or "").splitlines()[0]
        assert first in shown
        assert "<script" not in shown
    assert "&lt;id&gt;" in page(client, "/docs/link")
    for bad in ("bogus", "..%2Fpyproject", "%2e%2e"):
        assert client.get(f"/docs/{bad}").status_code == 404


@pytest.mark.parametrize(
    ("query", "location"),
    [
        ("endpoint=/api/v1/search&q=frob+is:patch&limit=5&sort=date",
         "/api/v1/search?q=frob+is%3Apatch&limit=5&sort=date"),
        ("endpoint=/api/v1/messages/{message_id}&message_id=a/b@c",
         "/api/v1/messages/a%2Fb@c"),
        ("endpoint=/api/v1/commits/{rev}&rev=HEAD~1", "/api/v1/commits/HEAD~1"),
    ],
)  # fmt: skip
def test_a_docs_form_lands_on_its_endpoint(client, query: str, location: str) -> None:
    moved = client.get(f"/api/v1/try?{query}", follow_redirects=False)
    assert moved.status_code == 303 and moved.headers["location"] == location


@pytest.mark.parametrize(
    "query",
    [
        "endpoint=https://evil.example/",
        "endpoint=//evil.example/api/v1/search&q=x",
        "endpoint=/api/v1/commits/{rev}&rev=",
        "",
    ],
)
def test_a_docs_form_never_leaves_the_api(client, query: str) -> None:
    response = client.get(f"/api/v1/try?{query}", follow_redirects=False)
    assert response.status_code == 400


def test_commit_page_shows_message_diff_and_review(client, web_data: WebData):
    text = page(client, f"/commit/{web_data.sha}")
    # the postings come first: before the commit's facts, message and diff
    assert text.index('class="postings"') < text.index('class="commit-facts"')
    assert text.index('class="commit-facts"') < text.index('class="commit-message"')
    assert "Because two is better." in text
    assert "Signed-off-by: Alice Example &lt;alice@example.org&gt;" in text
    # the diff, folded, one anchor per file linked from the diffstat
    assert '<details class="diff">' in text
    assert '<a href="#file-1"><code>mm/frob.c</code></a>' in text
    assert '<section class="file" id="file-1">' in text
    assert '<span class="add">+\treturn 2;</span>' in text
    assert '<span class="del">-\treturn 1;</span>' in text
    # the review: trailers, who took part, and what each reply said in its own words
    review = text[text.index('id="review-1"') : text.index('class="commit-facts"')]
    assert "Reviewed-by: Bob Reviewer &lt;bob@example.org&gt;" in review
    assert "Bob Reviewer &lt;bob@example.org&gt;, Carol Maintainer" in review
    assert "<blockquote>Looks right to me.</blockquote>" in review
    assert "<blockquote>Thanks, applied.</blockquote>" in review
    assert "Because two is better" not in review  # quoted text is left out
    assert "no replies" in text  # v1 had none


def test_thread_page_has_an_overview_tree(client):
    text = page(client, "/thread/review-1@example.org")
    tree = text[
        text.index('<nav class="tree"') : text.index(
            "</nav>", text.index('<nav class="tree"')
        )
    ]
    lines = [line for line in tree.split("\n") if "<a href=" in line]
    assert len(lines) == 3
    assert lines[0].startswith('` 2021-03-01 <a href="#m1">[PATCH v2] mm: frob')
    assert lines[1].startswith('  <span class="current">* 2021-03-02 <a href="#focus">')
    assert "[this message]" in lines[1]
    assert lines[2].startswith('    ` 2021-03-03 <a href="#m3">Re: [PATCH v2]')
    for anchor in ('id="m1"', 'id="focus"', 'id="m3"'):
        assert anchor in text


def test_hostile_subjects_in_the_overview_tree_are_escaped(client):
    text = page(client, "/thread/evil-1@example.org")
    tree = text[text.index('<nav class="tree"') :]
    assert "&lt;script&gt;alert(1)&lt;/script&gt; frob</a>" in tree
    assert "<script" not in text


def test_the_overview_tree_of_a_huge_thread_is_bounded(tmp_path: Path):
    replies = [
        mail(f"r{n}@example.org", f"Re: big {n}", f"Reply {n}.", reply_to="big@x.org")
        for n in range(1002)
    ]
    archive = tmp_path / "big.mbox"
    archive.write_bytes(b"".join([mail("big@x.org", "big", "Root."), *replies]))
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    api.ingest(settings, [str(archive)], workers=1)
    with TestClient(create_app(settings, repo=tmp_path)) as big:
        text = page(big, "/thread/big@x.org")
    tree = text[text.index('<nav class="tree"') : text.rindex("</nav>")]
    assert tree.count("<a href=") == 1000
    assert "… 3 more messages not listed here" in tree


def test_thread_pages_say_which_commit_applied_the_patch(client, web_data: WebData):
    applied = client.get("/thread/patch-v2@example.org")
    assert applied.status_code == 200
    assert "<strong>Applied</strong>" in applied.text
    assert f'href="/commit/{web_data.sha}"' in applied.text
    assert f"<code>{web_data.sha[:12]}</code>" in applied.text
    earlier = client.get("/thread/patch-v1@example.org").text
    assert "<strong>Superseded</strong>" in earlier
    assert "v2 &lt;patch-v2@example.org&gt; was applied" in earlier
    chatter = client.get("/thread/evil-big@example.org").text
    assert 'class="applied' not in chatter


def test_the_message_api_names_the_commits(client, web_data: WebData):
    data = client.get("/api/v1/messages/patch-v2@example.org").json()
    assert data["applied"] == "applied"
    assert [commit["commit"] for commit in data["commits"]] == [web_data.sha]
    assert data["commits"][0]["posting"] == "patch-v2@example.org"
    other = client.get("/api/v1/messages/evil-big@example.org").json()
    assert (other["applied"], other["commits"]) == (None, [])


def test_a_merge_whose_commits_have_no_posting(web_data: WebData):
    """Most merges of a project that takes pull requests elsewhere: no pull request
    mail, and commits none of which was posted (liburing: 417 of 420 merges)."""
    unposted = fake_result(url="", matched=False)._replace(rejected=())
    merge = unposted._replace(
        commit=unposted.commit._replace(sha="b" * 40, subject="Merge branch 'x'"),
        merge=True,
        merged=(unposted,),
    )
    text = page(fake_client(web_data, merge), "/commit/" + "b" * 40)
    assert "Brought in by this merge: 1 commit" in text
    assert '<span class="muted">no posting found</span>' in text
