"""Coverage statistics over what `e2g match` stored: by directory, list, year, method
or named tree and branch (`e2g match --tree`; a backport counts as matched when its
upstream commit is, with the method "backport").

As the email2git talk reported them: per top-level directory (mm, kernel, net, ...),
per list and per year, how many commits were matched to a posting and by which method.
Its JSON and its bar chart are `e2g.render`'s (`stats_json`, `render_svg`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from e2g.api.answers import repo_key
from e2g.api.basis import open_store
from e2g.config import Settings
from e2g.errors import NotMatched, UsageError
from e2g.git.repo import Repo
from e2g.index.store import Store

GROUPINGS = ("dir", "list", "year", "method", "tree")
NO_MATCH = "no match"


@dataclass(slots=True)
class StatsRow:
    key: str
    commits: int = 0
    matched: int = 0
    by_method: Counter[str] = field(default_factory=Counter)

    @property
    def share(self) -> float:
        return self.matched / self.commits if self.commits else 0.0


@dataclass(slots=True)
class StatsResult:
    by: str
    rows: list[StatsRow]
    total: StatsRow


def _dirs(files: str, depth: int) -> set[str]:
    """The directories of `files`, cut to `depth` levels: `mm/slab.c` is in `mm`
    at any depth, `net/core/dev.c` in `net/core` at depth 2; a file at the top of
    the tree is in `(top)`."""
    keys = set()
    for path in files.splitlines():
        directories = path.split("/")[:-1]
        keys.add("/".join(directories[:depth]) if directories else "(top)")
    return keys or {"(none)"}


def _lists(store: Store, repo: str, sha: str) -> set[str]:
    return store.lists_of_commit(repo, sha) or {"(none)"}


def stats(
    settings: Settings, *, repo: Path, by: str = "dir", depth: int = 1
) -> StatsResult:
    if by not in GROUPINGS:
        raise UsageError(f"--by must be one of {', '.join(GROUPINGS)}, not {by!r}")
    key = repo_key(Repo.open(repo))
    rows: dict[str, StatsRow] = {}
    total = StatsRow("total")
    with open_store(settings) as store:
        records = store.commit_outcomes(key)
        if not records:
            raise NotMatched(
                f"no commits of {key} were matched yet: run `e2g match` in that repository first"
            )
        branches = _branches(store, [record[0] for record in records], by=by)
        for sha, files, status, method, commit_date in records:
            matched = status == "matched"
            label = str(method) if matched and method else NO_MATCH
            groups = branches.get(sha, {NO_TREE}) if by == "tree" else None
            for group in groups or _keys(
                by, store, key, sha, files, label, commit_date, depth
            ):
                _add(rows.setdefault(group, StatsRow(group)), matched, label)
            _add(total, matched, label)
    ordered = sorted(rows.values(), key=lambda row: (-row.commits, row.key))
    if by == "year":
        ordered = sorted(rows.values(), key=lambda row: row.key)
    return StatsResult(by, ordered, total)


NO_TREE = "(no tree)"
GONE = "(rebased away)"  # reached by branches before, by none now: history


def _branches(store: Store, shas: list[str], *, by: str) -> dict[str, set[str]]:
    """ "tree/branch" of each commit a named tree's branch still reaches (by tree)."""
    if by != "tree":
        return {}
    return {
        sha: {p.name for p in places if not p.gone} or {GONE}
        for sha, places in store.tree_places(shas).items()
    }


def _keys(  # noqa: PLR0913
    by: str,
    store: Store,
    repo: str,
    sha: str,
    files: str,
    label: str,
    commit_date: int,
    depth: int,
) -> set[str]:
    if by == "dir":
        return _dirs(files, depth)
    if by == "list":
        return _lists(store, repo, sha)
    if by == "year":
        return {str(datetime.fromtimestamp(commit_date, UTC).year)}
    return {label}


def _add(row: StatsRow, matched: bool, label: str) -> None:
    row.commits += 1
    row.matched += int(matched)
    row.by_method[label] += 1
