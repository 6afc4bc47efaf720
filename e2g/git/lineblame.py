"""`git blame -w -M -C` of a file along its own history: the same answer, without
walking every commit of the repository.

Line blame walks the whole history from the blamed commit, asking of each commit
whether it changed the file; with -C git cannot use a commit-graph's changed-path
filters, so every blame of git.git pays a walk of 82,000 commits (0.9 s for a file
of one revision, where the blame proper costs milliseconds). The file's history is
known already (e2g.git.filehistory, or the tree's walk): the commits that changed it
and, for each, what its parents stand for. Grafts (`git blame -S`, read in the
process only: nothing is written to the repository) give git that history:

- a commit that changed the file keeps its own parents, so that git compares it
  with the very trees it compares in a full walk (-M within the file, -C against
  the files modified in the same commit, renames);
- each of those parents that did not change the file is grafted onto the revision
  it stands for (its blob of the file is that revision's): git finds it TREESAME and
  passes every line through, as it passes them through the commits in between;
  a parent that lacks the file (and stands for none) becomes a root.

Lines git follows into another file (-C found them copied from a file modified in
the same commit) would then walk that file's history through the grafts, which
skip the commits that changed only it: an answer naming any origin outside the
file's own history (commit and path) is thrown away and the full walk run, as is
a history the grafts cannot describe (a parent standing for two revisions), or a
long one (GRAFTED_REVISIONS), where the attempt mostly ends so and costs more than
the walk it would save. The answer is the full walk's in every case: identical on
every file of liburing (525) and sparse (1,098) and 226 of git.git
(three random samples), and in tests.

Where a walk of the whole tree gave the commits' changed paths (e2g.git.ancestry),
the grafts follow the lines into other files instead of giving up: the history
is that of a set of paths, the file's own (its renames') to begin with, and an
answer naming a path outside the set is blamed again with those paths added (up
to UNION_TRIES times). Of the commits, those that changed a path of the set
against their first parent keep their own parents, as above; any other commit
(its paths of the set are its first parent's) is one where git, for any line of
any of those paths, finds the first parent's blob the same and passes it all
there: such a commit, where git reaches it as a parent, is grafted onto the
nearest commit down its first parents that changed one of the paths (or made a
root). So git compares each commit that changed a path of the set with its real
parents (-C sees the files modified in the same commit, as in the full walk), and
every path of the set goes through exactly the commits that changed it. An
answer naming only paths of the set is the full walk's. Over the 138 files of
fewer than GRAFTED_REVISIONS revisions among 149 random files of git.git, line
blame went 27.1 s -> 14.3 s: 136 answered so, every answer the full walk's, 2
walked in full after the tries (59 of another 60, all the full walk's; 14 of
15 translation catalogs probed settled at the first try).

A file blamed before (a warm's update) starts from the paths its last line blame
named (`seen`, kept in its token cache): the first try then mostly settles, and a
long history, walked in full otherwise, is tried once so. The set also holds the
names its paths were moved from or to (Ancestry.moved): blame names where lines
were written, not the names they passed through (git.git's odb.h named
sha1_file.c and object-file.c, never sha1-file.c between them, and its try
without it failed). On git.git's update of 102 commits, the 108 files' line
blames one by one: 44.0-47.1 s with 2 full walks after a failed try, 38.5-41.6 s
with every try settled.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Collection, Sequence
from pathlib import Path

from e2g.git.ancestry import NONE, Ancestry
from e2g.git.blame import Blame
from e2g.git.filehistory import Revision, blobs_at
from e2g.git.repo import FULL_SHA, Repo

# A longer history has lines from other files (-C) more often than not, and its
# blame proper outweighs the walk: in 150 random files of git.git, those of
# 100-400 revisions were walked in full after all 11 times in 14 (the grafted
# attempt 6.0 s of their 14.9 s), those of 20-100 15 times in 33 (3.5 s of 17.5).
GRAFTED_REVISIONS = 100
# Blames of a growing set of paths before the full walk: of 138 random files of
# git.git, 1 try answered 103, 2 25, 3 6, 4 2, and 2 did not settle in 4.
UNION_TRIES = 4
# What the walk of one commit costs git's blame (git.git, 82,000 commits: the full
# walk of an old file of one revision, 0.6-1.0 s): tries stop once they cost that
# walk. A catalog of 79 revisions took 34 s a try and never settled.
WALK_PER_COMMIT = 10e-6


def line_blame(
    repo: Repo,
    sha: str,
    path: str,
    history: tuple[Sequence[Revision], str | None],
    ancestry: Ancestry | None = None,
    seen: Collection[str] = (),
) -> Blame:
    """`git blame --porcelain -w -M -C` of `path` at `sha` (as Repo.blame gives
    it), walking only `path`'s history (file_history's revisions up to `sha`, and
    the newest's key) where that gives the same answer; `ancestry`: every
    commit's changed paths up to `sha`, when a walk of the tree read them, and
    `seen`: the paths an earlier blame of the file named (followed from the first
    try; with them, a long history is tried once too)."""
    revisions, tip = history
    short = tip is not None and len(revisions) < GRAFTED_REVISIONS
    if (
        ancestry is not None
        and ancestry.head == sha
        and tip is not None
        and (short or seen)
    ):
        paths = ancestry.moved({path, *(r.path for r in revisions), *seen})
        tries = UNION_TRIES if short else 1
        found = _along(repo, sha, path, paths, ancestry, tries)
        return found if found is not None else repo.blame(sha, path)
    grafts = _grafts(repo, revisions) if short else None
    if grafts is not None and tip is not None:
        newest = tip.partition(":")[0]
        if newest != sha:  # the blamed commit has the newest revision's file
            grafts.append([sha, newest])
        found = _grafted_blame(repo, sha, path, grafts)
        keys = {revision.key for revision in revisions}
        if all(f"{commit}:{name}" in keys for commit, name in found.paths):
            return found
    return repo.blame(sha, path)


def _grafted_blame(repo: Repo, sha: str, path: str, grafts: list[list[str]]) -> Blame:
    with tempfile.NamedTemporaryFile("w", encoding="ascii", suffix=".grafts") as handle:
        handle.write("".join(" ".join(line) + "\n" for line in grafts))
        handle.flush()
        return repo.blame(sha, path, ancestry=Path(handle.name))


def _along(  # noqa: PLR0913 - the blame and its tries
    repo: Repo, sha: str, path: str, paths: set[str], ancestry: Ancestry, tries: int
) -> Blame | None:
    """`path`'s blame along the history of `paths` and of those its lines came
    from; None when they did not settle in `tries` blames, or the tries cost more
    than the walk of every commit would (another would likely cost as much)."""
    budget = len(ancestry.first) * WALK_PER_COMMIT
    started = time.monotonic()
    for _ in range(tries):
        found = _grafted_blame(repo, sha, path, along(ancestry, paths))
        named = {name for _, name in found.paths}
        if named <= paths:
            return found
        if time.monotonic() - started > budget:
            return None
        paths = ancestry.moved(paths | named)
    return None


def along(ancestry: Ancestry, paths: set[str]) -> list[list[str]]:
    """The graft lines that give git the history of `paths` from the ancestry's
    head: each commit that changed none of them, where a commit that did (or the
    head) has it as a parent, grafted onto the nearest down its first parents
    that did (no parent where none did)."""
    kept = ancestry.changed(paths)
    nearest: dict[int, int] = {}

    def stand(commit: int) -> int:
        walked = []
        while commit != NONE and commit not in kept:
            known = nearest.get(commit)
            if known is not None:
                commit = known
                break
            walked.append(commit)
            commit = ancestry.first[commit]
        for each in walked:
            nearest[each] = commit
        return commit

    # The head (commit 0) is where git starts: grafted like a parent when it
    # changed none of the paths.
    reached = {0} | {p for commit in kept for p in ancestry.parents(commit)}
    grafted = {
        commit: stand(ancestry.first[commit]) for commit in sorted(reached - kept)
    }
    return [
        [ancestry.sha(commit)] + ([] if onto == NONE else [ancestry.sha(onto)])
        for commit, onto in grafted.items()
    ]


class _Unclear(Exception):
    """The history cannot be described by grafts: the full walk answers."""


def _grafts(repo: Repo, revisions: Sequence[Revision]) -> list[list[str]] | None:
    """The graft lines (commit, then its parents) that make the walk from the tip
    visit only the revisions' commits and their parents; None when the history
    cannot be described so."""
    if not revisions:
        return None
    by_key = {revision.key: revision for revision in revisions}
    changed = {revision.sha for revision in revisions}
    parents = _parents(repo, sorted(changed))
    if parents is None:
        return None
    asked = {
        (parent, by_key[key].path if key in by_key else revision.path)
        for revision in revisions
        for parent in parents.get(revision.sha, ())
        if parent not in changed
        for key in [*revision.parents, revision.key]
    }
    blobs = _blobs(repo, sorted(asked))
    if blobs is None:
        return None
    grafted: dict[str, str | None] = {}  # parent -> the commit it stands for
    try:
        for revision in revisions:
            older = [by_key[key] for key in revision.parents if key in by_key]
            for parent in parents.get(revision.sha, ()):
                target = _stands_for(revision, parent, older, changed, blobs)
                if (
                    target is not _CHANGED
                    and grafted.setdefault(parent, target) != target
                ):
                    raise _Unclear  # a parent standing for two revisions
    except _Unclear:
        return None
    return [
        [parent] + ([target] if target else []) for parent, target in grafted.items()
    ]


_CHANGED = "-"  # a parent that is itself a revision: it keeps its own parents


def _stands_for(
    revision: Revision,
    parent: str,
    older: Sequence[Revision],
    changed: set[str],
    blobs: dict[tuple[str, str], str | None],
) -> str | None:
    """The commit `revision`'s real parent `parent` stands for (None: none, the
    file is not there), or _CHANGED when it is a revision itself."""
    if parent in changed:
        if not any(item.sha == parent for item in older):
            raise _Unclear  # a revision of another of the file's paths
        return _CHANGED
    for item in older:
        if item.blob is not None and blobs.get((parent, item.path)) == item.blob:
            return item.sha
    paths = {item.path for item in older} | {revision.path}
    if any(blobs.get((parent, name)) is not None for name in paths):
        raise _Unclear  # git would find a file the history does not explain
    return None


def _parents(repo: Repo, shas: Sequence[str]) -> dict[str, tuple[str, ...]] | None:
    output = repo._check(  # noqa: SLF001 - e2g.git's own runner
        ["rev-list", "--no-walk=unsorted", "--parents", "--stdin"],
        revs=(),
        data="".join(f"{sha}\n" for sha in shas).encode("ascii"),
    )
    found: dict[str, tuple[str, ...]] = {}
    for line in output.decode("ascii", "replace").splitlines():
        words = line.split()
        if words and all(FULL_SHA.fullmatch(word) for word in words):
            found[words[0]] = tuple(words[1:])
    return found if len(found) == len(shas) else None


def _blobs(
    repo: Repo, asked: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], str | None] | None:
    """The blob of each (commit, path) (None: no such file there); None when a
    path cannot be asked so (a newline in it) or git's replies do not line up."""
    if any("\n" in path for _, path in asked):
        return None
    replies = blobs_at(repo, asked)
    if len(replies) != len(asked):
        return None
    return dict(zip(asked, replies, strict=True))
