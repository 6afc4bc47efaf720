"""`e2g tokens warm`: the token history of every text file of a tree, computed ahead
and kept, so that every file's token page, `blame --tokens` and the tree's page
(e2g.api.token_tree) only read.

Work shared across the tree's files: one walk of the repository's history gives
every file's revisions (e2g.git.treehistory, where one `git log -- PATH` per file
walked the whole history again for each), then each file's throwaway history is
brought up to date and blamed (e2g.api.tokens.token_origins) in worker processes,
the largest files first. The per-file cache stays the unit: a file warmed here is
the entry single-file use reads, and the reverse.

Resumable: each file's answer is written whole when it is done (atomically, as
single-file use writes it), and a run finds the answers already there and skips
them; a killed run leaves its files' throwaway histories as far as their last saved
state. Kept: the tree's files are pinned in the cache (token_cache.pinned), the
bound (`[tokens] cache_bytes`) evicting only other files; the pins of a warm under
way are written before its first file. Kept current: a warm of a later revision (or
`e2g sync`, `warm_known`) carries every file whose history did not change (the same
newest revision of the file) to the new revision by copying its answer, and redoes
only the others, each from its throwaway history at the revision before (only the
new revisions are imported).

The record of a warmed tree (the manifest, one per repository under the cache's
sibling `token-trees/`): the revision, and per file its cache, its newest
revision, its token count and how many of its tokens each commit wrote, which
the tree's page sums per directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from e2g import faults
from e2g.api.token_cache import (
    LENSES,
    TREES,
    Sizes,
    cache_root,
    cache_sizes,
    prune_cache,
    read_result,
)
from e2g.api.tokens import spans_key, token_origins, write_spans
from e2g.config import Settings
from e2g.errors import E2gError, RepoError, UsageError
from e2g.git.ancestry import Ancestry, ancestry_path
from e2g.git.lens import lens_directory, write_lens
from e2g.git.repo import Repo, looks_binary
from e2g.git.tokenview import TokenBlame, cache_key
from e2g.git.treefiles import TreeFile, tree_files
from e2g.git.treehistory import History, touched_since, tree_histories
from e2g.git.treelog import tree_log
from e2g.tokens.lex import Token, lexer_for

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

MANIFEST_FORMAT = 1
MAX_BYTES = 1 << 20  # a file larger than this is not warmed (`--max-bytes`)
# A file's history as the walk gives it to the worker that blames it: as it is, or
# pickled by the walk's own process; None: the worker reads it (file_history).
Walked = History | bytes | None


class FileSummary(NamedTuple):
    """What the tree's page shows of a file: its tokens, and how many of them each
    commit wrote."""

    tokens: int
    commits: dict[str, int]


class WarmEvent(NamedTuple):
    done: int
    total: int
    path: str
    outcome: str  # "warmed", "cached", "carried", "skipped", "failed"


@dataclass(slots=True)
class WarmReport:
    rev: str
    files: int = 0  # the tree's files
    warmed: int = 0  # blamed now
    cached: int = 0  # already warm at this revision
    carried: int = 0  # unchanged since the warm before: its answer copied
    skipped: Counter[str] = field(default_factory=Counter)  # by reason
    failed: list[tuple[str, str]] = field(default_factory=list)
    walk_seconds: float = 0.0
    elapsed: float = 0.0


class Manifest(NamedTuple):
    """A warmed tree: its revision and its files' summaries (by path)."""

    root: str  # the repository, as it was opened
    rev: str
    ignore: tuple[str, ...]
    pathspecs: tuple[str, ...]
    max_bytes: int
    files: dict[str, tuple[str, str | None, FileSummary]]  # cache dir, tip, summary
    skipped: dict[str, str]


def warm(  # noqa: PLR0913 - options are keyword-only
    settings: Settings,
    *,
    repo: Path,
    rev: str | None = None,
    pathspecs: Sequence[str] = (),
    jobs: int = 0,
    max_bytes: int = MAX_BYTES,
    progress: Callable[[WarmEvent], None] | None = None,
) -> WarmReport:
    """Warm every text file of `rev` (default HEAD) under `pathspecs`."""
    started = time.monotonic()
    repository = Repo.open(repo)
    sha = repository.resolve(rev or "HEAD")
    listed = tree_files(repository, sha, pathspecs, max_bytes=max_bytes)
    if pathspecs and not listed:
        raise UsageError(
            f"no file of {sha[:12]} matches {' '.join(pathspecs)}: give paths of the tree"
        )
    run = _Warm(settings, repository, sha, listed, progress)
    with _warming(run.place, repository):
        # The graph single files' histories are read through (git.git: 6 s once).
        write_lens(
            lens_directory(run.root.parent / LENSES, repository), repository, [sha]
        )
        run.before = read_manifest(run.place)  # as it is now that the lock is ours
        _write_pins(run.place, run.dirs.values())
        run.read_cached()
        run.carry_untouched()
        width = _width(jobs, len(run.todo))
        sizes: list[Sizes] = []
        with _workers(width) as pool:
            # The caches measured for the prune at the end while the history is
            # walked: that prune measures again only what this warm wrote.
            histories = run.walk(
                apart=pool is not None,
                meanwhile=lambda: sizes.append(cache_sizes(settings)),
            )
            run.carry()
            written = run.copied | {run.dirs[path] for path in run.todo}
            tasks = sorted(run.todo, key=lambda path: -run.files[path].size)
            heavy = {path for path in tasks if run.files[path].size >= HEAVY_BYTES}
            ancestry = ancestry_path(run.place.with_suffix(".log"))
            for path, outcome, found in _run(
                settings,
                repository,
                (sha, ancestry, run.ignore),
                (tasks, heavy),
                histories,
                (pool, width),
            ):
                run.done(path, outcome, found)
        _write_manifest(run.place, run.manifest(pathspecs, max_bytes))
        with contextlib.suppress(FileNotFoundError):
            run.place.with_suffix(".pins").unlink()
    prune_cache(settings, measured=sizes[0] if sizes else None, changed=written)
    run.report.elapsed = time.monotonic() - started
    return run.report


class _Warm:
    """One warm's state: the tree's files, what is left to do, what is known."""

    def __init__(  # noqa: PLR0913
        self,
        settings: Settings,
        repository: Repo,
        sha: str,
        listed: Sequence[TreeFile],
        progress: Callable[[WarmEvent], None] | None,
    ) -> None:
        self.repository = repository
        self.sha = sha
        self.ignore = tuple(repository.ignored_revs())
        self.report = WarmReport(rev=sha, files=len(listed))
        self.root = cache_root(settings)
        self.place = _manifest_path(self.root, repository)
        self.before: Manifest | None = None
        self.files = {f.path: f for f in listed if f.skip is None}
        self.skipped = {f.path: f.skip for f in listed if f.skip is not None}
        self.dirs = {path: _cache_name(repository, path) for path in self.files}
        self.summaries: dict[str, FileSummary] = {}
        self.tips: dict[str, str | None] = {}
        self.todo: set[str] = set()
        self.copied: set[str] = set()  # caches whose answers were carried as copies
        self._progress = progress
        self._count = 0

    def tell(self, path: str, outcome: str) -> None:
        self._count += 1
        if self._progress is not None:
            self._progress(WarmEvent(self._count, len(self.files), path, outcome))

    def read_cached(self) -> None:
        """The files already warm at this revision: their summaries (and, from a
        warm of this revision before, their newest revisions)."""
        if self.before is not None and self.before.rev == self.sha:
            self.tips = {p: tip for p, (_, tip, _) in self.before.files.items()}
        key = spans_key(self.sha, self.ignore, None)
        known = (
            self.before.skipped if self.before and self.before.rev == self.sha else {}
        )
        for path, name in self.dirs.items():
            if path in known:  # a binary, found by its bytes the last time
                self.skipped[path] = known[path]
                self.tips.setdefault(path, None)
                self.tell(path, "skipped")
                continue
            directory = self.root / name
            summary = None
            if (directory / "results" / f"{key}.json").is_file():
                summary = file_summary(directory, self.sha, self.ignore)
            if summary is None:
                self.todo.add(path)
            else:
                self.summaries[path] = summary
                self.report.cached += 1
                self.tell(path, "cached")

    def walk(self, apart: bool, meanwhile: Callable[[], object]) -> dict[str, Walked]:
        """The histories of the files left, and the newest revision of every file
        (what the next warm compares), from one walk; none when nothing is left
        and every newest revision is known. `apart`: in a process of its own,
        each history given back pickled for the worker that blames it, while
        this one calls `meanwhile` (before the walk otherwise)."""
        wanted = sorted(self.todo | {p for p in self.files if p not in self.tips})
        if not wanted:
            return {}
        started = time.monotonic()
        keep = self.place.with_suffix(".log")
        if apart:
            tips, histories = _walked_apart(
                self.repository, self.sha, wanted, keep, meanwhile
            )
        else:
            meanwhile()
            walked = _walk(self.repository, self.sha, wanted, keep)
            tips = _tips(walked)
            histories = dict(walked)
        self.report.walk_seconds = time.monotonic() - started
        self.tips.update(tips)
        for path in sorted(self.todo):
            if histories.get(path) is not None and tips.get(path) is None:
                self.todo.remove(path)  # a shallow clone's: no commit has it
                self.skipped[path] = "no commit has it"
                self.tell(path, "skipped")
        return histories

    def carry_untouched(self) -> None:
        """Files no commit since the warm before touched (the repository moved
        forward along its first parents): copied without walking their history.
        The walk of the others reads the log kept by the warm before and the
        commits since (e2g.git.treelog; git.git, 102 commits on: 12.1 s -> 3.6 s)."""
        before = self.before
        if before is None or before.ignore != self.ignore or before.rev == self.sha:
            return
        try:
            touched = touched_since(self.repository, before.rev, self.sha)
        except E2gError:
            touched = None  # the revision before is gone (a rewritten branch)
        if touched is None:
            return
        for path in sorted(self.todo - touched):
            if path in before.skipped:  # a binary, found by its bytes before
                self.skipped[path] = before.skipped[path]
                self.tips.setdefault(path, None)
                self.todo.remove(path)
                self.tell(path, "skipped")
                continue
            entry = before.files.get(path)
            self._carry_one(before, path, entry[1] if entry is not None else None)

    def carry(self) -> None:
        """Files whose history did not change since the warm before: copied."""
        before = self.before
        if before is None or before.ignore != self.ignore or before.rev == self.sha:
            return
        for path in sorted(self.todo):
            self._carry_one(before, path, self.tips.get(path))

    def _carry_one(self, before: Manifest, path: str, tip: str | None) -> None:
        """`path` carried from the warm before, when its newest revision `tip` is
        the one it had then and its answers are still there."""
        carried = _carry(
            self.root, before, (path, self.dirs[path]), tip, self.sha, self.ignore
        )
        if carried is not None:
            summary, linked = carried
            if not linked:
                self.copied.add(self.dirs[path])
            self.tips[path] = tip
            self.summaries[path] = summary
            self.todo.remove(path)
            self.report.carried += 1
            self.tell(path, "carried")

    def done(self, path: str, outcome: str, found: FileSummary | str) -> None:
        if isinstance(found, FileSummary):
            self.summaries[path] = found
            self.report.warmed += 1
        elif outcome == "skipped":
            self.skipped[path] = found
        else:
            self.report.failed.append((path, found))
        self.tell(path, outcome)

    def manifest(self, pathspecs: Sequence[str], max_bytes: int) -> Manifest:
        self.report.skipped = Counter(self.skipped.values())
        return Manifest(
            root=str(self.repository.root),
            rev=self.sha,
            ignore=self.ignore,
            pathspecs=tuple(pathspecs),
            max_bytes=max_bytes,
            files={
                path: (self.dirs[path], self.tips.get(path), summary)
                for path, summary in self.summaries.items()
            },
            skipped=self.skipped,
        )


def split_rev(repo: Path, words: Sequence[str]) -> tuple[str | None, list[str]]:
    """`[REV] [PATHSPEC...]` as git reads it: the first word is the revision when
    it names a commit, else every word is a pathspec."""
    if not words:
        return None, []
    from e2g.errors import UnknownCommit

    try:
        Repo.open(repo).resolve(words[0])
    except UnknownCommit:
        return None, list(words)
    return words[0], list(words[1:])


def warm_known(
    settings: Settings, *, jobs: int = 0
) -> list[tuple[str, WarmReport | str]]:
    """Each warmed tree brought to its repository's HEAD (what `e2g sync` runs):
    per repository its report, or why it could not be."""
    found: list[tuple[str, WarmReport | str]] = []
    for manifest in manifests(settings):
        try:
            report = warm(
                settings,
                repo=Path(manifest.root),
                pathspecs=manifest.pathspecs,
                jobs=jobs,
                max_bytes=manifest.max_bytes,
            )
        except E2gError as error:
            found.append((manifest.root, str(error)))
        else:
            found.append((manifest.root, report))
    return found


# -- one file -----------------------------------------------------------------------------


_worker_repo: dict[str, Repo] = {}


def _start(parent: int) -> None:
    from e2g import processes

    processes.exit_with(parent)


def _walked_apart(
    repository: Repo,
    sha: str,
    wanted: Sequence[str],
    keep: Path,
    meanwhile: Callable[[], object],
) -> tuple[dict[str, str | None], dict[str, Walked]]:
    """tree_histories in a process of its own, ended when it is done: the log and
    the walk's tables (git.git: 260 MB) go back to the system with it, where the
    warm's own process kept them to its end beside the workers (the whole tree's
    peak, 1,164 MB summed). Each file's newest revision, and its history pickled
    (37 MB for all of git.git's) for the worker that blames it."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from e2g import processes

    with ProcessPoolExecutor(
        1, mp_context=processes.context(), initializer=_start, initargs=(os.getpid(),)
    ) as walker:
        walked = walker.submit(
            _walk_job, str(repository.root), sha, list(wanted), str(keep)
        )
        meanwhile()
        try:
            return walked.result()
        except BrokenProcessPool:
            raise RepoError(
                "the history walk's process died (killed, or out of memory)"
            ) from None


def _walk(
    repository: Repo, sha: str, wanted: Sequence[str], keep: Path
) -> dict[str, History | None]:
    """The files' histories from one walk of the log (kept at `keep`), and every
    commit's changed paths written beside it for the workers' line blames
    (e2g.git.lineblame: the history of a file and the files its lines came from,
    instead of git's walk of every commit)."""
    log = tree_log(repository, sha, keep)
    walked = tree_histories(repository, sha, wanted, log=log)
    Ancestry.of(log).write(ancestry_path(keep))
    return walked


def _walk_job(
    root: str, sha: str, wanted: list[str], keep: str
) -> tuple[dict[str, str | None], dict[str, Walked]]:
    walked = _walk(Repo.open(Path(root)), sha, wanted, Path(keep))
    return (
        _tips(walked),
        {
            path: None if found is None else pickle.dumps(found, protocol=5)
            for path, found in walked.items()
        },
    )


def _tips(walked: dict[str, History | None]) -> dict[str, str | None]:
    """Each walked file's newest revision (None: none, or left to file_history)."""
    return {path: found[1] if found else None for path, found in walked.items()}


_worker_ancestry: dict[str, tuple[tuple[int, ...], Ancestry | None]] = {}


def _ancestry(place: str, sha: str) -> Ancestry | None:
    """The commits' changed paths the walk wrote, read once per worker (again
    when the file was replaced); None when it is not there or not of `sha`."""
    try:
        status = Path(place).stat()
    except OSError:
        return None
    stamp = (status.st_ino, status.st_size, status.st_mtime_ns)
    known = _worker_ancestry.get(place)
    if known is None or known[0] != stamp:
        known = _worker_ancestry[place] = (stamp, Ancestry.read(Path(place)))
    found = known[1]
    return found if found is not None and found.head == sha else None


def _warm_one(
    job: tuple[Settings, str, tuple[str, Path, tuple[str, ...]], str, Walked],
) -> tuple[str, str, FileSummary | str]:
    """One file blamed and its answers cached: its summary, or why it was not."""
    settings, root, (sha, ancestry, ignore), path, walked = job
    # Pickled by the walk's own process (our own bytes, never a file's).
    history = pickle.loads(walked) if isinstance(walked, bytes) else walked  # noqa: S301
    try:
        repository = _worker_repo.get(root)
        if repository is None:
            repository = _worker_repo[root] = Repo.open(Path(root))
        text = repository.file_text(sha, path)
        if looks_binary(text):
            return path, "skipped", "binary"
        lexer = lexer_for(path)
        directory = cache_root(settings) / cache_key(repository, path, lexer)
        found = token_origins(
            settings,
            repository,
            path,
            sha,
            lexer,
            text=text,
            contents=None,
            ignore=ignore,
            directory=directory,
            walked=history,
            ancestry=_ancestry(str(ancestry), sha) if history else None,
            prune=False,
        )
        write_spans(
            directory, spans_key(sha, ignore, None), path=path, text=text, found=found
        )
        faults.point("tokens.warmed")
        return path, "warmed", _count(*found)
    except E2gError as error:
        return path, "failed", str(error)


def _width(jobs: int, count: int) -> int:
    """How many workers blame `count` files (`jobs` 0: one a core, at most two)."""
    return min(jobs if jobs > 0 else min(2, os.cpu_count() or 1), max(count, 1))


@contextlib.contextmanager
def _workers(width: int) -> Iterator[ProcessPoolExecutor | None]:
    """`width` worker processes (None: fewer than two, the files are blamed here),
    started before the history walk: a forked worker holds what its parent held
    (git.git, workers forked after the walk: 1,333 MB summed PSS at the peak)."""
    if width < 2:
        yield None
        return
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from e2g import processes

    with ProcessPoolExecutor(
        width,
        mp_context=processes.context(),
        initializer=_start,
        initargs=(os.getpid(),),
    ) as pool:
        try:
            # Forks every worker now (under fork, the first task starts them all).
            pool.submit(os.getpid).result()
        except BrokenProcessPool:
            raise RepoError("a token blame worker died as it started") from None
        yield pool


def _run(  # noqa: PLR0913 - the warm's state
    settings: Settings,
    repository: Repo,
    at: tuple[str, Path, tuple[str, ...]],
    paths: tuple[Sequence[str], Collection[str]],
    histories: dict[str, Walked],
    workers: tuple[ProcessPoolExecutor | None, int],
) -> Iterator[tuple[str, str, FileSummary | str]]:
    """Each file's outcome as it comes (`at`: the revision, where the walk
    wrote its ancestry, and the commits blame looks through, read once for the
    warm: a `git config` per file less; `paths`: the files in the order to blame
    them, and the heavy ones): in the worker processes of `workers` (a pool and
    its width) when there are, handed out by a _Dispatch (a worker that dies,
    killed or out of memory, ends the run: what was done is kept, and the next
    run resumes)."""
    order, heavy = paths
    pool, width = workers
    work = {
        path: (settings, str(repository.root), at, path, histories.get(path))
        for path in order
    }
    if pool is None or len(work) < 2:
        for job in work.values():
            yield _warm_one(job)
        return
    from concurrent.futures import FIRST_COMPLETED, Future, wait
    from concurrent.futures.process import BrokenProcessPool

    dispatch = _Dispatch(order, heavy, width)
    running: dict[Future[tuple[str, str, FileSummary | str]], str] = {}
    try:
        while True:
            for path in dispatch.ready():
                running[pool.submit(_warm_one, work[path])] = path
            if not running:
                return
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                dispatch.finished(running.pop(future))
                yield future.result()
    except BrokenProcessPool:
        raise RepoError(
            "a token blame worker died (killed, or out of memory); what it "
            "finished is kept: run `e2g tokens warm` again to go on"
        ) from None
    finally:
        for future in running:
            future.cancel()


# A file this large takes its worker, and the gits of its two blames, to some 300-500
# MB (git.git's translation catalogs, 0.5-1.1 MB: git's own `blame -C` 140-260 MB).
HEAVY_BYTES = 256 << 10


class _Dispatch:
    """Which files to hand the workers next, in the order given, keeping at most
    half of them (at least one) on heavy files while light ones remain: two
    workers on catalogs at once, beside their gits, took git.git's whole tree to
    995 MB summed. One file more than there are workers is handed out (queued), so
    none idles while the next is chosen."""

    def __init__(self, order: Sequence[str], heavy: Collection[str], width: int):
        self._heavy = [path for path in order if path in heavy]
        self._light = [path for path in order if path not in heavy]
        self._heavy.reverse()  # popped from the end: the order given
        self._light.reverse()
        self._width = width
        self._cap = max(1, width // 2)
        self._running: dict[str, bool] = {}

    def ready(self) -> list[str]:
        """The files to hand out now."""
        handed = []
        while len(self._running) < self._width + 1:
            busy = sum(self._running.values())
            if self._heavy and (busy < self._cap or not self._light):
                path, heavy = self._heavy.pop(), True
            elif self._light:
                path, heavy = self._light.pop(), False
            else:
                break
            self._running[path] = heavy
            handed.append(path)
        return handed

    def finished(self, path: str) -> None:
        del self._running[path]


def _count(tokens: Sequence[Token], blamed: TokenBlame) -> FileSummary:
    return FileSummary(
        len(tokens), dict(Counter(origin.sha for origin in blamed.origins))
    )


def file_summary(
    directory: Path, sha: str, ignore: Sequence[str]
) -> FileSummary | None:
    """A file's summary from its cached answer at `sha`; None when it has none."""
    key = spans_key(sha, ignore, None).removesuffix(".spans")
    found = read_result(directory, key)
    return None if found is None else _count(*found)


def _carry(  # noqa: PLR0913
    root: Path,
    before: Manifest,
    file: tuple[str, str],
    tip: str | None,
    sha: str,
    ignore: Sequence[str],
) -> tuple[FileSummary, bool] | None:
    """A file (its path, and its cache's name now) whose newest revision is the
    one it had at the warm before: its answers there copied to `sha` (the same
    history gives the same answer), and whether they were linked (the cache no
    larger: see _copy); None when it changed, when its cache is another now
    (another lexer reads it), or when the answers before are gone."""
    path, name = file
    entry = before.files.get(path)
    if entry is None or tip is None or entry[1] != tip or entry[0] != name:
        return None
    directory = root / entry[0]
    results = directory / "results"
    old = spans_key(before.rev, ignore, None).removesuffix(".spans")
    new = spans_key(sha, ignore, None).removesuffix(".spans")
    for suffix in ("", ".spans"):
        if not (results / f"{old}{suffix}.json").is_file():
            return None
    linked = True
    for suffix in ("", ".spans"):
        linked &= _copy(
            results / f"{old}{suffix}.json", results / f"{new}{suffix}.json"
        )
    return entry[2], linked


def _copy(source: Path, target: Path) -> bool:
    """`source`'s answer under the name `target` too, whole or not at all: a second
    name of the same file (answers are never written in place, only replaced), its
    time made now so that the answers kept per file (by time) keep it; a copy
    where the file system has no hard links (False). git.git, 4,715 files
    carried: 9,430 copies each synced, ~10 s, against ~0.1 s of links. A second
    name leaves the cache's size as the prune counts it (each name a share)."""
    name = target.parent / f".{target.stem}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    linked = True
    try:
        os.link(source, name)
        os.utime(name)
    except OSError:
        linked = False
        name.unlink(missing_ok=True)
        descriptor, made = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.stem}.", suffix=".tmp"
        )
        name = Path(made)
        with os.fdopen(descriptor, "wb") as handle, source.open("rb") as read:
            shutil.copyfileobj(read, handle)
            handle.flush()
            os.fsync(handle.fileno())
    name.replace(target)
    return linked


@contextlib.contextmanager
def _warming(place: Path, repository: Repo) -> Iterator[None]:
    """One warm of a repository at a time (its record and pins are one file each)."""
    from e2g.locks import flock_within

    place.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(place.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not flock_within(descriptor, 0):
            raise RepoError(
                f"another e2g is warming the token tree of {repository.root}: "
                "wait for it, or stop it"
            )
        yield
    finally:
        os.close(descriptor)


# -- the record of warmed trees -----------------------------------------------------------


def _cache_name(repository: Repo, path: str) -> str:
    return cache_key(repository, path, lexer_for(path))


def _manifest_path(root: Path, repository: Repo) -> Path:
    digest = hashlib.sha256(
        str(repository.common_dir).encode("utf-8", "surrogateescape")
    )
    return root.parent / TREES / f"{digest.hexdigest()[:32]}.json"


def manifest_of(settings: Settings, repository: Repo) -> Manifest | None:
    """The warmed tree of `repository`, if it has one."""
    return read_manifest(_manifest_path(cache_root(settings), repository))


def manifests(settings: Settings) -> list[Manifest]:
    directory = cache_root(settings).parent / TREES
    found = []
    for place in sorted(directory.glob("*.json")) if directory.is_dir() else ():
        manifest = read_manifest(place)
        if manifest is not None:
            found.append(manifest)
    return found


def read_manifest(place: Path) -> Manifest | None:
    try:
        data = json.loads(place.read_text(encoding="utf-8"))
        if data.get("format") != MANIFEST_FORMAT:
            return None
        shas: list[str] = data["shas"]
        files = {
            path: (
                name,
                tip,
                FileSummary(tokens, {shas[number]: count for number, count in counts}),
            )
            for path, (name, tip, tokens, counts) in data["files"].items()
        }
        return Manifest(
            root=data["root"],
            rev=data["rev"],
            ignore=tuple(data["ignore"]),
            pathspecs=tuple(data["pathspecs"]),
            max_bytes=int(data["max_bytes"]),
            files=files,
            skipped=dict(data["skipped"]),
        )
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def _write_manifest(place: Path, manifest: Manifest) -> None:
    shas: dict[str, int] = {}
    files: dict[str, Any] = {}
    for path, (name, tip, summary) in manifest.files.items():
        counts = [
            [shas.setdefault(sha, len(shas)), count]
            for sha, count in summary.commits.items()
        ]
        files[path] = [name, tip, summary.tokens, counts]
    data = {
        "format": MANIFEST_FORMAT,
        "root": manifest.root,
        "rev": manifest.rev,
        "ignore": list(manifest.ignore),
        "pathspecs": list(manifest.pathspecs),
        "max_bytes": manifest.max_bytes,
        "shas": list(shas),
        "files": files,
        "skipped": manifest.skipped,
    }
    faults.point("tokens.manifest")
    _write_atomic(
        place,
        json.dumps(data, separators=(",", ":")).encode("utf-8", "surrogateescape"),
    )


def _write_pins(place: Path, names: Iterable[str]) -> None:
    _write_atomic(place.with_suffix(".pins"), "\n".join(sorted(set(names))).encode())


def _write_atomic(place: Path, data: bytes) -> None:
    place.parent.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(
        dir=place.parent, prefix=f".{place.name}.", suffix=".tmp"
    )
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    Path(name).replace(place)
