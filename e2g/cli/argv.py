"""Options where users put them: the global options before or after the command.

git takes `-q` after the command (`git commit -q`) and `-C` before it (`git -C
repo log`); users type e2g the same way. typer knows global options only before
the command and `-C` only after it, so the command line is put in that order
first: `e2g ingest FILE -q` becomes `e2g -q ingest FILE`, and `e2g -C REPO link
SHA` becomes `e2g link -C REPO SHA`. Nothing after `--` moves.
"""

from __future__ import annotations

from collections.abc import Sequence

# Global options with no value, and those that take one.
_FLAGS = frozenset({"-q", "--quiet", "-v", "--verbose"})
_VALUED = frozenset({"--data-dir"})
# The commands that take `-C/--repo`, and the option's spellings.
_REPO_COMMANDS = frozenset({"link", "match", "stats", "serve"})
_REPO = frozenset({"-C", "--repo"})


def reorder(argv: Sequence[str], commands: frozenset[str]) -> list[str]:
    """`argv` (without the program name) with global options before the command and
    `-C REPO` after it; unchanged when no command is named."""
    head, rest = _split_at_command(list(argv), commands)
    if not rest:
        return list(argv)
    command, tail = rest[0], rest[1:]
    moved_in, repo = _take_repo(head) if command in _REPO_COMMANDS else (head, [])
    globals_, kept = _take_globals(tail)
    return [*moved_in, *globals_, command, *repo, *kept]


def _split_at_command(
    argv: list[str], commands: frozenset[str]
) -> tuple[list[str], list[str]]:
    index = 0
    while index < len(argv):
        token = argv[index]
        if token in commands:
            return argv[:index], argv[index:]
        if token == "--" or not token.startswith("-"):
            break  # an argument before any command: leave it to typer
        index += 2 if token in _VALUED or token in _REPO else 1
    return argv, []


def _take_repo(head: list[str]) -> tuple[list[str], list[str]]:
    """`-C REPO` / `--repo=REPO` out of the options before the command."""
    kept: list[str] = []
    repo: list[str] = []
    index = 0
    while index < len(head):
        token = head[index]
        if token in _REPO and index + 1 < len(head):
            repo += head[index : index + 2]
            index += 2
            continue
        if token.startswith("--repo="):
            repo.append(token)
        else:
            kept.append(token)
        index += 1
    return kept, repo


def _is_flag(token: str) -> bool:
    """-q, --quiet, -v, -vv, -vvv, --verbose."""
    if token in _FLAGS:
        return True
    return len(token) > 2 and token[0] == "-" and set(token[1:]) == {"v"}


def _take_globals(tail: list[str]) -> tuple[list[str], list[str]]:
    """The global options after the command, and the rest in its order."""
    moved: list[str] = []
    kept: list[str] = []
    index = 0
    while index < len(tail):
        token = tail[index]
        if token == "--":
            kept += tail[index:]
            break
        if _is_flag(token):
            moved.append(token)
        elif token in _VALUED and index + 1 < len(tail):
            moved += tail[index : index + 2]
            index += 1
        elif token.startswith("--data-dir="):
            moved.append(token)
        else:
            kept.append(token)
        index += 1
    return moved, kept
