"""Properties of the metrics' arithmetic (e2g.api.metrics.numbers): percentiles,
periods, directories and the absence factor."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from e2g.api.metrics import numbers

values = st.lists(
    st.floats(min_value=-1e9, max_value=1e9, allow_nan=False), min_size=1, max_size=60
)
shares = st.floats(min_value=0, max_value=1)
epochs = st.integers(min_value=0, max_value=4_000_000_000)


@given(values, shares)
def test_a_percentile_lies_between_the_smallest_and_largest(
    found: list[float], share: float
) -> None:
    assert min(found) <= numbers.percentile(found, share) <= max(found)


@given(values, shares, shares)
def test_percentiles_rise_with_the_share(
    found: list[float], a: float, b: float
) -> None:
    low, high = sorted((a, b))
    assert numbers.percentile(found, low) <= numbers.percentile(found, high) + 1e-6


@given(values)
def test_the_quartiles_hold_the_median(found: list[float]) -> None:
    spread = numbers.spread(found)
    assert spread is not None
    assert spread.p25 <= spread.median <= spread.p75
    assert numbers.percentile(found, 0) == min(found)
    assert numbers.percentile(found, 1) == max(found)


def test_percentiles_interpolate_between_ranks() -> None:
    assert numbers.percentile([1, 2, 3, 4], 0.5) == 2.5
    assert numbers.percentile([0.5, 1, 2.5], 0.25) == 0.75
    assert numbers.percentile([1, 2], 0.95) == 1.95
    assert numbers.spread([]) is None


@given(epochs, st.sampled_from(numbers.PERIODS))
def test_a_moment_lies_within_its_period(epoch: int, by: str) -> None:
    period = numbers.period_of(epoch, by)
    assert period is not None
    start, end = numbers.period_bounds(period)
    moment = datetime.fromtimestamp(epoch, UTC).date().isoformat()
    assert start <= moment < end


def test_periods_are_named_as_the_issue_names_them() -> None:
    moment = int(datetime(2021, 8, 31, 23, 0, tzinfo=UTC).timestamp())
    assert [numbers.period_of(moment, by) for by in ("year", "quarter", "month")] == [
        "2021",
        "2021-Q3",
        "2021-08",
    ]
    assert numbers.period_of(moment, None) is None
    assert numbers.period_bounds("2021-Q4") == ("2021-10-01", "2022-01-01")


paths = st.lists(
    st.lists(st.sampled_from(["a", "b", "c.c", "d"]), min_size=1, max_size=5).map(
        "/".join
    ),
    max_size=8,
)


@given(paths, st.integers(min_value=1, max_value=4))
def test_each_directory_holds_a_path(found: list[str], depth: int) -> None:
    dirs = numbers.directories(found, depth)
    if not found:
        assert dirs == {numbers.NO_FILES}
        return
    assert len(dirs) <= len(found)
    for directory in dirs:
        assert directory == numbers.TOP or any(
            path.startswith(directory + "/") for path in found
        )
        assert directory.count("/") < depth


@given(st.lists(st.integers(min_value=0, max_value=50), max_size=30))
def test_the_absence_factor_is_the_fewest_over_half(counts: list[int]) -> None:
    factor, theirs = numbers.fewest_over_half(counts)
    total = sum(counts)
    if total == 0:
        assert (factor, theirs) == (0, 0)
        return
    top = sorted(counts, reverse=True)
    assert theirs == sum(top[:factor]) and 2 * theirs > total
    assert 2 * sum(top[: factor - 1]) <= total
