"""Options where users put them: the global options before or after the command.

git takes `-q` after the command (`git commit -q`) and `-C` before it (`git -C
repo log`); users type e2g the same way. typer knows global options only before
the command and `-C` only after it, so the command line is put in that order
first: `e2g ingest FILE -q` becomes `e2g -q ingest FILE`, and `e2g -C REPO link
SHA` becomes `e2g link -C REPO SHA`. Nothing after `--` moves.

A search query negates a clause with `-` (`e2g search frob -is:reply`), which an
option parser reads as an option: such a word, one that is no option of `search`,
is passed on as the query's other spelling of negation, `NOT is:reply`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

# Global options with no value, and those that take one.
_FLAGS = frozenset({"-q", "--quiet", "-v", "--verbose"})
_VALUED = frozenset({"--data-dir"})
# The commands that take `-C/--repo`, and the option's spellings.
_REPO_COMMANDS = frozenset({"link", "match", "stats", "serve"})
_REPO = frozenset({"-C", "--repo"})
_HELP = frozenset({"-h", "--help"})
# search's short options (-n 5, -n5) and the global ones; any other `-word` is a
# negated query clause. A digit after the dash is a number, never a clause.
_SEARCH_OPTION = re.compile(r"-(?:n\d*|h|q|v+|\d.*)?")


def reorder(argv: Sequence[str], commands: frozenset[str]) -> list[str]:
    """`argv` (without the program name) with global options before the command and
    `-C REPO` after it; unchanged when no command is named."""
    head, rest = _split_at_command(list(argv), commands)
    if not rest:
        return list(argv)
    command, tail = rest[0], rest[1:]
    repo: list[str] = []
    if command in _REPO_COMMANDS:
        repo, head = _take(head, is_flag=_never, valued=_REPO)
    globals_, kept = _take(tail, is_flag=_is_flag, valued=_VALUED)
    if command == "search":
        kept = _negations(kept)
    return [*head, *globals_, command, *repo, *kept]


def _negations(tokens: list[str]) -> list[str]:
    """`-clause` as `NOT clause`, up to a `--`."""
    found: list[str] = []
    for index, token in enumerate(tokens):
        if token == "--":
            return found + tokens[index:]
        if token.startswith("--") or _SEARCH_OPTION.fullmatch(token):
            found.append(token)
        else:
            found += ["NOT", token[1:]] if token.startswith("-") else [token]
    return found


def command_of(argv: Sequence[str], commands: frozenset[str]) -> str | None:
    """The command `argv` names (after its global options), if any; None also when
    help is asked for before it (`e2g -h link` is the help of e2g, not of link)."""
    head, rest = _split_at_command(list(argv), commands)
    if not rest or _HELP & set(head):
        return None
    return rest[0]


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


def _is_flag(token: str) -> bool:
    """-q, --quiet, -v, -vv, -vvv, --verbose."""
    if token in _FLAGS:
        return True
    return len(token) > 2 and token[0] == "-" and set(token[1:]) == {"v"}


def _never(token: str) -> bool:
    return False


def _take(
    tokens: list[str], *, is_flag: Callable[[str], bool], valued: frozenset[str]
) -> tuple[list[str], list[str]]:
    """(the options taken, the rest in its order): flags, `NAME VALUE` and
    `--NAME=VALUE` for the names in `valued`; nothing after `--` is taken."""
    taken: list[str] = []
    kept: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token == "--":
            kept += tokens[index:]
            break
        name, equals, _ = token.partition("=")
        if is_flag(token) or (equals and name.startswith("--") and name in valued):
            taken.append(token)
        elif token in valued and index + 1 < len(tokens):
            taken += tokens[index : index + 2]
            index += 1
        else:
            kept.append(token)
        index += 1
    return taken, kept
