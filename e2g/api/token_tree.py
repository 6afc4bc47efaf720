"""The tree's token page and `e2g stats --by dir --tokens`: per file and per
directory, how many tokens live there, how many commits wrote them, and how many
of them were written by a commit the audit calls reviewed.

Reads only: the token counts come from a warmed tree (e2g.api.token_warm's
manifest, one read for the whole tree) or, at a revision the tree was not warmed
at, from each file's own cached answer (bounded: PER_FILE at most per request);
a file with neither is shown as not warm, never blamed here. The verdicts are the
audit's (e2g.api.audit: `match_first` off, so nothing is matched or stored),
reviewed meaning its lenient coverage: the code that landed was reviewed, maybe
not to its last line (reviewed, reviewed-trivial-change, changed-after-review).
A merge, which the audit does not judge, counts as not reviewed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from e2g.api.audit.model import LENIENT, Verdict
from e2g.api.token_cache import cache_root
from e2g.api.token_warm import MAX_BYTES, FileSummary, file_summary, manifest_of
from e2g.config import Settings
from e2g.errors import IsAFile, NotFound
from e2g.git.repo import Repo
from e2g.git.tokenview import cache_key
from e2g.git.treefiles import TreeFile, tree_files
from e2g.tokens.lex import lexer_for

PAGE_ENTRIES = 200  # entries of a directory per page
PER_FILE = 300  # files read one by one, where the tree is not warm at that revision
AUDIT_CHUNK = 2000  # commits named to one audit run (git's command line)
UNJUDGED = "merge"  # the verdict key of a commit the audit does not judge


class TreeEntry(NamedTuple):
    """A file, or a directory with everything under it summed."""

    name: str
    path: str
    kind: str  # "dir" or "file"
    files: int  # text files under it (a file: 1, or 0 when skipped)
    warm: int  # of which the token counts are known
    tokens: int
    commits: int  # distinct commits that wrote its living tokens
    reviewed: int  # tokens written by a commit the audit calls reviewed
    by_verdict: dict[str, int]  # tokens per verdict of their commit
    skipped: str | None = None  # a file token blame leaves out: why

    @property
    def share(self) -> float | None:
        """The reviewed share of its tokens; None with none known."""
        return self.reviewed / self.tokens if self.tokens else None


class TreeListing(NamedTuple):
    rev: str  # the full sha
    path: str  # the directory, "" for the top
    total: TreeEntry  # the directory itself
    entries: tuple[TreeEntry, ...]  # this page's
    page: int
    pages: int
    listed: int  # entries in the directory
    warmed: str | None  # the revision the repository's tree was warmed at
    judged: bool  # whether verdicts were read (False: the store has none)


def tree_listing(  # noqa: PLR0913 - options are keyword-only
    settings: Settings,
    path: str,
    rev: str,
    *,
    repo: Path,
    page: int = 1,
) -> TreeListing:
    """The directory `path` ("" for the top) at `rev`: its entries, page `page`."""
    repository = Repo.open(repo)
    sha = repository.resolve(rev)
    prefix = path.strip("/")
    known = _Known(settings, repository, sha)
    files = known.files([f":(literal){prefix}"] if prefix else [])
    if prefix and not files:
        raise NotFound(f"no directory {prefix} in {sha[:12]}")
    if prefix and len(files) == 1 and files[0].path == prefix:
        raise IsAFile(f"{prefix} is a file of {sha[:12]}, not a directory")
    summaries = known.summaries(files)
    verdicts, judged = _verdicts(settings, repo, _commits(summaries.values()))
    groups: dict[str, list[TreeFile]] = {}
    for item in files:
        rest = item.path[len(prefix) + 1 :] if prefix else item.path
        groups.setdefault(rest.split("/", 1)[0], []).append(item)
    entries = [
        _entry(
            name,
            f"{prefix}/{name}" if prefix else name,
            group,
            summaries,
            verdicts,
            directory=len(group) > 1 or group[0].path != _join(prefix, name),
        )
        for name, group in groups.items()
    ]
    entries.sort(key=lambda entry: (entry.kind != "dir", entry.name))
    pages = max(1, -(-len(entries) // PAGE_ENTRIES))
    if page > pages:
        raise NotFound(f"{prefix or 'the top'} has {pages} page{'s' * (pages > 1)}")
    total = _entry(
        prefix.rsplit("/", 1)[-1], prefix, files, summaries, verdicts, directory=True
    )
    return TreeListing(
        rev=sha,
        path=prefix,
        total=total,
        entries=tuple(entries[(page - 1) * PAGE_ENTRIES : page * PAGE_ENTRIES]),
        page=page,
        pages=pages,
        listed=len(entries),
        warmed=known.warmed,
        judged=judged,
    )


def tree_stats(
    settings: Settings, *, repo: Path, rev: str | None = None, depth: int = 1
) -> tuple[list[TreeEntry], TreeEntry]:
    """`e2g stats --by dir --tokens`: each directory at `depth` (files at the top
    in `(top)`), largest first, and the whole tree."""
    repository = Repo.open(repo)
    sha = repository.resolve(rev or "HEAD")
    known = _Known(settings, repository, sha)
    files = known.files([])
    summaries = known.summaries(files)
    if not any(summary is not None for summary in summaries.values()):
        raise NotFound(
            f"no token history of {sha[:12]} is warm: run `e2g tokens warm` first"
        )
    verdicts, _ = _verdicts(settings, repo, _commits(summaries.values()))
    groups: dict[str, list[TreeFile]] = {}
    for item in files:
        directories = item.path.split("/")[:-1]
        key = "/".join(directories[:depth]) if directories else "(top)"
        groups.setdefault(key, []).append(item)
    rows = [
        _entry(key, key, group, summaries, verdicts, directory=True)
        for key, group in groups.items()
    ]
    rows.sort(key=lambda row: (-row.tokens, row.name))
    total = _entry("total", "", files, summaries, verdicts, directory=True)
    return rows, total


class _Known:
    """What is known of a revision's files: the warmed tree's summaries, else each
    file's own cached answer (a bounded number of them)."""

    def __init__(self, settings: Settings, repository: Repo, sha: str) -> None:
        self.settings = settings
        self.repository = repository
        self.sha = sha
        manifest = manifest_of(settings, repository)
        self.warmed = manifest.rev if manifest is not None else None
        self.manifest = manifest if manifest and manifest.rev == sha else None
        self.max_bytes = manifest.max_bytes if manifest is not None else MAX_BYTES

    def files(self, pathspecs: Sequence[str]) -> list[TreeFile]:
        listed = tree_files(
            self.repository, self.sha, pathspecs, max_bytes=self.max_bytes
        )
        if self.manifest is None:
            return listed
        skipped = self.manifest.skipped
        return [
            item._replace(skip=skipped[item.path])
            if item.skip is None and item.path in skipped
            else item
            for item in listed
        ]

    def summaries(self, files: Sequence[TreeFile]) -> dict[str, FileSummary | None]:
        found: dict[str, FileSummary | None] = {}
        looked = 0
        ignore: list[str] | None = None
        for item in files:
            if item.skip is not None:
                continue
            entry = self.manifest.files.get(item.path) if self.manifest else None
            if entry is not None:
                found[item.path] = entry[2]
                continue
            found[item.path] = None
            if looked >= PER_FILE:
                continue
            looked += 1
            if ignore is None:
                ignore = self.repository.ignored_revs()
            name = cache_key(self.repository, item.path, lexer_for(item.path))
            directory = cache_root(self.settings) / name
            if (directory / "results").is_dir():
                found[item.path] = file_summary(directory, self.sha, ignore)
        return found


def _join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


def _commits(summaries: Iterable[FileSummary | None]) -> set[str]:
    return {sha for found in summaries if found is not None for sha in found.commits}


def _verdicts(
    settings: Settings, repo: Path, shas: set[str]
) -> tuple[dict[str, Verdict], bool]:
    """The audit's verdict on each commit (read only); False when the store holds
    nothing to judge them by (no store yet)."""
    if not shas or not settings.store_path.exists():
        return {}, False
    from e2g.api.audit import AuditOptions, audit

    found: dict[str, Verdict] = {}
    ordered = sorted(shas)
    for start in range(0, len(ordered), AUDIT_CHUNK):
        options = AuditOptions(
            revs=tuple(ordered[start : start + AUDIT_CHUNK]),
            walk=False,
            match_first=False,
            jobs=1,
        )
        audit(
            settings,
            repo=repo,
            options=options,
            on_commit=lambda judged: found.__setitem__(judged.sha, judged.verdict),
        )
    return found, True


def _entry(  # noqa: PLR0913
    name: str,
    path: str,
    files: Sequence[TreeFile],
    summaries: dict[str, FileSummary | None],
    verdicts: dict[str, Verdict],
    *,
    directory: bool,
) -> TreeEntry:
    tokens = 0
    commits: set[str] = set()
    by_verdict: Counter[str] = Counter()
    text = [item for item in files if item.skip is None]
    warm = 0
    for item in text:
        summary = summaries.get(item.path)
        if summary is None:
            continue
        warm += 1
        tokens += summary.tokens
        commits.update(summary.commits)
        for sha, count in summary.commits.items():
            verdict = verdicts.get(sha)
            by_verdict[verdict.value if verdict else UNJUDGED] += count
    reviewed = sum(by_verdict[verdict.value] for verdict in LENIENT)
    skipped = None if directory or text else files[0].skip
    return TreeEntry(
        name=name,
        path=path,
        kind="dir" if directory else "file",
        files=len(text),
        warm=warm,
        tokens=tokens,
        commits=len(commits),
        reviewed=reviewed,
        by_verdict=dict(by_verdict.most_common()),
        skipped=skipped,
    )
