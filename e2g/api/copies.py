"""Backports that neither a note nor the patch-id names: a plain cherry-pick onto a
branch whose lines around the change were changed first (an older stable branch)
has another `git patch-id --stable` than its upstream, and no `cherry picked
from` line. Two rules find them, for a commit of a named tree's branch and an
upstream commit of a tree listed no later (never one of its own branch):

- `same-posting`: the commit applied the posting an earlier commit of such a tree
  applied (found by a copied `Link:` trailer or by the mail search): it is that
  commit's backport, whatever its patch-id. Asked of each answer the matcher gives,
  before it is stored (`same_posting`).
- `same-change`: a stored commit of such a tree, committed before it and not in its
  history, has its author, subject line and files, and the lines the two change
  (added and removed, context ignored) mostly agree: a different fix under the same
  title (a second "frob: fix the leak") is not taken. Asked in `split`, before the
  mail search, as the patch-id is (`by_same_change`).

Reads the store and git; writes nothing (e2g.api.trees stores the edges).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from e2g.errors import E2gError
from e2g.git import trees as git_trees
from e2g.git.repo import Repo
from e2g.index.store import BackportEdge, Store, TitledCommit, TreePlace
from e2g.mail.patch import diff_lines
from e2g.matcher.similarity import LinesByFile, diff_overlap

if TYPE_CHECKING:
    from e2g.api.branches import Scope
    from e2g.git.trees import CommitHead
    from e2g.index.link_writer import LinkRows

# "Mostly agree": the share of the two diffs' weighted +/- lines they have in
# common (e2g.matcher.similarity's Dice, a lightly edited line counting in part).
# A backport a maintainer adjusted keeps most of its lines; another change
# under the same title shares none or a few.
SAME_CHANGE = 0.75


def same_posting(
    store: Store,
    head: CommitHead,
    rows: LinkRows,
    *,
    scope: Scope,
    ranks: dict[str, int],
) -> BackportEdge | None:
    """The edge to the earliest commit of a tree listed no later than `scope`'s
    (not of its branch) that applied the posting `rows` (a matched answer of
    `head`) applied and was committed before it; None when there is none."""
    if scope.tree is None:
        return None
    applied = [link[0] for link in rows.links if link[3]]
    if not applied:
        return None
    appliers = [
        row
        for row in store.links_of_messages(applied[:1])
        if row.applied_posting == applied[0]
        and row.sha != head.sha
        and row.commit_date.timestamp() < head.committed
    ]
    places = store.tree_places([row.sha for row in appliers])
    eligible = [
        row
        for row in appliers
        if _may_be_upstream(places.get(row.sha, []), scope=scope, ranks=ranks)
    ]
    if not eligible:
        return None
    first = min(eligible, key=lambda row: (row.commit_date, row.sha))
    return BackportEdge(scope.repo, head.sha, first.repo, first.sha, "same-posting")


def by_same_change(  # noqa: PLR0913 - keyword-only
    store: Store,
    repository: Repo,
    heads: Sequence[CommitHead],
    *,
    scope: Scope,
    ranks: dict[str, int],
) -> dict[str, BackportEdge]:
    """The backports among `heads` (of `scope`'s branch, no note, no patch-id
    match) by the `same-change` rule: one store query by subject, the paths of
    `heads` from one git call, and the diffs of only the pairs left."""
    if scope.tree is None or not heads:
        return {}
    titled = store.commits_with_subjects(sorted({head.subject for head in heads}))
    if not titled:
        return {}
    paths = git_trees.changed_paths(
        repository, [head.sha for head in heads if head.subject in titled]
    )
    pairs = {
        head.sha: same
        for head in heads
        if (
            same := _candidates(head, titled.get(head.subject, []), paths.get(head.sha))
        )
    }
    places = store.tree_places(
        sorted({row.sha for rows in pairs.values() for row in rows})
    )
    pairs = {
        sha: [
            row
            for row in rows
            if _may_be_upstream(places.get(row.sha, []), scope=scope, ranks=ranks)
        ]
        for sha, rows in pairs.items()
    }
    # One in the branch's own history is no upstream: the branch holds it already.
    mine = sorted(
        {row.sha for rows in pairs.values() for row in rows if row.repo == scope.repo}
    )
    outside = (
        git_trees.outside_history(repository, mine, tips=list(pairs)) if mine else set()
    )
    pairs = {
        sha: [row for row in rows if row.repo != scope.repo or row.sha in outside]
        for sha, rows in pairs.items()
    }
    lines = _diff_lines(repository, scope.repo, pairs)
    found: dict[str, BackportEdge] = {}
    for sha, rows in pairs.items():
        ours = lines.get((scope.repo, sha))
        agree = [
            row
            for row in rows
            if ours is not None
            and (theirs := lines.get((row.repo, row.sha))) is not None
            and diff_overlap(ours, theirs).similarity >= SAME_CHANGE
        ]
        if agree:
            found[sha] = BackportEdge(
                scope.repo, sha, agree[0].repo, agree[0].sha, "same-change"
            )
    return found


def _candidates(
    head: CommitHead, rows: Sequence[TitledCommit], paths: tuple[str, ...] | None
) -> list[TitledCommit]:
    """The stored commits of `head`'s subject with its author and files, committed
    before it, oldest first."""
    email = head.author.email.casefold()
    return [
        row
        for row in rows
        if row.sha != head.sha
        and row.commit_date < head.committed
        and row.author_email.casefold() == email
        and paths is not None
        and tuple(sorted(row.files)) == paths
    ]


def _may_be_upstream(
    places: Sequence[TreePlace], *, scope: Scope, ranks: dict[str, int]
) -> bool:
    """Whether a stored commit that `places` reach may be the upstream of a commit
    of `scope`: reached by a live branch of a named tree listed no later than
    `scope`'s, and not by `scope`'s own branch."""
    live = [place for place in places if not place.gone]
    if any(p.tree == scope.tree and p.branch == scope.branch for p in live):
        return False
    return any(ranks.get(p.tree, scope.rank + 1) <= scope.rank for p in live)


def _diff_lines(
    repository: Repo, key: str, pairs: dict[str, list[TitledCommit]]
) -> dict[tuple[str, str], LinesByFile]:
    """The changed lines of the commits of `pairs` (the backports, of `repository`
    keyed `key`, and their candidates), from one git reader per repository; a
    repository other than the branch's is opened at its store key, its path (one
    that cannot be opened any more gives none)."""
    wanted: dict[str, list[str]] = {key: [sha for sha, rows in pairs.items() if rows]}
    for rows in pairs.values():
        for row in rows:
            wanted.setdefault(row.repo, []).append(row.sha)
    found: dict[tuple[str, str], LinesByFile] = {}
    for repo, shas in wanted.items():
        if not shas:
            continue
        try:
            reader = repository if repo == key else Repo.open(Path(repo))
        except E2gError:
            continue
        for commit in reader.commits(list(dict.fromkeys(shas))):
            found[repo, commit.sha] = diff_lines(commit.patch.diff)
    return found
