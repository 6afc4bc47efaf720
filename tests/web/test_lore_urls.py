"""lore's URL shapes on the web data (tests/web/conftest.py): a list by its short
name or `all`, a message's raw bytes, its thread as an mboxrd.gz that e2g's own
mbox reader splits back into the stored bytes, a search's hits as one, b4's
patch-id query, and the routes e2g already had left alone."""

from __future__ import annotations

import gzip

import pytest

from e2g.api import threads
from e2g.archives.mbox import MBOXRD_SEPARATOR, split_mbox
from tests.web.conftest import WebData

PATCH = "patch-v2@example.org"


def messages_of(body: bytes) -> list[bytes]:
    data = gzip.decompress(body)
    assert data.startswith(MBOXRD_SEPARATOR)
    return [part.data for part in split_mbox([data])]


@pytest.mark.parametrize("name", ["frob-devel", "frob-devel.lists.example.org", "all"])
def test_raw_and_thread_mbox_under_a_list_name(client, web_data: WebData, name):
    stored = threads.raw_message(web_data.settings, PATCH)
    assert stored is not None
    raw = client.get(f"/{name}/{PATCH}/raw")
    assert raw.status_code == 200 and raw.content == stored
    thread = client.get(f"/{name}/{PATCH}/t.mbox.gz")
    assert thread.status_code == 200
    assert thread.headers["content-type"] == "application/gzip"
    found = messages_of(thread.content)
    view = threads.thread_view(web_data.settings, PATCH)
    assert view is not None and len(found) == len(view.nodes) > 1
    assert stored in found  # byte for byte, the mboxrd quoting undone


def test_the_thread_page_under_a_list_name(client):
    for suffix in ("/", "/T/", "/t/"):
        response = client.get(f"/frob-devel/{PATCH}{suffix}")
        assert response.status_code == 200
        assert "mm: frob returns two" in response.text


def test_search_as_mbox_and_as_page(client, web_data: WebData):
    found = client.post("/frob-devel/", params={"q": "frob", "x": "m"})
    assert found.status_code == 200
    assert any(b"mm: frob returns two" in one for one in messages_of(found.content))
    page = client.get("/frob-devel/", params={"q": "frob"}, follow_redirects=False)
    assert page.status_code == 303
    assert page.headers["location"].startswith("/search?q=%28frob%29+list%3A")


def test_b4_asks_for_postings_by_patch_id(client, web_data: WebData):
    from e2g.api.basis import open_store

    with open_store(web_data.settings) as store:
        message = store.message(PATCH)
    assert message is not None and message.patch_id
    query = f"patchid:{message.patch_id} OR patchid:{'0' * 40}"
    found = client.post("/all/", params={"q": query, "x": "m", "t": "1"})
    assert found.status_code == 200
    assert any(f"<{PATCH}>".encode() in one for one in messages_of(found.content))


def test_unknown_lists_and_e2g_routes(client):
    assert client.get(f"/no-such-list/{PATCH}/raw").status_code == 404
    assert client.get(f"/stats/{PATCH}/raw").status_code == 404
    assert client.get(f"/thread/{PATCH}").status_code == 200
    bare = client.get(f"/{PATCH}/", follow_redirects=False)
    assert bare.headers["location"] == f"/all/{PATCH}/"
    assert client.get(f"/r/{PATCH}", follow_redirects=False).status_code == 302


@pytest.mark.parametrize("page", ["series", "metrics", "patches", "stats"])
def test_every_page_of_e2g_is_never_a_list_name(client, page: str) -> None:
    """The pages are read from the routers the app includes, not a list kept by
    hand (that list lacked /series and /metrics, added after it)."""
    assert client.get(f"/{page}/{PATCH}/raw").status_code == 404


@pytest.mark.parametrize(
    "typed",
    [
        f"http://127.0.0.1:8000/all/{PATCH}/t.mbox.gz",
        f"https://lore.kernel.org/frob-devel/{PATCH}/raw",
    ],
)
def test_a_lore_url_in_the_box_lands_on_the_thread(client, typed):
    response = client.get("/go", params={"q": typed}, follow_redirects=False)
    assert response.headers["location"] == f"/thread/{PATCH}#focus"
