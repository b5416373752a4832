"""Gaps to the yardsticks of SPEC §15 (``bacepipe.analysis.yardsticks``) on hand-made runs
datasets laid out as the sweep writes them; every number is recomputed here from the rows."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from results_dirs import write_rows

from bacepipe.analysis import bootstrap_ci, geometric_mean, scan_runs
from bacepipe.analysis.yardsticks import (
    contention_slice,
    gap_table,
    gaps_markdown,
    plot_gaps,
)
from bacepipe.report import main as report_main

LB = np.array([1.0, 2.0, 4.0, 8.0])


def write(root, gaps: dict, *, opt=None, proven=None, lb=LB, yardsticks=True, **where):
    """``gaps[s]``: s's avg JCT ÷ LB (a factor or one per topology); ``opt``: OPT ÷ LB per
    topology (adds the OPT columns), ``proven``: which are proven (default all); ``where``: the
    point's axes (``tests/results_dirs.py``)."""
    rows = []
    for name, g in gaps.items():
        g = np.broadcast_to(np.asarray(g, float), lb.shape)
        for t, b in enumerate(lb):
            row = {"seed": 0, "topology": t, "scheduler": name, "avg_jct_h": b * g[t],
                   "total_cost": 1.0, "plan_slack": 0.2}
            if yardsticks:
                row["lower_bound_h"] = b
            if opt is not None:
                row["opt_avg_jct_h"] = b * opt[t]
                row["opt_proven"] = True if proven is None else bool(proven[t])
            rows.append(row)
    write_rows(root, rows, **where)


def test_lb_gap_is_the_paired_geometric_mean_with_its_bootstrap_ci(tmp_path):
    factors = np.array([1.1, 1.5, 2.0, 3.0])
    write(tmp_path, {"bace_pipe": factors, "ldf": 2.0})
    table = gap_table(scan_runs([tmp_path]), n_resamples=300)
    rows = {r["scheduler"]: r for r in table.iter_rows(named=True)}
    bp = rows["bace_pipe"]
    assert bp["n_lb"] == 4 and bp["lb_gap_gmean"] == pytest.approx(geometric_mean(factors))
    assert (bp["lb_gap_gmean_ci_low"], bp["lb_gap_gmean_ci_high"]) == pytest.approx(
        bootstrap_ci(factors, 300, 0, geometric=True))
    assert bp["lb_gap_mean"] == pytest.approx(factors.mean()) and bp["lb_gap_max"] == 3.0
    assert rows["ldf"]["lb_gap_gmean"] == pytest.approx(2.0)
    assert bp["n_opt"] == 0 and bp["opt_gap_mean"] is None
    assert table["scheduler"].to_list() == ["bace_pipe", "ldf"]  # role order


def test_opt_gap_reads_proven_rows_only(tmp_path):
    opt = np.array([1.0, 1.2, 1.5, 2.0])
    # bace_pipe: at OPT on 0 and 1 (within 1e-4), 10 % above on 2, 50 % above on 3 (unproven).
    jct = opt * np.array([1.0, 1.00005, 1.1, 1.5])
    write(tmp_path, {"bace_pipe": jct, "lcf": opt * 0.5}, opt=opt,
          proven=[True, True, True, False])
    rows = {r["scheduler"]: r for r in gap_table(scan_runs([tmp_path]),
                                                 n_resamples=50).iter_rows(named=True)}
    bp = rows["bace_pipe"]
    assert (bp["n_opt"], bp["n_proven"]) == (4, 3)
    assert bp["opt_gap_mean"] == pytest.approx(np.mean([1.0, 1.00005, 1.1]))
    assert bp["opt_gap_max"] == pytest.approx(1.1)
    assert bp["opt_at_optimum"] == pytest.approx(2 / 3) and bp["opt_below"] == 0
    assert rows["lcf"]["opt_below"] == 3  # a scheduler below OPT is counted, never hidden
    md = "\n".join(gaps_markdown(gap_table(scan_runs([tmp_path]), n_resamples=50)))
    assert "| `bace_pipe` | paper | 4 |" in md and "| 3 / 4 | 1.0334 | 1.1000 | 67 % | 0 |" in md


def test_results_without_the_columns_say_so_in_one_line(tmp_path):
    write(tmp_path, {"bace_pipe": 1.0}, yardsticks=False)
    table = gap_table(scan_runs([tmp_path]), n_resamples=10)
    assert table["lb_gap_gmean"].to_list() == [None]
    md = gaps_markdown(table)
    assert md[2].startswith("No `lower_bound_h` or `opt_avg_jct_h` column")


def test_contention_figure_takes_each_axis_with_the_others_at_defaults(tmp_path):
    for i, (gpu, jobs, g) in enumerate([(1.0, 8, 1.2), (0.5, 8, 2.0), (1.25, 8, 1.1),
                                        (1.0, 24, 3.0), (0.5, 24, 9.0)]):
        write(tmp_path, {"bace_pipe": g, "ldf": 2 * g}, point=f"p{i}", gpu_scale=gpu,
              num_jobs=jobs)
    table = gap_table(scan_runs([tmp_path]), n_resamples=20)
    gpu, fixed, _ = contention_slice(table, "gpu_scale")
    assert fixed["num_jobs"] == 8
    assert gpu.filter(pl.col("scheduler") == "bace_pipe")["lb_gap_gmean"].to_list() == \
        pytest.approx([2.0, 1.2, 1.1])
    jobs, fixed, _ = contention_slice(table, "num_jobs")
    assert fixed["gpu_scale"] in (0.5, 1.0)  # both hold 8 and 24 jobs: defaults win
    assert fixed["gpu_scale"] == 1.0
    fig = plot_gaps(table, "gap")
    assert fig is not None and len(fig.axes) == 2
    assert plot_gaps(table.filter(pl.col("num_jobs") == 8).filter(pl.col("gpu_scale") == 1.0),
                     "gap") is None


def test_report_writes_the_gap_section_and_figure(tmp_path, capsys):
    write(tmp_path, {"bace_pipe": 1.5, "ldf": 2.0}, opt=np.full(4, 1.2))
    write(tmp_path, {"bace_pipe": 2.5, "ldf": 4.0}, point="p1", gpu_scale=0.5)
    assert report_main([str(tmp_path), "--resamples", "20"]) == 0
    md = (tmp_path / "report.md").read_text()
    section = md.split("## Gaps to the yardsticks (SPEC §15)", 1)[1].split("## Per point")[0]
    assert "![avg JCT ÷ LB by contention](figures/gap_to_lower_bound.png)" in section
    assert "| `ldf` | baseline | 4 | 2.000 [2.000, 2.000] | 2.000 | 2.000 | 4 / 4 | 1.6667" \
        in section
    assert (tmp_path / "figures" / "gap_to_lower_bound.png").stat().st_size > 1000
    assert "Gap (avg JCT ÷ lower bound by contention (SPEC §15))" in capsys.readouterr().out


@pytest.mark.long
def test_a_real_tiny_run_with_the_optimum_is_recomputable_from_its_parquet_rows(tmp_path):
    from bacepipe.sweep import run_point, validate

    run_point(validate({"topologies": 3, "workers": 1, "results_dir": str(tmp_path),
                        "num_regions": 3, "gpu_scale": 0.0625, "num_jobs": 4, "optimal": True,
                        "optimal_time_limit_s": 5.0, "schedulers": ["bace_pipe", "ldf"]}))
    runs = pl.read_parquet(tmp_path / "runs" / "**" / "*.parquet", hive_partitioning=True)
    table = gap_table(scan_runs([tmp_path]), n_resamples=50)
    for r in table.iter_rows(named=True):
        mine = runs.filter(pl.col("scheduler") == r["scheduler"])
        lb = (mine["avg_jct_h"] / mine["lower_bound_h"]).to_numpy()
        assert r["lb_gap_gmean"] == pytest.approx(geometric_mean(lb))
        assert r["lb_gap_max"] == pytest.approx(lb.max()) and lb.min() >= 1 - 1e-9
        proven = mine.filter(pl.col("opt_proven"))
        assert r["n_proven"] == proven.height
        if proven.height:
            opt = (proven["avg_jct_h"] / proven["opt_avg_jct_h"]).to_numpy()
            assert r["opt_gap_mean"] == pytest.approx(opt.mean()) and r["opt_below"] == 0
