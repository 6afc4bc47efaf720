"""The E2gError hierarchy: failures the user can act on.

Library code raises these and never calls sys.exit; cli/app.py turns them into one
line on stderr ("e2g: error: <message>") and the error's exit code.
"""

from __future__ import annotations

import logging

# What a run must tell the user although it goes on (damaged input, a restarted
# helper): the CLI shows this logger at default verbosity, and an ingest copies its
# records into the --json summary's "warnings".
notice = logging.getLogger("e2g.notice")


class E2gError(Exception):
    """A failure the user can act on; str(err) is the whole message shown."""

    exit_code = 1


class UsageError(E2gError):
    """The command's arguments are wrong in a way typer cannot see."""

    exit_code = 2


class ArchiveUnreadable(E2gError):
    """A path is missing, unreadable, or not an archive e2g knows."""


class MirrorError(E2gError):
    """An inbox URL that is invalid, unreachable, missing, or not a public-inbox; or
    git failed to clone or fetch one of its epochs."""


class StoreError(E2gError):
    """The store cannot be opened, is from a newer e2g, or the disk is full."""


class EmptyStore(E2gError):
    """The command needs mail but the store has none."""


class IndexError_(E2gError):
    """The full-text index is missing or unusable; `e2g reindex` fixes it. Exit 3,
    as for an index that is behind: the store is fine, its index cannot serve."""

    exit_code = 3


class IndexBehind(E2gError):
    """The store is complete but the full-text index lacks some of it: searches miss
    those messages until `e2g reindex` (or the next ingest or search) catches up."""

    exit_code = 3


class QueryError(E2gError):
    """A search query that cannot be parsed."""

    exit_code = 2


class RepoError(E2gError):
    """A path that is not a git repository, or git failed."""


class UnknownCommit(E2gError):
    """A revision git cannot resolve."""


class NotMatched(E2gError):
    """Coverage was asked for a repository that `e2g match` has not processed."""


class OutputError(E2gError):
    """A file the user asked e2g to write (an --svg chart) cannot be written."""


class NotFound(E2gError):
    """A message or thread that is not in the store."""


class IsAFile(NotFound):
    """A tree's directory asked for by the path of a file (the web sends the
    reader to the file's tokens)."""


class Interrupted(E2gError):
    """Ctrl-C: everything up to the last committed batch is kept."""

    exit_code = 130
