"""What `e2g link` and the way back show of trees: a commit's upstream (stored by
`e2g match`, else read now from its message or patch-id), every tree's commit of its
patch with the branch that reaches it and its first release, and a backport's own
mails. Reads only; e2g.api.trees finds and stores what these read.

`e2g link` reads this for every commit, so what only a backport needs (e2g.api.trees,
git.trees) is imported when a backport is at hand: a repository with no trees pays
no import time for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from e2g.index.store import BackportEdge, Store, TreePlace
from e2g.mail.backport import parse_backport
from e2g.mail.subject import subject_key
from e2g.matcher.postings import UrlFor, thread_links, to_posting
from e2g.model.links import Commit, Evidence, InTree, Posting, Upstream

if TYPE_CHECKING:
    from e2g.git.repo import Repo


def upstream_edge(
    store: Store, repository: Repo, *, repo: str, commit: Commit
) -> BackportEdge | None:
    """The upstream of `commit` (of the repository keyed `repo`): as `e2g match`
    stored it (a commit it answered with no edge is no backport: it weighed the
    trees' order); for a commit it never answered, read from its message now,
    else found among the store's commits with its patch-id (_patch_id_edge)."""
    stored = store.backport_edges(repo, [commit.sha]).get(commit.sha)
    if stored is not None or store.commit_statuses(repo, [commit.sha]):
        return stored
    note = parse_backport(f"{commit.subject}\n\n{commit.body}")
    if note is not None and note.shas:
        from e2g.git.trees import expand  # here: only a commit with a note needs it

        in_repo = expand(repository, note.shas)
        for short in note.shas:
            full = in_repo.get(short)
            rows = store.commits_by_prefix(full or short)
            if len({row.sha for row in rows}) == 1 and rows[0].sha != commit.sha:
                return BackportEdge(
                    repo, commit.sha, rows[0].repo, rows[0].sha, note.how
                )
            if full is not None and full != commit.sha:
                return BackportEdge(repo, commit.sha, repo, full, note.how)
    return _patch_id_edge(store, repository, repo=repo, commit=commit)


def _patch_id_edge(
    store: Store, repository: Repo, *, repo: str, commit: Commit
) -> BackportEdge | None:
    """The upstream the store's commits with `commit`'s patch-id give, as `e2g
    match` would find it (e2g.api.trees.upstream_copy): where none is in a named
    tree, the copy HEAD reaches is the upstream (asked of git only then)."""
    patch_id = commit.patch.patch_id
    if not patch_id:
        return None
    rows = [
        row
        for row in store.commits_with_patch_ids([patch_id]).get(patch_id, [])
        if row.sha != commit.sha
    ]
    places = store.tree_places([row.sha for row in rows])
    # Not one a rebase left behind (reached by branches, by none any more).
    rows = [row for row in rows if not _gone(places.get(row.sha, []))]
    if not rows:
        return None
    from e2g.api.trees import upstream_copy  # here: only a copied patch needs it
    from e2g.git.trees import outside_history

    here = [row.sha for row in rows if row.repo == repo]
    away = (
        outside_history(repository, [commit.sha, *here])
        if here and not any(places.get(row.sha) for row in rows)
        else None
    )
    stamp = int(commit.commit_date.timestamp())
    found = upstream_copy(commit.sha, stamp, rows, repo=repo, away=away)
    if found is None:
        return None
    return BackportEdge(repo, commit.sha, found.repo, found.sha, "patch-id")


def _gone(places: list[TreePlace]) -> bool:
    return bool(places) and all(place.gone for place in places)


def own_postings(
    store: Store, commit: Commit, *, version: str | None, url_for: UrlFor
) -> tuple[Posting, ...]:
    """The backport process's mails for `commit`, as postings of it."""
    from e2g.api.process_mails import process_mails  # here: only a backport needs it

    threads = thread_links(store)
    found = process_mails(store, [commit.subject], version=version).get(
        subject_key(commit.subject), []
    )
    messages = {m.message_id: m for m in store.messages([mid for mid, _, _ in found])}
    return tuple(
        to_posting(
            store,
            messages[mid],
            method=kind,
            score=1.0,
            applied=False,
            url_for=url_for,
            evidence=(Evidence("backport", detail),),
            threads=threads,
        )
        for mid, kind, detail in found
        if mid in messages
    )


def branch_version(store: Store, sha: str) -> str | None:
    """The stable series of the first live branch that reaches `sha` ("6.1")."""
    from e2g.api.branches import Scope  # here: only a backport needs it

    for place in store.tree_places([sha]).get(sha, []):
        if not place.gone:
            return Scope(place.repo, place.tree, place.branch).version
    return None


def in_trees(
    store: Store, *, repo: str, sha: str, edge: BackportEdge | None
) -> tuple[InTree, ...]:
    """Every tree's commit of the patch `sha` carries: the upstream commit first
    ("applied"), then its backports, each on each live branch that reaches it, with
    its first release; commits a rebase left behind are left out."""
    root_repo, root = (edge.upstream_repo, edge.upstream_sha) if edge else (repo, sha)
    copies = [e for e in store.backports_of([root]) if e.upstream_repo == root_repo]
    if edge is not None and all(e.sha != sha for e in copies):
        copies.append(edge)
    entries = [(root_repo, root, "applied")] + [(e.repo, e.sha, e.how) for e in copies]
    places = store.tree_places([s for _, s, _ in entries])
    releases: dict[str, str] = {}
    for key in {r for r, _, _ in entries}:
        releases.update(store.releases(key, [s for r, s, _ in entries if r == key]))
    found = []
    for key, commit, how in entries:
        mine = [p for p in places.get(commit, []) if p.repo == key]
        live: list[TreePlace | None] = [p for p in mine if not p.gone]
        if mine and not live:
            continue  # history: a rebase replaced it
        for place in live or [None]:
            found.append(
                InTree(
                    repo=key,
                    tree=place.tree if place else None,
                    branch=place.branch if place else None,
                    commit=commit,
                    how=how,
                    release=releases.get(commit),
                    merge=place.merge if place else None,
                )
            )
    return tuple(found)


def upstream_of(store: Store, edge: BackportEdge) -> Upstream:
    """`edge`'s upstream as `e2g link` names it, with its tree and subject."""
    places = store.tree_places([edge.upstream_sha]).get(edge.upstream_sha, [])
    tree = next((p.tree for p in places if not p.gone), None)
    stored = store.stored_commits(edge.upstream_repo, [edge.upstream_sha])
    subject = stored[edge.upstream_sha].subject if edge.upstream_sha in stored else ""
    return Upstream(edge.upstream_sha, edge.upstream_repo, edge.how, tree, subject)
