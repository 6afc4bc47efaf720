"""Property-based fuzz of every route: random path segments and query strings (unicode,
control characters, huge values) never produce a 5xx, and API errors keep their shape."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300)
# httpx refuses URLs over 64 KiB, so "huge" stops just short of that once encoded.
HUGE = st.one_of(
    st.integers(min_value=500, max_value=4_000).map(lambda n: "\u00e9<%>" * n),
    st.integers(min_value=2_000, max_value=60_000).map(lambda n: "a" * n),
)
VALUE = st.one_of(
    TEXT,
    HUGE,
    st.sampled_from(
        ["", "-", "..", "/", "%00", "HEAD", "a" * 40, "patch-v2@example.org"]
    ),
)
NUMBER = st.one_of(st.integers(min_value=-(10**12), max_value=10**12).map(str), VALUE)

SEGMENT_ROUTES = (
    "/commit/",
    "/thread/",
    "/raw/",
    "/api/v1/commits/",
    "/api/v1/messages/",
    "/api/v1/threads/",
)
QUERY_ROUTES = (
    "/search",
    "/go",
    "/stats",
    "/stats.svg",
    "/api/v1/search",
    "/api/v1/stats",
    "/",
)
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def check(response, url: str) -> None:
    assert response.status_code < 500, (url[:300], response.text[:300])
    if url.startswith("/api/") and response.status_code >= 400:
        error = response.json()["error"]
        assert error["status"] == response.status_code
        assert isinstance(error["code"], str) and isinstance(error["message"], str)


@FUZZ
@given(route=st.sampled_from(SEGMENT_ROUTES), value=VALUE, raw=st.booleans())
def test_path_segments(client, route, value, raw):
    # Both fully encoded and with "/" left alone (message ids and refs may hold slashes).
    url = route + quote(value, safe="/" if raw else "")
    check(client.get(url, follow_redirects=False), url)


@FUZZ
@given(
    route=st.sampled_from(QUERY_ROUTES),
    names=st.lists(
        st.sampled_from(
            ["q", "limit", "offset", "sort", "page", "by", "depth", "order", "x"]
        ),
        max_size=4,
    ),
    values=st.lists(NUMBER, min_size=4, max_size=4),
)
def test_query_strings(client, route, names, values):
    url = route + "?" + urlencode(list(zip(names, values, strict=False)))
    assume(len(url) < 65_000)  # httpx's own limit; servers cut far earlier
    check(client.get(url, follow_redirects=False), url)
