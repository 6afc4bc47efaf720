"""Where a commit landed in a repository with no named trees: the merge on the
checked-out branch's first-parent line that brought it in, and the first tag that
contains it, as `e2g link` shows them.

Named trees have theirs stored by `e2g match --tree` (e2g.api.trees); any other
repository's are asked of git (e2g.git.trees: one history walk and one `git
name-rev`, about a second each on git.git without a commit-graph) and cached under
the data dir's `landing/`, one small JSON file per commit and repository. An
answer that holds stays cached: a commit's first tag does not change, nor the
merge that brought it into a branch that only grows. One that may still change is
asked again when what it depends on moved (one `git show-ref`): no tag contained
the commit, and a tag was added or moved since; the branch did not reach it, and
its tip moved since. Used by e2g.api.link.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from e2g.config import Settings
from e2g.errors import E2gError
from e2g.git.repo import Repo
from e2g.model.links import InTree

# The fields of a cached answer, and the version of their meaning.
_VERSION = 1


def landed(
    settings: Settings, repository: Repo, places: tuple[InTree, ...], *, repo: str
) -> tuple[InTree, ...]:
    """`places` (e2g.api.tree_view.in_trees), with the merge and first tag filled in
    for each commit of `repository` (keyed `repo`) that no named tree holds: the
    commit asked about and its copies on the repository's other branches (each
    its own first tag; a copy no tag contains is not released yet)."""
    filled = list(places)
    for index, place in enumerate(places):
        if place.repo != repo or place.tree is not None or place.release is not None:
            continue
        try:
            answer = _answer(settings, repository, place.commit, repo=repo)
        except E2gError:  # no HEAD (a new repository): nothing to say, as before
            return places
        filled[index] = place._replace(
            release=answer.get("release"), merge=answer.get("merge")
        )
    return tuple(filled)


def _answer(
    settings: Settings, repository: Repo, sha: str, *, repo: str
) -> dict[str, str | None]:
    """The cached answer for `sha` where it still holds, git's for the rest (then
    cached): the release when the commit had one, or no tag changed since; the merge
    when the branch reached the commit, or its tip did not move since."""
    branch = _branch(repository)
    path = _cache_path(settings, repo=repo, sha=sha)
    cached = _read(path)
    if cached.get("version") != str(_VERSION):
        cached = {}
    merge_holds = branch != "HEAD" and (  # detached: another checkout, another line
        cached.get("branch") == branch and cached.get("reached") == "yes"
    )
    if merge_holds and cached.get("release") is not None:
        return cached  # no git at all
    from e2g.git import trees as git_trees  # here: not for an answer that holds

    tip, digest = git_trees.tip_and_tags(repository)
    answer: dict[str, str | None] = {
        "version": str(_VERSION),
        "branch": branch,
        "tip": tip,
    }
    if merge_holds or (cached.get("branch") == branch and cached.get("tip") == tip):
        answer |= {k: cached.get(k) for k in ("reached", "merge")}
    else:
        merges = git_trees.merged_into(repository, [sha], tip=tip)
        answer |= {
            "reached": "yes" if sha in merges else "no",
            "merge": merges.get(sha),
        }
    if cached.get("release") is not None or cached.get("tags") == digest:
        answer["release"] = cached.get("release")
    else:
        answer["release"] = git_trees.first_tag(repository, sha)
    answer["tags"] = digest
    if answer != cached:
        _write(path, answer)
    return answer


def _branch(repository: Repo) -> str:
    """The branch checked out ("refs/heads/master"), or "HEAD" when detached: read
    from HEAD itself, no git process (`e2g link` pays for every one)."""
    try:
        text = (repository.git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return "HEAD"
    return text.removeprefix("ref:").strip() if text.startswith("ref:") else "HEAD"


def _cache_path(settings: Settings, *, repo: str, sha: str) -> Path:
    digest = hashlib.sha256(repo.encode()).hexdigest()[:16]
    return settings.data_dir / "landing" / digest / sha[:2] / f"{sha}.json"


def _read(path: Path) -> dict[str, str | None]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v if isinstance(v, str) else None for k, v in data.items()}


def _write(path: Path, answer: dict[str, str | None]) -> None:
    """Write `answer` whole or not at all (a rename); a data dir that cannot be
    written to only costs the next link the same git walk."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f"{path.name}.{os.getpid()}.part")
        part.write_text(json.dumps(answer), encoding="utf-8")
        part.replace(path)
    except OSError:
        return
