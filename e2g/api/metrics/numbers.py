"""The arithmetic of e2g.api.metrics: percentiles, periods, directories.

Pure functions on numbers, times and paths; no IO. The definitions that use them
are in e2g.api.metrics (its docstring).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import NamedTuple

PERIODS = ("month", "quarter", "year")
TOP = "(top)"  # a file at the top of the tree
NO_FILES = "(none)"  # a patch whose diff named no file


class Spread(NamedTuple):
    median: float
    p25: float
    p75: float


def percentile(values: Sequence[float], share: float) -> float:
    """The `share` (0..1) percentile of `values`, interpolated between the two
    nearest ranks (numpy's default, "linear"); `values` need not be sorted and
    must not be empty."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * min(1.0, max(0.0, share))
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def spread(values: Sequence[float]) -> Spread | None:
    """Median, 25th and 75th percentiles; None for no values."""
    if not values:
        return None
    return Spread(
        percentile(values, 0.5), percentile(values, 0.25), percentile(values, 0.75)
    )


def period_of(epoch: int, by: str | None) -> str | None:
    """The period a moment (Unix time) falls in: "2021", "2021-Q3", "2021-07";
    None when not grouped by period."""
    if by is None:
        return None
    return _period_of_day(epoch // 86_400, by)


@functools.lru_cache(maxsize=100_000)
def _period_of_day(day: int, by: str) -> str:
    """A UTC day's period (periods begin at UTC midnight: a day is in one)."""
    moment = datetime.fromtimestamp(day * 86_400, UTC)
    if by == "year":
        return f"{moment.year}"
    if by == "quarter":
        return f"{moment.year}-Q{(moment.month - 1) // 3 + 1}"
    if by == "month":
        return f"{moment.year}-{moment.month:02d}"
    raise ValueError(f"no period {by!r}")


def month_of(epoch: int) -> str:
    moment = datetime.fromtimestamp(epoch, UTC)
    return f"{moment.year}-{moment.month:02d}"


def period_bounds(period: str) -> tuple[str, str]:
    """The first day of a period and of the next, as ISO dates ("2021-Q3" ->
    ("2021-07-01", "2021-10-01")): the filter of the patches behind it."""
    if "-Q" in period:
        year, quarter = period.split("-Q")
        start = (int(year), (int(quarter) - 1) * 3 + 1)
        months = 3
    elif "-" in period:
        year, month = period.split("-")
        start, months = (int(year), int(month)), 1
    else:
        start, months = (int(period), 1), 12
    index = start[0] * 12 + start[1] - 1 + months
    end = (index // 12, index % 12 + 1)
    return f"{start[0]:04d}-{start[1]:02d}-01", f"{end[0]:04d}-{end[1]:02d}-01"


def directories(paths: Iterable[str], depth: int) -> set[str]:
    """The directories of `paths`, cut to `depth` levels: `mm/slab.c` is in `mm`
    at any depth, `net/core/dev.c` in `net/core` at depth 2; a file at the top of
    the tree is in "(top)", no file at all "(none)"."""
    found = set()
    for path in paths:
        parts = path.split("/")[:-1]
        found.add("/".join(parts[: max(1, depth)]) if parts else TOP)
    return found or {NO_FILES}


def fewest_over_half(counts: Iterable[int]) -> tuple[int, int]:
    """The fewest of these counts whose sum is more than half of all of them, and
    that sum: (0, 0) for none. The contributor absence factor of reviews."""
    ordered = sorted((count for count in counts if count > 0), reverse=True)
    total = sum(ordered)
    running = 0
    for index, count in enumerate(ordered, start=1):
        running += count
        if 2 * running > total:
            return index, running
    return 0, 0


def domain(address: str) -> str:
    """The e-mail domain of an address, lower-cased ("" without one)."""
    return address.rpartition("@")[2].lower() if "@" in address else ""
