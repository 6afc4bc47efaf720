"""What `e2g match` stored, read back, and the matcher a run uses: the pieces that
`link` (one commit), `match` (a range, stored) and a merge's page (e2g.api.merges)
share, below all three.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from e2g.api import tree_view
from e2g.api.basis import no_mail, open_store
from e2g.config import Settings
from e2g.git.repo import Repo
from e2g.mail.backport import PROCESS_METHODS
from e2g.mail.patch import diff_lines
from e2g.matcher.cascade import Matcher
from e2g.matcher.postings import stored_postings_of, thread_links
from e2g.model.links import LinkResult

if TYPE_CHECKING:
    # Imported where a match uses them: `e2g link` of a commit with no trees needs
    # neither (their import was a tenth of its time).
    pass


def matcher_for(settings: Settings) -> Matcher:
    """A matcher over the store `settings` name (an error when nothing was ingested)."""
    store = open_store(settings)
    if store.max_seq() == 0:
        store.close()
        raise no_mail(settings)
    return Matcher(store, lines_of=diff_lines, url_for=settings.url_for)


def repo_key(repository: Repo) -> str:
    return str(repository.root.resolve())


def stored_results(
    settings: Settings, repo: str, shas: Sequence[str]
) -> Iterator[LinkResult]:
    """The answers `e2g match` stored for `shas` of the repository keyed `repo`, as
    `link` gives them (postings and their threads' facts; no rejected candidates,
    which are never stored), 500 commits per read."""
    with open_store(settings) as store:
        threads = thread_links(store)
        for start in range(0, len(shas), 500):
            chunk = shas[start : start + 500]
            commits = store.stored_commits(repo, chunk)
            found = stored_postings_of(
                store, repo, chunk, url_for=settings.url_for, threads=threads
            )
            edges = store.backport_edges(repo, chunk)
            for sha in chunk:
                if sha not in commits:
                    continue
                postings = tuple(found.get(sha, ()))
                if sha not in edges:
                    yield LinkResult(commit=commits[sha], postings=postings)
                    continue
                # A backport: its upstream's postings, then its own process mails.
                own = tuple(p for p in postings if p.method in PROCESS_METHODS)
                yield LinkResult(
                    commit=commits[sha],
                    postings=tuple(p for p in postings if p not in own),
                    upstream=tree_view.upstream_of(store, edges[sha]),
                    own=own,
                )
