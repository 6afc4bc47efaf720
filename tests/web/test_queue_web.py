"""/patches, /api/v1/patches, /api/v1/events and the Atom feeds: content on the
queue world (tests.queue_world), escaping on the web tests' hostile mail, and the
feeds read back with an XML parser against Atom's required elements (RFC 4287)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import datetime
from urllib.parse import parse_qs, urlparse

import pytest
from fastapi.testclient import TestClient

from e2g import config
from e2g.api.queue.refresh import refresh
from e2g.api.queue.versions import series_history
from e2g.render.queue import series_json
from e2g.web.app import create_app
from tests.queue_world import FRESH, build
from tests.web.conftest import SCRIPT

ATOM = "{http://www.w3.org/2005/Atom}"

World_ = tuple[config.Settings, dict[str, str]]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World_:
    settings, _, ids = build(tmp_path_factory.mktemp("queue-web"))
    refresh(settings, now=FRESH)
    return settings, ids


@pytest.fixture(scope="module")
def queue_client(world: World_) -> Iterator[TestClient]:
    app = create_app(world[0], repo=None)
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def _atom(body: bytes) -> ET.Element:
    """The feed, parsed, with Atom's required elements checked."""
    root = ET.fromstring(body)
    assert root.tag == f"{ATOM}feed"
    for name in ("id", "title", "updated"):
        assert len(root.findall(f"{ATOM}{name}")) == 1, name
    datetime.fromisoformat(root.findtext(f"{ATOM}updated", "").replace("Z", "+00:00"))
    feed_author = root.find(f"{ATOM}author") is not None
    ids = []
    for entry in root.findall(f"{ATOM}entry"):
        for name in ("id", "title", "updated"):
            assert len(entry.findall(f"{ATOM}{name}")) == 1, name
        ids.append(entry.findtext(f"{ATOM}id"))
        stamp = entry.findtext(f"{ATOM}updated", "")
        assert datetime.fromisoformat(stamp.replace("Z", "+00:00")).tzinfo is not None
        assert feed_author or entry.find(f"{ATOM}author/{ATOM}name") is not None
        link = entry.find(f"{ATOM}link")
        assert link is not None and link.get("href", "").startswith("http")
    assert len(ids) == len(set(ids))
    return root


def test_the_page_lists_series_and_keeps_filters_in_its_links(
    world: World_, queue_client: TestClient
) -> None:
    _, ids = world
    page = queue_client.get("/patches", params={"state": "all", "from": "alice"})
    assert page.status_code == 200
    assert "partly-applied 1 of 2" in page.text
    assert "[PATCH v2] b: set b3" in page.text
    assert 'href="/patches.atom?state=all&amp;from=alice"' in page.text
    only = queue_client.get("/patches", params={"state": "rejected"})
    assert "e: set e3" in only.text and "c: set c3" not in only.text


def test_pages_link_on_with_the_same_filters(queue_client: TestClient) -> None:
    first = queue_client.get("/patches?state=all&list=frob-devel.lists.example.org&n=3")
    assert 'rel="next"' in first.text
    (href,) = re.findall(r'<a href="([^"]*)" rel="next">', first.text)
    query = parse_qs(urlparse(href.replace("&amp;", "&")).query)
    assert query == {
        "state": ["all"],
        "list": ["frob-devel.lists.example.org"],
        "n": ["3"],
        "page": ["2"],
    }
    second = queue_client.get(href.replace("&amp;", "&"))
    assert "page 2 of 4" in second.text


def test_the_json_twin_keeps_the_cli_keys(
    world: World_, queue_client: TestClient
) -> None:
    _, ids = world
    body = queue_client.get("/api/v1/patches", params={"state": "applied"}).json()
    assert {patch["message_id"] for patch in body["patches"]} == {
        ids["applied"],
        ids["series-applied"],
    }
    assert body["total"] == 2
    bad = queue_client.get("/api/v1/patches", params={"state": "merged"})
    assert bad.status_code == 400 and "merged" in bad.json()["error"]["message"]


def test_events_since_an_id(world: World_, queue_client: TestClient) -> None:
    every = queue_client.get("/api/v1/events", params={"limit": 1000}).json()["events"]
    assert every and [e["id"] for e in every] == sorted(e["id"] for e in every)
    later = queue_client.get("/api/v1/events", params={"since": every[-2]["id"]})
    assert [e["id"] for e in later.json()["events"]] == [every[-1]["id"]]


def test_patch_feed_is_atom_and_filters(
    world: World_, queue_client: TestClient
) -> None:
    _, ids = world
    response = queue_client.get(
        "/patches.atom", params={"state": "applied", "from": "alice"}
    )
    assert response.headers["content-type"].startswith("application/atom+xml")
    root = _atom(response.content)
    titles = [entry.findtext(f"{ATOM}title") for entry in root.findall(f"{ATOM}entry")]
    assert titles == ["[applied] [PATCH 1/2] g: set g3", "[applied] [PATCH] a: set a3"]
    empty = _atom(queue_client.get("/patches.atom", params={"from": "nobody"}).content)
    assert empty.findall(f"{ATOM}entry") == []


def test_events_feed_is_atom(queue_client: TestClient) -> None:
    root = _atom(queue_client.get("/events.atom").content)
    kinds = {
        entry.findtext(f"{ATOM}title", "").split(":")[0]
        for entry in root.findall(f"{ATOM}entry")
    }
    assert any(kind.startswith("patch-created") for kind in kinds)


def test_hostile_mail_is_escaped_everywhere(queue_client: TestClient) -> None:
    page = queue_client.get("/patches", params={"state": "all"})
    assert page.status_code == 200
    assert SCRIPT not in page.text and "<b>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    feed = queue_client.get("/patches.atom", params={"state": "all"})
    root = _atom(feed.content)  # parses: the subject's markup is text
    titles = [
        entry.findtext(f"{ATOM}title", "") for entry in root.findall(f"{ATOM}entry")
    ]
    assert any(SCRIPT in title for title in titles)
    assert b"<script>" not in feed.content


def test_the_web_tests_store_renders(client: TestClient) -> None:
    for path in ("/patches?state=all", "/patches.atom?state=all", "/events.atom"):
        assert client.get(path).status_code == 200, path


def test_an_empty_view_renders(queue_client: TestClient) -> None:
    page = queue_client.get("/patches", params={"q": "nothingmatchesthis"})
    assert page.status_code == 200 and "No patch in this view." in page.text


def test_the_series_page_shows_every_version_and_what_changed(
    world: World_, queue_client: TestClient
) -> None:
    settings, ids = world
    for asked in (ids["superseded"], ids["new"]):  # any version answers
        page = queue_client.get(f"/series/{asked}")
        assert page.status_code == 200, page.text
        text = " ".join(page.text.split())
        assert text.count('<section class="version"') == 2
        assert "v1 → v2" in text
        assert "<code>b.c</code> changed: 1 edited; 0 unchanged" in text
        assert re.search(r'>v1</a> <span class="tag">superseded</span>', text)
        assert re.search(r'>v2</a> <span class="tag">new</span>', text)
    # The JSON twin is e2g series --json.
    body = queue_client.get(f"/api/v1/series/{ids['new']}").json()
    assert body == series_json(series_history(settings, ids["new"]))
    assert [version["version"] for version in body["versions"]] == [1, 2]
    (change,) = body["changes"]
    assert change["parts"][0]["from"] == ids["superseded"]


def test_the_series_page_answers_a_reply_and_refuses_what_is_no_series(
    queue_client: TestClient,
) -> None:
    for path in ("/series/nosuch@x", "/api/v1/series/nosuch@x"):
        assert queue_client.get(path).status_code == 404, path
    # A reply two levels below a patch answers for the patch's series.
    reply = queue_client.get("/api/v1/series/d-rr@x").json()
    assert [v["parts"][0]["message_id"] for v in reply["versions"]] == ["d@x"]
    assert queue_client.get("/series/not a message id").status_code == 400


def test_patches_rows_and_patch_threads_link_to_the_series(
    world: World_, queue_client: TestClient
) -> None:
    _, ids = world
    listed = queue_client.get("/patches", params={"state": "all"}).text
    assert f'href="/series/{ids["new"]}"' in listed
    assert f'href="/series/{ids["cover"]}"' in listed  # a series' own row
    thread = queue_client.get(f"/thread/{ids['new']}").text
    assert f'<a href="/series/{ids["new"]}">versions</a>' in thread
    reply = queue_client.get("/thread/d-r@x").text
    assert '<a href="/series/d-r@x">' not in reply  # a reply has no versions link


def test_the_series_page_escapes_hostile_mail(
    world: World_, queue_client: TestClient, client: TestClient
) -> None:
    _, ids = world
    page = queue_client.get(f"/series/{ids['hostile']}")
    assert page.status_code == 200
    assert SCRIPT not in page.text and "<b>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    # A patch the queue does not hold (no diff) renders, and says so.
    empty = client.get("/series/evil-1@example.org")
    assert empty.status_code == 200 and SCRIPT not in empty.text
    assert "No version of this series is in the queue yet" in empty.text


def test_flat_lists_a_row_per_patch_and_keeps_it_in_links(
    queue_client: TestClient,
) -> None:
    grouped = queue_client.get("/patches", params={"state": "all", "n": 3})
    assert '<tr class="series">' in grouped.text
    flat = queue_client.get("/patches", params={"state": "all", "flat": 1, "n": 3})
    assert flat.status_code == 200
    assert '<tr class="series">' not in flat.text
    assert flat.text.count('<a href="/thread/') == 3
    (href,) = re.findall(r'<a href="([^"]*)" rel="next">', flat.text)
    assert parse_qs(urlparse(href.replace("&amp;", "&")).query)["flat"] == ["1"]
    assert 'name="flat" value="1" checked' in flat.text
