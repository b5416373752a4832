"""The headline statistic of every comparison: the geometric mean of paired ratios with its 95 %
percentile-bootstrap CI (``docs/model.md``, "Headline statistic").

One implementation for every reader: the sweep's terminal summary
(:class:`bacepipe.sweep.engine.Summary`), the report's tables and figures
(:func:`bacepipe.analysis.summarize`) and the gaps to the yardsticks all call :func:`gmean_ci`
with the same resamples and seed, so the same rows give the same numbers everywhere, and
:func:`header` and :func:`cell` print them the same way. Plain numpy: the sweep imports it
without loading the analysis's polars tables and figures.

The bootstrap resamples the values with replacement ``n_resamples`` times (a fresh
``numpy.random.default_rng(seed)`` per call, so one interval never depends on another) and takes
the 2.5th / 97.5th percentile of the resampled means; for the geometric mean it runs on
log(values) and exponentiates the bounds, so reading a comparison the other way round inverts
the mean and its CI exactly. Its cost grows as n × ``n_resamples``: past
:data:`BOOTSTRAP_MAX_N` values (a point of many topologies) :func:`mean_ci` takes the normal
interval of the mean instead, mean ± z · sd / √n, to which the percentile bootstrap converges as
n grows (``docs/model.md``, "Headline statistic").
"""

from __future__ import annotations

import math
import statistics
from typing import NamedTuple

import numpy as np

#: Bootstrap resamples per CI, and the generator seed: the defaults of every reader.
N_RESAMPLES = 2000
SEED = 0
#: Coverage of every CI.
LEVEL = 0.95
#: Largest sample :func:`mean_ci` bootstraps; a larger one gets the normal interval (its
#: bootstrap would take seconds per column, and differs from it in the fourth digit).
BOOTSTRAP_MAX_N = 5000
#: Resamples (rows) drawn per generator call: bounds memory at ~32 MB of int64 indices.
_CHUNK_CELLS = 4_000_000
#: A cell without a value (no reference scheduler, no positive ratio).
NA = "n/a"


class GeoMean(NamedTuple):
    """Geometric mean of positive ratios with its percentile-bootstrap CI; NaN when none."""

    gmean: float
    ci_low: float
    ci_high: float


def bootstrap_ci(
    values: np.ndarray,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
    *,
    geometric: bool = False,
) -> tuple[float, float]:
    """Percentile-bootstrap confidence interval of the mean of ``values``.

    Parameters
    ----------
    values : numpy.ndarray, shape (n,), float64
        One value per topology (NaNs are not allowed; drop them first; with ``geometric``
        every value must be > 0).
    n_resamples : int
        Resamples with replacement, each of size n.
    seed : int
        Seed of the ``numpy.random.default_rng`` used for this call alone.
    level : float
        Coverage; 0.95 gives the 2.5th and 97.5th percentiles.
    geometric : bool
        CI of the geometric mean: the bootstrap runs on log(values) and the bounds are
        exponentiated, so the CI of 1/values is (1/high, 1/low) for the same seed.

    Returns
    -------
    (low, high) : tuple of float
        NaN for an empty ``values``; ``(v, v)`` when every value is ``v``.
    """
    values = np.asarray(values, dtype=np.float64)
    if geometric:
        values = np.log(values)
    n = values.size
    if n == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK_CELLS // n)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, rows):
        stop = min(start + rows, n_resamples)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = values[idx].mean(axis=1)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    if geometric:
        low, high = np.exp(low), np.exp(high)
    return (float(low), float(high))


def mean_ci(values: np.ndarray, n_resamples: int = N_RESAMPLES, seed: int = SEED,
            level: float = LEVEL, *, geometric: bool = False) -> tuple[float, float]:
    """The CI of every headline: :func:`bootstrap_ci` up to :data:`BOOTSTRAP_MAX_N` values,
    past it the normal interval of the mean (of the logs, with ``geometric``), mean ± z · sd / √n
    with z the normal quantile of ``level``. Parameters and result as :func:`bootstrap_ci`."""
    values = np.asarray(values, dtype=np.float64)
    if values.size <= BOOTSTRAP_MAX_N:
        return bootstrap_ci(values, n_resamples, seed, level, geometric=geometric)
    if geometric:
        values = np.log(values)
    z = statistics.NormalDist().inv_cdf(0.5 + level / 2.0)
    half = z * values.std(ddof=1) / math.sqrt(values.size)
    low, high = values.mean() - half, values.mean() + half
    if geometric:
        low, high = np.exp(low), np.exp(high)
    return (float(low), float(high))


def geometric_mean(values: np.ndarray) -> float:
    """exp(mean(log values)) of positive ``values``; NaN when empty."""
    values = np.asarray(values, dtype=np.float64)
    return float(np.exp(np.log(values).mean())) if values.size else float("nan")


def gmean_ci(ratios: np.ndarray, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> GeoMean:
    """The headline of one (point, scheduler, metric): the geometric mean of the paired ratios
    and its 95 % CI (:func:`mean_ci` with ``geometric``: the percentile bootstrap, or the
    normal interval for many topologies).

    Parameters
    ----------
    ratios : numpy.ndarray, shape (n,), float64
        value(scheduler, t) / value(reference, t), one per topology t, in topology order (the
        bootstrap draws indices, so the order matters for the CI). Only finite positive ratios
        enter: a zero has no logarithm, and a run that could not finish (NaN), or a reference
        value of 0 (inf), pairs nothing.
    n_resamples, seed : int
        As for :func:`mean_ci`.
    """
    ratios = np.asarray(ratios, dtype=np.float64)
    kept = ratios[np.isfinite(ratios) & (ratios > 0)]
    return GeoMean(geometric_mean(kept), *mean_ci(kept, n_resamples, seed, geometric=True))


def header(reference: str, statistic: str = "geo-mean", ci: bool = True) -> str:
    """The column header of a statistic of ratios to ``reference``: by default
    :func:`gmean_ci`'s numbers as :func:`cell` prints them, ``geo-mean × bace_pipe [95% CI]``."""
    return f"{statistic} × {reference}" + (f" [{LEVEL:.0%} CI]" if ci else "")


def cell(value: float | None, low: float | None = None, high: float | None = None,
         digits: int = 3) -> str:
    """``value [low, high]`` (``value`` alone without bounds; :data:`NA` without a value)."""
    def num(x: float | None) -> str:
        return NA if x is None or math.isnan(x) else f"{x:.{digits}f}"

    if num(value) == NA or (low is None and high is None):
        return num(value)
    return f"{num(value)} [{num(low)}, {num(high)}]"
