"""Trees: the branches that reach a commit, backports and their upstream commits,
and the first release of each.

`e2g match` asks `split()` which of the commits it is about to match are backports
of a commit that is matched (or being matched) anyway: those cost a store lookup,
not a mail search, and inherit the upstream's review. Backports are found from the
commit message first (mail.backport's notes, an abbreviated sha expanded in the
repository), then by an equal `git patch-id --stable`. `store_split()` writes
their answers once the batch has matched the rest. What `e2g link` shows of them is
e2g.api.tree_view's.

Trees are named in the config file (config.TreeConfig), listed upstream first: a
patch-id match never makes a commit the backport of one in a tree listed after its
own (mainline is never the backport of linux-next's copy of a patch). A branch that
is matched again after a rebase keeps its old commits as history (`gone`): a new
commit with the patch-id of one it lost takes that one's answer, and only commits a
branch still reaches are answers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from e2g.api import copies
from e2g.api.branches import Scope, reading, writing
from e2g.api.process_mails import process_mails_by_key
from e2g.config import Settings
from e2g.git import trees as git_trees
from e2g.git.repo import Repo
from e2g.git.trees import CommitHead
from e2g.index.link_writer import LinkRows, TreeWriter
from e2g.index.store import (
    BackportEdge,
    Store,
    StoredSha,
    TreePlace,
)
from e2g.mail.backport import (
    BackportNote,
    parse_backport,
    upstream_subject,
)
from e2g.mail.subject import subject_key

# Commit messages read per git call while looking for notes.
HEADS = 5000


@dataclass(slots=True)
class Split:
    """What `split` found among the commits about to be matched."""

    backports: dict[str, BackportEdge] = field(default_factory=dict)
    rebased: dict[str, StoredSha] = field(default_factory=dict)  # new sha: old one
    upstreams: list[str] = field(default_factory=list)  # to match first, in this repo
    # Without their messages (read in chunks of HEADS, notes taken out): a
    # kernel's million commits' messages would be a gigabyte.
    heads: dict[str, CommitHead] = field(default_factory=dict)
    notes: dict[str, BackportNote] = field(default_factory=dict)
    # The stored status and files of upstreams that no commit of this run is,
    # read with the notes' shas: 2,000 backports need no second read of them
    # (benchmarks/backports.py: 7 ms).
    stored: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)

    @property
    def answered(self) -> set[str]:
        return set(self.backports) | set(self.rebased)


@dataclass(slots=True)
class Walk:
    """A branch's commits as `git rev-list` gives them: (sha, commit time) of each
    non-merge commit, newest first, how many merges it skipped, and the heads and
    notes of the commits `split` reads, where the walk read them."""

    dated: list[tuple[str, int]] = field(default_factory=list)
    merges: int = 0
    read: Split = field(default_factory=Split)


def walk_branch(
    settings: Settings,
    repository: Repo,
    revs: Sequence[str],
    *,
    scope: Scope,
    store: Store | None = None,
) -> Walk:
    """The commits of `scope`'s branch (`revs`: it, less the branches before it).

    A branch never recorded has all its commits to do: one `git log` walk gives
    `split` their heads and notes too (2,000 backports: 34 ms, not 29 ms and
    22 ms). A rerun has few new commits, and lists them with `git rev-list`: its
    history's messages are not read again. `store`: see reading()."""
    assert scope.tree is not None and scope.branch is not None
    with reading(settings, store) as reader:
        recorded = reader.branch_tip(scope.repo, scope.tree, scope.branch)
    if recorded is not None:
        return Walk(*repository.dated_rev_list(revs))
    walk = Walk()
    for head, message in git_trees.walk_notes(repository, revs):
        if len(head.parents) > 1:
            walk.merges += 1
            continue
        walk.dated.append((head.sha, head.committed))
        _take(walk.read, head, message)
    return walk


def _take(found: Split, head: CommitHead, message: str) -> None:
    note = parse_backport(message)
    if note is not None:
        found.notes[head.sha] = note
    found.heads[head.sha] = head


def split(  # noqa: PLR0913 - keyword-only
    store: Store,
    repository: Repo,
    shas: Sequence[str],
    *,
    scope: Scope,
    ranks: dict[str, int],
    read: Split | None = None,
    settle: Callable[[], None] | None = None,
) -> Split:
    """Which of `shas` (about to be matched) are backports or rebased copies of
    commits that are stored, or among `shas` themselves. `read`: the heads and
    notes a walk of the branch read already (Walk.read); `settle`: waits for the
    branch's record in flight (TreeWriter.settle), before its commits are read."""
    found = Split()
    if read is not None:
        for sha in shas:
            if sha in read.heads:
                found.heads[sha] = read.heads[sha]
                if sha in read.notes:
                    found.notes[sha] = read.notes[sha]
    unread = [sha for sha in shas if sha not in found.heads]
    for start in range(0, len(unread), HEADS):
        for head, message in git_trees.read_notes(
            repository, unread[start : start + HEADS]
        ):
            _take(found, head, message)
    _by_note(store, repository, found, scope=scope)
    answered = found.answered
    left = [sha for sha in shas if sha not in answered]
    _by_patch_id(
        store, repository, found, left, scope=scope, ranks=ranks, settle=settle
    )
    answered = found.answered
    found.backports |= copies.by_same_change(
        store,
        repository,
        [found.heads[sha] for sha in left if sha not in answered],
        scope=scope,
        ranks=ranks,
    )
    return found


def _by_note(store: Store, repository: Repo, found: Split, *, scope: Scope) -> None:
    """Backports whose message names their upstream commit."""
    notes = {sha: note for sha, note in found.notes.items() if note.shas}
    named = sorted({short for note in notes.values() for short in note.shas})
    # Full shas the store knows need no git; the rest are expanded in one call.
    known = store.commits_and_files([short for short in named if len(short) == 40])
    found.stored = {
        (repo, sha): (status, files)
        for sha, rows in known.items()
        if sha not in found.heads
        for repo, status, files in rows
    }
    in_repo = git_trees.expand(repository, [s for s in named if s not in known])
    for sha, note in notes.items():
        for short in note.shas:
            full = short if short in known else in_repo.get(short)
            upstream = _locate(store, short, full, found, scope=scope, known=known)
            if upstream is not None and upstream[1] != sha:
                found.backports[sha] = BackportEdge(
                    scope.repo, sha, *upstream, note.how
                )
                break


def _locate(  # noqa: PLR0913 - keyword-only
    store: Store,
    short: str,
    full: str | None,
    found: Split,
    *,
    scope: Scope,
    known: dict[str, list[tuple[str, str, str]]],
) -> tuple[str, str] | None:
    """(repository key, sha) of the commit `short` names: one being matched now,
    else a stored one (this repository first), else one of this repository to
    match first; None when neither the store nor the repository knows it.
    `known`: the stored (repository, status, files) of full shas, by sha."""
    if full is not None and full in found.heads:
        return scope.repo, full
    if short in known:  # one sha, in one or more repositories (ordered by key)
        repos = [repo for repo, _, _ in known[short]]
        return (scope.repo if scope.repo in repos else repos[0]), short
    stored = store.commits_by_prefix(full or short)
    if len({row.sha for row in stored}) == 1:
        mine = [row for row in stored if row.repo == scope.repo]
        row = (mine or stored)[0]
        return row.repo, row.sha
    if full is not None:
        if full not in found.upstreams:
            found.upstreams.append(full)
        return scope.repo, full
    return None


def _by_patch_id(  # noqa: PLR0913 - keyword-only
    store: Store,
    repository: Repo,
    found: Split,
    shas: Sequence[str],
    *,
    scope: Scope,
    ranks: dict[str, int],
    settle: Callable[[], None] | None = None,
) -> None:
    """Backports (and rebased copies) with no note, by equal patch-id.

    Diffs are read only where a copy may be: commits of a named branch below the
    most upstream tree or matched before (a rebase), and commits of this run whose
    subject and author another of them repeats (a plain cherry-pick within one
    repository)."""
    if not shas:
        return  # every commit answered by its note (a stable branch): no read
    if settle is not None:
        settle()  # the branches' commits are read: this one's too
    known = (
        store.branch_shas(scope.repo, scope.tree, scope.branch)
        if scope.tree is not None and scope.branch is not None
        else {}
    )
    ids = git_trees.patch_ids(
        repository,
        _copies_possible(repository, found, shas, scope=scope, known=known),
    )
    stored = store.commits_with_patch_ids(sorted(set(ids.values())))
    places = store.tree_places(
        sorted({row.sha for rows in stored.values() for row in rows})
    )
    run: dict[str, list[str]] = {}
    for sha, patch_id in ids.items():
        run.setdefault(patch_id, []).append(sha)
    away = (
        _away_from_head(repository, run, stored, repo=scope.repo)
        if scope.tree is None
        else None
    )
    for sha, patch_id in ids.items():
        rows = stored.get(patch_id, [])
        old = [row for row in rows if known.get(row.sha) is True]
        if old:
            found.rebased[sha] = old[0]
            continue
        upstream = _earliest(
            sha,
            found,
            scope=scope,
            away=away,
            run=run[patch_id],
            stored=[
                row
                for row in rows
                if _may_be_upstream(places.get(row.sha, []), scope=scope, ranks=ranks)
            ],
        )
        if upstream is not None:
            found.backports[sha] = BackportEdge(
                scope.repo, sha, upstream.repo, upstream.sha, "patch-id"
            )


def _copies_possible(
    repository: Repo,
    found: Split,
    shas: Sequence[str],
    *,
    scope: Scope,
    known: dict[str, bool],
) -> list[str]:
    """The commits whose patch-ids are worth reading (see _by_patch_id)."""
    if scope.tree is not None and (scope.rank > 0 or known):
        return list(shas)
    # A copy keeps its author and (less an Android prefix) its subject: commits
    # sharing only a generic subject ("Update draft release notes") are not read.
    subjects: dict[tuple[str, str], list[str]] = {}
    for sha in shas:
        head = found.heads[sha]
        title = subject_key(upstream_subject(head.subject))
        subjects.setdefault((title, head.author.email.casefold()), []).append(sha)
    # An Android UPSTREAM:/BACKPORT:/FROMGIT: commit says it is a copy, naming none.
    android = [
        sha for sha in shas if sha in found.notes and found.notes[sha].how == "android"
    ]
    repeated = [group for group in subjects.values() if len(group) > 1]
    return list(dict.fromkeys([*_same_paths(repository, repeated), *android]))


def _same_paths(repository: Repo, groups: list[list[str]]) -> list[str]:
    """The commits of `groups` (each: one subject and author) that change the same
    paths as another of their group: a copy changes the files its upstream changed
    (one author's release notes under one subject are different files)."""
    paths = git_trees.changed_paths(
        repository, [sha for group in groups for sha in group]
    )
    found = []
    for group in groups:
        by_paths: dict[tuple[str, ...], list[str]] = {}
        for sha in group:
            by_paths.setdefault(paths.get(sha, ()), []).append(sha)
        found += [sha for same in by_paths.values() if len(same) > 1 for sha in same]
    return found


def _may_be_upstream(
    places: Sequence[TreePlace], *, scope: Scope, ranks: dict[str, int]
) -> bool:
    """Whether a stored commit reached by `places` may be the upstream of a commit
    of `scope`: not one of this very branch, nor only in trees listed after it."""
    if any(p.tree == scope.tree and p.branch == scope.branch for p in places):
        return False
    if scope.tree is None or not places:
        return True
    return any(ranks.get(p.tree, 0) <= scope.rank for p in places)


def _away_from_head(
    repository: Repo,
    run: dict[str, list[str]],
    stored: dict[str, list[StoredSha]],
    *,
    repo: str,
) -> set[str]:
    """The commits of this repository (keyed `repo`) with a copy of their patch
    here that HEAD does not reach (one walk, for the patches with two copies or
    more: most have one)."""
    copies: set[str] = set()
    for patch_id, mine in run.items():
        group = {
            *mine,
            *(row.sha for row in stored.get(patch_id, []) if row.repo == repo),
        }
        if len(group) > 1:
            copies |= group
    return git_trees.outside_history(repository, sorted(copies))


def _earliest(  # noqa: PLR0913 - keyword-only
    sha: str,
    found: Split,
    *,
    scope: Scope,
    away: set[str] | None,
    run: Sequence[str],
    stored: Sequence[StoredSha],
) -> StoredSha | None:
    """upstream_copy() of `sha` among the stored copies of its patch and this run's
    (none a backport itself)."""
    candidates = list(stored)
    candidates += [
        StoredSha(scope.repo, other, "", found.heads[other].committed)
        for other in run
        if other not in found.backports
    ]
    return upstream_copy(
        sha, found.heads[sha].committed, candidates, repo=scope.repo, away=away
    )


def upstream_copy(
    sha: str,
    committed: int,
    copies: Sequence[StoredSha],
    *,
    repo: str,
    away: set[str] | None,
) -> StoredSha | None:
    """The upstream of `sha` (of the repository keyed `repo`, committed at
    `committed`) among the other commits with its patch-id, `copies`: the earliest
    committed before it.

    `away`: with no named trees, the commits of this repository HEAD does not
    reach (else None). The copy HEAD reaches is the upstream then, whatever the
    dates: a commit HEAD reaches is never the backport of one of this repository
    HEAD does not reach (a work-in-progress branch's earlier copy of it), and one
    HEAD does not reach is the backport of the earliest copy HEAD does reach."""
    candidates = [row for row in copies if row.sha != sha]
    if away is not None:
        if sha in away:
            reached = [
                row for row in candidates if row.repo == repo and row.sha not in away
            ]
            if reached:
                return min(reached, key=lambda row: (row.commit_date, row.sha))
        else:
            candidates = [
                row for row in candidates if row.repo != repo or row.sha not in away
            ]
    earlier = [
        row for row in candidates if (row.commit_date, row.sha) < (committed, sha)
    ]
    return min(earlier, key=lambda row: (row.commit_date, row.sha), default=None)


def backport_rows(
    store: Store, found: Split, *, scope: Scope, max_seq: int
) -> list[LinkRows]:
    """The `commits` and `links` rows of `found`'s backports and rebased copies,
    once the batch has stored their upstream commits: a backport takes its
    upstream's status ("backport" as its method when that is matched) and files,
    and links its own process mails; a rebased copy takes the old commit's answer."""
    upstream = _upstream_rows(store, found)
    # Each title's key made once, for the query and the answer.
    titles = {sha: subject_key(found.heads[sha].subject) for sha in found.backports}
    own = process_mails_by_key(store, titles.values(), version=scope.version)
    rows = []
    for sha, edge in found.backports.items():
        status, files = upstream.get((edge.upstream_repo, edge.upstream_sha), ("", ""))
        matched = status == "matched"
        mails = own.get(titles[sha], ())
        head = found.heads[sha]
        rows.append(
            LinkRows(
                commit=_commit_row(
                    head,
                    files=files,
                    status="matched" if matched else "no-match",
                    method="backport" if matched else None,
                    max_seq=max_seq,
                ),
                links=tuple(
                    (mid, kind, 1.0, 0, json.dumps([["backport", detail]]))
                    for mid, kind, detail in mails
                ),
            )
        )
    rows += [
        _rebased_row(store, found.heads[sha], old, max_seq=max_seq)
        for sha, old in found.rebased.items()
    ]
    return rows


def _upstream_rows(
    store: Store, found: Split
) -> dict[tuple[str, str], tuple[str, str]]:
    """The stored status and files of each backport's upstream commit: those
    `split` read (no commit of this run, so this run changed none), the others read
    now, once the batch stored them (one read per repository and 500 commits)."""
    by_repo: dict[str, list[str]] = {}
    for edge in found.backports.values():
        if (edge.upstream_repo, edge.upstream_sha) not in found.stored:
            by_repo.setdefault(edge.upstream_repo, []).append(edge.upstream_sha)
    return found.stored | {
        (repo, sha): facts
        for repo, shas in by_repo.items()
        for sha, facts in store.statuses_and_files(repo, shas).items()
    }


def _commit_row(  # noqa: PLR0913 - keyword-only
    head: CommitHead,
    *,
    files: str,
    status: str,
    method: str | None,
    max_seq: int,
    score: float | None = None,
) -> tuple[
    str, str, str, str, int, int, str, str, str | None, float | None, int, str | None
]:
    return (
        head.sha,
        head.subject,
        head.author.name,
        head.author.email,
        head.authored,
        head.committed,
        files,
        status,
        method,
        score,
        max_seq,
        None,
    )


def _rebased_row(
    store: Store, head: CommitHead, old: StoredSha, *, max_seq: int
) -> LinkRows:
    stored = store.stored_commits(old.repo, [old.sha]).get(old.sha)
    links = store.links_of_commits(old.repo, [old.sha]).get(old.sha, [])
    applied = next((link for link in links if link.applied), None)
    return LinkRows(
        commit=_commit_row(
            head,
            files="\n".join(stored.files) if stored else "",
            status=old.status,
            method=applied.method if applied else None,
            score=applied.score if applied else None,
            max_seq=max_seq,
        ),
        links=tuple(
            (
                link.message_id,
                link.method,
                link.score,
                int(link.applied),
                json.dumps([[*pair] for pair in link.evidence]),
            )
            for link in links
        ),
    )


def store_split(
    settings: Settings,
    found: Split,
    *,
    scope: Scope,
    max_seq: int,
    writer: TreeWriter | None = None,
    store: Store | None = None,
) -> tuple[list[LinkRows], list[LinkRows]]:
    """Write what `split` found, after the batch stored the commits it names;
    return the rows written (one per backport or rebased commit), and apart the
    rows of the backports whose upstream has no posting, which are not written:
    those are matched on their own (there is no review to inherit, and their
    backporter may have posted them), their rows holding only their own process
    mails. Every backport's edge is written. `writer`: the caller's, else one of
    its own; `store`: see reading()."""
    if not found.backports and not found.rebased:
        return [], []
    with reading(settings, store) as reader:
        rows = backport_rows(reader, found, scope=scope, max_seq=max_seq)
    alone = [
        row
        for row in rows
        if row.commit[0] in found.backports and row.commit[7] != "matched"
    ]
    if alone:
        apart = {row.commit[0] for row in alone}
        rows = [row for row in rows if row.commit[0] not in apart]
    with writing(settings, writer) as own:
        # In sha order, as the tables' keys are: 2,000 backports are written in
        # 17 ms, not 26 ms (benchmarks/backports.py).
        own.add_backports(
            scope.repo,
            rows=sorted(rows, key=lambda row: row.commit[0]),
            edges=sorted(
                (edge.repo, edge.sha, edge.upstream_repo, edge.upstream_sha, edge.how)
                for edge in found.backports.values()
            ),
        )
        own.copy_log()
    return rows, alone
