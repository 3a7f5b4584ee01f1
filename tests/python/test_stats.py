"""inasim.stats.summarize: worked examples with numbers checked by hand."""

import math

from inasim.stats import STAT_KEYS, summarize


def test_four_values_t_interval():
    s = summarize([1.0, 2.0, 3.0, 4.0])
    assert tuple(s) == STAT_KEYS
    assert s["n"] == 4 and s["missing"] == 0
    assert s["mean"] == 2.5
    assert math.isclose(s["std"], math.sqrt(5.0 / 3.0), rel_tol=1e-15)  # sum of squares 5, n - 1 = 3
    half = 3.182446305284263 * math.sqrt(5.0 / 3.0) / 2.0  # t(0.975, 3) x s / sqrt(4)
    assert math.isclose(s["ci95_low"], 2.5 - half, rel_tol=1e-12)
    assert math.isclose(s["ci95_high"], 2.5 + half, rel_tol=1e-12)


def test_nan_is_missing_and_one_value_has_no_spread():
    s = summarize([math.nan, 7.0, None])
    assert (s["n"], s["missing"], s["mean"]) == (1, 2, 7.0)
    assert math.isnan(s["std"]) and math.isnan(s["ci95_low"]) and math.isnan(s["ci95_high"])
    e = summarize([])
    assert e["n"] == 0 and math.isnan(e["mean"])


def test_identical_values_give_a_zero_width_interval():
    s = summarize([3.0, 3.0, 3.0])
    assert s["std"] == 0.0 and s["ci95_low"] == 3.0 == s["ci95_high"]
