"""The study presets of sweeps/preset/ (``+preset=start_rules``, ``=ours``): every
point of their grid composes with Hydra and validates, and the grid is exactly the union of
figure points the issue asks for (SPEC §13, §14), not a product of axes."""

from __future__ import annotations

import itertools

import pytest

from bacepipe.policies import PAPER_SCHEDULERS
from bacepipe.sweep import validate
from bacepipe.sweep.config import CONF_DIR, SWEEPS_DIR

#: Fig. 4-8 points as (bandwidth_scale, gpu_scale, num_jobs).
FIGURE_POINTS = {(1.0, 1.0, 8), (0.3, 1.0, 8), (0.9, 1.0, 8), (1.5, 1.0, 8), (1.0, 0.5, 8),
                 (1.0, 0.75, 8), (1.0, 1.25, 8), *((1.0, 1.0, j) for j in (12, 16, 20, 24))}


def _compose(overrides):
    from hydra import compose, initialize_config_dir

    import bacepipe.sweep.app  # noqa: F401  (registers the schema and the sweeps/ resolver)

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=overrides, return_hydra_config=True)


def grid(study: str) -> list[dict]:
    """Every point of the study's sweep grid, composed as Hydra composes a multirun job."""
    cfg = _compose([f"+preset={study}"])
    params = {k: str(v).split(",") for k, v in (cfg.hydra.sweeper.params or {}).items()}
    out = []
    for values in itertools.product(*params.values()):
        job = _compose([f"+preset={study}",
                        *(f"{k}={v}" for k, v in zip(params, values, strict=True))])
        task = {k: v for k, v in job.items() if k != "hydra"}
        s = validate(task)
        out.append({"scenario": s.scenario, "start_rule": s.start_rule,
                    "axes": (s.bandwidth_scale, s.gpu_scale, s.num_jobs),
                    "plan_slack": s.plan_slack, "schedulers": tuple(s.schedulers),
                    "save_jobs": s.save_jobs})
    return out


def test_study_files_are_where_the_command_finds_them():
    assert {p.stem for p in (SWEEPS_DIR / "preset").glob("*.yaml")} >= {
        "start_rules", "ours"}


def test_start_rules_is_every_figure_point_under_both_rules():
    points = grid("start_rules")
    assert len(points) == 2 * 2 * len(FIGURE_POINTS)
    keys = {(p["scenario"], p["start_rule"], p["axes"]) for p in points}
    assert keys == set(itertools.product(("paper", "random"), ("greedy", "wait_if_faster"),
                                         FIGURE_POINTS))
    assert all(p["schedulers"] == PAPER_SCHEDULERS for p in points)
    assert {p["plan_slack"] for p in points} == {0.2}
    # Per-job rows (the mechanism figure) at the default point only.
    assert {p["axes"] for p in points if p["save_jobs"]} == {(1.0, 1.0, 8)}


def test_ours_is_figures_4_to_7_on_random_plus_the_slack_curve():
    points = grid("ours")
    main = [p for p in points if p["plan_slack"] == 0.2]
    assert {p["axes"] for p in main} == FIGURE_POINTS and len(main) == len(FIGURE_POINTS)
    assert all(p["scenario"] == "random" and p["start_rule"] == "greedy" for p in points)
    assert all(p["schedulers"] == ("bace_pipe", "lcf", "ldf", "cr_lcf", "cr_ldf", "spt_wait",
                                   "spt_plan") for p in main)
    curve = [p for p in points if p["plan_slack"] != 0.2]
    assert sorted(p["plan_slack"] for p in curve) == [0.0, 0.1, 0.3, 0.5]
    # The curve's points are the default point with only what it needs; slack 0.2 is the
    # default point itself.
    assert all(p["axes"] == (1.0, 1.0, 8) and p["schedulers"] == ("bace_pipe", "spt_plan")
               for p in curve)


@pytest.mark.parametrize("study", ["start_rules", "ours"])
def test_study_runs_one_point_without_minus_m(study):
    # Without -m the preset composes to its first point: the default one.
    cfg = _compose([f"+preset={study}"])
    s = validate({k: v for k, v in cfg.items() if k != "hydra"})
    assert (s.bandwidth_scale, s.gpu_scale, s.num_jobs) == (1.0, 1.0, 8)
