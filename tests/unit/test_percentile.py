"""Percentiles by nearest rank, the one definition the stats and the model-usage summary share."""

import pytest

from thoughtledger.projections.analytics import nearest_rank, percentile


@pytest.mark.parametrize(
    ("values", "percent", "expected"),
    [
        ([1, 2, 3, 4], 50, 2),
        ([1, 2, 3, 4], 95, 4),
        ([7], 50, 7),
        ([7], 95, 7),
        ([5, 1, 3], 50, 3),  # order does not matter
        ([10] * 19 + [1000], 95, 10),  # the 19th of 20 values
        ([10] * 18 + [1000] * 2, 95, 1000),
        ([3, 1], 0, 1),  # rank at least 1
    ],
)
def test_the_percentile_is_the_smallest_value_covering_that_share(
    values: list[int], percent: int, expected: int
) -> None:
    assert percentile(values, percent) == expected


def test_a_histogram_counts_each_value_that_many_times() -> None:
    assert nearest_rank({10: 19, 1000: 1}, 95) == 10
    assert nearest_rank({10: 18, 1000: 2}, 95) == 1000


def test_nothing_counted_has_no_percentile() -> None:
    assert percentile([], 50) is None
    assert nearest_rank({}, 95) is None
