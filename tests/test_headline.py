"""The headline statistic (``bacepipe.headline``): what enters it, and how every table prints it.
That the sweep's summary and the report compute it alike on the same rows is checked in
``tests/test_sweep.py``; its symmetry and the bootstrap against a plain loop in
``tests/test_report.py``."""

from __future__ import annotations

import math

import numpy as np

from bacepipe.headline import NA, bootstrap_ci, cell, geometric_mean, gmean_ci, header


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
