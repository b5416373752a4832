"""The sweep engine's config, command line, on-disk layout, summary and replay (SPEC §8, §10).

Most tests call the Python API in-process (one numba load per test process); subprocesses are
used only where the command line itself is under test.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from omegaconf import OmegaConf
from polars.testing import assert_frame_equal
from results_dirs import point_dir, ratio_rows, write_rows

import bacepipe
from bacepipe.analysis import scan_runs, summarize
from bacepipe.errors import InputError
from bacepipe.headline import cell
from bacepipe.metrics import METRICS
from bacepipe.model.hardware import Hardware
from bacepipe.policies import SCHEDULERS
from bacepipe.settings import SWITCHES, HardwareConfig, SweepConfig
from bacepipe.sweep import Summary, format_summary, run_point, store, tables, validate
from bacepipe.sweep.chunks import JOB_COLUMNS, RUN_COLUMNS
from bacepipe.sweep.config import CONF_DIR, SWEEPS_DIR
from bacepipe.sweep.engine import prepare_point

REPO = Path(__file__).resolve().parents[1]


def settings(tmp_path, **overrides):
    # validate: every schedule these tests simulate is replayed against SPEC §4 as well
    values = {"topologies": 12, "chunk_size": 5, "workers": 1, "results_dir": str(tmp_path),
              "validate": True}
    values.update(overrides)
    return validate(values)


def read_runs(root: Path) -> pl.DataFrame:
    return (pl.scan_parquet(str(root / "runs" / "**" / "*.parquet"), hive_partitioning=True)
            .collect())


def cli(*args, cwd, timeout=120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    return subprocess.run([sys.executable, "-m", "bacepipe.sweep", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


# --------------------------------------------------------------------------- config


def test_hardware_config_mirrors_hardware():
    ours = {f.name: f.default for f in dataclasses.fields(HardwareConfig)}
    assert ours == Hardware().to_dict()


def test_defaults():
    s = validate({})
    assert s.scenario == "random" and s.bandwidth_scale == 1.0 and s.gpu_scale == 1.0
    assert (s.num_jobs, s.num_regions, s.topologies, s.seed) == (8, 6, 1000, 0)
    assert s.schedulers == SCHEDULERS and s.backend == "loky" and s.dask_address is None
    assert s.workers >= 1 and not s.save_jobs and s.hardware == Hardware()
    assert s.results_dir == Path("outputs/results").resolve()
    assert all(getattr(s, k) is None for k in SWITCHES)  # SPEC §12 switches: the scenario's


@pytest.mark.parametrize("key, value, message", [
    ("bandwidth_scale", -1, "bandwidth_scale: must be > 0, got -1"),
    ("gpu_scale", 0.0, "gpu_scale: must be > 0, got 0"),
    ("num_jobs", 0, "num_jobs: must be >= 1, got 0"),
    ("num_regions", 2.5, "num_regions: must be an integer, got 2.5"),
    ("topologies", "many", "topologies: must be an integer, got 'many'"),
    ("seed", -1, "seed: must be >= 0, got -1"),
    ("schedulers", ["bace_pipe", "fifo"], "schedulers: unknown scheduler 'fifo'"),
    ("schedulers", ["lcf", "lcf"], "schedulers: lists 'lcf' twice"),
    ("schedulers", [], "schedulers: no scheduler given"),
    ("workers", 0, "workers: must be >= 1, got 0"),
    ("chunk_size", 0, "chunk_size: must be >= 1, got 0"),
    ("backend", "ray", "backend: must be one of loky, dask, got 'ray'"),
    ("scenario", "paper.txt", "scenario: must be"),
    ("save_jobs", "yes", "save_jobs: must be true or false"),
    ("hardware", {"mfu": 1.5}, "hardware.mfu: must be <= 1"),
    ("hardware", {"seq_len": 0}, "hardware.seq_len: must be >= 1"),
    ("latency", "fast", "latency: must be one of none, geo"),
    ("gpu_mix", "all", "gpu_mix: must be one of none, cloud, got 'all'"),
    ("optimal", "yes", "optimal: must be true or false, got 'yes'"),
    ("optimal_time_limit_s", 0, "optimal_time_limit_s: must be > 0, got 0"),
    ("bandwith_scale", 1.0, "bandwith_scale: unknown key"),
])
def test_bad_values_name_the_field(key, value, message):
    with pytest.raises(InputError) as err:
        validate({key: value})
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


def test_dask_address_needs_dask():
    with pytest.raises(InputError, match="dask_address: is only used with backend=dask"):
        validate({"dask_address": "tcp://127.0.0.1:8786"})


@pytest.mark.parametrize("args, message", [
    (["bandwidth_scale=-1"], "bacepipe.sweep: bandwidth_scale: must be > 0, got -1"),
    (["-m", "bandwidth_scale=1,-1"], "bacepipe.sweep: bandwidth_scale: must be > 0, got -1"),
    (["num_jobs=abc"], "bacepipe.sweep: num_jobs: must be an integer, got 'abc'"),
    (["hardware.mfu=2"], "bacepipe.sweep: hardware.mfu: must be <= 1, got 2.0"),
    (["bandwith_scale=1"], "bacepipe.sweep: bandwith_scale: unknown key"),
    (["scenario=missing.yaml"], "bacepipe.sweep: scenario: no such file"),
    (["+preset=nope"], "bacepipe.sweep: preset: unknown preset 'nope' (known: all, "),
    (["scenario=paper", "gpu_mix=cloud"],
     "bacepipe.sweep: gpu_mix: cloud applies to random and aws10 only, not scenario=paper"),
    (["optimal=true"], "bacepipe.sweep: optimal: exact OPT is for small points: at most 4 "
     "regions, 6 jobs and 16 GPUs a region after gpu_scale, this point has 6 regions, 8 jobs "
     "and up to 128 GPUs a region"),
    (["optimal=true", "num_regions=3", "num_jobs=4", "gpu_scale=0.25"],
     "bacepipe.sweep: optimal: exact OPT is for small points"),
    (["optimal=true", "scenario=paper", "num_jobs=4", "gpu_scale=0.0625"],
     "bacepipe.sweep: optimal: exact OPT is for small points"),
    (["optimal=true", "num_regions=3", "num_jobs=4", "gpu_scale=0.0625", "gpu_mix=cloud"],
     "bacepipe.sweep: optimal: needs gpu_mix=none"),
])
def test_cli_bad_value_is_one_line_and_exit_2(tmp_path, args, message):
    proc = cli(*args, f"results_dir={tmp_path / 'r'}", "topologies=3", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), proc.stderr
    assert not (tmp_path / "r" / "runs").exists()  # stopped before any work


def _compose(overrides):
    from hydra import compose, initialize_config_dir

    import bacepipe.sweep.app  # noqa: F401  (registers the schema and the sweeps/ resolver)

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=overrides, return_hydra_config=True)


def _grid(preset: str) -> tuple[dict, list]:
    """A preset's sweeper params and the validated settings of every point of its grid, each
    composed as Hydra composes a multirun job (a config group among the params, such as
    ``grid_point``, is chosen by composition, not by a value)."""
    cfg = _compose([f"+preset={preset}"])
    params = {k: str(v).split(",") for k, v in (cfg.hydra.sweeper.params or {}).items()}
    points = []
    for values in itertools.product(*params.values()):
        job = _compose([f"+preset={preset}",
                        *(f"{k}={v}" for k, v in zip(params, values, strict=True))])
        points.append(validate({k: v for k, v in job.items() if k != "hydra"}))
    return cfg, params, points


@pytest.mark.parametrize("preset", sorted(p.stem for p in (SWEEPS_DIR / "preset").glob("*.yaml")))
def test_every_config_file_composes_and_validates(preset):
    cfg, params, points = _grid(preset)
    task = {k: v for k, v in cfg.items() if k != "hydra"}
    validate(task)
    assert len(points) == math.prod(len(v) for v in params.values())
    if preset == "fig8":
        assert task["schedulers"] == ["bace_pipe", "bace_pipe_no_priority",
                                      "bace_pipe_no_pathfinder", "bace_pipe_no_costmin"]
    expected = {"fig4": {"scenario"}, "fig5": {"scenario", "bandwidth_scale"},
                "fig6": {"scenario", "gpu_scale"}, "fig7": {"scenario", "num_jobs"},
                "fig8": {"scenario"}, "all": set(),
                "realistic": {"scenario", "arrivals", "latency", "memory_model", "price_profile"},
                "hetero": {"grid_point"}, "optimality": {"scenario"},
                "start_rules": {"scenario", "start_rule", "grid_point"},
                "ours": {"scenario", "grid_point"}}
    assert set(params) == expected[preset]
    # Hydra keeps no folder of its own (docs/reliability.md): no .hydra/, no log file, the
    # working directory as a run's folder; a multirun's folder is given by app.main (with a
    # fallback in the temporary folder).
    raw = OmegaConf.to_container(cfg.hydra, resolve=False)
    assert raw["output_subdir"] is None and raw["run"]["dir"] == "."
    assert raw["sweep"]["dir"].startswith("${oc.env:TMPDIR,/tmp}/")
    assert list(raw["job_logging"]["handlers"]) == ["console"]


def test_hetero_preset_is_figures_4_to_7_on_random_and_aws10_at_the_default_point():
    _, _, points = _grid("hetero")
    axes = {(s.scenario, s.bandwidth_scale, s.gpu_scale, s.num_jobs) for s in points}
    figure = {(1.0, 1.0, 8), (0.3, 1.0, 8), (1.5, 1.0, 8), (1.0, 0.5, 8), (1.0, 1.25, 8),
              *((1.0, 1.0, j) for j in (12, 16, 20, 24))}
    assert axes == {("random", *a) for a in figure} | {("aws10", 1.0, 1.0, 8)}
    assert len(points) == len(axes)
    assert all(s.gpu_mix == "cloud" and s.schedulers == SCHEDULERS and s.save_jobs
               and s.start_rule == "greedy" for s in points)


def test_schema_defaults_match_the_composed_config():
    cfg = _compose([])
    task = {k: v for k, v in cfg.items() if k != "hydra"}
    assert validate(task) == validate(dataclasses.asdict(SweepConfig()))


# --------------------------------------------------------------------------- layout and tables


def test_point_layout_columns_and_manifest(tmp_path):
    s = settings(tmp_path, bandwidth_scale=0.5, save_jobs=True)
    report = run_point(s)
    # Every level written, defaults included, in the fixed order.
    part = tmp_path / "runs" / "scenario=random" / "bandwidth_scale=0.5" / "gpu_scale=1.0" \
        / "num_jobs=8" / "arrivals=default" / "latency=default" / "memory_model=default" \
        / "price_profile=default" / "start_rule=greedy" / "gpu_mix=none"
    (point_dir,) = part.iterdir()
    assert point_dir.name.startswith("point=s0-r6-t12-")
    assert point_dir.name.endswith(f"-c{bacepipe.source_hash()[:8]}")
    assert sorted(f.name for f in point_dir.iterdir()) == sorted(
        f"chunk-{a:09d}-{b:09d}-{name}.parquet" for a, b in ((0, 5), (5, 10), (10, 12))
        for name in s.schedulers)
    runs = read_runs(tmp_path)
    point_rows = report.runs.collect()
    n = len(s.schedulers)
    assert runs.height == 12 * n == point_rows.height
    assert runs.columns[:len(RUN_COLUMNS)] == list(RUN_COLUMNS)
    assert runs.columns[len(RUN_COLUMNS):] == [*store.LEVELS, "point"]
    assert runs.schema["seed"] == pl.Int64 and runs.schema["topology"] == pl.Int64
    assert all(runs.schema[m] == pl.Float64 for m in (*METRICS, "plan_slack", "lower_bound_h"))
    assert runs["plan_slack"].unique().to_list() == [0.2]
    # SPEC §15's LB: per topology, the same on every scheduler's row, below every avg JCT.
    assert (runs.group_by("topology").agg(pl.col("lower_bound_h").n_unique())
            ["lower_bound_h"] == 1).all()
    assert ((runs["lower_bound_h"] > 0) & (runs["lower_bound_h"] <= runs["avg_jct_h"])).all()
    # Rows: by topology range, then schedulers in config order, then topology.
    ranges = ((0, 5), (5, 10), (10, 12))
    assert point_rows["topology"].to_list() == [t for a, b in ranges for _ in range(n)
                                                 for t in range(a, b)]
    assert point_rows["scheduler"].to_list() == [name for a, b in ranges
                                                  for name in s.schedulers
                                                  for _ in range(b - a)]
    opt = ["opt_avg_jct_h", "opt_proven"]  # optimal=false: null
    assert point_rows.drop(opt).null_count().sum_horizontal().item() == 0
    assert point_rows.select(opt).null_count().row(0) == (point_rows.height,) * 2
    assert runs.schema["opt_proven"] == pl.Boolean

    jobs = pl.scan_parquet(str(tmp_path / "jobs" / "**" / "*.parquet"),
                           hive_partitioning=True).collect()
    assert jobs.columns[:len(JOB_COLUMNS)] == list(JOB_COLUMNS) and jobs.height == 12 * n * 8
    assert set(jobs["dataset"].unique()) <= {"Alpaca-52k", "WikiText-103", "OpenWebText"}
    assert (jobs["jct_h"] - jobs["wait_h"] - jobs["execution_h"]).abs().max() < 1e-9
    assert (jobs["regions"] == jobs["path"].str.count_matches(">") + 1).all()
    assert (jobs["path_gpus"].str.split(">").list.eval(pl.element().cast(pl.Int64)).list.sum()
            == jobs["gpus"]).all()
    # gpu_mix=none: no region names a type
    assert (jobs["path_gpu_types"] == jobs["path"].str.replace_all("[^>]", "")).all()

    manifest = json.loads(report.paths.manifest.read_text())
    assert report.paths.manifest.parent == tmp_path / "manifests" / part.relative_to(
        tmp_path / "runs")
    assert manifest["rows"] == 12 * n and manifest["job_rows"] == 12 * n * 8
    assert manifest["source_hash"] == bacepipe.source_hash()
    assert set(manifest["schedulers"]) == set(s.schedulers)
    assert {v["engine"] for v in manifest["schedulers"].values()} <= {"compiled", "reference"}
    assert manifest["partition"]["start_rule"] == "greedy"
    assert manifest["bacepipe_version"] == bacepipe.__version__
    assert manifest["config"]["bandwidth_scale"] == 0.5 and manifest["wall_time_s"] >= 0
    assert manifest["numba_version"] and manifest["point"] == report.paths.point_id


def test_settings_that_change_rows_get_their_own_point(tmp_path):
    base = run_point(settings(tmp_path)).paths.point_id
    for change in ({"seed": 1}, {"num_regions": 5}, {"topologies": 13},
                   {"hardware": {"mfu": 0.5}}, {"latency": "geo"}, {"plan_slack": 0.5},
                   {"start_rule": "wait_if_faster"}, {"gpu_mix": "cloud"}):
        pid = prepare_point(settings(tmp_path, **change)).paths.point_id
        assert pid != base, change
    # Settings that do not change rows share it (workers, chunk layout of another run aside);
    # the schedulers are stored per file, not per point.
    for same in ({"workers": 2, "progress": False}, {"schedulers": ["bace_pipe", "lcf"]}):
        assert prepare_point(settings(tmp_path, **same)).paths.point_id == base, same


def test_file_scenario_partition_is_the_stem(tmp_path):
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump({
        "regions": [{"name": "A", "gpus": 8, "price": 0.2, "bandwidth_gbps": 10},
                    {"name": "B", "gpus": 4, "price": 0.1, "bandwidth_gbps": 10}],
        "jobs": [{"name": "P", "params_b": 14, "layers": 48, "hidden": 5120,
                  "batch_size": 512, "dataset_samples": 52002}]}))
    report = run_point(settings(tmp_path, scenario=str(path), topologies=3, save_jobs=True))
    assert "scenario=two" in str(report.paths.runs)
    jobs = pl.read_parquet(report.paths.jobs / "chunk-000000000-000000003-lcf.parquet")
    assert jobs["dataset"].to_list() == [""] * 3  # given by the file
    # Editing the file makes another point.
    text = path.read_text().replace("price: 0.1", "price: 0.15")
    path.write_text(text)
    assert run_point(settings(tmp_path, scenario=str(path), topologies=3)).paths.point_id \
        != report.paths.point_id


def test_file_hardware_must_agree(tmp_path, base_scenario):
    base_scenario["hardware"] = {"mfu": 0.5}
    path = tmp_path / "hw.yaml"
    path.write_text(yaml.safe_dump(base_scenario))
    with pytest.raises(InputError, match=r"hardware.mfu: the scenario sets 0.5"):
        run_point(settings(tmp_path, scenario=str(path)))
    run_point(settings(tmp_path, scenario=str(path), hardware={"mfu": 0.5}, topologies=2))


def test_never_placed_job_names_the_global_topology(tmp_path, base_scenario):
    base_scenario["jobs"][0]["params_b"] = 500  # needs more GPUs than exist (memory model)
    base_scenario["memory_model"] = "adam_mixed"
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(base_scenario))
    with pytest.raises(InputError, match=r"jobs\[0\]"):
        run_point(settings(tmp_path, scenario=str(path)))
    assert not list((tmp_path / "runs").rglob("*.parquet"))


# --------------------------------------------------------------------------- summary


def test_summary_means_and_paired_ratios():
    # Two topology ranges of one topology each: scheduler -> its columns, as the engine feeds it.
    ranges = [{"bace_pipe": {"avg_jct_h": [1.0], "total_cost": [10.0]},
               "lcf": {"avg_jct_h": [2.0], "total_cost": [5.0]}},
              {"bace_pipe": {"avg_jct_h": [4.0], "total_cost": [10.0]},
               "lcf": {"avg_jct_h": [4.0], "total_cost": [30.0]}}]
    acc = Summary(("bace_pipe", "lcf"))
    for runs in ranges:
        acc.add(runs)
    s = acc.frame()
    assert s["scheduler"].to_list() == ["bace_pipe", "lcf"]
    assert s["n_topologies"].to_list() == [2, 2]
    assert s["avg_jct_h_mean"].to_list() == [2.5, 3.0]
    # The geometric mean of the per-topology ratios (2 and 1; 0.5 and 3), not their arithmetic
    # mean (1.5; 1.75) nor the ratio of the means (3 / 2.5).
    assert s["jct_ratio_gmean"].to_list() == pytest.approx([1.0, math.sqrt(2 * 1)])
    assert s["cost_ratio_gmean"].to_list() == pytest.approx([1.0, math.sqrt(0.5 * 3)])
    assert s["jct_ratio_gmean_ci_low"][1] <= s["jct_ratio_gmean"][1] \
        <= s["jct_ratio_gmean_ci_high"][1]
    alone = Summary(("lcf",))
    for runs in ranges:
        alone.add(runs)
    assert alone.frame()["jct_ratio_gmean"].to_list() == [None]
    assert "n/a" in format_summary(alone.frame())


#: The columns of the terminal summary that are the report's headline (same function, same rows:
#: equal to the last bit); the means are sums in another order (equal to rounding).
HEADLINE = [f"{q}_ratio_gmean{s}" for q in ("jct", "cost") for s in ("", "_ci_low", "_ci_high")]


def check_summary_is_the_reports(summary: pl.DataFrame, root: Path) -> None:
    report = summarize(scan_runs([root])).select(summary.columns)
    assert_frame_equal(summary.select("scheduler", "n_topologies", *HEADLINE),
                       report.select("scheduler", "n_topologies", *HEADLINE), check_exact=True)
    assert_frame_equal(summary, report, check_exact=False, rel_tol=1e-12)


def test_summary_headline_is_the_reports_on_the_same_rows(tmp_path):
    # Hand-made chunk files in the sweep's layout, heavy-tailed ratios, one run that could not
    # finish (null in the file): the Summary fed as the engine feeds it, from the files.
    rng = np.random.default_rng(5)
    topologies, names, ranges = 23, ("bace_pipe", "lcf", "ldf"), ((0, 10), (10, 20), (20, 23))
    base = rng.lognormal(1.0, 1.0, topologies)
    rows = ratio_rows({"lcf": rng.lognormal(0.3, 0.8, topologies),
                       "ldf": rng.lognormal(-0.2, 0.5, topologies)},
                      {"lcf": rng.lognormal(0.1, 0.3, topologies), "ldf": 0.9}, base=base)
    unfinished = (pl.col("scheduler") == "ldf") & (pl.col("topology") == 4)
    rows = rows.with_columns(pl.when(unfinished).then(None).otherwise(pl.col(c)).alias(c)
                             for c in ("avg_jct_h", "total_cost"))
    for start, stop in ranges:
        write_rows(tmp_path, rows.filter(pl.col("topology").is_between(start, stop - 1)))
    folder = point_dir(tmp_path)
    summary = Summary(names)
    for start, stop in ranges:
        summary.add({name: tables.read_chunk(folder, start, stop, name,
                                            ["avg_jct_h", "total_cost"]) for name in names})
    frame = summary.frame()
    check_summary_is_the_reports(frame, tmp_path)
    # The statistic is the geometric mean: the arithmetic mean of the same ratios differs.
    lcf = rows.filter(pl.col("scheduler") == "lcf")["avg_jct_h"].to_numpy() / base
    assert frame["jct_ratio_gmean"][1] == pytest.approx(np.exp(np.log(lcf).mean()))
    assert abs(frame["jct_ratio_gmean"][1] - lcf.mean()) > 0.05


def test_a_sweeps_summary_is_the_reports_statistic(tmp_path):
    # Simulated rows, three topology ranges: what the terminal shows after a point.
    report = run_point(settings(tmp_path, schedulers=["bace_pipe", "lcf", "ldf", "cr_ldf"]))
    check_summary_is_the_reports(report.summary, tmp_path)


def test_summary_header_names_the_statistic_and_prints_it_as_the_report():
    acc = Summary(("bace_pipe", "lcf"))
    rng = np.random.default_rng(2)
    base = rng.uniform(1, 5, 9)
    acc.add({"bace_pipe": {"avg_jct_h": base, "total_cost": 10 * base},
             "lcf": {"avg_jct_h": base * rng.lognormal(0.3, 0.4, 9),
                     "total_cost": 10 * base * rng.lognormal(-0.1, 0.2, 9)}})
    frame = acc.frame()
    head, rule, *lines = format_summary(frame).splitlines()
    assert head.count("geo-mean × bace_pipe [95% CI]") == 2
    assert "avg JCT h" in head and "total cost $" in head and set(rule) <= {"-", " "}
    lcf = frame.row(1, named=True)
    for q in ("jct", "cost"):
        text = cell(lcf[f"{q}_ratio_gmean"], lcf[f"{q}_ratio_gmean_ci_low"],
                    lcf[f"{q}_ratio_gmean_ci_high"])
        assert text in lines[1] and text.count("[") == 1  # value [low, high]


# --------------------------------------------------------------------------- replay


@pytest.mark.parametrize("scenario, options", [
    ("random", {"bandwidth_scale": 0.3, "gpu_scale": 0.75, "num_jobs": 10, "num_regions": 5}),
    ("paper", {"bandwidth_scale": 1.5}),
    ("random", {"latency": "geo", "price_profile": "business"}),
    ("random", {"gpu_mix": "cloud", "num_regions": 4, "gpu_scale": 0.5}),
    ("aws10", {"gpu_mix": "cloud", "num_jobs": 6}),
])
def test_any_row_replays_through_run_scenario(tmp_path, scenario, options):
    s = settings(tmp_path, scenario=scenario, seed=7, topologies=9, save_jobs=True, **options)
    report = run_point(s)
    jobs = pl.scan_parquet(str(report.paths.jobs / "*.parquet")).collect()
    gen = {k: v for k, v in options.items()}
    for topology, scheduler in ((0, "bace_pipe"), (4, "cr_ldf"), (8, "bace_pipe_no_costmin")):
        row = report.runs.filter((pl.col("topology") == topology)
                                 & (pl.col("scheduler") == scheduler)).collect().row(0, named=True)
        scen = bacepipe.generate_scenario(scenario, 7, topology, **gen)
        result = bacepipe.run_scenario(scen, scheduler)
        gpu_type = {r["name"]: r.get("gpu_type") or "" for r in scen["regions"]}
        if options.get("gpu_mix") == "cloud":
            assert set(gpu_type.values()) <= {"A6000", "A100", "L40S", "H100"}
        for metric in (*METRICS, "lower_bound_h"):
            assert math.isclose(result[metric], row[metric], rel_tol=1e-12, abs_tol=1e-12), metric
        mine = jobs.filter((pl.col("topology") == topology)
                           & (pl.col("scheduler") == scheduler)).sort("job")
        for job, theirs in zip(mine.iter_rows(named=True), result["jobs"], strict=True):
            assert job["name"] == theirs["name"] and job["k_star"] == theirs["k_star"]
            assert job["path"].split(">") == theirs["path"]
            assert job["gpus"] == sum(theirs["gpus"].values())
            assert job["path_gpus"].split(">") == [str(theirs["gpus"][r]) for r in theirs["path"]]
            assert job["path_gpu_types"].split(">") == [gpu_type[r] for r in theirs["path"]]
            assert job["jct_h"] == theirs["jct_h"] and job["cost"] == theirs["cost"]


def test_replay_command_line_matches_a_row(tmp_path):
    report = run_point(settings(tmp_path, topologies=4, gpu_scale=0.5))
    row = report.runs.filter((pl.col("topology") == 3)
                             & (pl.col("scheduler") == "ldf")).collect().row(0, named=True)
    proc = subprocess.run(
        [sys.executable, "-m", "bacepipe.simulate", "random", "--scheduler", "ldf", "--json",
         "--seed", "0", "--topology", "3", "--gpu-scale", "0.5"],
        capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["avg_jct_h"] == row["avg_jct_h"] and out["total_cost"] == row["total_cost"]


# --------------------------------------------------------------------------- command line


def test_cli_multirun_over_bandwidth(tmp_path):
    proc = cli("-m", "bandwidth_scale=0.5,1.5", "topologies=10", "chunk_size=4",
               f"results_dir={tmp_path / 'res'}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("avg JCT h") == 2 and "bace_pipe_no_costmin" in proc.stdout
    assert proc.stdout.count("geo-mean × bace_pipe [95% CI]") == 2 * 2  # JCT and cost, 2 points
    runs = read_runs(tmp_path / "res")
    n = len(SCHEDULERS)
    assert runs.height == 2 * 10 * n
    assert sorted(runs["bandwidth_scale"].unique().to_list()) == [0.5, 1.5]
    assert {"scenario", "gpu_scale", "num_jobs", "point"} <= set(runs.columns)
    # Hydra left nothing in the working directory (its record is in the manifests).
    assert [p.name for p in tmp_path.iterdir()] == ["res"]
    again = cli("-m", "bandwidth_scale=0.5,1.5", "topologies=10", "chunk_size=4",
                f"results_dir={tmp_path / 'res'}", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout.count(f"0 of {3 * n} chunks run") == 2


def test_cli_joblib_launcher(tmp_path):
    proc = cli("-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "gpu_scale=0.5,1.5",
               "topologies=6", "workers=1", f"results_dir={tmp_path / 'res'}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    runs = read_runs(tmp_path / "res")
    assert runs.height == 2 * 6 * len(SCHEDULERS)
    assert sorted(runs["gpu_scale"].unique().to_list()) == [0.5, 1.5]


def test_preset_all_runs_every_figure_preset(monkeypatch):
    from bacepipe.sweep import app

    calls = []
    monkeypatch.setattr(app.subprocess, "call", lambda cmd: calls.append(cmd[3:]) or 0)
    assert app.main(["+preset=all", "topologies=5"]) == 0
    assert calls == [["-m", f"+preset={name}", "topologies=5"]
                     for name in ("fig4", "fig5", "fig6", "fig7", "fig8")]


@pytest.mark.parametrize("args", [["+preset=fig9"], ["-m", "+preset=fig4,fig9", "topologies=5"]])
def test_an_unknown_preset_lists_the_known_ones_before_hydra(monkeypatch, tmp_path, capsys,
                                                            args):
    from bacepipe.sweep import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(app, "task", lambda: pytest.fail("Hydra started"))
    assert app.main(args) == 2
    line, = capsys.readouterr().err.strip().splitlines()
    head, known = line.split(" (known: ")
    assert head == "bacepipe.sweep: preset: unknown preset 'fig9'"
    stems = {p.stem for p in (SWEEPS_DIR / "preset").glob("*.yaml")}
    assert "fig4" in stems and set(known.rstrip(")").split(", ")) == stems | {"all"}
    assert not list(tmp_path.iterdir())  # no Hydra output folder


@pytest.mark.parametrize("overrides, jobs", [
    ({"scenario": "motivation"}, 2),
    ({"arrivals": "trace", "trace": str(REPO / "bacepipe" / "data" / "example_trace.csv")}, 12),
    ({"scenario": "paper", "num_jobs": 5}, 5),
])
def test_num_jobs_axis_counts_the_jobs_simulated(tmp_path, overrides, jobs):
    report = run_point(settings(tmp_path, topologies=2, **{"num_jobs": 8, **overrides}))
    assert report.settings.num_jobs == jobs
    assert f"num_jobs={jobs}" in report.paths.runs.parts


@pytest.mark.long
def test_plugin_scheduler_in_workers_and_an_edited_plugin_runs_again(tmp_path):
    plugin = tmp_path / "mine.py"
    plugin.write_text((REPO / "examples" / "plugins" / "sjf_ldf.py").read_text())
    args = [f"plugins=[{plugin}]", "schedulers=[bace_pipe,sjf_ldf]", "topologies=6",
            "chunk_size=3", "workers=2", f"results_dir={tmp_path / 'res'}"]
    first = cli(*args, cwd=tmp_path, timeout=600)
    assert first.returncode == 0, first.stderr
    assert "4 of 4 chunks run" in first.stdout  # loky workers loaded the plug-in
    (manifest,) = (tmp_path / "res" / "manifests").rglob("*.json")
    engines = json.loads(manifest.read_text())["schedulers"]
    assert engines["sjf_ldf"]["identity"] and not engines["bace_pipe"]["identity"]
    with open(plugin, "a") as f:
        f.write("\n# edited\n")
    again = cli(*args, cwd=tmp_path, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "2 of 4 chunks run" in again.stdout
    assert "sjf_ldf: 2 chunks were computed by another version of its plug-in" in again.stderr
    assert read_runs(tmp_path / "res").height == 6 * 2


# --------------------------------------------------------------------------- OPT (SPEC §15)

#: A point small enough for exact OPT in well under a second per topology.
SMALL = {"num_regions": 3, "gpu_scale": 0.0625, "num_jobs": 3}


def test_optimal_adds_opt_per_topology_between_lb_and_every_scheduler(tmp_path):
    from bacepipe.optimal import rounding_slack_h, solve

    s = settings(tmp_path, optimal=True, topologies=3, chunk_size=2,
                 schedulers=["bace_pipe", "ldf", "spt_wait"], **SMALL)
    report = run_point(s)
    runs = report.runs.collect()
    assert runs["opt_proven"].all() and runs["opt_avg_jct_h"].null_count() == 0
    per_topology = runs.group_by("topology").agg(
        pl.col("opt_avg_jct_h", "lower_bound_h").n_unique())
    assert (per_topology["opt_avg_jct_h"] == 1).all()
    assert (per_topology["lower_bound_h"] == 1).all()
    slack = rounding_slack_h(SMALL["num_jobs"])
    assert (runs["lower_bound_h"] <= runs["opt_avg_jct_h"] * (1 + 1e-12)).all()
    assert (runs["opt_avg_jct_h"] - slack <= runs["avg_jct_h"]).all()
    # The same number as solving the replayed scenario (a proven optimum is unique).
    row = runs.filter(pl.col("topology") == 2).row(0, named=True)
    alone = solve(bacepipe.generate_scenario("random", 0, 2, **SMALL), time_limit_s=30,
                  progress=False)
    assert alone["proven"] and math.isclose(alone["opt_avg_jct_h"], row["opt_avg_jct_h"],
                                            rel_tol=1e-12)
    # OPT columns are other rows: another point than the same settings without them.
    plain = prepare_point(settings(tmp_path, topologies=3, chunk_size=2, **SMALL))
    assert plain.paths.point_id != report.paths.point_id


def test_optimal_refuses_a_large_file_scenario_before_any_work(tmp_path, base_scenario):
    base_scenario["regions"] = [dict(base_scenario["regions"][0], name=f"R{i}", gpus=4)
                                for i in range(5)]
    path = tmp_path / "five.yaml"
    path.write_text(yaml.safe_dump(base_scenario))
    with pytest.raises(InputError, match="optimal: exact OPT is for small points.* 5 regions"):
        run_point(settings(tmp_path, scenario=str(path), optimal=True))
    assert not (tmp_path / "runs").exists()


def test_cli_optimality_preset_runs(tmp_path):
    proc = cli("-m", "+preset=optimality", "topologies=2", "schedulers=[bace_pipe,lcf]",
               f"results_dir={tmp_path / 'res'}", f"hydra.sweep.dir={tmp_path / 'mr'}",
               cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    runs = read_runs(tmp_path / "res")
    assert runs.height == 4 and runs["opt_avg_jct_h"].null_count() == 0
    assert runs["num_jobs"].unique().to_list() == [4]
