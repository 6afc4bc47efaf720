"""The token blame's caches, one directory per (repository, file) under the data
dir's `tokens/` (e2g.api.tokens keeps there the throwaway history and the answer
for each blamed revision): where they live (the data dir, else a private directory
of the user's in the temp dir), how an answer is keyed, read and written (whole or
not at all), and the bound of them all (`[tokens] cache_bytes`, CACHE_BYTES by
default), the files used least recently going first, a warmed tree's never
(`pinned`: e2g.api.token_warm records its trees in the sibling TREES).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Collection, Sequence
from datetime import datetime
from pathlib import Path

from e2g import faults
from e2g.config import Settings
from e2g.errors import UsageError
from e2g.files import replace_whole
from e2g.git.blame import BlameCommit
from e2g.git.lens import lens_directory, open_lens
from e2g.git.repo import Repo
from e2g.git.tokenview import TokenBlame, TokenOrigin, cache_key
from e2g.model import Address
from e2g.tokens.lex import Lexer, Token

CACHE_BYTES = 1 << 30  # the default of the token caches' bound, all files together
RESULTS_PER_FILE = 64  # answers kept per file (32 revisions: tokens and spans)
RESULT_FORMAT = 3
TREES = "token-trees"  # beside the caches' directory: the warmed trees' records
LENSES = "token-lens"  # beside it too: each repository's commit-graph (e2g.git.lens)


def file_cache(settings: Settings, repository: Repo, path: str, lexer: Lexer) -> Path:
    """The file's cache directory: under the data dir, or, where that cannot be
    written (a read-only mount that `e2g serve` reads), under a private directory
    of the user's in the system's temp dir, so the answer is still made."""
    return cache_root(settings) / cache_key(repository, path, lexer)


def history_reader(settings: Settings, repository: Repo) -> Repo:
    """`repository`, reading its file histories through the commit-graph a warm
    wrote for it (e2g.git.lens), where there is one."""
    root = cache_root(settings).parent / LENSES
    return open_lens(lens_directory(root, repository), repository)


def cache_root(settings: Settings) -> Path:
    """Where the files' caches live (see file_cache)."""
    own = settings.data_dir / "tokens"
    if _writable(own):
        return own
    mine = Path(tempfile.gettempdir()) / f"e2g-{os.getuid()}"
    spare = mine / "tokens"
    if _writable(mine, private=True) and _writable(spare, private=True):
        return spare
    raise UsageError(
        f"token blame needs a cache directory it can write: neither {own} nor {spare}"
    )


def _writable(root: Path, *, private: bool = False) -> bool:
    """Whether `root` exists, or was made, as a directory this process can write
    (`private`: and it is the user's own directory, not a link, mode 0700, so that
    no other user of a shared temp dir planted it)."""
    try:
        if private:
            root.mkdir(exist_ok=True, mode=0o700)
        else:
            root.mkdir(parents=True, exist_ok=True)
        status = root.lstat()
    except OSError:
        return False
    if private and (
        not stat.S_ISDIR(status.st_mode)
        or status.st_uid != os.getuid()
        or status.st_mode & 0o077
    ):
        return False
    return os.access(root, os.W_OK | os.X_OK)


# -- the answers' cache -------------------------------------------------------------------


def result_key(sha: str, ignore: Sequence[str], contents: str | None) -> str:
    digest = hashlib.sha256()
    for part in (str(RESULT_FORMAT), sha, *ignore):
        digest.update(part.encode("ascii") + b"\0")
    if contents is not None:
        digest.update(contents.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:32]


def read_result(directory: Path, key: str) -> tuple[list[Token], TokenBlame] | None:
    """A cached answer: the tokens (lexing a large file again costs more than
    reading them) and their origins; None when there is none or it is damaged."""
    path = directory / "results" / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        # _make: tuple.__new__ itself, not the class's Python __new__ (2x faster).
        tokens = list(map(Token._make, data["tokens"]))
        shas: list[str] = data["shas"]
        views: list[str] = data["views"]
        make = TokenOrigin._make
        origins = tuple(
            make((shas[index], views[index], line)) for index, line in data["origins"]
        )
        commits = {sha: commit_from_json(item) for sha, item in data["commits"].items()}
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None
    if len(tokens) != len(origins):
        return None
    with contextlib.suppress(OSError):
        os.utime(directory / "results")  # recently used: pruned last
    return tokens, TokenBlame(origins=origins, commits=commits)


def write_result(
    directory: Path, key: str, tokens: Sequence[Token], blamed: TokenBlame
) -> None:
    shas = list(dict.fromkeys(origin.sha for origin in blamed.origins))
    index = {sha: number for number, sha in enumerate(shas)}
    views: dict[str, str] = {}
    for origin in blamed.origins:
        if origin.view_sha or origin.sha not in views:
            views[origin.sha] = origin.view_sha
    data = {
        "tokens": tokens,  # named tuples: json writes each as [line, column, text]
        "shas": shas,
        "views": [views[sha] for sha in shas],
        "origins": [[index[origin.sha], origin.line] for origin in blamed.origins],
        "commits": {
            sha: commit_json(commit)
            for sha, commit in blamed.commits.items()
            if sha in index
        },
    }
    write_json(directory, key, data)


def write_json(directory: Path, key: str, data: object) -> None:
    """An answer written whole or not at all (a reader never sees half of one), and
    the answers of this file used least recently removed past RESULTS_PER_FILE."""
    faults.point("tokens.result")
    results = directory / "results"
    results.mkdir(parents=True, exist_ok=True)
    # A name of its own per writer: the web answers from several threads at once.
    descriptor, name = tempfile.mkstemp(dir=results, prefix=f".{key}.", suffix=".tmp")
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        # dumps, then one write: json.dump encodes in Python, chunk by chunk (an
        # answer of 1.5 MB: 191 ms -> 30 ms; 4.1 s of a 108-file update at -j 1).
        handle.write(json.dumps(data, separators=(",", ":")))
        handle.flush()
        os.fsync(handle.fileno())
    Path(name).replace(results / f"{key}.json")
    kept = sorted(results.glob("*.json"), key=_mtime, reverse=True)
    for old in kept[RESULTS_PER_FILE:]:
        with contextlib.suppress(OSError):
            old.unlink()


LINES_FROM = "lines-from.json"  # the paths the file's last line blame named
MAX_LINES_FROM = 1 << 20


def read_lines_from(directory: Path) -> frozenset[str]:
    """The paths the file's last line blame named (e2g.git.lineblame follows them
    from its first try); none when there is no such record or it is damaged."""
    try:
        with (directory / LINES_FROM).open("rb") as handle:
            data = json.loads(handle.read(MAX_LINES_FROM + 1))
    except (OSError, ValueError):
        return frozenset()
    paths = data.get("paths") if isinstance(data, dict) else None
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        return frozenset()
    return frozenset(paths)


def write_lines_from(directory: Path, paths: Sequence[str]) -> None:
    """Replaced whole (a hint: a record lost or damaged only costs a try, so it is
    not synced); too many paths to be worth following are not recorded."""
    data = json.dumps({"paths": sorted(paths)}).encode("utf-8", "surrogateescape")
    if len(data) <= MAX_LINES_FROM and directory.is_dir():
        replace_whole(directory / LINES_FROM, data, sync=False)


def commit_json(commit: BlameCommit) -> dict[str, str]:
    return {
        "summary": commit.summary,
        "name": commit.author.name,
        "email": commit.author.email,
        "author_date": commit.author_date.isoformat(),
        "commit_date": commit.commit_date.isoformat(),
    }


def commit_from_json(item: dict[str, str]) -> BlameCommit:
    return BlameCommit(
        sha="",
        summary=item["summary"],
        author=Address(item["name"], item["email"]),
        author_date=datetime.fromisoformat(item["author_date"]),
        commit_date=datetime.fromisoformat(item["commit_date"]),
    )


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def pinned(root: Path) -> frozenset[str]:
    """The caches (directory names under `root`) of every warmed tree, and of every
    warm under way: never evicted. Each warm's record (its `.json`, e2g.api.token_warm)
    and pins (`.pins`, written before its first file) sit in `root`'s sibling
    TREES."""
    names: set[str] = set()
    directory = root.parent / TREES
    for place in directory.iterdir() if directory.is_dir() else ():
        try:
            if place.suffix == ".pins":
                names.update(place.read_text(encoding="utf-8").split())
            elif place.suffix == ".json":
                data = json.loads(place.read_text(encoding="utf-8"))
                names.update(entry[0] for entry in data["files"].values())
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            continue
    return frozenset(names)


def prune_cache(
    settings: Settings,
    *,
    keep: Path | None = None,
    measured: Sizes | None = None,
    changed: Collection[str] = (),
) -> None:
    """The token caches brought within the settings' bound (`[tokens] cache_bytes`),
    leaving `keep` and every file of a warmed tree (e2g.api.token_warm) alone.
    `measured`: the caches' sizes found earlier (cache_sizes), trusted for every
    cache but those named in `changed` (and those new since), which are measured
    again."""
    root = cache_root(settings)
    _prune(
        root,
        keep=keep,
        limit=settings.token_cache_bytes,
        pinned=pinned(root),
        measured=measured,
        changed=changed,
    )


Sizes = dict[str, int]  # a cache's directory name -> its bytes


def cache_sizes(settings: Settings) -> Sizes:
    """The bytes of every file's cache, as they are now: measured once while a
    tree's walk runs, so that the prune at its end measures only the caches the
    warm wrote (git.git's 4,845 caches, 102 commits on: that prune 3.0 s ->
    0.25 s of a 60 s update)."""
    root = cache_root(settings)
    return {
        directory.name: _size(directory)
        for directory in _caches(root)
        if not directory.name.startswith(".")
    }


def _caches(root: Path) -> list[Path]:
    try:
        return list(root.iterdir())
    except OSError:
        return []


def _size(directory: Path) -> int:
    """The bytes of the files under `directory`, as they are now: another process
    writes its cache beside this one (a temporary file made and renamed or removed
    between the listing and the stat), so a file or folder gone meanwhile counts
    as nothing."""
    total = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                total += _size(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                found = entry.stat(follow_symlinks=False)
                # A warm carries answers as second names of one file: counted once.
                total += found.st_size // max(found.st_nlink, 1)
        except OSError:
            continue
    return total


def _prune(  # noqa: PLR0913 - options are keyword-only
    root: Path,
    *,
    keep: Path | None,
    limit: int = CACHE_BYTES,
    pinned: frozenset[str] = frozenset(),
    measured: Sizes | None = None,
    changed: Collection[str] = (),
) -> None:
    """Remove the files' caches used least recently until all fit in `limit`. A
    cache in use (its lock held) is left alone; one is renamed away before it is
    removed, so no reader ever sees half of one. The caches named in `pinned` (a
    warmed tree's) are never removed, though they count. A size in `measured` is
    taken as it is unless its cache is named in `changed`; when each was used
    last is read again (two stats a cache)."""
    known = measured or {}
    fresh = set(changed)
    sizes: list[tuple[float, int, Path]] = []
    for directory in _caches(root):
        if directory.name.startswith("."):
            shutil.rmtree(directory, ignore_errors=True)  # left by a killed prune
            continue
        size = known.get(directory.name)
        if size is None or directory.name in fresh:
            size = _size(directory)
        sizes.append(
            (
                max(_mtime(directory / "results"), _mtime(directory / "state.json")),
                size,
                directory,
            )
        )
    total = sum(size for _, size, _ in sizes)
    for _, size, directory in sorted(sizes):
        if total <= limit:
            return
        if directory == keep or directory.name in pinned:
            continue
        trash = root / f".trash-{directory.name}-{time.monotonic_ns()}"
        with contextlib.suppress(OSError):
            directory.rename(trash)
            shutil.rmtree(trash, ignore_errors=True)
            total -= size
