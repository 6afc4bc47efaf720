"""Every page renders for every shape its API can return.

The crawl of real data found a template that took the first item of an empty list (a
merge whose commits had no posting: 417 of liburing's 420 merge pages answered 500),
while the tests had rendered the sample's merges only. Here Hypothesis builds the values
the pages are made of, field by field, with empty lists, `None` fields, missing roots,
empty files and hostile text, and each page and its API twin are asked through the real
app (the handlers, the filters, StrictUndefined), the data coming from fakes in place
of git and the store. A page must answer 200 and never carry the mail's markup.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from e2g.api import core as api_core
from e2g.api import metrics as metric_api
from e2g.api import threads
from e2g.api.blame import BlameResult, Review, Run
from e2g.api.queue import listing, versions
from e2g.api.reverse import Applied, SeriesTally, WayBack
from e2g.api.review import CommitText, Excerpt, FileDiff, PostingReview
from e2g.api.token_tree import TreeEntry, TreeListing
from e2g.api.tokens import Span, TokenResult
from e2g.index.store.base import StoreCounts
from e2g.model import Address, DateSource, Kind, Trailer
from e2g.model.links import (
    CommitInfo,
    Evidence,
    InTree,
    LinkResult,
    Posting,
    Rejected,
    Upstream,
)
from e2g.model.stored import StoredMessage
from e2g.web import pages, rest
from e2g.web.app import create_app
from e2g.web.context import ApiLinking, linking

from .conftest import WebData

HOSTILE = "<script>x</script>"
SHA = "c" * 40
SHAPES = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --- the values pages are made of ----------------------------------------------------

texts = st.one_of(
    st.just(""),
    st.just(HOSTILE),
    st.text(max_size=30),
    st.text(alphabet="<>&\"' \n\tab\u00e9\u2603\U0001f600", max_size=20),
)
ids = st.one_of(
    st.just("a@example.org"),
    st.just('p"1@x'),
    st.from_regex(r"[a-z0-9.]{1,12}@[a-z]{1,8}\.org", fullmatch=True),
)
shas = st.one_of(st.just(SHA), st.from_regex(r"[0-9a-f]{40}", fullmatch=True))
dates = st.datetimes(
    min_value=datetime(1970, 1, 1),  # noqa: DTZ001 - st.datetimes takes naive bounds
    max_value=datetime(2100, 1, 1),  # noqa: DTZ001
    timezones=st.just(UTC),
)
small = st.integers(min_value=0, max_value=5)
addresses = st.builds(Address, texts, texts)


def tuples(
    items: st.SearchStrategy[Any], most: int = 3
) -> st.SearchStrategy[tuple[Any, ...]]:
    return st.lists(items, max_size=most).map(tuple)


evidence = st.builds(Evidence, texts, texts, st.floats(0, 1))
postings = st.builds(
    Posting,
    message_id=ids,
    subject=texts,
    date=st.none() | dates,
    author=addresses,
    lists=tuples(texts),
    version=st.integers(min_value=0, max_value=9),
    kind=st.sampled_from([kind.value for kind in Kind]),
    applied=st.booleans(),
    method=st.sampled_from(["trailer", "patch-id", "subject", "quoted", "thread", ""]),
    score=st.floats(0, 1),
    url=st.none() | st.just("https://lore.example/x/") | st.just("javascript:alert(1)"),
    thread_root=ids,
    replies=small,
    participants=tuples(texts),
    reviewers=tuples(texts),
    evidence=tuples(evidence),
    date_source=st.sampled_from(list(DateSource)),
    date_raw=texts,
)
commits = st.builds(
    CommitInfo,
    sha=shas,
    subject=texts,
    author=addresses,
    author_date=dates,
    commit_date=dates,
    files=tuples(texts),
)
trees = st.builds(
    InTree,
    repo=texts,
    tree=st.none() | texts,
    branch=st.none() | texts,
    commit=shas,
    how=texts,
    release=st.none() | texts,
    merge=st.none() | shas,
)
upstreams = st.none() | st.builds(
    Upstream, commit=shas, repo=texts, how=texts, tree=st.none() | texts, subject=texts
)
rejected = st.builds(Rejected, ids, texts, st.floats(0, 1), texts)


def link_results(
    merged: st.SearchStrategy[tuple[LinkResult, ...]],
) -> st.SearchStrategy[LinkResult]:
    return st.builds(
        LinkResult,
        commit=commits,
        postings=tuples(postings),
        rejected=tuples(rejected),
        note=texts,
        upstream=upstreams,
        trees=tuples(trees),
        own=tuples(postings),
        merged=merged,
        merge=st.booleans(),
    )


# A merge brings in commits that are themselves results (with or without postings).
results = link_results(tuples(link_results(st.just(())), most=4))
file_diffs = st.builds(
    FileDiff,
    texts,
    small,
    small,
    st.booleans(),
    st.none()
    | tuples(
        st.sampled_from(
            ["diff --git a/x b/x", "+a", "-b", " c", HOSTILE, "@@ -1 +1 @@"]
        ),
        6,
    ),
)
commit_texts = st.none() | st.builds(
    CommitText,
    sha=shas,
    message=texts,
    files=tuples(file_diffs),
    more_files=small,
    cut=st.booleans(),
)
excerpts = st.builds(
    Excerpt,
    message_id=ids,
    author=texts,
    date=st.none() | dates,
    lines=tuples(texts),
    reviews=tuples(texts),
)
reviews = st.builds(
    Review,
    commit=commits,
    status=st.sampled_from(
        ["matched", "no-match", "outside-archive", "not-committed", "not-matched"]
    ),
    postings=tuples(postings),
    trees=tuples(texts),
)
runs = st.builds(
    Run,
    start=st.integers(1, 5),
    end=st.integers(1, 9),
    review=reviews,
    lines=tuples(texts, 4),
)
blames = st.builds(
    BlameResult,
    path=texts,
    rev=st.none() | shas,
    runs=tuples(runs, 4),
    total=st.integers(0, 3000),
)


@st.composite
def token_results(draw: st.DrawFn) -> TokenResult:
    """A file's token blame: lines, spans on them naming reviewed commits; an empty
    file (no lines, no spans) among them."""
    lines = draw(tuples(texts, 5))
    found = draw(tuples(reviews, 3))
    by_sha = {review.commit.sha: review for review in found}
    spans: list[Span] = []
    for number, text in enumerate(lines, start=1):
        if by_sha and text and draw(st.booleans()):
            sha = draw(st.sampled_from(sorted(by_sha)))
            spans.append(Span(number, 1, text, sha))
    return TokenResult(
        path=draw(texts),
        rev=draw(st.none() | shas),
        lines=lines,
        first=1,
        total=len(lines) + draw(st.integers(0, 2000)),
        spans=tuple(spans),
        reviews=by_sha,
    )


verdict_counts = st.dictionaries(
    st.sampled_from(["reviewed", "not-posted", "merge", HOSTILE]), small, max_size=3
)
tree_entries = st.builds(
    TreeEntry,
    name=texts,
    path=texts,
    kind=st.sampled_from(["dir", "file"]),
    files=small,
    warm=small,
    tokens=st.integers(0, 10**6),
    commits=small,
    reviewed=st.integers(0, 10**6),
    by_verdict=verdict_counts,
    skipped=st.none() | texts,
)


@st.composite
def tree_listings(draw: st.DrawFn) -> TreeListing:
    """A directory of the tree: empty or not, warm or never warmed, on any page."""
    entries = draw(tuples(tree_entries, 4))
    pages = draw(st.integers(1, 3))
    return TreeListing(
        rev=draw(shas),
        path=draw(st.just("") | texts),
        total=draw(tree_entries),
        entries=entries,
        page=draw(st.integers(1, pages)),
        pages=pages,
        listed=len(entries) + draw(small),
        warmed=draw(st.none() | shas),
        judged=draw(st.booleans()),
    )


stored = st.builds(
    StoredMessage,
    seq=st.integers(1, 10**6),
    message_id=ids,
    synthetic=st.booleans(),
    subject=texts,
    subject_key=texts,
    version=st.integers(0, 9),
    part=st.none() | small,
    total=st.none() | small,
    rfc=st.booleans(),
    resend=st.booleans(),
    author_name=texts,
    author_email=texts,
    patch_author_name=st.none() | texts,
    patch_author_email=st.none() | texts,
    date=st.none() | dates,
    date_raw=texts,
    date_source=st.sampled_from(list(DateSource)),
    received_at=st.none() | dates,
    parent_id=st.none() | ids,
    thread_root=ids,
    kind=st.sampled_from(list(Kind)),
    pull_url=st.none() | texts | st.just("javascript:alert(1)"),
    pull_ref=st.none() | texts,
    patch_id=st.none() | st.just("0" * 40),
    added=small,
    removed=small,
    series_id=st.none() | small,
    list_id=st.none() | texts,
    lists=tuples(texts),
    files=tuples(texts),
)
blocks = st.builds(
    threads.Block, st.sampled_from(["text", "quote", "trailer"]), texts, small
)
nodes = st.builds(
    threads.ThreadNode,
    message=stored,
    depth=st.integers(0, 40),
    body=texts,
    blocks=tuples(blocks),
    trailers=tuples(
        st.builds(Trailer, st.sampled_from(["Reviewed-by", "Acked-by", "Link"]), texts)
    ),
    diff=st.none() | texts,
    diff_truncated=st.booleans(),
    shown=st.booleans(),
    parent_missing=st.booleans(),
    loop=st.booleans(),
    focus=st.booleans(),
)
thread_views = st.builds(
    threads.ThreadView,
    root=ids,
    focus=ids,
    nodes=tuples(nodes, 4),
    total=st.integers(0, 5000),
    root_missing=st.booleans(),
)
applied = st.builds(
    Applied,
    sha=shas,
    repo=texts,
    subject=texts,
    date=dates,
    method=texts,
    score=st.floats(0, 1),
    posting=ids,
    posting_version=small,
)
way_back_plain = st.builds(
    WayBack,
    message_id=ids,
    subject=texts,
    version=small,
    status=st.sampled_from(
        ["applied", "superseded", "not applied", "unknown", "partly applied"]
    ),
    commits=tuples(applied),
    note=texts,
    series=st.none(),
    asked=st.none() | ids,
    trees=tuples(trees),
)
way_backs = (
    st.none()
    | way_back_plain
    | st.builds(
        lambda answer, cover, parts: answer._replace(series=SeriesTally(cover, parts)),
        way_back_plain,
        ids,
        tuples(way_back_plain, 4),
    )
)
busy = st.builds(threads.BusyThread, root=stored, messages=small)
recent = st.builds(
    threads.RecentCommit,
    sha=shas,
    subject=texts,
    author_name=texts,
    commit_date=st.none() | dates,
    status=st.sampled_from(["matched", "no-match"]),
    method=st.none() | texts,
    trees=tuples(texts),
)
counts = st.none() | st.builds(StoreCounts, *([small] * 12))
queue_states = st.sampled_from(
    [*listing.states.STATES, listing.states.PARTLY_APPLIED, ""]
)
patch_views = st.builds(
    listing.PatchView,
    message_id=ids,
    subject=texts,
    author_name=texts,
    author_email=texts,
    date=st.none() | dates,
    list=texts,
    series=ids,
    version=st.integers(0, 9),
    part=st.none() | st.just("2/5") | texts,
    state=queue_states,
    mail_state=queue_states,
    untracked=texts,
    commits=tuples(
        st.builds(
            listing.Commit,
            commit=shas,
            repo=texts,
            tree=st.none() | texts,
            branch=st.none() | texts,
            release=st.none() | texts,
        )
    ),
    superseded_by=st.none() | ids,
    superseded_applied=st.booleans(),
    reviews=tuples(st.builds(listing.Review, who=texts, tag=texts)),
    replies=small,
    last_activity=st.none() | dates,
    note=texts,
)
series_versions = st.builds(
    versions.SeriesVersion,
    message_id=ids,
    version=st.integers(0, 9),
    subject=texts,
    date=st.none() | dates,
    state=queue_states,
    tally=st.just("") | st.just("1 of 2") | texts,
    parts=tuples(patch_views),
)
file_changes = st.builds(
    versions.FileChange,
    path=texts,
    change=st.sampled_from(["same", "changed", "added", "dropped", ""]),
    identical=small,
    edited=small,
    added=small,
    dropped=small,
)
part_changes = st.builds(
    versions.PartChange,
    part=texts,
    before=st.none() | ids,
    after=st.none() | ids,
    files=tuples(file_changes, 4),
)
series_histories = st.builds(
    versions.SeriesHistory,
    asked=ids,
    versions=tuples(series_versions),
    changes=tuples(
        st.builds(
            versions.VersionChange,
            before=st.integers(0, 9),
            after=st.integers(0, 9),
            parts=tuples(part_changes),
        )
    ),
)


# --- the app, with fakes where git and the store would answer ---------------------------


class Shapes(ApiLinking):
    """The real renderers (review cells, JSON shapes) over generated results."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def link(self, settings: Any, rev: str, *, repo: Any) -> LinkResult:
        return self.values["result"]  # type: ignore[no-any-return]

    def commit_text(self, sha: str, *, repo: Any) -> CommitText | None:
        return self.values["text"]  # type: ignore[no-any-return]

    def posting_reviews(self, settings: Any, postings: Any) -> dict[str, PostingReview]:
        return self.values["reviews"]  # type: ignore[no-any-return]

    def blame(
        self, settings: Any, path: str, rev: str, *, repo: Any, page: Any
    ) -> BlameResult:
        return self.values["blame"]  # type: ignore[no-any-return]

    def tokens(
        self, settings: Any, path: str, rev: str, *, repo: Any, page: Any
    ) -> TokenResult:
        return self.values["tokens"]  # type: ignore[no-any-return]

    def tree(
        self, settings: Any, path: str, rev: str, *, repo: Any, page: Any
    ) -> TreeListing:
        return self.values["tree"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def shaped(web_data: WebData) -> Iterator[tuple[TestClient, Shapes]]:
    fake = Shapes()
    app = create_app(web_data.settings, repo=web_data.repo, cache_entries=0)
    app.dependency_overrides[linking] = lambda: fake
    with pytest.MonkeyPatch.context() as patch:
        # The audit's verdicts read git: none for generated commits.
        patch.setattr(pages, "commit_verdict", lambda context, sha: None)
        patch.setattr(pages, "verdicts_of", lambda context, shas: {})
        yield TestClient(app), fake


def ask(client: TestClient, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.text[-800:])
    text = response.text
    if response.headers["content-type"].startswith("text/html"):
        assert "<script>x" not in text  # the mail's markup never reaches the page
    return text


@SHAPES
@given(result=results, text=commit_texts, excerpt=tuples(excerpts), more=small)
def test_a_commit_page_for_every_link_result(
    shaped: tuple[TestClient, Shapes],
    result: LinkResult,
    text: CommitText | None,
    excerpt: tuple[Excerpt, ...],
    more: int,
) -> None:
    client, fake = shaped
    fake.values.update(
        result=result,
        text=text,
        reviews={
            posting.message_id: PostingReview(posting.message_id, excerpt, more)
            for posting in result.postings[:1]
        },
    )
    ask(client, f"/commit/{SHA}")
    ask(client, f"/commit/{SHA}?order=series")
    ask(client, f"/api/v1/commits/{SHA}")


@SHAPES
@given(found=blames)
def test_a_blame_page_for_every_blame(
    shaped: tuple[TestClient, Shapes], found: BlameResult
) -> None:
    client, fake = shaped
    fake.values["blame"] = found
    ask(client, "/blame/HEAD/mm/frob.c")
    ask(client, "/api/v1/blame/HEAD/mm/frob.c")


@SHAPES
@given(found=token_results(), by=st.sampled_from(["commit", "author", "age"]))
def test_a_token_page_for_every_token_blame(
    shaped: tuple[TestClient, Shapes], found: TokenResult, by: str
) -> None:
    client, fake = shaped
    fake.values["tokens"] = found
    ask(client, f"/tokens/HEAD/mm/frob.c?by={by}")
    ask(client, "/api/v1/tokens/HEAD/mm/frob.c")


@SHAPES
@given(found=tree_listings())
def test_a_tree_page_for_every_directory(
    shaped: tuple[TestClient, Shapes], found: TreeListing
) -> None:
    client, fake = shaped
    fake.values["tree"] = found
    ask(client, "/tree/HEAD")
    ask(client, "/tree/HEAD/mm?page=2")
    ask(client, "/api/v1/tree/HEAD/mm")


@SHAPES
@given(view=thread_views, answer=way_backs)
def test_a_thread_page_for_every_thread(
    shaped: tuple[TestClient, Shapes], view: threads.ThreadView, answer: WayBack | None
) -> None:
    client, _ = shaped
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(threads, "thread_view", lambda settings, wanted: view)
        patch.setattr(pages, "applied_to", lambda context, wanted: answer)
        patch.setattr(rest, "applied_to", lambda context, wanted: answer)
        ask(client, "/thread/a@example.org")
        ask(client, "/api/v1/threads/a@example.org")
        ask(client, "/api/v1/messages/patch-v2@example.org")


@SHAPES
@given(found=counts, discussed=tuples(busy), commits_seen=tuples(recent))
def test_the_front_page_for_every_store(
    shaped: tuple[TestClient, Shapes],
    found: StoreCounts | None,
    discussed: tuple[threads.BusyThread, ...],
    commits_seen: tuple[threads.RecentCommit, ...],
) -> None:
    client, _ = shaped

    def counted(settings: Any) -> StoreCounts:
        if found is None:
            from e2g import errors

            raise errors.EmptyStore("the store is empty")
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(api_core, "counts", counted)
        patch.setattr(threads, "discussed_threads", lambda settings: list(discussed))
        patch.setattr(
            threads, "recent_commits", lambda settings, **_: list(commits_seen)
        )
        ask(client, "/")


@SHAPES
@given(history=series_histories)
def test_a_series_page_for_every_history(
    shaped: tuple[TestClient, Shapes], history: versions.SeriesHistory
) -> None:
    client, _ = shaped
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(versions, "series_history", lambda settings, wanted: history)
        ask(client, "/series/a@example.org")
        ask(client, "/api/v1/series/a@example.org")


metric_rows = st.builds(
    metric_api.MetricRow,
    metric=st.sampled_from(metric_api.METRICS),
    period=st.none() | st.sampled_from(["2021", "2021-Q3", "2021-07"]),
    group=st.none() | texts | st.sampled_from(["(top)", "(none)", "mm/slab"]),
    n=small,
    unit=st.sampled_from(["", "hours", "days", "versions", "reviews per month"]),
    total=small,
    median=st.none() | st.floats(0, 1e6),
    p25=st.none() | st.floats(0, 1e6),
    p75=st.none() | st.floats(0, 1e6),
    numerator=small,
    denominator=small,
    value=st.none() | st.floats(0, 10),
    p95=st.none() | st.floats(0, 1e6),
    other_domain=st.none() | small,
)


@SHAPES
@given(
    found=st.lists(metric_rows, max_size=12),
    by=st.sampled_from(["", "month", "year"]),
    group=st.sampled_from(["", "dir", "person", "list"]),
)
def test_the_metrics_page_for_every_set_of_rows(
    shaped: tuple[TestClient, Shapes],
    found: list[metric_api.MetricRow],
    by: str,
    group: str,
) -> None:
    client, _ = shaped
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(metric_api, "metrics", lambda settings, query: found)
        page = ask(client, f"/metrics?by={by}&group={group}&list=%3Cb%3E")
        assert "<b>" not in page
        ask(client, f"/metrics.svg?by={by}&group={group}")
        ask(client, f"/api/v1/metrics?by={by}&group={group}")
