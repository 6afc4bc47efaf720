"""How alike two diffs and two subjects are: pure functions, no IO.

Diff similarity is a weighted Dice coefficient over the multisets of added and removed
lines, file by file. It ignores context lines, hunk positions and line numbers, so it
survives context drift (the patch applied a few lines away); a line a maintainer
edited lightly still earns most of its weight through a fuzzy pairing of the lines
left over after the exact match.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import lru_cache
from typing import Generic, NamedTuple, TypeVar

from rapidfuzz import fuzz

from e2g.model import TRIVIAL_WEIGHT, is_informative, lines_weight

_Source = TypeVar("_Source")
_Made = TypeVar("_Made")

# Per normalised path: (added lines, removed lines), whitespace-collapsed, as
# e2g.mail.patch.diff_lines returns them.
LinesByFile = Mapping[str, tuple[Sequence[str], Sequence[str]]]

# Leftover lines paired fuzzily per file and side: bounds the cost of a huge diff.
MAX_FUZZY_LINES = 64
# Below this rapidfuzz ratio two lines are different lines, not one line edited;
# above it the credit rises linearly from 0 to 1 (an 87% alike line is a changed
# line, so it earns about half, not 87%, of a line's weight).
MIN_LINE_RATIO = 75.0


class Overlap(NamedTuple):
    """How two diffs overlap: `similarity` (Dice, both sides count) and `containment`
    (the share of the smaller diff found in the larger: a maintainer who added tests
    or dropped a hunk leaves the posted diff contained in the commit, or vice versa)."""

    similarity: float
    containment: float
    smaller_lines: float  # weighted +/- lines of the smaller diff
    # False: the diffs were too unlike to be worth comparing line by line, and
    # similarity and containment are upper bounds (below what the caller needed).
    exact: bool = True


def diff_overlap(
    commit_lines: LinesByFile,
    mail_lines: LinesByFile,
    *,
    needed: float = 0.0,
    contained: float = 2.0,
) -> Overlap:
    """Similarity and containment of two diffs' added and removed lines, by weight.

    Files are paired by path, then by basename when the paths were normalised
    differently (a moved tree, another top directory). Lines of unpaired files
    count against the similarity. Two diffs without any +/- lines (renames, mode or
    binary changes) compare by their file sets alone.

    A caller that only cares whether similarity reaches `needed` (or containment
    `contained`) gets upper bounds, with `exact` False, when line counts alone show
    neither can: most candidates of a file map are such, and comparing their lines
    would be most of the matcher's time.
    """
    pairs, _, _ = pair_files(tuple(commit_lines), tuple(mail_lines))
    ours = _totals(commit_lines).weight
    theirs = _totals(mail_lines).weight
    total = ours + theirs
    if total <= 0:
        files = len(commit_lines) + len(mail_lines)
        similarity = 2.0 * len(pairs) / files if files else 0.0
        return Overlap(similarity, similarity, 0.0)
    smaller = min(ours, theirs)
    if needed > 0.0:
        bound = _shared_bound(pairs, commit_lines, _line_counts(mail_lines))
        similarity = min(1.0, 2.0 * bound / total)
        containment = min(1.0, bound / smaller) if smaller > 0 else 0.0
        if similarity < needed and containment < contained:
            return Overlap(similarity, containment, smaller, exact=False)
    shared = sum(
        _file_overlap(commit_lines[commit_path], mail_lines[mail_path])
        for commit_path, mail_path in pairs
    )
    # Rounded so that float sums in another order still give exactly 1.0.
    return Overlap(
        similarity=min(1.0, round(2.0 * shared / total, 6)),
        containment=min(1.0, round(shared / smaller, 6)) if smaller > 0 else 0.0,
        smaller_lines=smaller,
    )


def similarity_bound_from_counts(
    commit_lines: LinesByFile,
    mail_files: Sequence[str],
    mail_counts: Sequence[tuple[int, int]],
    mail_weights: Sequence[float | None] = (),
) -> float | None:
    """An upper bound of diff_overlap()'s similarity from the mail's per-file added
    and removed line counts (and line weights, when the store has them) alone,
    before its diff is read; None when the commit has no +/- lines to weigh.

    The shared weight is at most, per paired file and side, the shorter side's line
    count (the mail's raw counts are never below its lines), and at most either
    diff's whole weight. Without the mail's weight, leaving it out of the
    denominator keeps this a bound; with it, a large unrelated mail patch on the
    same file is ruled out here instead of after its diff is read.
    """
    ours = _totals(commit_lines).weight
    if ours <= 0:
        return None
    counts = dict(zip(mail_files, mail_counts, strict=True))
    pairs, _, _ = pair_files(tuple(commit_lines), tuple(mail_files))
    shared = min(ours, _shared_bound(pairs, commit_lines, counts.__getitem__))
    if not mail_weights or any(weight is None for weight in mail_weights):
        return min(1.0, 2.0 * shared / ours)
    theirs = sum(weight or 0.0 for weight in mail_weights)
    shared = min(shared, theirs)
    # A hair above: the stored weights were summed in another order than
    # diff_overlap() sums them, and it rounds to 6 places.
    return min(1.0, 2.0 * shared / (ours + theirs) + WEIGHT_SLACK)


WEIGHT_SLACK = 1e-6


def _shared_bound(
    pairs: Sequence[tuple[str, str]],
    commit_lines: LinesByFile,
    mail_counts: Callable[[str], tuple[int, int]],
) -> float:
    """The most weight two diffs could share: per file pair and side, the shorter
    side's line count (an exact or fuzzy pairing credits each line once, at most 1).
    `mail_counts` gives a mail file's (added, removed) line counts."""
    bound = 0
    for commit_path, mail_path in pairs:
        added, removed = commit_lines[commit_path]
        mail_added, mail_removed = mail_counts(mail_path)
        bound += min(len(added), mail_added) + min(len(removed), mail_removed)
    return bound


def _line_counts(lines: LinesByFile) -> Callable[[str], tuple[int, int]]:
    def counts(path: str) -> tuple[int, int]:
        added, removed = lines[path]
        return len(added), len(removed)

    return counts


def diff_similarity(commit_lines: LinesByFile, mail_lines: LinesByFile) -> float:
    """Similarity in [0, 1] of two diffs' added and removed lines (see diff_overlap)."""
    return diff_overlap(commit_lines, mail_lines).similarity


def subject_similarity(a_key: str, b_key: str) -> float:
    """Token-sort similarity in [0, 1] of two subject keys (word order ignored),
    halved when both name versions (`1.7.10`, `v0.6.2-rc2`) and not the same ones:
    "Sparse v0.6.2-rc2" is another change than "Sparse v0.6.1-rc2 is now out",
    however alike the words."""
    if not a_key or not b_key:
        return 0.0
    similarity = float(fuzz.token_sort_ratio(a_key, b_key)) / 100.0
    versions = _versions(a_key), _versions(b_key)
    if all(versions) and versions[0] != versions[1]:
        return similarity / 2
    return similarity


_VERSION = re.compile(r"\d+(?:\.\d+)+(?:-?rc\d+)?")


def _versions(key: str) -> frozenset[str]:
    return frozenset(_VERSION.findall(key)) if "." in key else frozenset()


def pair_files(
    commit_paths: Collection[str], mail_paths: Collection[str]
) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """Pair paths equal first, then equal basenames unique on both sides.

    Returns (pairs, commit paths left alone, mail paths left alone); the lists are
    shared with a cache, so callers must not change them.
    """
    return _pair_files(tuple(commit_paths), tuple(mail_paths))


# The same commit meets the same candidate's files in the cascade and in scoring,
# and a hot file's candidates meet many commits.
@lru_cache(maxsize=1 << 14)
def _pair_files(
    commit_paths: tuple[str, ...], mail_paths: tuple[str, ...]
) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    mail_set = set(mail_paths)
    pairs = [(path, path) for path in commit_paths if path in mail_set]
    paired = {path for path, _ in pairs}
    rest_commit = [path for path in commit_paths if path not in paired]
    rest_mail = [path for path in mail_paths if path not in paired]
    # Most pairs end here (this runs for every candidate): with nothing left on a
    # side, or no basename left in common, no basename pair can form.
    if not rest_commit or not rest_mail:
        return pairs, rest_commit, rest_mail
    names = {_basename(path) for path in rest_commit}
    if not any(_basename(path) in names for path in rest_mail):
        return pairs, rest_commit, rest_mail
    commit_by_name = _unique_basenames(rest_commit)
    mail_by_name = _unique_basenames(rest_mail)
    for name, commit_path in commit_by_name.items():
        mail_path = mail_by_name.get(name)
        if mail_path is not None:
            pairs.append((commit_path, mail_path))
    paired_commit = {commit for commit, _ in pairs}
    paired_mail = {mail for _, mail in pairs}
    return (
        pairs,
        [path for path in commit_paths if path not in paired_commit],
        [path for path in mail_paths if path not in paired_mail],
    )


def _basename(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _unique_basenames(paths: Sequence[str]) -> dict[str, str]:
    if not paths:
        return {}
    names = [_basename(path) for path in paths]
    counts = Counter(names)
    return {
        name: path for name, path in zip(names, paths, strict=True) if counts[name] == 1
    }


def _weight(line: str) -> float:
    return 1.0 if is_informative(line) else TRIVIAL_WEIGHT


class _Side:
    """Counts, weights and the set of one side (added or removed lines) of one file.

    The weight is needed for every candidate, the counts only for the few whose
    diffs are compared line by line, so they are made on first use.
    """

    __slots__ = ("_count", "informative", "lines", "weight")

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self._count: Counter[str] | None = None
        self.informative, self.weight = lines_weight(lines)

    @property
    def count(self) -> Counter[str]:
        if self._count is None:
            self._count = Counter(self.lines)
        return self._count


# Keeping what is derived from each line list saves 26% of a match run
# (benchmarks/tricks.py, liburing, 600 commits).
class _Prepared(Generic[_Source, _Made]):
    """What `make` prepares from an object, once per object, by identity.

    The commit's lines are compared with every candidate, and a candidate's with many
    commits. Keyed by id(); each entry holds its source object, so an id is never
    reused while its entry lives. Bounded: cleared when full.
    """

    def __init__(self, make: Callable[[_Source], _Made], limit: int = 50_000) -> None:
        self._make = make
        self._limit = limit
        self._entries: dict[int, tuple[_Source, _Made]] = {}

    def __call__(self, source: _Source) -> _Made:
        entry = self._entries.get(id(source))
        if entry is None or entry[0] is not source:
            if len(self._entries) >= self._limit:
                self._entries.clear()
            entry = self._entries[id(source)] = (source, self._make(source))
        return entry[1]


# Each entry keeps its line list alive: at 50,000 entries a git.git-size match
# held over 1 GB in two workers (benchmarks/scale.py); 8,192 still serve a hot
# file's candidates, which the matcher's own diff memo keeps (4,096).
_side: _Prepared[Sequence[str], _Side] = _Prepared(_Side, limit=8_192)


class _Totals:
    __slots__ = ("count", "informative", "weight")

    def __init__(self, lines: LinesByFile) -> None:
        sides = [_side(side) for pair in lines.values() for side in pair]
        self.weight = sum(side.weight for side in sides)
        self.count = sum(len(side.lines) for side in sides)
        self.informative = sum(side.informative for side in sides)


_totals: _Prepared[LinesByFile, _Totals] = _Prepared(_Totals, limit=4_096)


def informative_count(lines: LinesByFile) -> int:
    """How many added and removed lines say something (see is_informative)."""
    return _totals(lines).informative


def line_count(lines: LinesByFile) -> int:
    """How many added and removed lines a diff has (prepared once per mapping)."""
    return _totals(lines).count


def _file_overlap(
    ours: tuple[Sequence[str], Sequence[str]],
    theirs: tuple[Sequence[str], Sequence[str]],
) -> float:
    """The weighted lines one pair of files shares.

    Added lines compare with added lines, removed with removed. A leftover line that
    the other diff has exactly on the opposite side is a reversal (a revert), not an
    edit, so it gets no fuzzy credit.
    """
    shared = 0.0
    for side in (0, 1):
        mine, other = _side(ours[side]), _side(theirs[side])
        if not mine.count or not other.count:
            continue
        small, large = (
            (mine, other) if len(mine.count) <= len(other.count) else (other, mine)
        )
        for line, count in small.count.items():
            common = min(count, large.count.get(line, 0))
            if common:
                shared += common * _weight(line)
        ours_left = _left_over(mine.count, other.count, _side(theirs[1 - side]).count)
        theirs_left = _left_over(other.count, mine.count, _side(ours[1 - side]).count)
        if ours_left and theirs_left:
            shared += _fuzzy_overlap(ours_left, theirs_left)
    return shared


def _left_over(
    mine: Counter[str], other: Counter[str], opposite: Counter[str]
) -> list[str]:
    """The lines `mine` has more often than `other`, each as often as it is left
    over, in `mine`'s order, except those `opposite` has (reversals): what
    `(mine - other).elements()` gives, without building that Counter (which cost
    12% of a git.git match, benchmarks/scale.py)."""
    return [
        line
        for line, count in mine.items()
        if line not in opposite
        for _ in range(count - other.get(line, 0))
    ]


def _edit_credit(ratio: float) -> float:
    return max(0.0, (ratio - MIN_LINE_RATIO) / (100.0 - MIN_LINE_RATIO))


def _fuzzy_overlap(ours: list[str], theirs: list[str]) -> float:
    """Credit for leftover lines that are near-copies (a renamed variable, a typo).

    Pairs are taken best first over the whole score matrix, so the credit does not
    depend on which side is "ours".
    """
    ours = ours[:MAX_FUZZY_LINES]
    theirs = theirs[:MAX_FUZZY_LINES]
    # Plain loops, not rapidfuzz.process.cdist: cdist needs numpy, which e2g does
    # not depend on; at most 64 x 64 ratios of ~0.3 us each.
    candidates = sorted(
        (
            (score, row, column)
            for row, line in enumerate(ours)
            for column, other in enumerate(theirs)
            if (score := fuzz.ratio(line, other, score_cutoff=MIN_LINE_RATIO))
        ),
        key=lambda item: -item[0],
    )
    used_rows: set[int] = set()
    used_columns: set[int] = set()
    credit = 0.0
    for score, row, column in candidates:
        if row in used_rows or column in used_columns:
            continue
        used_rows.add(row)
        used_columns.add(column)
        pair_weight = (_weight(ours[row]) + _weight(theirs[column])) / 2.0
        credit += _edit_credit(score) * pair_weight
    return credit
