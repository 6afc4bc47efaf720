"""Review analytics from mail (issue 36): CHAOSS's code review metrics, each defined
once, here, and computed from the patch queue's stored lifecycles (e2g.api.queue).

`e2g metrics`, /metrics and /api/v1/metrics call `metrics()`; docs/commands/metrics.md
(what `e2g help metrics` prints) repeats the DEFINITIONS below word for word, and a
test holds the two together.

DEFINITIONS

A patch version is one posted patch mail (one row of the queue). A patch is all
versions of it: its family (the same author and subject within two years, or the
same patch-id: e2g.api.reverse.family), named by its earliest version, and posted
when that version was. Someone else is anyone but the patch's sender and its in-body
author, and no robot: an address the config's `[metrics] bots` patterns match. A
reply counts for the patch version it sits below, and a reply below a series' cover
letter for every part. A patch whose every version is untracked (no matched
repository holds its paths) is left out of the metrics of patches. A period
(`--by`) holds what was posted in it; for reviews, what was written in it.

- first-response (hours, per patch version): from the version's date to the first
  reply by someone else. total: versions posted; n: those answered.
- time-to-accept (days, per patch): from its first version's date to the earliest
  commit date of the commits that applied it (0 when the commit is older). total:
  patches posted; n: those applied.
- time-to-release (days, per applied patch): from its first version's date to the
  date of the first release holding its commit (the tagged commit's commit date, or
  the latest commit date that release first holds when the tag's commit is not
  stored). total: applied patches; n: those released.
- review-cycles (per applied patch): the versions it went through (distinct version
  numbers, unit "versions"), and the time from each version to the next (first
  posting of each, in days, unit "days between versions"; n counts the gaps).
- reviewed-share (ratio): applied patches whose applied version (the posting a
  commit applied, or another posting of that version) got an approving review tag
  (Reviewed-by, Acked-by, Tested-by, ...: the audit's) from someone else in a reply,
  over applied patches; `other_domain`: those among them reviewed by an address whose
  e-mail domain is not the author's (`other_domain_value` over the same denominator).
- acceptance (ratio): applied patches over applied, not-applied and rejected ones. A
  patch is applied when a version is, else rejected when a version is, else
  not-applied when a version is; a patch still open or only superseded (its later
  version is counted under that version's family) is in neither.
- ignored (ratio): patches no version of which was applied and no version of which
  got a reply from someone else, over patches posted.
- reviewer-load (reviews per month): a review is a reply by someone else to a patch
  version (a reply mail counts once, whatever it answers; the tags it gives are part
  of it). Per reviewer and month: the reviews given. n: reviewer-months; total:
  reviews; with the 95th percentile (`p95`). By person: one reviewer's months.
- absence-factor (count): the fewest reviewers who together gave more than half of
  the reviews (as reviewer-load counts them) of a group, its directory with --dir;
  `value` is that count, `numerator` their reviews, `denominator` all the reviews,
  `n` the reviewers.

Durations give the median and the 25th and 75th percentiles (interpolated between
ranks) of the `n` values; ratios their numerator and denominator. Grouped by
directory (`--dir`, `--depth N`), a patch counts in every directory its files are
in (a patch's, every version's files); by person, under its author (reviews: the
reviewer); by list, under the list of its first version.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, TypeVar

from e2g.api.basis import open_store
from e2g.api.metrics import numbers
from e2g.api.metrics.facts import Family, Version, families, read_versions
from e2g.config import Settings
from e2g.errors import NotMatched, UsageError

FIRST_RESPONSE = "first-response"
TIME_TO_ACCEPT = "time-to-accept"
TIME_TO_RELEASE = "time-to-release"
REVIEW_CYCLES = "review-cycles"
REVIEWED_SHARE = "reviewed-share"
ACCEPTANCE = "acceptance"
IGNORED = "ignored"
REVIEWER_LOAD = "reviewer-load"
ABSENCE_FACTOR = "absence-factor"
METRICS = (
    FIRST_RESPONSE,
    TIME_TO_ACCEPT,
    TIME_TO_RELEASE,
    REVIEW_CYCLES,
    REVIEWED_SHARE,
    ACCEPTANCE,
    IGNORED,
    REVIEWER_LOAD,
    ABSENCE_FACTOR,
)
RATIOS = (REVIEWED_SHARE, ACCEPTANCE, IGNORED, ABSENCE_FACTOR)
GROUPS = ("dir", "person", "list")
HOUR, DAY = 3600.0, 86_400.0


class Query(NamedTuple):
    names: tuple[str, ...] = METRICS
    by: str | None = None  # month, quarter, year
    since: int | None = None  # Unix time, inclusive
    until: int | None = None  # exclusive
    lists: tuple[str, ...] = ()
    group: str | None = None  # dir, person, list
    depth: int = 1


class MetricRow(NamedTuple):
    """One metric for one period and group: a duration (median, p25, p75, unit,
    total) or a ratio (numerator, denominator, value)."""

    metric: str
    period: str | None
    group: str | None
    n: int
    unit: str = ""
    total: int = 0
    median: float | None = None
    p25: float | None = None
    p75: float | None = None
    numerator: int = 0
    denominator: int = 0
    value: float | None = None
    p95: float | None = None  # reviewer-load
    other_domain: int | None = None  # reviewed-share

    @property
    def ratio(self) -> bool:
        return self.metric in RATIOS


Key = tuple[str | None, str | None]  # (period, group)
T = TypeVar("T")


def parse_names(names: Sequence[str]) -> tuple[str, ...]:
    unknown = [name for name in names if name not in METRICS]
    if unknown:
        raise UsageError(
            f"no metric {unknown[0]!r}: the metrics are {', '.join(METRICS)}"
        )
    return tuple(dict.fromkeys(names)) or METRICS


def metrics(settings: Settings, query: Query) -> list[MetricRow]:
    """Every metric `query` names, per period and group."""
    if query.by is not None and query.by not in numbers.PERIODS:
        raise UsageError(f"--by must be one of {', '.join(numbers.PERIODS)}")
    if query.group is not None and query.group not in GROUPS:
        raise UsageError(f"group by one of {', '.join(GROUPS)}, not {query.group!r}")
    with open_store(settings) as store:
        if store.queue_seq() is None:
            raise NotMatched(
                "the patch queue is not derived yet: run `e2g ingest` or "
                "`e2g match` first, the metrics read it"
            )
        versions = read_versions(
            store,
            bots=settings.metrics_bots,
            lists=query.lists,
            files=query.group == "dir",
        )
        releases = store.release_dates() if TIME_TO_RELEASE in query.names else {}
    return compute(versions, query, releases=releases)


def compute(
    versions: list[Version],
    query: Query,
    *,
    releases: dict[tuple[str, str], int] | None = None,
) -> list[MetricRow]:
    """The metrics of these versions (pure: what `metrics` reads, computed)."""
    patches = [family for family in families(versions) if not family.untracked]
    groups = {family.name: _family_groups(family, query) for family in patches}
    reviews: list[Review] | None = None
    found: list[MetricRow] = []
    for name in parse_names(query.names):
        if name == FIRST_RESPONSE:
            found += _first_response(versions, query)
        elif name in (TIME_TO_ACCEPT, TIME_TO_RELEASE, REVIEW_CYCLES):
            found += _durations(name, patches, query, groups, releases or {})
        elif name in (REVIEWED_SHARE, ACCEPTANCE, IGNORED):
            found += _ratios(name, patches, query, groups)
        else:
            reviews = _review_list(versions, query) if reviews is None else reviews
            found += _reviews(name, reviews, query)
    return found


# --- grouping ----------------------------------------------------------------


def _groups(
    query: Query, *, files: Iterable[str], person: str, list_name: str
) -> set[str | None]:
    if query.group == "dir":
        return set(numbers.directories(files, query.depth))
    if query.group == "person":
        return {person}
    if query.group == "list":
        return {list_name}
    return {None}


def _inside(query: Query, date: int | None) -> bool:
    """Whether a moment is dated and within --since/--until."""
    return not (
        date is None
        or (query.since is not None and date < query.since)
        or (query.until is not None and date >= query.until)
    )


def _bucket(
    items: Iterable[tuple[int | None, set[str | None], T]], query: Query
) -> dict[Key, list[T]]:
    buckets: dict[Key, list[T]] = {}
    for date, groups, value in items:
        if date is None or not _inside(query, date):
            continue
        period = numbers.period_of(date, query.by)
        for group in groups:
            buckets.setdefault((period, group), []).append(value)
    return dict(sorted(buckets.items(), key=lambda item: _order(item[0])))


def _order(key: Key) -> tuple[str, str]:
    return (key[0] or "", key[1] or "")


def _family_groups(family: Family, query: Query) -> set[str | None]:
    return _groups(
        query,
        files=family.files(),
        person=family.first.author,
        list_name=family.first.list_name,
    )


# --- durations ---------------------------------------------------------------


def _duration_rows(
    metric: str, unit: str, buckets: dict[Key, list[float | None]]
) -> list[MetricRow]:
    rows = []
    for (period, group), values in buckets.items():
        known = [value for value in values if value is not None]
        found = numbers.spread(known)
        rows.append(
            MetricRow(
                metric=metric,
                period=period,
                group=group,
                n=len(known),
                unit=unit,
                total=len(values),
                median=found.median if found else None,
                p25=found.p25 if found else None,
                p75=found.p75 if found else None,
            )
        )
    return rows


def _first_response(versions: list[Version], query: Query) -> list[MetricRow]:
    def hours(version: Version) -> float | None:
        dates = [r.date for r in version.responses if r.date is not None]
        if version.date is None or not dates:
            return None
        return max(0.0, float(min(dates) - version.date) / HOUR)

    items = (
        (
            version.date,
            _groups(
                query,
                files=version.files,
                person=version.author,
                list_name=version.list_name,
            ),
            hours(version),
        )
        for version in versions
    )
    return _duration_rows(FIRST_RESPONSE, "hours", _bucket(items, query))


def _durations(
    name: str,
    patches: list[Family],
    query: Query,
    groups: dict[str, set[str | None]],
    releases: dict[tuple[str, str], int],
) -> list[MetricRow]:
    if name == TIME_TO_ACCEPT:
        items = [
            (family.date, groups[family.name], _accepted(family)) for family in patches
        ]
        return _duration_rows(name, "days", _bucket(items, query))
    applied = [family for family in patches if family.applied]
    if name == TIME_TO_RELEASE:
        items = [
            (family.date, groups[family.name], _released(family, releases))
            for family in applied
        ]
        return _duration_rows(name, "days", _bucket(items, query))
    cycles = [(family.date, groups[family.name], _cycles(family)) for family in applied]
    counts = _bucket(
        ((date, groups, float(len(gaps) + 1)) for date, groups, gaps in cycles),
        query,
    )
    rows = _duration_rows(name, "versions", {k: list(v) for k, v in counts.items()})
    for key, values in _bucket(cycles, query).items():
        gaps = [gap for family_gaps in values for gap in family_gaps]
        spread = numbers.spread(gaps)
        rows.append(
            MetricRow(
                metric=name,
                period=key[0],
                group=key[1],
                n=len(gaps),
                unit="days between versions",
                total=len(values),
                median=spread.median if spread else None,
                p25=spread.p25 if spread else None,
                p75=spread.p75 if spread else None,
            )
        )
    return rows


def _accepted(family: Family) -> float | None:
    committed = family.committed()
    if committed is None or family.date is None or not family.applied:
        return None
    return max(0.0, (committed - family.date) / DAY)


def _released(family: Family, releases: dict[tuple[str, str], int]) -> float | None:
    dates = [
        releases[place]
        for version in family.versions
        for place in version.releases
        if place in releases
    ]
    if not dates or family.date is None:
        return None
    return max(0.0, (min(dates) - family.date) / DAY)


def _cycles(family: Family) -> list[float]:
    """The days from each version's first posting to the next version's."""
    firsts: dict[int, int] = {}
    for version in family.versions:
        if version.date is not None:
            firsts[version.version] = min(
                firsts.get(version.version, version.date), version.date
            )
    dates = [firsts[number] for number in sorted(firsts)]
    return [max(0.0, (b - a) / DAY) for a, b in zip(dates, dates[1:], strict=False)]


# --- ratios ------------------------------------------------------------------


def _ratios(
    name: str,
    patches: list[Family],
    query: Query,
    groups: dict[str, set[str | None]],
) -> list[MetricRow]:
    judged: Callable[[Family], tuple[bool, bool] | None] = {
        REVIEWED_SHARE: _reviewed,
        ACCEPTANCE: _acceptance,
        IGNORED: _ignored,
    }[name]
    items = [
        (family.date, groups[family.name], verdict)
        for family in patches
        if (verdict := judged(family)) is not None
    ]
    rows = []
    for (period, group), values in _bucket(items, query).items():
        numerator = sum(counted for counted, _ in values)
        rows.append(
            MetricRow(
                metric=name,
                period=period,
                group=group,
                n=len(values),
                numerator=numerator,
                denominator=len(values),
                value=numerator / len(values) if values else None,
                other_domain=sum(other for _, other in values)
                if name == REVIEWED_SHARE
                else None,
            )
        )
    return rows


def _reviewed(family: Family) -> tuple[bool, bool] | None:
    """(reviewed, reviewed from another domain) of an applied patch."""
    if not family.applied:
        return None
    postings = {posting for version in family.versions for posting in version.applied}
    numbers_applied = {v.version for v in family.versions if v.message_id in postings}
    kept = [v for v in family.versions if v.version in numbers_applied]
    givers = {giver for version in kept for giver in version.approvals}
    home = numbers.domain(family.first.author)
    return bool(givers), any(numbers.domain(giver) != home for giver in givers)


def _acceptance(family: Family) -> tuple[bool, bool] | None:
    outcome = family.outcome
    return None if outcome is None else (outcome == "applied", False)


def _ignored(family: Family) -> tuple[bool, bool]:
    answered = any(version.responses for version in family.versions)
    return (not answered and not family.applied), False


# --- reviews -----------------------------------------------------------------


class Review(NamedTuple):
    reviewer: str
    date: int
    groups: frozenset[str | None]


def _review_list(versions: list[Version], query: Query) -> list[Review]:
    """Each reply by someone else once, with the groups of every patch it answers."""
    found: dict[int, tuple[str, int, set[str | None]]] = {}
    for version in versions:
        for response in version.responses:
            if response.date is None:
                continue
            groups = (
                {response.sender}
                if query.group == "person"
                else _groups(
                    query,
                    files=version.files,
                    person=response.sender,
                    list_name=version.list_name,
                )
            )
            entry = found.setdefault(
                response.seq, (response.sender, response.date, set())
            )
            entry[2].update(groups)
    return [
        Review(who, date, frozenset(groups)) for who, date, groups in found.values()
    ]


def _reviews(name: str, reviews: list[Review], query: Query) -> list[MetricRow]:
    buckets = _bucket(((r.date, set(r.groups), r) for r in reviews), query)
    rows = []
    for (period, group), given in buckets.items():
        if name == REVIEWER_LOAD:
            monthly = Counter((r.reviewer, numbers.month_of(r.date)) for r in given)
            values = [float(count) for count in monthly.values()]
            spread = numbers.spread(values)
            rows.append(
                MetricRow(
                    metric=name,
                    period=period,
                    group=group,
                    n=len(values),
                    unit="reviews per month",
                    total=len(given),
                    median=spread.median if spread else None,
                    p25=spread.p25 if spread else None,
                    p75=spread.p75 if spread else None,
                    p95=numbers.percentile(values, 0.95) if values else None,
                )
            )
            continue
        by_reviewer = Counter(r.reviewer for r in given)
        factor, theirs = numbers.fewest_over_half(by_reviewer.values())
        rows.append(
            MetricRow(
                metric=name,
                period=period,
                group=group,
                n=len(by_reviewer),
                numerator=theirs,
                denominator=len(given),
                value=float(factor),
            )
        )
    return rows
