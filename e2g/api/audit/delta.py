"""How the code that landed differs from the last reviewed version.

Both sides are diffs as the store keeps them: the reviewed posting's, and the
commit's (a posting's with the same patch-id, else the one git gives). Compared
file by file, whitespace dropped as git patch-id drops it: the same lines with
their context are the same code; the same +/- lines with other context are a
rebase; anything else is a delta, hunk by hunk (e2g.mail.interdiff, as `link
--diff`), with how it was disclosed.
"""

from __future__ import annotations

from collections import Counter
from difflib import SequenceMatcher
from itertools import product

from e2g.api.audit.facts import (
    CommitFacts,
    Posted,
    Sources,
    posting_order,
    version_of,
)
from e2g.api.audit.model import Delta
from e2g.mail.interdiff import Hunk, Interdiff
from e2g.mail.review import cover_changelog, has_changelog, maintainer_notes
from e2g.model import Kind


def patch_of(facts: CommitFacts, version: int) -> Posted | None:
    """The newest patch posting of `version`."""
    patches = [p for p in facts.postings if p.is_patch and p.version == version]
    return min(patches, key=posting_order) if patches else None


def landed_code(facts: CommitFacts, sources: Sources, *, like: str) -> str | None:
    """The commit's diff in the form of the posted diff `like` (renamed files as
    renames, or as a deletion and an addition): a posting's with the commit's
    patch-id (the store has it), else the one read from git."""
    renames = has_renames(like)
    patch_id = facts.row.patch_id if facts.row else None
    for posted in facts.postings:
        if posted.is_patch and patch_id and posted.message.patch_id == patch_id:
            found = sources.posted_diff(posted.message.seq)
            if found is not None and has_renames(found) == renames:
                return found
    return sources.commit_diff(facts.commit.sha, renames)


def has_renames(diff: str) -> bool:
    return diff.startswith("rename from ") or "\nrename from " in diff


def line_counts(
    cut: list[Hunk],
) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]]]:
    """The lines of each file of a diff cut into hunks, whitespace dropped as git
    patch-id drops it: all of them (the code with its context), and the +/- lines
    alone (the change), in one pass. A removed and an added line of one change
    (the -/+ lines between two context lines) that differ only in spacing within
    the line are one unchanged line, as `git diff -w` shows them (a realigned
    table); not so a changed indentation (another block, in Python) or a line
    moved."""
    every: list[tuple[str, str]] = []  # counted at the end, at C speed
    changed: list[tuple[str, str]] = []
    respaced: list[tuple[str, str]] = []  # (path, words) of pairs made context
    for hunk in cut:
        path = hunk.path
        removed: list[tuple[str, str]] = []  # (line, its words) of the change
        added: list[tuple[str, str]] = []
        for line in hunk.lines:
            marker = line[:1]
            if marker not in ("+", "-", " "):
                continue
            words = "".join(line[1:].split())
            key = (path, marker + words)
            every.append(key)
            if marker == "-":
                changed.append(key)
                removed.append((line, words))
            elif marker == "+":
                changed.append(key)
                added.append((line, words))
            elif removed or added:
                respaced += _respaced(path, removed, added)
                removed, added = [], []
        respaced += _respaced(path, removed, added)
    counts = Counter(every), Counter(changed)
    for path, words in respaced:
        for counter, marker in product(counts, "-+"):
            key = (path, marker + words)
            counter[key] -= 1
            if not counter[key]:
                del counter[key]
        counts[0][path, " " + words] += 1
    return counts


def _respaced(
    path: str, removed: list[tuple[str, str]], added: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The pairs of one change that differ only in spacing, as (path, words).
    Most changes share no words between their sides and cost one set here
    (pairing every change added a tenth to an audit of git.git's history: 1.9 s
    of 18)."""
    if not removed or not added:
        return []
    words = {text for _, text in removed}
    if all(text not in words for _, text in added):
        return []
    # In order: a line moved within the change stays a change.
    matcher = SequenceMatcher(
        None,
        [_spacing(line) for line, _ in removed],
        [_spacing(line) for line, _ in added],
        autojunk=False,
    )
    return [
        (path, text)
        for first, _, size in matcher.get_matching_blocks()
        for _, text in removed[first : first + size]
    ]


def _spacing(line: str) -> tuple[str, str]:
    """A diff line as spacing within it does not change: its indentation, then
    its words without whitespace."""
    words = line[1:].lstrip()
    return line[1 : len(line) - len(words)], "".join(words.split())


def delta_of(interdiff: Interdiff, version: int, *, disclosed: str) -> Delta:
    added = removed = 0
    for change in interdiff.changes:
        if change.kind == "edited":
            shown = change.shown()
            added += sum(line.startswith("+") for line in shown)
            removed += sum(line.startswith("-") for line in shown)
        else:
            hunk = change.posted or change.applied
            assert hunk is not None
            count = sum(line[:1] in ("+", "-") for line in hunk.lines)
            added += count if change.kind == "added" else 0
            removed += count if change.kind == "dropped" else 0
    return Delta(
        from_version=version,
        files=tuple(dict.fromkeys(change.path for change in interdiff.changes)),
        added=added,
        removed=removed,
        disclosed=disclosed,
        changes=interdiff.changes,
    )


def disclosed(facts: CommitFacts, version: int, sources: Sources) -> str:
    """How a change after review was disclosed: the committer's `[name: ...]` note
    in the commit message, or a changelog of a later version (below the `---` of
    its patch, or in its cover letter)."""
    notes = maintainer_notes(facts.commit.message)
    if notes:
        return notes[0]
    for posted in sorted(facts.postings, key=lambda found: found.version):
        if (
            version_of(posted, facts) <= version
            or posted.message.kind not in _SAYS_WHAT_CHANGED
        ):
            continue
        says = has_changelog if posted.is_patch else cover_changelog
        if says(sources.body(posted.message.seq)):
            kind = "" if posted.is_patch else " cover letter"
            return f"changelog in v{posted.version}{kind}"
    return ""


_SAYS_WHAT_CHANGED = frozenset({Kind.PATCH, Kind.COVER})
