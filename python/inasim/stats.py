"""Summary statistics of repeated runs: mean, sample standard deviation and
the 95 % confidence interval of the mean (Student's t, n - 1 degrees of
freedom), as `inasim compare --repetitions N` and the sweeps' per-point
summaries report them.

    from inasim.stats import summarize
    summarize([1.0, 2.0, 3.0, 4.0])
    # {'n': 4, 'mean': 2.5, 'std': 1.2909..., 'ci95_low': 0.4457..., 'ci95_high': 4.5542...}

NaN values (a run that measured nothing) are left out and counted in
`missing`. With one value the standard deviation and the interval are NaN:
one run says nothing about the spread.
"""

from __future__ import annotations

import math
from typing import Dict, Iterable

__all__ = ["summarize", "STAT_KEYS"]

#: The keys summarize() returns, in order.
STAT_KEYS = ("n", "missing", "mean", "std", "ci95_low", "ci95_high")


def _t975(dof: int) -> float:
    """Two-sided 95 % quantile of Student's t with `dof` degrees of freedom."""
    from scipy import stats

    return float(stats.t.ppf(0.975, dof))


def summarize(values: Iterable[float]) -> Dict[str, float]:
    """n, missing, mean, std (n - 1 in the denominator) and the 95 % CI of the mean."""
    xs, missing = [], 0
    for v in values:
        x = math.nan if v is None or isinstance(v, bool) else float(v)
        if math.isnan(x):
            missing += 1
        else:
            xs.append(x)
    n = len(xs)
    out = {"n": n, "missing": missing, "mean": math.nan, "std": math.nan, "ci95_low": math.nan,
           "ci95_high": math.nan}
    if n == 0:
        return out
    mean = math.fsum(xs) / n
    out["mean"] = mean
    if n >= 2:
        std = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
        half = _t975(n - 1) * std / math.sqrt(n)
        out.update(std=std, ci95_low=mean - half, ci95_high=mean + half)
    return out
