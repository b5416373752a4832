"""A point's summary: per scheduler, the mean avg JCT and total cost of its runs and the
geometric mean of its paired ratios to ``bace_pipe`` with the 95 % CI, as the report computes
them (:func:`bacepipe.headline.gmean_ci`); and the text table the sweep prints.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import polars as pl

from bacepipe.headline import cell, gmean_ci, header

#: The scheduler every normalized column of the summary is relative to.
BASELINE = "bace_pipe"

#: The columns summed by :class:`Summary`, and the prefix of their ratio columns.
_SUMMED = {"avg_jct_h": "jct", "total_cost": "cost"}


class Summary:
    """Per-scheduler means of a point's runs and the headline of its paired ratios to
    ``bace_pipe``, fed one topology range at a time.

    The headline is the report's (:func:`bacepipe.headline.gmean_ci`, the function
    :func:`bacepipe.analysis.summarize` calls, with its resamples and seed): the geometric mean of
    the per-topology ratios value / bace_pipe's value with its 95 % bootstrap CI, so the same
    rows give the same numbers in both. The means are running sums (memory flat in topologies);
    the ratios themselves are kept, 8 bytes × topologies × schedulers × 2, since the bootstrap
    resamples them all. A ratio pairs the rows of one topology (each scheduler's rows of a range
    are in topology order, the order the report reads them in). Runs recorded as unplaceable
    (null in the files, NaN here) are left out of the means and the ratios.
    """

    def __init__(self, schedulers):
        self.schedulers = tuple(schedulers)
        self.base = BASELINE if BASELINE in self.schedulers else None
        # rows: avg JCT, total cost; columns: schedulers.
        self.sums = np.zeros((len(_SUMMED), len(self.schedulers)))
        self.counts = np.zeros((len(_SUMMED), len(self.schedulers)), dtype=np.int64)
        self.rows = np.zeros(len(self.schedulers), dtype=np.int64)
        self.ratios: dict[tuple[str, str], list[np.ndarray]] = {
            (q, name): [] for q in _SUMMED.values() for name in self.schedulers}

    def add(self, runs: dict) -> None:
        """Add one topology range: scheduler -> its columns ``avg_jct_h`` and ``total_cost``."""
        for i, name in enumerate(self.schedulers):
            for k, (column, q) in enumerate(_SUMMED.items()):
                values = np.asarray(runs[name][column], dtype=np.float64)
                finite = ~np.isnan(values)
                self.sums[k, i] += np.where(finite, values, 0.0).sum()
                self.counts[k, i] += finite.sum()
                if self.base is not None:
                    base = np.asarray(runs[self.base][column], dtype=np.float64)
                    with np.errstate(invalid="ignore", divide="ignore"):  # gmean_ci drops them
                        self.ratios[q, name].append(values / base)
            self.rows[i] += len(runs[name]["avg_jct_h"])

    def frame(self) -> pl.DataFrame:
        """Per scheduler, under the names of :func:`bacepipe.analysis.summarize`'s columns:
        ``n_topologies``; ``avg_jct_h_mean`` (h) and ``total_cost_mean`` ($), over the runs that
        finished; ``jct_ratio_gmean`` and ``cost_ratio_gmean`` with their ``_ci_low`` /
        ``_ci_high`` (null when bace_pipe was not simulated)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(self.counts > 0, self.sums / self.counts, np.nan)
        columns = {"scheduler": list(self.schedulers), "n_topologies": self.rows}
        for k, (column, q) in enumerate(_SUMMED.items()):
            heads = [gmean_ci(np.concatenate(self.ratios[q, name]) if self.base else [])
                     for name in self.schedulers]
            columns[f"{column}_mean"] = means[k]
            columns[f"{q}_ratio_gmean"] = [h.gmean for h in heads]
            columns[f"{q}_ratio_gmean_ci_low"] = [h.ci_low for h in heads]
            columns[f"{q}_ratio_gmean_ci_high"] = [h.ci_high for h in heads]
        frame = pl.DataFrame(columns, schema_overrides={"n_topologies": pl.Int64})
        return frame.with_columns(pl.col(pl.Float64).fill_nan(None))


def format_summary(summary: pl.DataFrame) -> str:
    """The summary as a fixed-width text table: per scheduler its topologies, mean avg JCT and
    total cost, each followed by its geometric mean × bace_pipe with the 95 % CI (as the report
    prints it: :func:`bacepipe.headline.cell`)."""
    ratio = header(BASELINE)
    head = ("scheduler", "topologies", "avg JCT h", ratio, "total cost $", ratio)

    def geo(r: dict, q: str) -> str:
        return cell(r[f"{q}_ratio_gmean"], r[f"{q}_ratio_gmean_ci_low"],
                    r[f"{q}_ratio_gmean_ci_high"])

    rows = [(r["scheduler"], str(r["n_topologies"]), cell(r["avg_jct_h_mean"]), geo(r, "jct"),
             cell(r["total_cost_mean"], digits=2), geo(r, "cost"))
            for r in summary.iter_rows(named=True)]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]

    def line(row):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(row, widths, strict=True)))

    return "\n".join([line(head), line(tuple("-" * w for w in widths)), *map(line, rows)])


def summarize(schedulers, ranges: Iterable[dict]) -> pl.DataFrame:
    """:meth:`Summary.frame` of the topology ranges ``ranges`` (each as :meth:`Summary.add`
    takes it), fed one at a time."""
    summary = Summary(schedulers)
    for runs in ranges:
        summary.add(runs)
    return summary.frame()
