"""Token blame: which commit put each token of a file there, as git would say if the
file were written one token to a line.

That is cregit's idea (German, Adams, Stewart, EMSE 2019), done per file and on
demand instead of for a whole repository: the file's history (`git log --parents
-- PATH`, with git's parent rewriting, followed back through renames and copies)
is written with `git fast-import` into a throwaway bare repository, one commit per
revision, each holding the revision's token view (`e2g.tokens.lex`) as one file; then
`git blame --porcelain -M` there says which revision brought each token, and the
commit messages map revisions back to the real commits. Git's own diff aligns the
tokens, so repeated tokens (`;`, `)`) pair as git pairs lines, which a pure token diff
in Python did differently on 11-18% of tokens of a long history
(../shared/PACKAGES.md).

The throwaway repository is the cache: it lives under the caller's cache directory,
keyed by repository, path and lexer, and a later revision of the same file imports
only its new revisions. Its state (which real commit became which revision) is one
JSON file replaced atomically after git wrote the revisions it names, under an
exclusive lock: a run killed at any point leaves either the old state or the new,
and objects no state names are merely unused. Nothing here touches the user's
repository beyond reading it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from e2g import faults
from e2g.errors import RepoError
from e2g.git.blame import BlameCommit, parse_blame
from e2g.git.filehistory import Revision
from e2g.git.repo import FULL_SHA, Repo
from e2g.git.tokenmemo import MoveMemo
from e2g.git.tokenmoves import HUNK, MOVE_CONTEXT, moved_lines, short_runs
from e2g.git.viewgit import view_git, view_git_at_once
from e2g.git.viewimport import VIEW_PATH, fast_import, read_marks
from e2g.locks import flock_within
from e2g.model import Address
from e2g.tokens.lex import VERSION as LEX_VERSION
from e2g.tokens.lex import Lexer

FORMAT = 1  # of the state file and the view: another value rebuilds the cache
MAX_HISTORY_STEPS = 64  # of one token's history
WINDOW = 100  # view lines blamed around a token whose origin is looked behind
SPLIT_TOKENS = 20_000  # a view longer than this is blamed in two halves at once
SPLIT_MOVES = 16  # from this many (>= 2) commits, their diffs are read by two gits
_MAX_RANGES = 1000
LOCK_SECONDS = 600.0  # waiting for another e2g building the same file's history


class TokenOrigin(NamedTuple):
    """Where a token of the blamed revision came from."""

    sha: str  # the real commit (UNCOMMITTED for the work tree's own)
    view_sha: str  # the throwaway commit, for a token's history
    line: int  # the token's line in that commit's view, from 1


class TokenBlame(NamedTuple):
    origins: tuple[TokenOrigin, ...]  # one per token of the blamed revision
    commits: dict[str, BlameCommit]  # by real sha
    merges: frozenset[str] = frozenset()  # the real shas among them that are merges


@dataclass(slots=True)
class _State:
    commits: dict[str, str] = field(default_factory=dict)  # revision key -> view sha

    def reverse(self) -> dict[str, str]:
        """View sha -> the real commit's sha."""
        return {view: key.partition(":")[0] for key, view in self.commits.items()}

    def views_of(self, shas: Sequence[str]) -> list[str]:
        """The view commits of real commits (one per path the file had there)."""
        wanted = set(shas)
        return [
            view
            for key, view in self.commits.items()
            if key.partition(":")[0] in wanted
        ]


# -- the throwaway repository -----------------------------------------------------------


def cache_key(repo: Repo, path: str, lexer: Lexer) -> str:
    """The name of a file's throwaway history: its repository, path and lexer."""
    text = f"{FORMAT}\x00{LEX_VERSION}\x00{repo.common_dir}\x00{path}\x00{lexer.name}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


class TokenHistory:
    """A file's throwaway token history under `directory`, held under its lock."""

    def __init__(self, repo: Repo, path: str, lexer: Lexer, directory: Path) -> None:
        self._repo = repo
        self._path = path
        self._lexer = lexer
        self._dir = directory
        self._git_dir = directory / "view.git"
        self._state_path = directory / "state.json"
        self._lock: int | None = None
        self.state = _State()
        self._memo = MoveMemo(directory, read=False)  # read under the lock

    def __enter__(self) -> TokenHistory:
        self._dir.mkdir(parents=True, exist_ok=True)
        self._lock = _lock(self._dir / "lock", self._path)
        self.state = self._load()
        self._memo = MoveMemo(self._dir)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def _load(self) -> _State:
        try:
            data = json.loads(self._state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        valid = (
            isinstance(data, dict)
            and data.get("format") == FORMAT
            and data.get("path") == self._path
            and isinstance(data.get("commits"), dict)
            and (self._git_dir / "HEAD").is_file()
        )
        if not valid:
            self.reset()
            return _State()
        assert isinstance(data, dict)
        return _State(commits=dict(data["commits"]))

    def reset(self) -> None:
        """Start the throwaway history afresh (a damaged or outdated cache)."""
        shutil.rmtree(self._git_dir, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            self._state_path.unlink()
        self._memo.forget()
        # No template: its sample hooks and their like were 15 of a cache's ~35 files
        # (the bound's size count of a warmed git.git: 4.7 s).
        view_git(None, ["init", "-q", "--bare", "--template=", str(self._git_dir)])
        with (self._git_dir / "config").open("a", encoding="ascii") as config:
            config.write("[gc]\n\tauto = 0\n")  # one git the less per file
        self.state = _State()

    def update(self, revisions: Sequence[Revision]) -> int:
        """Write the revisions not written before (parents first); how many."""
        todo = [
            revision for revision in revisions if revision.key not in self.state.commits
        ]
        if not todo:
            return 0
        with tempfile.TemporaryDirectory(dir=self._dir) as scratch:
            marks = Path(scratch) / "marks"
            fast_import(
                self._repo, self._git_dir, todo, self.state.commits, self._lexer, marks
            )
            written = read_marks(marks, todo)
        self._lexer.forget()  # the views are written: what it kept is done with
        self.state.commits.update(written)
        self._save()
        return len(todo)

    def _save(self) -> None:
        faults.point("tokens.state")
        data = {"format": FORMAT, "path": self._path, "commits": self.state.commits}
        temporary = self._state_path.with_name(f".state.{os.getpid()}.tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, separators=(",", ":")))  # C, not chunks
            handle.flush()
            os.fsync(handle.fileno())
        temporary.replace(self._state_path)

    def blame(
        self,
        tip: str,
        *,
        ignore: Sequence[str] = (),
        contents: bytes | None = None,
        tokens: int = 0,
    ) -> TokenBlame:
        """Each token of the view of revision `tip` (a key, as file_history() names
        it), or of `contents` (the work tree's view on top of it): the commit that
        brought it. Commits in `ignore` are looked through. A view of `tokens` lines
        (when given) past SPLIT_TOKENS is blamed in two halves at once."""
        view_head = self.state.commits[tip]
        # -M finds code moved within the file token by token. It costs: git.git's
        # diff.c 9.3 s against 5.8 s without; line blame's -M -C (which e2g.api.tokens
        # applies after) sees most moves too, but not short or edited ones: without
        # -M here 1.2-1.9% of the tokens of apply.c, diff.c and git-p4.py differ.
        arguments = ["blame", "--porcelain", "-M"]
        arguments += [
            item
            for view in self.state.views_of(ignore)
            for item in ("--ignore-rev", view)
        ]
        with tempfile.NamedTemporaryFile(dir=self._dir, suffix=".view") as scratch:
            if contents is not None:
                scratch.write(contents)
                scratch.flush()
                # git 2.39 takes --contents only on top of HEAD, and only with a
                # work tree (an empty one: the contents come from the file): point
                # HEAD there (we hold the lock; nobody else reads it).
                view_git(self._git_dir, ["update-ref", "--no-deref", "HEAD", view_head])
                arguments = [f"--work-tree={self._dir}", *arguments]
                arguments += ["--contents", scratch.name]
            else:
                arguments.append(view_head)
            output = _blame_parts(self._git_dir, arguments, tokens)
        found = parse_blame(output)
        real = self.state.reverse()
        make = TokenOrigin._make  # tuple.__new__ itself: 2x the class's own __new__
        origins = [
            make((real.get(line.sha, line.sha), line.sha, line.original))
            for line in found.lines
        ]
        commits = {real.get(commit.sha, commit.sha): commit for commit in found.commits}
        ignored = set(ignore) & set(commits)
        if ignored:
            self._look_through(origins, ignored)
        self._follow_moves(origins, [line.text for line in found.lines])
        commits.update(
            self._commits_of(
                {o.view_sha for o in origins} - {c.sha for c in commits.values()}
            )
        )
        merges = self._merges({origin.view_sha for origin in origins})
        self._memo.save()
        return TokenBlame(origins=tuple(origins), commits=commits, merges=merges)

    def _merges(self, view_shas: set[str]) -> frozenset[str]:
        """The real shas of the view commits among `view_shas` that are merges."""
        real = self.state.reverse()
        wanted = sorted(sha for sha in view_shas if sha in real)
        if not wanted:
            return frozenset()
        output = view_git(
            self._git_dir,
            ["rev-list", "--no-walk=unsorted", "--min-parents=2", *wanted],
        )
        return frozenset(
            real[sha] for sha in output.decode("ascii").split() if sha in real
        )

    def _commits_of(self, view_shas: set[str]) -> dict[str, BlameCommit]:
        """What blame would say of view commits it did not name (reached by looking
        through ignored ones), by real sha."""
        real = self.state.reverse()
        wanted = sorted(sha for sha in view_shas if sha in real)
        if not wanted:
            return {}
        output = view_git(
            self._git_dir,
            [
                "show",
                "-s",
                "--no-walk=unsorted",
                "--format=%H%x00%s%x00%an%x00%ae%x00%aI%x00%cI",
                *wanted,
            ],
        )
        found: dict[str, BlameCommit] = {}
        for line in output.decode("utf-8", "replace").splitlines():
            fields = line.split("\x00")
            if len(fields) == 6 and fields[0] in real:
                found[real[fields[0]]] = BlameCommit(
                    sha=fields[0],
                    summary=fields[1],
                    author=Address(fields[2], fields[3]),
                    author_date=datetime.fromisoformat(fields[4]),
                    commit_date=datetime.fromisoformat(fields[5]),
                )
        return found

    def replaced(self, origin: TokenOrigin) -> TokenOrigin | None:
        """Where the token that `origin`'s commit replaced to write this one came
        from, following the token's place in the hunk; None when it replaced none."""
        return self._replaced(origin.view_sha, [origin.line]).get(origin.line)

    def _replaced(self, view_sha: str, lines: Sequence[int]) -> dict[int, TokenOrigin]:
        """For lines of `view_sha`'s view that its commit wrote: the origin of the
        token each replaced (the one at the same place in the hunk of the diff from
        the first parent), for those that replaced one."""
        if not FULL_SHA.fullmatch(view_sha):
            return {}  # an origin line blame gave: no view commit behind it
        parents = view_git(self._git_dir, ["rev-parse", f"{view_sha}^@"]).split()
        if not parents:
            return {}
        parent = parents[0].decode("ascii")
        diff = view_git(
            self._git_dir,
            [
                "diff",
                "-U0",
                "--no-color",
                "--no-ext-diff",
                parent,
                view_sha,
                "--",
                VIEW_PATH,
            ],
        )
        hunks = [
            (int(m[1]), int(m[2] or b"1"), int(m[3]), int(m[4] or b"1"))
            for m in HUNK.finditer(diff)
        ]
        mapped: dict[int, int] = {}  # line here -> line in the parent
        for line in lines:
            for old_start, old_count, new_start, new_count in hunks:
                if new_start <= line < new_start + new_count and old_count:
                    mapped[line] = old_start + min(line - new_start, old_count - 1)
        return self._origins_in(parent, mapped)

    def _origins_in(
        self, parent: str, mapped: dict[int, int], *, context: int = WINDOW
    ) -> dict[int, TokenOrigin]:
        """For each key of `mapped`: the origin of the token at line `mapped[key]`
        of view commit `parent`'s view, from one blame of windows of `context`
        lines around them (with -M; none without context)."""
        return self._origins_at_once([(parent, mapped)], context=context)[0]

    def _origins_at_once(
        self, asked: Sequence[tuple[str, dict[int, int]]], *, context: int
    ) -> list[dict[int, TokenOrigin]]:
        """_origins_in() of each (parent, mapped) of `asked`, two blames at a time
        (git blames on one core), the next started as soon as one ends: by twos,
        each pair waited for its slower blame (git.git's diff.c, 16 blames of
        0.1-0.6 s: its cold answer 12.3-12.7 s -> 11.2-11.6 s)."""
        real = self.state.reverse()

        def blamed(item: tuple[str, dict[int, int]]) -> dict[int, TokenOrigin]:
            parent, mapped = item
            if not mapped:
                return {}
            output = view_git(
                self._git_dir,
                [
                    "blame",
                    "--porcelain",
                    *(["-M"] if context else []),
                    *_windows(mapped.values(), context=context),
                    parent,
                    "--",
                    VIEW_PATH,
                ],
            )
            by_line = {item.number: item for item in parse_blame(output).lines}
            found: dict[int, TokenOrigin] = {}
            for line, old in mapped.items():
                origin = by_line.get(old)
                if origin is not None:
                    found[line] = TokenOrigin(
                        real.get(origin.sha, origin.sha), origin.sha, origin.original
                    )
            return found

        if len(asked) < 2:
            return [blamed(item) for item in asked]
        with ThreadPoolExecutor(max_workers=2) as pool:
            return list(pool.map(blamed, asked))

    def _follow_moves(self, origins: list[TokenOrigin], texts: Sequence[str]) -> None:
        """Tokens given to a commit that only moved them go to where they came from.

        git's -M pairs a moved block with its old place only when the block holds
        20 letters and digits (its guard against pairing new code with any old
        code that happens to match): a three-line function moved below the next
        holds fewer, and blame gives the move all its tokens, on the view as by
        lines. A commit's own diff is better evidence than a match anywhere in
        the parent: a change that added exactly what another change of it removed
        moved that block (`moved_lines`), however few its letters. Each such
        token takes the origin of the token it was at the old place (blamed in
        the parent without -M, the moved lines only); followed back through moves
        of moves (bounded), as _look_through does. Only the commits owning a run
        of tokens short enough for -M to miss (`short_runs`) have their diffs
        read: what git's -M judged stands."""
        views = self.state.reverse()  # not the work tree's own (no view commit)
        todo: Sequence[int] = short_runs([origin.view_sha for origin in origins], texts)
        for _ in range(8):
            by_commit: dict[str, list[int]] = {}
            for index in todo:
                view_sha = origins[index].view_sha
                if view_sha in views:
                    by_commit.setdefault(view_sha, []).append(index)
            moves = self._moves(sorted(by_commit))
            changed: list[int] = []
            asked = {
                view_sha: [i for i in by_commit[view_sha] if origins[i].line in moved]
                for view_sha, (_, moved) in moves.items()
            }
            answers = self._moved_origins(
                [
                    (
                        parent,
                        {origins[i].line: moved[origins[i].line] for i in asked[sha]},
                    )
                    for sha, (parent, moved) in moves.items()
                ]
            )
            for (view_sha, indexes), better in zip(asked.items(), answers, strict=True):
                for index in indexes:
                    found = better.get(origins[index].line)
                    if found is not None and found.view_sha != view_sha:
                        origins[index] = found
                        changed.append(index)
            if not changed:
                return
            todo = changed

    def _moved_origins(
        self, asked: Sequence[tuple[str, dict[int, int]]]
    ) -> list[dict[int, TokenOrigin]]:
        """_origins_at_once() of the moved lines only (no -M: an answer that never
        changes), those known read from the memo, the others blamed and kept."""
        real = self.state.reverse()
        known = [
            {
                line: TokenOrigin(real.get(at[0], at[0]), at[0], at[1])
                for line, old in mapped.items()
                if (at := self._memo.origins.get(parent, {}).get(old)) is not None
            }
            for parent, mapped in asked
        ]
        todo = [
            (parent, {line: old for line, old in mapped.items() if line not in found})
            for (parent, mapped), found in zip(asked, known, strict=True)
        ]
        answers = self._origins_at_once(todo, context=0)  # two at once, cheap
        for (parent, mapped), found, new in zip(todo, known, answers, strict=True):
            for line, origin in new.items():
                self._memo.add_origin(
                    parent, mapped[line], (origin.view_sha, origin.line)
                )
            found.update(new)
        return known

    def _moves(self, view_shas: Sequence[str]) -> dict[str, tuple[str, dict[int, int]]]:
        """For each of `view_shas` that moved tokens: its parent, and the lines of
        its view it moved there, each with the line of the parent's view it came
        from; from one `git log -p` of those the memo does not know (a merge shows
        no diff, a root commit removes nothing: neither moves)."""
        memo = self._memo.moves
        found: dict[str, tuple[str, dict[int, int]]] = {
            sha: known for sha in view_shas if (known := memo.get(sha)) is not None
        }
        view_shas = [sha for sha in view_shas if sha not in memo]
        if not view_shas:
            return found
        # Two gits at once, each diffing half the commits (git.git's diff.c, 614
        # commits: 1.9 s in one): by now the line blame beside is mostly done.
        halves = (
            [view_shas[::2], view_shas[1::2]]
            if len(view_shas) >= SPLIT_MOVES
            else [view_shas]
        )
        outputs = view_git_at_once(
            self._git_dir,
            [
                [
                    "log",
                    "-p",
                    f"-U{MOVE_CONTEXT}",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-walk=unsorted",
                    "--stdin",
                    "--format=%x00%H %P",
                    "--",
                    VIEW_PATH,
                ]
            ]
            * len(halves),
            ["".join(f"{sha}\n" for sha in half).encode() for half in halves],
        )
        records = (record for output in outputs for record in output.split(b"\x00")[1:])
        for record in records:
            head, _, diff = record.partition(b"\n")
            shas = head.decode("ascii").split()
            moved = moved_lines(diff) if len(shas) == 2 else {}  # not a root, a merge
            if moved:
                found[shas[0]] = (shas[1], moved)
            if shas:
                self._memo.add_moves(shas[0], found.get(shas[0]))
        return found

    def _look_through(self, origins: list[TokenOrigin], ignored: set[str]) -> None:
        """Tokens still given to an ignored commit (git's --ignore-rev pairs lines by
        their characters, which one-token lines such as `1` -> `2` often lack) go to
        the origin of the token they replaced, by place in the hunk, as far back as
        ignored commits go (bounded); a token an ignored commit only added stays."""
        for _ in range(8):
            todo: dict[str, list[int]] = {}
            for index, origin in enumerate(origins):
                if origin.sha in ignored:
                    todo.setdefault(origin.view_sha, []).append(index)
            if not todo:
                return
            changed = False
            for view_sha, indexes in todo.items():
                found = self._replaced(
                    view_sha, [origins[index].line for index in indexes]
                )
                for index in indexes:
                    better = found.get(origins[index].line)
                    if better is not None:
                        origins[index] = better
                        changed = True
            if not changed:
                return


def _blame_parts(git_dir: Path, arguments: Sequence[str], tokens: int) -> bytes:
    """One `git blame` of the view, or two at once over its halves (`-L`) for a view
    past SPLIT_TOKENS: git blames on one core, and token blame's other work is done
    by then (git.git's diff.c, 41,172 tokens: 5.3 s in one, 3.7 s in two). Always two
    for a large view, whatever the machine, so that the answer is the same
    everywhere; a block moved across the halves' seam is looked for in each half."""
    if tokens <= SPLIT_TOKENS:
        return view_git(git_dir, [*arguments, "--", VIEW_PATH])
    half = tokens // 2
    parts = view_git_at_once(
        git_dir,
        [
            [*arguments, part, "--", VIEW_PATH]
            for part in (f"-L1,{half}", f"-L{half + 1},{tokens}")
        ],
    )
    return b"".join(parts)


def _windows(lines: Iterable[int], *, context: int = WINDOW) -> list[str]:
    """`-L` ranges that cover `lines` with `context` lines around each, merged: git's
    -M pairs a moved block only when it sees enough of it (20 letters and digits),
    which one token alone never has."""
    ranges: list[list[int]] = []
    for line in sorted(set(lines)):
        start, end = max(1, line - context), line + context
        if ranges and start <= ranges[-1][1] + 1:
            ranges[-1][1] = max(ranges[-1][1], end)
        else:
            ranges.append([start, end])
    return [f"-L{start},{end}" for start, end in ranges[:_MAX_RANGES]]


def _lock(path: Path, name: str) -> int:
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    if not flock_within(descriptor, LOCK_SECONDS):
        os.close(descriptor)
        raise RepoError(
            f"another e2g has been building the token history of {name} for {LOCK_SECONDS:.0f} s"
        )
    return descriptor
