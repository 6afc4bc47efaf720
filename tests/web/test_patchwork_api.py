"""Patchwork's REST API on the web data (tests/web/conftest.py): the shapes of
`patches/` and `series/` checked field by field against Patchwork's published
schema, filters, pagination's Link header, ids that name the same things again,
and writes refused."""

from __future__ import annotations

import re

import pytest

from tests.web.conftest import WebData

API = "/api/1.3"
URI = re.compile(r"https?://\S+")
DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")

# The fields e2g fills and their types, from Patchwork's OpenAPI file
# docs/api/schemas/v1.3/patchwork.yaml (getpatchwork/patchwork): PatchList,
# PatchDetail, Series, and the embedded ProjectEmbedded, PersonEmbedded,
# SeriesEmbedded, PatchEmbedded and CoverEmbedded. "uri" is a string URL,
# "date" Patchwork's iso8601 (no offset), a tuple allows each type named.
PROJECT = {
    "id": int, "url": "uri", "name": str, "link_name": str, "list_id": str,
    "list_email": str, "web_url": "uri", "list_archive_url": (type(None), "uri"),
    "list_archive_url_format": (type(None), str), "commit_url_format": str,
}  # fmt: skip
PERSON = {"id": int, "url": "uri", "name": str, "email": str}
SERIES_EMBEDDED = {
    "id": int, "url": "uri", "web_url": "uri", "name": (type(None), str),
    "date": "date", "version": int, "mbox": "uri",
}  # fmt: skip
SUBMISSION_EMBEDDED = {
    "id": int, "url": "uri", "web_url": "uri", "msgid": str,
    "list_archive_url": (type(None), str), "date": "date", "name": str, "mbox": "uri",
}  # fmt: skip
PATCH_LIST = SUBMISSION_EMBEDDED | {
    "project": PROJECT, "commit_ref": (type(None), str), "pull_url": (type(None), str),
    "state": str, "archived": bool, "hash": (type(None), str), "submitter": PERSON,
    "delegate": (type(None),), "series": [SERIES_EMBEDDED], "comments": "uri",
    "check": str, "checks": "uri", "tags": dict, "related": list,
}  # fmt: skip
PATCH_DETAIL = PATCH_LIST | {
    "headers": dict, "content": str, "diff": (type(None), str), "prefixes": list,
}  # fmt: skip
SERIES = SERIES_EMBEDDED | {
    "project": PROJECT, "submitter": PERSON, "total": int, "received_total": int,
    "received_all": bool, "cover_letter": (type(None), SUBMISSION_EMBEDDED),
    "patches": [SUBMISSION_EMBEDDED],
}  # fmt: skip
CHECKS = {"pending", "success", "warning", "fail"}


def conforms(value, expected, where="") -> list[str]:
    """What in `value` breaks `expected` (a dict of fields, a one-item list of
    shapes, a type, "uri", "date", or a tuple of choices)."""
    if isinstance(expected, tuple):
        found = [conforms(value, one, where) for one in expected]
        return [] if any(not one for one in found) else found[0]
    if expected == "uri":
        ok = isinstance(value, str) and URI.fullmatch(value)
        return [] if ok else [f"{where}: not a URI: {value!r}"]
    if expected == "date":
        ok = isinstance(value, str) and DATE.fullmatch(value)
        return [] if ok else [f"{where}: not a date: {value!r}"]
    if isinstance(expected, list):
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        return [p for item in value for p in conforms(item, expected[0], where + "[]")]
    if isinstance(expected, dict):
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        return [
            problem
            for name, shape in expected.items()
            for problem in (
                conforms(value[name], shape, f"{where}.{name}")
                if name in value
                else [f"{where}.{name}: missing"]
            )
        ]
    if expected is int and isinstance(value, bool):
        return [f"{where}: a bool, not an int"]
    return [] if isinstance(value, expected) else [f"{where}: {value!r} not {expected}"]


def test_patches_and_series_have_patchworks_shapes(client):
    patches = client.get(f"{API}/patches/").json()
    assert patches
    for patch in patches:
        assert conforms(patch, PATCH_LIST) == []
        assert patch["check"] in CHECKS and patch["msgid"].startswith("<")
    detail = client.get(f"{API}/patches/{patches[0]['id']}/").json()
    assert conforms(detail, PATCH_DETAIL) == []
    assert detail["diff"].startswith("diff --git") and "Message-ID" in detail["headers"]
    series = client.get(f"{API}/series/").json()
    assert series
    for one in series:
        assert conforms(one, SERIES) == []
    assert conforms(client.get(f"{API}/series/{series[0]['id']}/").json(), SERIES) == []


def test_filters_and_ids(client, web_data: WebData):
    every = client.get(f"{API}/patches/", params={"project": "frob-devel"}).json()
    assert {patch["project"]["link_name"] for patch in every} == {"frob-devel"}
    one = every[0]
    by_msgid = client.get(
        f"{API}/patches/", params={"msgid": one["msgid"].strip("<>")}
    ).json()
    assert [patch["id"] for patch in by_msgid] == [one["id"]]
    by_person = client.get(
        f"{API}/patches/", params={"submitter": one["submitter"]["id"]}
    ).json()
    assert one["id"] in [patch["id"] for patch in by_person]
    person = client.get(f"{API}/people/{one['submitter']['id']}/").json()
    assert person["email"] == one["submitter"]["email"]
    series_id = one["series"][0]["id"]
    in_series = client.get(f"{API}/patches/", params={"series": series_id}).json()
    assert one["id"] in [patch["id"] for patch in in_series]
    assert client.get(f"{API}/patches/", params={"archived": "true"}).json() == []
    assert client.get(f"{API}/patches/", params={"state": "nonsense"}).json() == []
    states = {patch["state"] for patch in client.get(f"{API}/patches/").json()}
    assert states <= {"new", "under-review", "accepted", "rejected", "superseded",
                      "not-applicable", "deferred"}  # fmt: skip
    project = client.get(f"{API}/projects/").json()[0]
    assert client.get(f"{API}/projects/{project['id']}/").json() == project


def test_pages_and_link_header(client):
    every = client.get(f"{API}/patches/").json()
    if len(every) < 2:
        pytest.skip("the web data has one patch")
    first = client.get(f"{API}/patches/", params={"per_page": 1})
    assert 'rel="next"' in first.headers["link"]
    second = client.get(f"{API}/patches/", params={"per_page": 1, "page": 2})
    assert 'rel="prev"' in second.headers["link"]
    assert [*first.json(), *second.json()] == every[:2]


def test_mboxes_and_the_api_root(client):
    patch = client.get(f"{API}/patches/").json()[0]
    mbox = client.get(f"{API}/patches/{patch['id']}/mbox/")
    assert mbox.status_code == 200 and mbox.content.startswith(b"From mboxrd@z ")
    assert "filename=" in mbox.headers["content-disposition"]
    series = client.get(f"{API}/series/{patch['series'][0]['id']}/mbox/")
    assert patch["msgid"].encode() in series.content
    assert set(client.get("/api/").json()) >= {"patches", "series", "projects"}
    assert client.get("/api/patches/").json() == client.get(f"{API}/patches/").json()


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_writes_are_refused(client, method):
    response = client.request(method, f"{API}/patches/1/", json={"state": "accepted"})
    assert response.status_code == 405
    assert "read-only" in response.json()["error"]["message"]


def test_unknown_ids_are_404(client):
    for path in ("patches/999999/", "series/999999/", "covers/1/", "people/999999/"):
        assert client.get(f"{API}/{path}").status_code == 404
