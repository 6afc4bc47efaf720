"""Coverage statistics over what `e2g match` stored: by directory, list, year or method.

As the email2git talk reported them: per top-level directory (mm, kernel, net, ...),
per list and per year, how many commits were matched to a posting and by which method.
`render_svg` draws the same table as a bar chart; every label is XML-escaped.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape
from pathlib import Path

from e2g.api.core import open_store
from e2g.api.link import repo_key
from e2g.config import Settings
from e2g.errors import NotMatched, UsageError
from e2g.git.repo import Repo
from e2g.index.store import Store

GROUPINGS = ("dir", "list", "year", "method")
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

    def as_json(self) -> dict[str, object]:
        return {
            "key": self.key,
            "commits": self.commits,
            "matched": self.matched,
            "share": round(self.share, 4),
            "by_method": dict(self.by_method),
        }


@dataclass(slots=True)
class StatsResult:
    by: str
    rows: list[StatsRow]
    total: StatsRow

    def as_json(self) -> dict[str, object]:
        return {
            "by": self.by,
            "total": self.total.as_json(),
            "rows": [row.as_json() for row in self.rows],
        }


def _dirs(files: str, depth: int) -> set[str]:
    keys = set()
    for path in files.splitlines():
        parts = path.split("/")
        keys.add("/".join(parts[:depth]) if len(parts) > depth else "(top)")
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
        for sha, files, status, method, commit_date in records:
            matched = status == "matched"
            label = str(method) if matched and method else NO_MATCH
            for group in _keys(by, store, key, sha, files, label, commit_date, depth):
                _add(rows.setdefault(group, StatsRow(group)), matched, label)
            _add(total, matched, label)
    ordered = sorted(rows.values(), key=lambda row: (-row.commits, row.key))
    if by == "year":
        ordered = sorted(rows.values(), key=lambda row: row.key)
    return StatsResult(by, ordered, total)


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


def render_svg(result: StatsResult, *, limit: int = 40) -> str:
    """A horizontal bar chart: one bar per row, length = commits, filled part = matched."""
    rows = result.rows[:limit]
    width, label_width, bar_height, gap = 760, 200, 18, 6
    height = 40 + len(rows) * (bar_height + gap)
    most = max((row.commits for row in rows), default=1) or 1
    scale = (width - label_width - 110) / most
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<text x="10" y="20" font-size="14">e2g coverage by {escape(result.by)}: '
        f"{result.total.matched}/{result.total.commits} commits matched "
        f"({result.total.share:.0%})</text>",
    ]
    for index, row in enumerate(rows):
        y = 34 + index * (bar_height + gap)
        full, done = row.commits * scale, row.matched * scale
        parts += [
            f'<text x="{label_width - 6}" y="{y + 13}" text-anchor="end">{escape(row.key[:30])}</text>',
            f'<rect x="{label_width}" y="{y}" width="{full:.1f}" height="{bar_height}" fill="#d8dee9"/>',
            f'<rect x="{label_width}" y="{y}" width="{done:.1f}" height="{bar_height}" fill="#5e81ac"/>',
            f'<text x="{label_width + full + 6:.1f}" y="{y + 13}">{row.matched}/{row.commits} ({row.share:.0%})</text>',
        ]
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
