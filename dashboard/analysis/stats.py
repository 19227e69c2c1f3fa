"""Small-sample statistics for benchmark runs: t-based confidence intervals and Welch's difference.

Benchmark sessions have 3–10 runs, so intervals use Student's t, not the normal
approximation. The t quantile is computed here (regularized incomplete beta and
bisection) rather than pulling in SciPy for one function; tests check it against
published table values.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction for the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-14:
            break
    return h


def regularized_beta(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    tail = 0.5 * regularized_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The t value below which a fraction ``p`` of Student's t(df) lies."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError("need 0 < p < 1 and df > 0")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return (lo + hi) / 2.0


@dataclass(frozen=True)
class MeanCI:
    n: int
    mean: float
    sd: float | None  # sample standard deviation; None below 2 runs
    low: float | None
    high: float | None

    @property
    def half_width(self) -> float | None:
        return None if self.high is None else self.high - self.mean


def mean_ci(values: Sequence[float], level: float = 0.95) -> MeanCI:
    """Mean of the values with a t-based confidence interval (none below 2 values)."""
    n = len(values)
    if n == 0:
        raise ValueError("no values")
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else None
    return mean_ci_of(n, mean, sd, level)


def mean_ci_of(n: int, mean: float, sd: float | None, level: float = 0.95) -> MeanCI:
    """``mean_ci`` from a sample's size, mean and standard deviation (an aggregate computed in SQL)."""
    if n < 2 or sd is None:
        return MeanCI(n, mean, None, None, None)
    half = t_quantile(0.5 + level / 2.0, n - 1) * sd / math.sqrt(n)
    return MeanCI(n, mean, sd, mean - half, mean + half)


@dataclass(frozen=True)
class DiffCI:
    diff: float  # mean(a) - mean(b)
    low: float | None
    high: float | None
    df: float | None

    @property
    def within_noise(self) -> bool | None:
        """True when the interval spans zero: the data cannot tell the two apart."""
        if self.low is None or self.high is None:
            return None
        return self.low <= 0.0 <= self.high


def welch_diff_ci(a: Sequence[float], b: Sequence[float], level: float = 0.95) -> DiffCI:
    """Difference of means a − b with Welch's t interval (unequal variances)."""
    ca, cb = mean_ci(a, level), mean_ci(b, level)
    diff = ca.mean - cb.mean
    if ca.sd is None or cb.sd is None:
        return DiffCI(diff, None, None, None)
    va, vb = ca.sd**2 / ca.n, cb.sd**2 / cb.n
    se = math.sqrt(va + vb)
    if se == 0.0:
        return DiffCI(diff, diff, diff, None)
    df = (va + vb) ** 2 / (va**2 / (ca.n - 1) + vb**2 / (cb.n - 1))
    half = t_quantile(0.5 + level / 2.0, df) * se
    return DiffCI(diff, diff - half, diff + half, df)
