"""The headline statistic (``bacepipe.headline``): what enters it, and how every table prints it.
That the sweep's summary and the report compute it alike on the same rows is checked in
``tests/test_sweep.py``; its symmetry and the bootstrap against a plain loop in
``tests/test_report.py``."""

from __future__ import annotations

import math

import numpy as np

from bacepipe.headline import (
    BOOTSTRAP_MAX_N,
    NA,
    bootstrap_ci,
    cell,
    geometric_mean,
    gmean_ci,
    header,
    mean_ci,
)


def test_only_finite_positive_ratios_enter_the_geometric_mean():
    ratios = np.random.default_rng(1).lognormal(0.2, 0.6, 31)
    # Ratios a run that could not finish (NaN), a zero and a reference value of 0 (inf) make.
    spoiled = np.concatenate([ratios[:10], [np.nan, 0.0, np.inf, -1.0], ratios[10:]])
    got = gmean_ci(spoiled, 500, seed=3)
    assert got == gmean_ci(ratios, 500, seed=3)
    assert got.gmean == geometric_mean(ratios)
    assert (got.ci_low, got.ci_high) == bootstrap_ci(ratios, 500, 3, geometric=True)
    assert got.ci_low < got.gmean < got.ci_high
    assert all(math.isnan(x) for x in gmean_ci([np.nan, 0.0]))


def test_cell_and_header_name_and_print_the_statistic():
    assert header("bace_pipe") == "geo-mean × bace_pipe [95% CI]"
    assert header("LB", "mean", ci=False) == "mean × LB"
    gm, low, high = gmean_ci(np.random.default_rng(2).lognormal(0.3, 0.1, 40))
    text = cell(gm, low, high)
    value, bounds = text.split(" [")
    assert float(value) == round(gm, 3)
    assert [float(b) for b in bounds.rstrip("]").split(", ")] == [round(low, 3), round(high, 3)]
    assert cell(None, None, None) == cell(float("nan"), 1.0, 2.0) == NA
    assert cell(12.5, digits=2) == "12.50"  # a mean without a CI


def test_many_topologies_get_the_normal_interval_the_bootstrap_converges_to():
    """Past BOOTSTRAP_MAX_N values the CI is mean ± z·sd/√n (of the logs for the geometric
    mean): close to what the bootstrap gives there, symmetric, and the bootstrap below."""
    n = BOOTSTRAP_MAX_N + 1
    ratios = np.random.default_rng(4).lognormal(0.1, 0.7, n)
    low, high = mean_ci(ratios, geometric=True)
    slow_low, slow_high = bootstrap_ci(ratios, geometric=True)
    width = slow_high - slow_low
    assert abs(low - slow_low) < 0.05 * width and abs(high - slow_high) < 0.05 * width
    logs = np.log(ratios)
    half = 1.959963984540054 * logs.std(ddof=1) / math.sqrt(n)
    assert (low, high) == (np.exp(logs.mean() - half), np.exp(logs.mean() + half))
    inverse = mean_ci(1.0 / ratios, geometric=True)
    np.testing.assert_allclose(inverse, (1.0 / high, 1.0 / low), rtol=1e-12)
    few = ratios[:BOOTSTRAP_MAX_N]
    assert mean_ci(few, 300, 2) == bootstrap_ci(few, 300, 2)
