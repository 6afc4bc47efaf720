"""`e2g blame --tokens`: every token of a file with the review of the commit that
put it there, and one token's history.

Line blame (`e2g.api.blame`) gives a whole line to the last commit that touched any
of it: a renamed identifier, a split line or one changed literal hides the commits
that wrote the rest. Here each token (`e2g.tokens.lex`) is blamed on its own, through
a throwaway one-token-a-line history of the file (`e2g.git.tokenview`), and the
tokens are then grouped into spans (consecutive tokens of one line from one commit)
for the terminal, the JSON and the web page.

Two caches under the data dir's `tokens/`, one directory per (repository, file):
the throwaway history, which a later revision extends, and the answer for each
blamed revision, so that a second run or the web page only reads. Both are written
atomically (the history under the directory's lock); the whole is bounded, the
files used least recently going first (e2g.api.token_cache). Reviews come from the links `e2g match`
stored, as line blame's do (`find_reviews`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

from e2g.api.blame import Review, check_range, find_reviews, info_of, page_range
from e2g.api.token_cache import (
    commit_from_json,
    commit_json,
    file_cache,
    history_reader,
    prune_cache,
    read_lines_from,
    read_result,
    result_key,
    write_json,
    write_lines_from,
    write_result,
)
from e2g.config import Settings
from e2g.errors import E2gError, NotFound, UsageError
from e2g.git.ancestry import Ancestry
from e2g.git.blame import Blame, BlameCommit
from e2g.git.filehistory import file_history
from e2g.git.lineblame import line_blame
from e2g.git.repo import UNCOMMITTED, Repo, looks_binary
from e2g.git.tokenview import TokenBlame, TokenHistory, TokenOrigin
from e2g.git.treehistory import History
from e2g.model.links import commit_info
from e2g.tokens.lex import Lexer, Token, lexer_for


class Span(NamedTuple):
    """Consecutive tokens of one line from one commit: `line` and `column` from 1,
    `column` counting characters; `text` as the line has it (spaces between the
    tokens kept)."""

    line: int
    column: int
    text: str
    sha: str


class TokenResult(NamedTuple):
    path: str
    rev: str | None  # the full sha blamed; None: the work tree
    lines: tuple[str, ...]  # the lines shown (all, or those of -L or the page)
    first: int  # the number of lines[0]
    total: int  # lines in the whole file
    spans: tuple[Span, ...]
    reviews: dict[str, Review]  # by sha, for every commit of a span

    def line_spans(self) -> list[tuple[int, str, list[Span]]]:
        """Each shown line (number, text) with its spans, in order."""
        by_line: dict[int, list[Span]] = {}
        for span in self.spans:
            by_line.setdefault(span.line, []).append(span)
        return [
            (number, text, by_line.get(number, []))
            for number, text in enumerate(self.lines, start=self.first)
        ]


def token_blame(  # noqa: PLR0913 - options are keyword-only
    settings: Settings,
    path: str,
    rev: str | None = None,
    *,
    repo: Path,
    lines: tuple[int, int] | None = None,
    page: int | None = None,
    match: bool = True,
) -> TokenResult:
    """The spans of `path` at `rev` (None: the work tree; in a bare repository,
    HEAD), each with its commit's review. Only `lines`, or page `page`. With
    `match` False nothing is matched or stored (the read-only web)."""
    repository = Repo.open(repo)
    sha, contents = _revision(repository, rev, path)
    text = contents if contents is not None else repository.file_text(sha, path)
    all_lines = text.split("\n")
    if all_lines and all_lines[-1] == "":
        all_lines.pop()
    total = len(all_lines)
    if page is not None:
        lines = page_range(page, total, path=path)
    check_range(lines, total, path=path)
    all_spans, commits = _all_spans(
        settings, repository, path, sha, text=text, contents=contents
    )
    first, last = lines if lines is not None else (1, total)
    spans = [span for span in all_spans if first <= span.line <= last]
    infos = [
        info_of(commits[sha_], sha=sha_)
        for sha_ in dict.fromkeys(span.sha for span in spans)
    ]
    reviews = find_reviews(settings, repository, infos, match=match) if infos else {}
    return TokenResult(
        path=path,
        rev=sha if contents is None else None,
        lines=tuple(all_lines[first - 1 : last]),
        first=first,
        total=total,
        spans=tuple(spans),
        reviews=reviews,
    )


def token_history(  # noqa: PLR0913 - options are keyword-only
    settings: Settings,
    path: str,
    rev: str | None = None,
    *,
    repo: Path,
    line: int,
    column: int,
) -> list[Review]:
    """The commit that put the token at `line`:`column` there, then the commits
    that wrote the tokens it replaced, and so on back: newest first, each with its
    review."""
    repository = Repo.open(repo)
    sha, contents = _revision(repository, rev, path)
    text = contents if contents is not None else repository.file_text(sha, path)
    check_range((line, line), text.count("\n") + (not text.endswith("\n")), path=path)
    lexer = lexer_for(path)
    tokens = lexer.tokens(text)
    index = _token_at(tokens, line, column, path=path)
    revisions, tip = file_history(history_reader(settings, repository), sha, path)
    if tip is None:
        raise NotFound(f"no commit up to {sha[:12]} has {path}")
    with TokenHistory(
        repository, path, lexer, file_cache(settings, repository, path, lexer)
    ) as history:
        history.update(revisions)
        view = lexer.view(contents) if contents is not None else None
        blamed = history.blame(
            tip,
            ignore=repository.ignored_revs(),
            contents=view.encode("utf-8", "surrogateescape")
            if view is not None
            else None,
        )
        commits = dict(blamed.commits)
        chain: list[str] = []
        origin: TokenOrigin | None = blamed.origins[index]
        while origin is not None and len(chain) < 64 and origin.sha not in chain:
            chain.append(origin.sha)
            # A token of the work tree's own has no throwaway commit to look behind.
            origin = None if origin.sha == UNCOMMITTED else history.replaced(origin)
    # Commits reached behind the blamed ones, which blame's answer did not describe.
    missing = [sha_ for sha_ in chain if sha_ not in commits]
    read = (
        {c.sha: commit_info(c) for c in repository.commits(missing, diffs=False)}
        if missing
        else {}
    )
    infos = [
        info_of(commits[sha_], sha=sha_) if sha_ in commits else read[sha_]
        for sha_ in chain
        if sha_ in commits or sha_ in read
    ]
    reviews = find_reviews(settings, repository, infos)
    return [reviews[info.sha] for info in infos]


def _token_at(tokens: Sequence[Token], line: int, column: int, *, path: str) -> int:
    """The index of the token that covers `line`:`column` (both from 1)."""
    for index, token in enumerate(tokens):
        for at, start, end in _pieces(token):
            if at == line and start < column <= end:
                return index
    raise UsageError(
        f"no token at line {line}, column {column} of {path}: give the column of a token's character (whitespace is none)"
    )


def _revision(repository: Repo, rev: str | None, path: str) -> tuple[str, str | None]:
    """The commit to blame and, for the work tree, its copy of the file (None: the
    commit's own, also when the work tree's copy is HEAD's unchanged, so that the
    answer cached for HEAD, a warmed tree's, serves). A bare repository has no work
    tree: HEAD, as git blame does."""
    if rev is None and not repository.bare:
        head = repository.resolve("HEAD")
        contents = repository.work_tree_text(path)
        if contents is None:
            repository.file_lines(head, path)  # says why there is no such file
            raise NotFound(f"no file {path} in the work tree of {repository.root}")
        if looks_binary(contents):
            raise UsageError(
                f"{path} is a binary file in the work tree: it has no lines"
            )
        with contextlib.suppress(E2gError):  # not in HEAD: the work tree's own
            if repository.file_text(head, path) == contents:
                return head, None
        return head, contents
    sha = repository.resolve(rev or "HEAD")
    repository.file_lines(sha, path)  # NotFound / binary: the same words as line blame
    return sha, None


def _all_spans(  # noqa: PLR0913 - options are keyword-only
    settings: Settings,
    repository: Repo,
    path: str,
    sha: str,
    *,
    text: str,
    contents: str | None,
) -> tuple[list[Span], dict[str, BlameCommit]]:
    """The spans of the whole file and their commits: read back as they were cached
    (a span for several tokens: git.git's diff.c has 41,172 tokens in 15,024 spans,
    and reading them costs 0.05 s where the tokens and their origins cost 0.26 s),
    or made from the tokens' origins and cached."""
    lexer = lexer_for(path)
    directory = file_cache(settings, repository, path, lexer)
    ignore = repository.ignored_revs()
    key = spans_key(sha, ignore, contents)
    found = _read_spans(directory, key)
    if found is not None:
        return found
    tokens, blamed = token_origins(
        settings,
        repository,
        path,
        sha,
        lexer,
        text=text,
        contents=contents,
        ignore=ignore,
        directory=directory,
    )
    return write_spans(directory, key, path=path, text=text, found=(tokens, blamed))


def spans_key(sha: str, ignore: Sequence[str], contents: str | None) -> str:
    """The name of the cached spans of a revision (or of the work tree's text)."""
    return result_key(sha, ignore, contents) + ".spans"


def write_spans(
    directory: Path,
    key: str,
    *,
    path: str,
    text: str,
    found: tuple[list[Token], TokenBlame],
) -> tuple[list[Span], dict[str, BlameCommit]]:
    """The spans of the file's tokens and origins `found`, cached under `key`."""
    tokens, blamed = found
    if len(blamed.origins) != len(tokens):
        raise UsageError(
            f"token blame of {path} lost its tokens: {len(tokens)} lexed, {len(blamed.origins)} blamed"
        )
    lines = text.split("\n")
    spans = _spans(tokens, blamed.origins, lines, first=1, last=len(lines))
    commits = {sha_: blamed.commits[sha_] for sha_ in {span.sha for span in spans}}
    shas = list(dict.fromkeys(span.sha for span in spans))
    index = {sha_: number for number, sha_ in enumerate(shas)}
    write_json(
        directory,
        key,
        {
            "shas": shas,
            "spans": [[s.line, s.column, s.text, index[s.sha]] for s in spans],
            "commits": {sha_: commit_json(commits[sha_]) for sha_ in shas},
        },
    )
    return spans, commits


def _read_spans(
    directory: Path, key: str
) -> tuple[list[Span], dict[str, BlameCommit]] | None:
    try:
        data = json.loads((directory / "results" / f"{key}.json").read_text("utf-8"))
        shas: list[str] = data["shas"]
        spans = [
            Span(line, column, text, shas[n]) for line, column, text, n in data["spans"]
        ]
        commits = {sha: commit_from_json(item) for sha, item in data["commits"].items()}
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None
    return spans, commits


def token_origins(  # noqa: PLR0913 - options are keyword-only
    settings: Settings,
    repository: Repo,
    path: str,
    sha: str,
    lexer: Lexer,
    *,
    text: str,
    contents: str | None,
    ignore: Sequence[str] | None = None,
    directory: Path | None = None,
    walked: History | None = None,
    ancestry: Ancestry | None = None,
    prune: bool = True,
) -> tuple[list[Token], TokenBlame]:
    """The file's tokens and their origins: the cached answer, or a new one (the
    throwaway history brought up to date, then blamed) which is cached. `ignore`:
    the revisions blame looks through, and `directory`: the file's cache, when the
    caller found them already; `walked`: the file's revisions up to `sha`, when a
    walk of the whole tree found them (e2g.git.treehistory), and `ancestry`: the
    commits' changed paths that walk read (line blame follows the lines' files
    through it); `prune` False leaves
    the cache's bound to the caller (a tree's warm prunes once, at its end)."""
    if directory is None:
        directory = file_cache(settings, repository, path, lexer)
    if ignore is None:
        ignore = repository.ignored_revs()
    key = result_key(sha, ignore, contents)
    found = read_result(directory, key)
    if found is not None:
        return found
    reader = history_reader(settings, repository)
    revisions, tip = walked or file_history(reader, sha, path)
    if tip is None:
        raise NotFound(f"no commit up to {sha[:12]} has {path}")
    # Line blame runs beside the view's work (a thread waiting on its own git):
    # on 2 cores the cold answer costs the view's time, not the sum. It walks the
    # file's own history, known now (git.git: 0.02 s for a file of 30 revisions,
    # where the walk of every commit costs 0.9 s); a walk of every commit reads
    # the commits from the lens's graph (25 such files: 17.7 s -> 15.6 s).
    with ThreadPoolExecutor(max_workers=1) as pool:
        lines = (
            pool.submit(repository.blame, None, path)
            if contents is not None
            else pool.submit(
                line_blame,
                reader,
                sha,
                path,
                (revisions, tip),
                ancestry,
                read_lines_from(directory) if ancestry is not None else (),
            )
        )
        tokens = lexer.tokens(text)
        view = (
            None
            if contents is None
            else lexer.view(contents).encode("utf-8", "surrogateescape")
        )
        with TokenHistory(repository, path, lexer, directory) as history:
            history.update(revisions)
            blamed = history.blame(
                tip, ignore=ignore, contents=view, tokens=len(tokens)
            )
        lined = lines.result()
        blamed = _not_newer_than_lines(tokens, blamed, lined)
    if contents is None:
        write_lines_from(directory, list({name for _, name in lined.paths}))
    write_result(directory, key, tokens, blamed)  # atomic: no lock needed
    if prune:
        prune_cache(settings, keep=directory)
    return tokens, blamed


def _not_newer_than_lines(
    tokens: Sequence[Token], blamed: TokenBlame, lines: Blame
) -> TokenBlame:
    """A token is never newer than its line: where line blame (`git blame -w -M
    -C`) gives the line to an older commit, that commit's copy of the line already
    held every one of its tokens, and the token takes that commit.

    The view sees the file's own history and its renames only; line blame's -C also
    sees code moved in from another file in the same commit (git.git's apply.c came
    from builtin/apply.c that way: the view gave 78% of its tokens to the move) and
    through merges whose parents ordered the same code differently (diff.c: a merge
    of a branch that moved functions got 1,231 tokens of the view, one line of line
    blame). Elsewhere the view's answer stands, older than the line's or the same."""
    line_of = {line.number: line for line in lines.lines}
    dated = {commit.sha: commit.commit_date for commit in lines.commits}
    dated.update({sha: commit.commit_date for sha, commit in blamed.commits.items()})
    origins = list(blamed.origins)
    changed = False
    for index, (token, origin) in enumerate(zip(tokens, origins, strict=True)):
        line = line_of.get(token.line)
        if line is None or line.sha == origin.sha or line.sha == UNCOMMITTED:
            continue
        older = origin.sha == UNCOMMITTED or (
            line.sha in dated
            and origin.sha in dated
            and dated[line.sha] < dated[origin.sha]
        )
        if older:
            origins[index] = TokenOrigin(line.sha, "", line.original)
            changed = True
    if not changed:
        return blamed
    commits = {commit.sha: commit for commit in lines.commits}
    commits.update(blamed.commits)
    return TokenBlame(origins=tuple(origins), commits=commits, merges=blamed.merges)


# -- spans --------------------------------------------------------------------------------


def _spans(
    tokens: Sequence[Token],
    origins: Sequence[TokenOrigin],
    lines: Sequence[str],
    *,
    first: int,
    last: int,
) -> list[Span]:
    """Tokens grouped into spans (one line, one commit), for lines `first`..`last`.
    A token of several lines gives one span per line."""
    spans: list[Span] = []
    current: tuple[int, int, int, str] | None = None  # line, start, end (0-based), sha
    for token, origin in zip(tokens, origins, strict=True):
        for line, start, end in _pieces(token):
            if not first <= line <= last:
                continue
            if current is not None and current[0] == line and current[3] == origin.sha:
                current = (line, current[1], end, origin.sha)
                continue
            if current is not None:
                spans.append(_span(current, lines))
            current = (line, start, end, origin.sha)
    if current is not None:
        spans.append(_span(current, lines))
    return spans


def _pieces(token: Token) -> list[tuple[int, int, int]]:
    """(line, start, end) of each line of a token, columns from 0, end excluded."""
    parts = token.lines
    found = [(token.line, token.column - 1, token.column - 1 + len(parts[0]))]
    for offset, part in enumerate(parts[1:], start=1):
        stripped = part.lstrip()
        if stripped.strip():
            start = len(part) - len(stripped)
            found.append((token.line + offset, start, len(part.rstrip())))
    return found


def _span(current: tuple[int, int, int, str], lines: Sequence[str]) -> Span:
    line, start, end, sha = current
    return Span(line=line, column=start + 1, text=lines[line - 1][start:end], sha=sha)
