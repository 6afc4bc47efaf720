"""A named tree's branches, as the config file names them and the store keeps them:
which tree a name is (`tree_named`, `scope_ranks`: upstream first), where the
commits being matched sit (`Scope`), what a branch reaches and the merge that
brought each commit in (`record_branch`), and the first release of each commit
(`update_releases`); the store and the tree writer a caller may hold open across a
tree's branches (`reading`, `writing`). e2g.api.trees finds backports among them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from itertools import islice
from typing import NamedTuple

from e2g.config import Settings, TreeConfig
from e2g.errors import UsageError
from e2g.git import trees as git_trees
from e2g.git.repo import Repo
from e2g.index.link_writer import TreeWriter
from e2g.index.store import (
    Store,
)


def reading(settings: Settings, store: Store | None) -> AbstractContextManager[Store]:
    """`store` when the caller holds one open (match_tree: one read connection for
    a tree's branches, not one per step), else one opened for the block."""
    from e2g.api.basis import open_store

    return nullcontext(store) if store is not None else open_store(settings)


def writing(
    settings: Settings, writer: TreeWriter | None
) -> AbstractContextManager[TreeWriter]:
    """`writer` when the caller holds one open (match_tree: one for a tree's
    branches), else one opened for the block."""
    return (
        nullcontext(writer) if writer is not None else TreeWriter(settings.store_path)
    )


# First releases written per transaction (a kernel's first walk: a million).
RELEASES_BATCH = 50_000


class Scope(NamedTuple):
    """Where the commits being matched sit: the repository's key in the store, and
    the named tree and branch they are matched for (None: no named tree)."""

    repo: str
    tree: str | None = None
    branch: str | None = None
    rank: int = 0  # the tree's place in the config: 0 is the most upstream

    @property
    def version(self) -> str | None:
        """The stable version a branch name carries ("linux-6.1.y": "6.1")."""
        found = re.search(r"(\d+\.\d+)", self.branch or "")
        return found[1] if found else None


def scope_ranks(settings: Settings) -> dict[str, int]:
    """Each named tree's place in the config file: 0 is the most upstream."""
    return {tree.name: rank for rank, tree in enumerate(settings.trees)}


def tree_named(settings: Settings, name: str) -> TreeConfig:
    for tree in settings.trees:
        if tree.name == name:
            return tree
    known = ", ".join(tree.name for tree in settings.trees) or "none configured"
    raise UsageError(
        f"no tree named {name!r} in the config file (known: {known}); add "
        f'[trees.{name}] repo = "PATH", branches = ["BRANCH", ...]'
    )


def branch_name(branch: str) -> str:
    """What a configured branch is called: the tip of a range ("v6.1..linux-6.1.y")."""
    return branch.rsplit("..", 1)[-1] or branch


def record_branch(  # noqa: PLR0913 - keyword-only
    settings: Settings,
    repository: Repo,
    *,
    repo: str,
    tree: str,
    branch: str,
    shas: Sequence[str],
    exclude: Sequence[str],
    merges: int | None = None,
    writer: TreeWriter,
    store: Store | None = None,
) -> None:
    """Store that `branch` of `tree` reaches `shas` (beyond the branches `exclude`
    names, listed before it), each with the merge that brought it in, marking the
    commits it reached before and lost as gone. Merges are found for what the
    branch gained since its last recorded tip (all of it after a rebase).

    `merges`: how many merges the branch holds beyond `exclude`, when the caller
    walked it already; with none (a stable branch is a line of cherry-picks) no
    merge brought anything in, and the walk of its parents is skipped (2,000
    backports: 30 ms of the 230 ms their match took). `writer`: the caller's,
    kept open across the tree's branches; `store`: see reading()."""
    name = branch_name(branch)
    tip = repository.resolve(name)
    with reading(settings, store) as reader:
        before = reader.branch_tip(repo, tree, name)
    low = [branch.rsplit("..", 1)[0]] if ".." in branch else []
    if before is not None and git_trees.is_ancestor(repository, before, tip):
        low.append(before)
    # What this walk covers is part of what the caller's did: none there, none here.
    brought = (
        git_trees.merged_by(repository, tip, exclude=[*exclude, *low])
        if merges != 0
        else {}
    )
    # In sha order, as the table's keys are (2,000 commits: 6 ms, not 8 ms).
    writer.set_branch(
        repo, tree=tree, branch=name, tip=tip, shas=sorted(shas), merges=brought
    )


def update_releases(
    settings: Settings,
    repository: Repo,
    *,
    repo: str,
    store: Store | None = None,
    writer: TreeWriter | None = None,
) -> int:
    """Walk the tags of `repository` not walked before (one `git rev-list` of them
    all) and store the first tag that contains each commit; how many it found.
    `store`: see reading(); `writer`: the caller's, else one of its own."""
    tags = git_trees.tags(repository)
    with reading(settings, store) as reader:
        done = reader.release_tags(repo)
    new = [tag for tag in tags if done.get(tag.name) != tag.target]
    if not new:
        return 0
    before = [tag for tag in tags if done.get(tag.name) == tag.target]
    found = git_trees.first_tags(repository, new, before=before)
    count = 0
    with writing(settings, writer) as own:
        # A kernel's first walk is a million commits: written as they come, a
        # transaction per batch (the write lock is not held through the walk). The
        # tags are written last: a run cut short does them all again, and the
        # releases it wrote stay (a commit keeps the tag found first).
        while batch := list(islice(found, RELEASES_BATCH)):
            own.add_releases(repo, found=batch, tags=())
            count += len(batch)
        own.add_releases(repo, found=(), tags=[(t.name, t.target) for t in new])
    return count
