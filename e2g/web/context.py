"""What every request handler needs: settings, the repo, templates, and the link cache.

`WebContext` lives on `app.state`; handlers get it and the `Linking` functions through
FastAPI dependencies, so a rendering test can swap `linking` for a fake.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple, Protocol, TypeVar

import jinja2
from fastapi import Query, Request

import e2g.render
from e2g import errors
from e2g.config import Settings
from e2g.model.links import LinkResult, Posting
from e2g.web.render import is_full_sha

if TYPE_CHECKING:
    from e2g.api.blame import BlameResult, Review, Run
    from e2g.api.reverse import WayBack
    from e2g.api.review import CommitText, PostingReview
    from e2g.api.token_tree import TreeListing
    from e2g.api.tokens import Span, TokenResult

Result = TypeVar("Result")  # what a cached page is made from
CACHE_ENTRIES = 512
STATS_SECONDS = 60  # stats read the whole repo: recompute at most once a minute

StatsBy = Literal["dir", "list", "year", "method", "tree"]  # e2g.api.stats.GROUPINGS
StatsDepth = Annotated[int, Query(ge=1, le=8)]


class Linking(Protocol):
    """The slice of `e2g.api` that runs git and the matcher."""

    def link(self, settings: Settings, rev: str, *, repo: Path) -> LinkResult: ...

    def link_json(self, result: LinkResult) -> dict[str, Any]: ...

    def stats(self, settings: Settings, *, repo: Path, by: str, depth: int) -> Any: ...

    def render_svg(self, result: Any) -> str: ...

    def commit_text(self, sha: str, *, repo: Path) -> CommitText | None: ...

    def posting_reviews(
        self, settings: Settings, postings: Sequence[Posting]
    ) -> dict[str, PostingReview]: ...

    def blame(
        self, settings: Settings, path: str, rev: str, *, repo: Path, page: int | None
    ) -> BlameResult: ...

    def review_cell(self, review: Review) -> str: ...

    def blame_json(self, run: Run) -> dict[str, Any]: ...

    def tokens(
        self, settings: Settings, path: str, rev: str, *, repo: Path, page: int | None
    ) -> TokenResult: ...

    def token_span_json(self, span: Span, review: Review) -> dict[str, Any]: ...

    def tree(
        self, settings: Settings, path: str, rev: str, *, repo: Path, page: int
    ) -> TreeListing: ...

    def tree_json(self, listing: TreeListing) -> dict[str, Any]: ...


class ApiLinking:
    """The real thing, imported on first use: it pulls in the git reader and the matcher.
    The shapes are e2g.render's, as the CLI's."""

    def link(self, settings: Settings, rev: str, *, repo: Path) -> LinkResult:
        from e2g.api.link import link

        return link(settings, rev, repo=repo)

    def link_json(self, result: LinkResult) -> dict[str, Any]:
        return e2g.render.link_json(result)

    def stats(self, settings: Settings, *, repo: Path, by: str, depth: int) -> Any:
        from e2g.api.stats import stats

        return stats(settings, repo=repo, by=by, depth=depth)

    def render_svg(self, result: Any) -> str:
        return e2g.render.render_svg(result)

    def commit_text(self, sha: str, *, repo: Path) -> CommitText | None:
        from e2g.api.review import commit_text

        return commit_text(sha, repo=repo)

    def posting_reviews(
        self, settings: Settings, postings: Sequence[Posting]
    ) -> dict[str, PostingReview]:
        from e2g.api.review import posting_reviews

        return posting_reviews(settings, postings)

    def blame(
        self, settings: Settings, path: str, rev: str, *, repo: Path, page: int | None
    ) -> BlameResult:
        """Read-only, as every page: commits `e2g match` never answered are shown
        as not matched yet, never matched and stored here."""
        from e2g.api.blame import blame

        return blame(settings, path, rev, repo=repo, page=page, match=False)

    def review_cell(self, review: Review) -> str:
        return e2g.render.review_cell(review)

    def blame_json(self, run: Run) -> dict[str, Any]:
        return e2g.render.blame_json(run)

    def tokens(
        self, settings: Settings, path: str, rev: str, *, repo: Path, page: int | None
    ) -> TokenResult:
        """Token blame, read-only as line blame: nothing is matched or stored."""
        from e2g.api.tokens import token_blame

        return token_blame(settings, path, rev, repo=repo, page=page, match=False)

    def token_span_json(self, span: Span, review: Review) -> dict[str, Any]:
        return e2g.render.token_span_json(span, review)

    def tree(
        self, settings: Settings, path: str, rev: str, *, repo: Path, page: int
    ) -> TreeListing:
        from e2g.api.token_tree import tree_listing

        return tree_listing(settings, path, rev, repo=repo, page=page)

    def tree_json(self, listing: TreeListing) -> dict[str, Any]:
        return e2g.render.tree_json(listing)


def store_signature(settings: Settings) -> tuple[int, ...]:
    """Changes whenever an ingest commits: the store file and its WAL, sizes and times."""
    signature: list[int] = []
    for path in (settings.store_path, Path(f"{settings.store_path}-wal")):
        try:
            found = path.stat()
        except OSError:
            signature.extend((0, 0))
        else:
            signature.extend((found.st_mtime_ns, found.st_size))
    return tuple(signature)


class ResultCache:
    """A small LRU of results that stay valid while the store is unchanged.

    Keys must name immutable things (a full commit sha, stats parameters): a branch name
    moves, so callers cache under the sha the result reports.
    """

    def __init__(self, entries: int = CACHE_ENTRIES) -> None:
        self._entries = entries
        self._items: OrderedDict[tuple[object, ...], tuple[tuple[int, ...], object]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...], signature: tuple[int, ...]) -> object | None:
        with self._lock:
            found = self._items.get(key)
            if found is None or found[0] != signature:
                return None
            self._items.move_to_end(key)
            return found[1]

    def put(
        self, key: tuple[object, ...], signature: tuple[int, ...], value: object
    ) -> None:
        if self._entries <= 0:
            return
        with self._lock:
            self._items[key] = (signature, value)
            self._items.move_to_end(key)
            while len(self._items) > self._entries:
                self._items.popitem(last=False)


class WebContext(NamedTuple):
    settings: Settings
    # None: served outside any git repository. Mail, threads, search and the way
    # back need none; the pages of commits (and their blame) say that none is set.
    repository: Path | None
    templates: jinja2.Environment
    cache: ResultCache
    stylesheet: bytes
    script: bytes  # static/tokens.js, the one script: the token page's panel

    @property
    def repo(self) -> Path:
        """The git repository, for the pages that read commits."""
        if self.repository is None:
            raise errors.RepoError(
                "no git repository is configured: e2g serve was started outside one; "
                "start it with -C REPO to show commits, their blame and their tokens"
            )
        return self.repository

    def cached(self, key: tuple[object, ...], compute: Callable[[], object]) -> object:
        signature = store_signature(self.settings)
        found = self.cache.get(key, signature)
        if found is None:
            found = compute()
            self.cache.put(key, signature, found)
        return found


def web_context(request: Request) -> WebContext:
    context: WebContext = request.app.state.e2g
    return context


def linking() -> Linking:
    """A dependency: unit tests of rendering override it with a fake."""
    return ApiLinking()


def link_result(context: WebContext, links: Linking, rev: str) -> LinkResult:
    """`link(rev)`, cached by full sha while the store is unchanged."""
    # Taken before linking: if an ingest commits meanwhile, the entry is already stale.
    signature = store_signature(context.settings)
    if is_full_sha(rev):
        found = context.cache.get(("link", rev), signature)
        if isinstance(found, LinkResult):
            return found
    result = links.link(context.settings, rev, repo=context.repo)
    context.cache.put(("link", result.commit.sha), signature, result)
    return result


class CommitPage(NamedTuple):
    """What the commit page shows besides the link result: the commit's message and
    diff, and excerpts of the replies to each posting."""

    text: CommitText | None
    reviews: dict[str, PostingReview]


def commit_details(
    context: WebContext, links: Linking, result: LinkResult
) -> CommitPage:
    """The commit's text and its postings' reviews, cached by full sha."""

    def compute() -> CommitPage:
        return CommitPage(
            text=links.commit_text(result.commit.sha, repo=context.repo),
            reviews=links.posting_reviews(context.settings, result.postings),
        )

    found = context.cached(("commit-page", result.commit.sha), compute)
    assert isinstance(found, CommitPage)
    return found


def blame_result(
    context: WebContext, links: Linking, path: str, rev: str, page: int | None
) -> BlameResult:
    """`blame(path, rev)` page `page` (None: the whole file), cached by full sha
    while the store is unchanged."""
    from e2g.api.blame import BlameResult

    def compute() -> BlameResult:
        return links.blame(context.settings, path, rev, repo=context.repo, page=page)

    return _by_full_sha(context, ("blame", rev, path, page), compute, BlameResult)


def token_result(
    context: WebContext, links: Linking, path: str, rev: str, page: int | None
) -> TokenResult:
    """`token_blame(path, rev)` page `page` (None: the whole file), cached by full
    sha while the store is unchanged."""
    from e2g.api.tokens import TokenResult

    def compute() -> TokenResult:
        return links.tokens(context.settings, path, rev, repo=context.repo, page=page)

    return _by_full_sha(context, ("tokens", rev, path, page), compute, TokenResult)


def tree_result(
    context: WebContext, links: Linking, path: str, rev: str, page: int
) -> TreeListing:
    """`tree_listing(path, rev)` page `page`, cached by full sha while the store is
    unchanged and for a minute (a warm under way adds files)."""
    from e2g.api.token_tree import TreeListing

    bucket = int(time.monotonic() // STATS_SECONDS)

    def compute() -> TreeListing:
        return links.tree(context.settings, path, rev, repo=context.repo, page=page)

    if not is_full_sha(rev):
        return compute()
    found = context.cached(("tree", rev, path, page, bucket), compute)
    assert isinstance(found, TreeListing)
    return found


def _by_full_sha(
    context: WebContext,
    key: tuple[str, str, str, int | None],
    compute: Callable[[], Result],
    kind: type[Result],
) -> Result:
    """`compute()`, cached under `key` while the store is unchanged when `key`
    names its revision by full sha (a branch name moves: not cached)."""
    if not is_full_sha(key[1]):
        return compute()
    found = context.cached(key, compute)
    assert isinstance(found, kind)
    return found


def stats_result(context: WebContext, links: Linking, by: str, depth: int) -> Any:
    """`stats(...)`, cached per minute and while the store is unchanged."""
    bucket = int(time.monotonic() // STATS_SECONDS)
    return context.cached(
        ("stats", by, depth, bucket),
        lambda: links.stats(context.settings, repo=context.repo, by=by, depth=depth),
    )


def applied_to(context: WebContext, message_id: str) -> WayBack | None:
    """The commit that applied the patch `message_id` carries (or replies to), or
    None for a message that is no patch, cover letter or reply to one."""
    from e2g.api import reverse  # the matcher's rules, loaded on the first such page

    try:
        return reverse.way_back(context.settings, message_id)
    except errors.E2gError:
        return None
