"""The report (``bacepipe.analysis``, ``python -m bacepipe.report``) on hand-made Parquet
datasets laid out as the sweep writes them (``tests/results_dirs.py``), whose answers are known
by construction."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import matplotlib.image
import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from results_dirs import point_dir, write_rows

from bacepipe.analysis import (
    bootstrap_ci,
    find_runs,
    format_summary_table,
    paired_ratios,
    pareto_front,
    scan_runs,
    summarize,
    write_report,
)
from bacepipe.analysis.tables import report_notes
from bacepipe.errors import InputError
from bacepipe.headline import cell, gmean_ci
from bacepipe.metrics import METRICS
from bacepipe.report import main

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
EXTRA_METRICS = METRICS[2:]  # all but avg_jct_h and total_cost


def results(
    jct: dict[str, list[float]], cost: dict[str, list[float]] | None = None, seed: int = 0
) -> pl.DataFrame:
    """One row per (topology, scheduler): ``jct[s][t]`` is scheduler s's avg JCT on topology t."""
    rows = []
    for name, values in jct.items():
        costs = (cost or jct)[name]
        for t, (j, c) in enumerate(zip(values, costs, strict=True)):
            rows.append(
                {
                    "seed": seed,
                    "topology": t,
                    "scheduler": name,
                    "avg_jct_h": j,
                    "total_cost": c,
                    **{m: 0.25 for m in EXTRA_METRICS},
                }
            )
    return pl.DataFrame(rows)


def row(summary: pl.DataFrame, scheduler: str, **point) -> dict:
    frame = summary.filter(pl.col("scheduler") == scheduler)
    for key, value in point.items():
        frame = frame.filter(pl.col(key) == value)
    assert frame.height == 1, frame
    return frame.row(0, named=True)


BASE = [2.0, 4.0, 8.0, 16.0, 32.0]


# --- statistics known by construction -----------------------------------------------------------


def test_constant_ratio_gives_exact_mean_zero_width_ci_and_full_win_rate(tmp_path):
    write_rows(tmp_path, results({"bace_pipe": BASE, "lcf": [1.5 * b for b in BASE]}))
    summary = summarize(scan_runs([tmp_path]))
    lcf = row(summary, "lcf")
    assert lcf["jct_ratio_mean"] == 1.5 and lcf["cost_ratio_mean"] == 1.5
    assert lcf["jct_ratio_ci_low"] == lcf["jct_ratio_ci_high"] == 1.5
    assert lcf["jct_win_rate"] == 1.0 and lcf["cost_win_rate"] == 1.0
    assert lcf["n_topologies"] == lcf["n_pairs"] == 5
    base = row(summary, "bace_pipe")
    assert base["jct_ratio_mean"] == 1.0 and base["jct_win_rate"] == 0.0


def test_known_mean_median_and_strict_win_rate(tmp_path):
    base = [1.0, 2.0, 4.0, 8.0]
    ratios = [1.0, 2.0, 3.0, 10.0]  # the tie (1.0) is not a win for bace_pipe
    ldf = [b * r for b, r in zip(base, ratios, strict=True)]
    cost = {"bace_pipe": [10.0, 10.0, 10.0, 10.0], "ldf": [5.0, 20.0, 20.0, 20.0]}
    write_rows(tmp_path, results({"bace_pipe": base, "ldf": ldf}, cost))
    r = row(summarize(scan_runs([tmp_path])), "ldf")
    assert r["avg_jct_h_mean"] == pytest.approx(np.mean(ldf))
    assert r["avg_jct_h_median"] == pytest.approx(np.median(ldf))
    assert r["jct_ratio_mean"] == pytest.approx(4.0)
    assert r["jct_ratio_median"] == pytest.approx(2.5)
    assert r["jct_win_rate"] == pytest.approx(0.75)
    assert r["total_cost_median"] == pytest.approx(20.0)
    assert r["cost_ratio_mean"] == pytest.approx(1.625)
    assert r["cost_win_rate"] == pytest.approx(0.75)  # ldf is cheaper on topology 0
    assert r["jct_ratio_ci_low"] <= r["jct_ratio_mean"] <= r["jct_ratio_ci_high"]
    assert 1.0 <= r["jct_ratio_ci_low"] and r["jct_ratio_ci_high"] <= 10.0


def test_pairs_only_shared_topologies(tmp_path):
    frame = results({"bace_pipe": BASE, "cr_ldf": [2 * b for b in BASE]})
    frame = frame.filter((pl.col("scheduler") == "bace_pipe") | (pl.col("topology") < 3))
    frame = frame.with_columns(
        pl.when((pl.col("scheduler") == "cr_ldf") & (pl.col("topology") == 0))
        .then(pl.col("avg_jct_h") * 4)
        .otherwise(pl.col("avg_jct_h"))
        .alias("avg_jct_h")
    )
    write_rows(tmp_path, frame)
    r = row(summarize(scan_runs([tmp_path])), "cr_ldf")
    assert r["n_topologies"] == r["n_pairs"] == 3
    assert r["jct_ratio_mean"] == pytest.approx((8 + 2 + 2) / 3)


def test_bootstrap_is_deterministic_and_matches_a_plain_loop():
    values = np.random.default_rng(7).lognormal(0.3, 0.2, size=37)
    assert bootstrap_ci(values, 2000, seed=0) == bootstrap_ci(values, 2000, seed=0)
    assert bootstrap_ci(values, 2000, seed=0) != bootstrap_ci(values, 2000, seed=1)
    rng = np.random.default_rng(0)
    means = [
        values[rng.integers(0, values.size, size=(1, values.size))[0]].mean() for _ in range(2000)
    ]
    np.testing.assert_allclose(
        bootstrap_ci(values, 2000, seed=0), np.percentile(means, [2.5, 97.5]), rtol=1e-12
    )
    assert np.isnan(bootstrap_ci(np.array([]))).all()


def test_summary_is_deterministic(tmp_path):
    rng = np.random.default_rng(3)
    base = rng.uniform(1, 10, 20).tolist()
    write_rows(tmp_path, results({"bace_pipe": base, "lcf": [b * rng.uniform(1, 2) for b in base]}))
    first, second = (summarize(scan_runs([tmp_path])) for _ in range(2))
    assert_frame_equal(first, second)
    r = row(first, "lcf")
    assert r["jct_ratio_ci_low"] < r["jct_ratio_mean"] < r["jct_ratio_ci_high"]


def test_missing_baseline_gives_null_ratios(tmp_path):
    write_rows(tmp_path, results({"lcf": BASE, "ldf": BASE}))
    summary = summarize(scan_runs([tmp_path]))
    ratio_cols = [c for c in summary.columns if "ratio" in c or "win_rate" in c]
    assert summary.select(ratio_cols).null_count().row(0) == (2,) * len(ratio_cols)
    assert (summary["n_pairs"] == 0).all()
    assert "bace_pipe absent: no ratios" in format_summary_table(summary)


def test_pareto_front():
    x = np.array([1.0, 2.0, 1.5, 3.0, 1.0])
    y = np.array([3.0, 1.0, 2.0, 0.5, 4.0])
    assert pareto_front(x, y).tolist() == [0, 2, 1, 3]
    assert pareto_front(np.array([1.0, 2.0]), np.array([1.0, 2.0])).tolist() == [0]


# --- reading the datasets -----------------------------------------------------------------------


def test_scan_reads_hive_keys_ignores_temporaries_and_ancestor_keys(tmp_path):
    # A Hydra override_dirname above runs/ must not become a column.
    root = tmp_path / "bandwidth_scale=0.5"
    frame = results({"bace_pipe": BASE, "lcf": BASE})
    write_rows(root, frame.filter(pl.col("topology") < 2))
    (path, _) = write_rows(root, frame.filter(pl.col("topology") >= 2))
    (path.parent / f".{path.name}.123.tmp").write_bytes(b"half-written")  # as store writes it
    (path.parent / ".hidden.parquet").write_bytes(b"not parquet")
    write_rows(root, frame, bandwidth_scale=0.3, arrivals="poisson", arrival_rate_per_h=2.0)
    lf = scan_runs([root])
    schema = lf.collect_schema()
    assert list(schema)[:15] == [
        "scenario", "bandwidth_scale", "gpu_scale", "num_jobs", "arrivals", "arrival_rate_per_h",
        "trace", "latency", "memory_model", "price_profile", "start_rule", "gpu_mix", "point",
        "plan_slack", "seed",
    ]
    assert schema["bandwidth_scale"] == pl.Float64 and schema["num_jobs"] == pl.Int64
    assert schema["arrivals"] == pl.String
    data = lf.collect()
    assert data.height == 20
    assert sorted(data["bandwidth_scale"].unique().to_list()) == [0.3, 1.0]
    summary = summarize(lf)
    assert summary.height == 4
    poisson = row(summary, "lcf", bandwidth_scale=0.3)
    assert (poisson["arrivals"], poisson["arrival_rate_per_h"]) == ("poisson", "2.0")
    assert row(summary, "lcf", bandwidth_scale=1.0)["arrivals"] is None


def test_find_runs_in_multirun_dedupes_and_accepts_runs_dir(tmp_path):
    multirun = tmp_path / "multirun" / "2026-11-29" / "12-00-00"
    for job in ("0", "1"):
        write_rows(multirun / job, results({"bace_pipe": BASE}))
    (multirun / "0" / ".hydra").mkdir()
    found = find_runs([multirun, multirun / "0", multirun / "1" / "runs"])
    assert found == [(multirun / j / "runs").resolve() for j in ("0", "1")]


def test_duplicate_rows_across_result_dirs_keep_the_first(tmp_path):
    write_rows(tmp_path / "a", results({"bace_pipe": BASE, "lcf": [2 * b for b in BASE]}))
    write_rows(tmp_path / "b", results({"bace_pipe": BASE, "lcf": [3 * b for b in BASE]}))
    summary = summarize(scan_runs([tmp_path / "a", tmp_path / "b"]))
    r = row(summary, "lcf")
    assert r["jct_ratio_mean"] == 2.0 and r["n_topologies"] == 5 and r["n_duplicate_rows"] == 5
    assert any("10 duplicate row(s)" in note for note in report_notes(summary))
    assert paired_ratios(scan_runs([tmp_path / "b"])).collect()["jct_ratio"].max() == 3.0


@pytest.mark.parametrize("setup", ["missing", "empty", "only_tmp", "file"])
def test_find_runs_rejects_paths_without_results(tmp_path, setup):
    path = tmp_path / "res"
    if setup == "empty":
        path.mkdir()
    elif setup == "only_tmp":
        (point_dir(path) / ".chunk-000000000-000000005-lcf.parquet.123.tmp").write_bytes(b"")
    elif setup == "file":
        path.write_text("not a directory")
    with pytest.raises(InputError) as err:
        find_runs([path])
    assert err.value.field == str(path)


def test_missing_required_column_names_the_file(tmp_path):
    path = point_dir(tmp_path) / "chunk-000000000-000000005-bace_pipe.parquet"
    results({"bace_pipe": BASE}).drop("total_cost").write_parquet(path)
    with pytest.raises(InputError, match="missing column") as err:
        scan_runs([tmp_path])
    assert err.value.field == str(path)


@pytest.mark.parametrize(("where", "expected"), [
    # The variable-depth layout of format 1: no level of a value left to its default.
    ("scenario=random/bandwidth_scale=1.0/gpu_scale=1.0/num_jobs=8/point=p0/c.parquet",
     "point=p0: not in the results layout of this bacepipe (expected arrivals=… there)"),
    ("scenario=random/c.parquet", "c.parquet: not in the results layout of this bacepipe "
     "(expected bandwidth_scale=… there)"),
    ("{point}/extra/c.parquet", "extra: not in the results layout of this bacepipe "
     "(expected only files there)"),
    ("{point}/notes.txt", "notes.txt: not a .parquet file"),
])
def test_a_dataset_out_of_the_fixed_layout_is_refused_in_one_line(tmp_path, capsys, where,
                                                                   expected):
    write_rows(tmp_path, results({"bace_pipe": BASE}))
    point = point_dir(tmp_path).relative_to(tmp_path / "runs")
    path = tmp_path / "runs" / where.format(point=point)
    path.parent.mkdir(parents=True, exist_ok=True)
    results({"bace_pipe": BASE}).write_parquet(path)
    with pytest.raises(InputError, match="run the sweep again|holds only the sweep's files"):
        scan_runs([tmp_path])
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err


# --- the command line ---------------------------------------------------------------------------


def check_png(path: Path) -> None:
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100


def test_cli_writes_report_and_figures_only_for_present_axes(tmp_path, capsys):
    every = ["bace_pipe", "lcf", "ldf", "cr_lcf", "bace_pipe_no_priority"]
    rng = np.random.default_rng(0)
    for bw in (0.5, 1.0):
        jct = {
            s: [b * (1 + i / 4) * rng.uniform(0.9, 1.1) for b in BASE] for i, s in enumerate(every)
        }
        write_rows(tmp_path, results(jct), bandwidth_scale=bw)
    out = tmp_path / "report"
    assert main([str(tmp_path), "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    report = (out / "report.md").read_text()
    for fig in ("Fig. 4", "Fig. 5", "Fig. 8", "Scatter", "CDF"):
        assert f"{fig} (" in stdout and f"![{fig}]" in report
    for skipped in (
        "Fig. 6 skipped: only gpu_scale=1.0 present",
        "Fig. 7 skipped: only num_jobs=8 present",
    ):
        assert skipped in stdout and skipped in report
    # Absent schedulers are named, never drawn.
    assert "cr_ldf" in report and "bace_pipe_no_costmin" in report
    assert "schedulers not present in any result: cr_ldf, bace_pipe_no_pathfinder" in stdout
    assert "not present: cr_ldf" in report
    pngs = sorted((out / "figures").glob("*.png"))
    assert [p.name for p in pngs] == [
        "fig4_normalized.png",
        "fig5_bandwidth.png",
        "fig8_ablation.png",
        "jct_ratio_cdf.png",
        "jct_vs_cost.png",
    ]
    for png in pngs:
        check_png(png)
    assert pl.read_csv(out / "summary.csv").height == 2 * len(every)
    assert "geo-mean × bace_pipe [95% CI]" in stdout and "bace_pipe_no_priority" in stdout


def test_cli_single_point_skips_axis_figures_and_writes_into_first_path(tmp_path, capsys):
    write_rows(tmp_path, results({"bace_pipe": BASE, "lcf": [1.5 * b for b in BASE]}))
    assert main([str(tmp_path)]) == 0
    stdout = capsys.readouterr().out
    assert "Fig. 5 skipped: only bandwidth_scale=1.0 present" in stdout
    assert "Fig. 8 skipped: none of bace_pipe_no_priority" in stdout
    assert (tmp_path / "report.md").is_file()
    assert "1.500 [1.500, 1.500]" in stdout  # one point: the CI is shown


def test_write_report_without_baseline_says_so(tmp_path):
    write_rows(tmp_path, results({"lcf": BASE, "ldf": [2 * b for b in BASE]}))
    lf = scan_runs([tmp_path])
    lines: list[str] = []
    written = write_report(
        summarize(lf), tmp_path / "out", ratios=paired_ratios(lf).collect(), echo=lines.append
    )
    assert any(line.startswith("note: bace_pipe absent at scenario=random") for line in lines)
    assert any(line.startswith("Fig. 4 skipped: bace_pipe absent") for line in lines)
    check_png(next(p for p in written if p.name == "jct_vs_cost.png"))  # raw means still plot


@pytest.mark.parametrize("make", ["missing", "empty"])
def test_cli_bad_path_is_one_line_and_status_2(tmp_path, capsys, make):
    good = tmp_path / "good"
    write_rows(good, results({"bace_pipe": BASE}))
    bad = tmp_path / "bad"
    if make == "empty":
        bad.mkdir()
    assert main([str(good), str(bad)]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1
    assert captured.err.startswith(f"report: {bad}: ")
    assert captured.out == ""


def test_module_entry_point_exits_2_without_traceback(tmp_path):
    bad = tmp_path / "nothing-here"
    proc = subprocess.run(
        [sys.executable, "-m", "bacepipe.report", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr == f"report: {bad}: no such file or directory\n"


@pytest.mark.parametrize(
    ("module", "args", "field"),
    [
        ("bacepipe.report", ["/nonexistent"], "/nonexistent: no such file or directory"),
        ("bacepipe.report", [".", "--bogus"], "unrecognized arguments: --bogus"),
        ("bacepipe.report", [".", "--resamples", "0"], "--resamples: must be >= 1"),
        ("bacepipe.reproduce", ["--bogus"], "unrecognized arguments: --bogus"),
        ("bacepipe.reproduce", ["--topologies", "0"], "--topologies: must be >= 1"),
        ("bacepipe.reproduce", ["--topologies-of", "ours=5"],
         "--topologies-of: ours is not one of --presets"),
        ("bacepipe.reproduce", ["--results", "/nonexistent"], "/nonexistent: no such file"),
    ],
)
def test_cli_bad_argument_is_one_line_and_status_2(tmp_path, module, args, field):
    prog = module.split(".")[1]
    proc = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"{prog}: {field}")
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_report_files_are_replaced_atomically(tmp_path, monkeypatch):
    write_rows(tmp_path, results({"bace_pipe": BASE, "lcf": [1.5 * b for b in BASE]}))
    out = tmp_path / "out"
    assert main([str(tmp_path), "--out", str(out)]) == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert before and not [p for p in out.rglob(".*") if p.is_file()]  # no temporary left

    write_rows(tmp_path, results({"bace_pipe": BASE, "ldf": [3.0 * b for b in BASE]}))
    import bacepipe.io

    def failing_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bacepipe.io.os, "replace", failing_replace)
    assert main([str(tmp_path), "--out", str(out)]) == 2
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before  # old files intact, no temporaries


# --- the headline: geometric mean of paired ratios ----------------------------------------------


def test_geometric_mean_headline_is_symmetric_and_arithmetic_mean_is_not(tmp_path):
    rng = np.random.default_rng(3)
    a = rng.lognormal(2.0, 1.0, 40)
    b = a * rng.lognormal(0.1, 0.8, 40)  # heavy-tailed per-topology ratios
    write_rows(tmp_path, results({"bace_pipe": list(a), "lcf": list(b)}))
    lf = scan_runs([tmp_path])
    forward = row(summarize(lf, n_resamples=500), "lcf")
    backward = row(summarize(lf, n_resamples=500, baseline="lcf"), "bace_pipe")
    assert forward["jct_ratio_gmean"] == pytest.approx(1 / backward["jct_ratio_gmean"])
    for a_side, b_side in (("low", "high"), ("high", "low")):
        inverse = 1 / backward[f"jct_ratio_gmean_ci_{b_side}"]
        assert forward[f"jct_ratio_gmean_ci_{a_side}"] == pytest.approx(inverse)
    assert forward["jct_ratio_gmean"] == pytest.approx(np.exp(np.mean(np.log(b / a))))
    # The arithmetic mean of the same ratios is not symmetric: why it is not the headline.
    assert forward["jct_ratio_mean"] * backward["jct_ratio_mean"] > 1.05


def test_headline_leads_every_table_under_a_header_that_names_it(tmp_path, capsys):
    write_rows(tmp_path, results({"bace_pipe": BASE, "lcf": [1.5 * b for b in BASE]}))
    assert main([str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    (header,) = [line for line in capsys.readouterr().out.splitlines()
                 if line.startswith("scheduler")]
    assert header.split()[:5] == ["scheduler", "role", "topologies", "avg", "JCT"]
    assert header.count("geo-mean × bace_pipe [95% CI]") == 2
    report = (tmp_path / "out" / "report.md").read_text()
    tables = 0
    for line in report.splitlines():
        if line.startswith("| scheduler |"):
            tables += 1
            cells = [c.strip() for c in line.strip("|").split("|")]
            ratio_cells = [c for c in cells if "×" in c]
            assert ratio_cells[0] == "JCT geo-mean × bace_pipe [95% CI]", line
            assert "cost geo-mean × bace_pipe [95% CI]" in ratio_cells
            assert "JCT mean × bace_pipe [95% CI]" in ratio_cells
    assert tables == 1  # one point, one table


# --- points: never pooled --------------------------------------------------------------------


def test_points_are_reported_apart_and_a_scheduler_not_run_at_one_is_named(tmp_path, capsys):
    # Two points on the same topology numbers and seed, the second with 10x slower topologies:
    # lcf's ratios differ by point, and ldf (and a plug-in) ran at the first point only.
    rng = np.random.default_rng(4)
    factors = {0.5: rng.lognormal(0.4, 0.3, len(BASE)), 1.0: rng.lognormal(0.1, 0.3, len(BASE))}
    for bw, scale in ((0.5, 1.0), (1.0, 10.0)):
        base = [scale * b for b in BASE]
        jct = {"bace_pipe": base, "lcf": list(factors[bw] * base)}
        if bw == 0.5:
            jct |= {"ldf": [2 * b for b in base], "my_plugin": [3 * b for b in base]}
        write_rows(tmp_path, results(jct), bandwidth_scale=bw)
    out = tmp_path / "report"
    assert main([str(tmp_path), "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    blocks = stdout.split("\npoint ")[1:]
    assert [b.splitlines()[0] for b in blocks] == [
        "1 of 2: bandwidth_scale=0.5",  # named by the one key that differs, nothing else
        "2 of 2: bandwidth_scale=1.0; not run here: ldf, my_plugin",
    ]
    for block, bw in zip(blocks, (0.5, 1.0), strict=True):
        # Ratios pair topologies of one point: lcf's headline is its point's, never pooled.
        gm, low, high = gmean_ci(factors[bw])
        (lcf,) = [line for line in block.splitlines() if line.startswith("lcf ")]
        assert cell(gm, low, high) in lcf
        assert ("ldf " in block) == (bw == 0.5)
    assert "note: not run at bandwidth_scale=1.0: ldf, my_plugin" in stdout

    report = (out / "report.md").read_text()
    points_table = report.split("## Points")[1].split("\n## ")[0]
    assert "| bandwidth_scale | topologies | schedulers run | not run here |" in points_table
    assert "| --- | ---: | ---: | --- |" in points_table
    assert "| 0.5 | 5 | 4 | — |" in points_table
    assert "| 1.0 | 5 | 2 | ldf, my_plugin |" in points_table
    per_point = report.split("## Per point")[1]
    sections = per_point.split("\n### ")[1:]
    assert [s.splitlines()[0] for s in sections] == ["bandwidth_scale=0.5",
                                                     "bandwidth_scale=1.0"]
    assert "Not run here: ldf, my_plugin." in sections[1] and "Not run here" not in sections[0]
    assert "| my_plugin |" in sections[0] and "| my_plugin |" not in sections[1]


def test_two_runs_of_the_same_settings_are_named_by_their_point_id(tmp_path, capsys):
    # Same settings, other code (another point id): two samples, never pooled.
    write_rows(tmp_path, results({"bace_pipe": BASE, "lcf": [2 * b for b in BASE]}), point="p0")
    write_rows(tmp_path, results({"bace_pipe": BASE, "lcf": [3 * b for b in BASE]}), point="p1")
    assert main([str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    stdout = capsys.readouterr().out
    assert "point 1 of 2: point=p0" in stdout and "point 2 of 2: point=p1" in stdout
    assert "2.000 [2.000, 2.000]" in stdout and "3.000 [3.000, 3.000]" in stdout


def test_analysis_never_imports_core():
    root = Path(__file__).resolve().parents[1] / "bacepipe"
    for path in [*(root / "analysis").glob("*.py"), root / "report.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            assert not any(n.startswith("bacepipe.core") for n in names), path


def test_roles_of_the_policy_table_drive_the_analysis_names():
    from bacepipe.analysis import ABLATIONS, BASELINE, BASELINES, SCHEDULERS
    from bacepipe.policies import ROLES, role_of

    assert [n for n in SCHEDULERS if role_of(n) == "paper"] == [BASELINE]
    assert BASELINES == tuple(n for n in SCHEDULERS if role_of(n) == "baseline")
    assert ABLATIONS == tuple(n for n in SCHEDULERS if role_of(n) == "ablation")
    assert all(role_of(n) in ROLES for n in SCHEDULERS) and role_of("not_registered") == "user"
