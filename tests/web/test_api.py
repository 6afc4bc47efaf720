"""The JSON API under /api/v1/ against a real ingest and the real link/stats API."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from e2g.api.link import link
from e2g.api.stats import GROUPINGS
from e2g.render import link_json
from e2g.web.context import StatsBy

from .conftest import WebData


def error_of(response) -> dict:
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"status", "code", "message"}
    assert body["error"]["status"] == response.status_code
    return body["error"]


def test_commit_is_the_link_json_object(client, web_data: WebData):
    response = client.get(f"/api/v1/commits/{web_data.sha}")
    assert response.status_code == 200
    expected = link_json(link(web_data.settings, web_data.sha, repo=web_data.repo))
    body = response.json()
    assert {key: body[key] for key in expected} == expected
    assert set(body) - set(expected) == {"message", "diff", "reviews"}
    assert body["status"] == "matched"
    by_id = {posting["message_id"]: posting for posting in body["postings"]}
    assert set(by_id) == {"patch-v1@example.org", "patch-v2@example.org"}
    assert by_id["patch-v2@example.org"]["version"] == 2
    assert by_id["patch-v2@example.org"]["replies"] == 2
    assert any(
        "Bob Reviewer" in reviewer
        for reviewer in by_id["patch-v2@example.org"]["reviewers"]
    )


def test_commit_carries_the_commit_pages_message_diff_and_review(
    client, web_data: WebData
):
    """The JSON twin of the commit page: what a reviewer reads there, a script
    can read here."""
    body = client.get(f"/api/v1/commits/{web_data.sha}").json()
    assert body["message"].startswith("Because two is better.")
    assert "Signed-off-by: Alice Example <alice@example.org>" in body["message"]
    (change,) = body["diff"]["files"]
    assert (change["path"], change["added"], change["removed"]) == ("mm/frob.c", 1, 1)
    assert (change["binary"], change["deleted"]) == (False, False)
    assert "+\treturn 2;" in change["lines"]
    assert "-\treturn 1;" in change["lines"]
    assert (body["diff"]["more_files"], body["diff"]["cut"]) == (0, False)
    assert body["reviews"]["patch-v1@example.org"] == {"excerpts": [], "more": 0}
    review = body["reviews"]["patch-v2@example.org"]
    by_author = {excerpt["author"]: excerpt for excerpt in review["excerpts"]}
    bob = next(e for author, e in by_author.items() if "Bob Reviewer" in author)
    assert bob["lines"] == ["Looks right to me."]
    assert bob["trailers"] == ["Reviewed-by: Bob Reviewer <bob@example.org>"]
    assert bob["date"].startswith("20")


def test_a_commit_nobody_posted_has_its_message_and_no_reviews(
    client, web_data: WebData
):
    body = client.get(f"/api/v1/commits/{web_data.unposted}").json()
    assert body["postings"] == [] and body["reviews"] == {}
    assert body["diff"]["files"][0]["path"] == "kernel/quiet.c"


def test_abbreviated_and_symbolic_revisions(client, web_data: WebData):
    assert (
        client.get(f"/api/v1/commits/{web_data.sha[:8]}").json()["commit"]
        == web_data.sha
    )
    assert client.get("/api/v1/commits/main~1").json()["commit"] == web_data.sha


def test_unposted_commit_is_an_explicit_no_match(client, web_data: WebData):
    body = client.get(f"/api/v1/commits/{web_data.unposted}").json()
    assert body["status"] == "no-match"
    assert body["postings"] == []


def test_unknown_commit_is_404(client):
    response = client.get("/api/v1/commits/" + "d" * 40)
    assert response.status_code == 404
    assert error_of(response)["code"] == "unknown-commit"


@pytest.mark.parametrize(
    "rev", ["-rf", "--output=x", "main..HEAD", "HEAD@{1}", "a b", "x" * 201, "a;ls"]
)
def test_revisions_git_would_misread_are_400(client, rev):
    response = client.get("/api/v1/commits/" + quote(rev, safe=""))
    assert response.status_code == 400
    assert error_of(response)["code"] == "bad-revision"


def test_message(client):
    body = client.get("/api/v1/messages/review-1@example.org").json()
    assert body["message_id"] == "review-1@example.org"
    assert body["author"] == {"name": "Bob Reviewer", "email": "bob@example.org"}
    assert {"key": "Reviewed-by", "value": "Bob Reviewer <bob@example.org>"} in body[
        "trailers"
    ]
    assert "Looks right to me." in body["body"]
    assert body["replies"] == 1
    assert body["parent_id"] == "patch-v2@example.org"
    assert body["date_corrected"] is False


def test_message_with_angle_brackets_and_patch_diff(client):
    body = client.get(
        "/api/v1/messages/" + quote("<patch-v2@example.org>", safe="")
    ).json()
    assert body["kind"] == "patch"
    assert body["version"] == 2
    assert body["files"] == ["mm/frob.c"]
    assert "+\treturn 2;" in body["diff"]


def test_bogus_date_is_reported_corrected(client):
    body = client.get("/api/v1/messages/late-1@example.org").json()
    assert body["date_corrected"] is True
    assert body["date_source"] != "header"
    assert body["date"].startswith("2021-03-03")
    assert "1970" in body["date_raw"]


def test_thread_tree(client):
    body = client.get("/api/v1/threads/late-1@example.org").json()
    assert body["root"] == "patch-v2@example.org"
    assert body["focus"] == "late-1@example.org"
    assert [(m["message_id"], m["depth"]) for m in body["messages"]] == [
        ("patch-v2@example.org", 0),
        ("review-1@example.org", 1),
        ("late-1@example.org", 2),
    ]
    assert [m["focus"] for m in body["messages"]] == [False, False, True]
    assert body["total"] == 3 and body["truncated"] is False


def test_thread_with_ghost_parent(client):
    body = client.get("/api/v1/threads/ghost-reply@example.org").json()
    assert body["root_missing"] is True
    assert body["messages"][0]["parent_missing"] is True


@pytest.mark.parametrize(
    "message_id",
    [
        "a b@example.org",
        "tab\t@example.org",
        "nul\x00@x",
        "a<b>@x",
        "x" * 600 + "@example.org",
        "<>",
        " ",
    ],
)
def test_odd_message_ids_are_400(client, message_id):
    for prefix in ("/api/v1/messages/", "/api/v1/threads/"):
        response = client.get(prefix + quote(message_id, safe=""))
        assert response.status_code == 400, message_id
        assert error_of(response)["code"] == "bad-message-id"


def test_missing_message_is_404(client):
    response = client.get("/api/v1/messages/nobody@example.org")
    assert response.status_code == 404
    assert "nobody@example.org" in error_of(response)["message"]


def test_search_pages(client):
    body = client.get("/api/v1/search", params={"q": "s:frob", "limit": 2}).json()
    assert body["total"] >= 4
    assert len(body["hits"]) == 2
    assert {"message_id", "subject", "author", "date", "list", "url", "score"} <= set(
        body["hits"][0]
    )
    second = client.get(
        "/api/v1/search", params={"q": "s:frob", "limit": 2, "offset": 2}
    ).json()
    first_ids = {hit["message_id"] for hit in body["hits"]}
    assert first_ids.isdisjoint(hit["message_id"] for hit in second["hits"])


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"q": ""},
        {"q": "x", "limit": 101},
        {"q": "x", "limit": 0},
        {"q": "x", "offset": -1},
        {"q": "x", "offset": 10**7},
        {"q": "x" * 2001},
        {"q": "x", "sort": "random"},
        {"q": "x", "limit": "ten"},
    ],
)
def test_search_parameters_are_bounded(client, params):
    response = client.get("/api/v1/search", params=params)
    assert response.status_code == 400
    assert error_of(response)["code"] == "bad-request"


def test_bad_query_is_400(client):
    response = client.get("/api/v1/search", params={"q": 's:"unclosed'})
    assert response.status_code == 400
    assert error_of(response)["code"] == "bad-query"


def search_ids(client, query):
    body = client.get("/api/v1/search", params={"q": query, "limit": 100}).json()
    assert body["total"] == len(body["hits"])
    return {hit["message_id"] for hit in body["hits"]}


def test_search_or_and_parentheses_as_the_cli(client):
    carol, eve = search_ids(client, "f:carol"), search_ids(client, "f:eve")
    assert carol == {"late-1@example.org"}
    assert eve == {"evil-1@example.org", "evil-pull@example.org"}
    assert search_ids(client, "f:carol OR f:eve") == carol | eve
    assert search_ids(client, "f:carol or f:eve") == set()  # `or` is a word
    assert search_ids(client, "(f:carol OR f:eve) -is:reply") == eve
    assert search_ids(client, "s:frob AND NOT (f:eve OR is:reply)") == {
        "patch-v1@example.org",
        "patch-v2@example.org",
    }


def test_unbalanced_parenthesis_is_a_bad_query(client):
    response = client.get("/api/v1/search", params={"q": "(f:carol OR f:eve"})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "bad-query"
    assert "unbalanced '(': it is never closed (at column 1)" in error["message"]


def test_stats(client):
    body = client.get("/api/v1/stats").json()
    assert body["by"] == "dir"
    keys = {row["key"]: row for row in body["rows"]}
    assert keys["mm"]["matched"] == 1
    assert keys["kernel"]["matched"] == 0
    assert client.get("/api/v1/stats", params={"by": "method"}).status_code == 200
    response = client.get("/api/v1/stats", params={"by": "nonsense"})
    assert response.status_code == 400
    error_of(response)


def test_stats_groupings_follow_the_api():
    assert set(StatsBy.__args__) == set(GROUPINGS)


def test_openapi_schema(client):
    schema = client.get("/api/v1/openapi.json").json()
    paths = set(schema["paths"])
    assert {
        "/api/v1/commits/{rev}",
        "/api/v1/messages/{message_id}",
        "/api/v1/threads/{message_id}",
        "/api/v1/search",
        "/api/v1/stats",
    } <= paths
    assert not any(
        path.startswith(("/commit", "/thread")) for path in paths
    )  # pages stay out
    assert "ErrorBody" in schema["components"]["schemas"]


def test_unknown_api_route_and_method(client):
    response = client.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not-found"
    response = client.post("/api/v1/search?q=x")
    assert response.status_code == 405
    error_of(response)
