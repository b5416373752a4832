"""SPEC §13 and §14 by hand: cases whose outcome follows from the text alone, checked on the
compiled core and on the twin, and on the kernels by which the event loop holds a job as
wait_if_faster would without calling it."""

import numpy as np
import pytest

import bacepipe
from bacepipe.core import _codes, batch_inputs, compiled_parts
from bacepipe.core.batch import empty_outputs, path_width, shares, simulate_batch_kernel
from bacepipe.core.loop import CODE_BUILTIN, CODE_STABLE_HOLD
from bacepipe.core.model import C_ARRIVAL_S, C_ITERS, N_CONST
from bacepipe.core.projection import certified_hold, keep_hold, keep_lane_hold, lane_hold
from bacepipe.core.structs import make_work
from bacepipe.model.generate import generate_batch
from bacepipe.model.rules import Rules, split_rules
from bacepipe.model.scenario import parse_scenario
from bacepipe.policies.api import OPT_COST, OPT_GPUS, OPT_JCT, OPT_Q, OPT_TAU, _example_run
from bacepipe.policies.spt_plan import QUOTAS, choose, target
from bacepipe.sim.reference import simulate_reference

JOB = {"params_b": 14, "layers": 8, "hidden": 5120, "batch_size": 512, "dataset_samples": 52002}


def two_jobs(rule: str) -> dict:
    """Two identical 8-layer jobs (K* = 8) on one region of 10 GPUs: the second gets 2 GPUs
    if it starts at once, 8 if it waits for the first."""
    return {"regions": [{"name": "R", "gpus": 10, "price": 0.2, "bandwidth_gbps": 10}],
            "jobs": [dict(JOB, name="A"), dict(JOB, name="B")], "start_rule": rule}


def twin(data: dict, scheduler: str) -> dict:
    """The reference loop on a scenario dict whose keys set its rules too."""
    world, rules = split_rules(data)
    return simulate_reference(parse_scenario(world), scheduler, rules)


@pytest.mark.parametrize("run", [bacepipe.run_scenario, twin], ids=["core", "twin"])
def test_wait_if_faster_waits_when_waiting_finishes_sooner(run):
    greedy = run(two_jobs("greedy"), "bace_pipe_no_priority")
    a, b = greedy["jobs"]
    assert a["k_star"] == 8 and a["gpus"] == {"R": 8}
    assert b["start_h"] == 0 and b["gpus"] == {"R": 2}  # SPEC §5: anything >= 1 GPU starts
    # waiting (until A ends, then 8 GPUs) beats 2 GPUs now iff end_A + E(8) < E(2)
    assert a["end_h"] + (a["end_h"] - a["start_h"]) < b["end_h"] - b["start_h"]
    waiting = run(two_jobs("wait_if_faster"), "bace_pipe_no_priority")
    a2, b2 = waiting["jobs"]
    assert a2 == a
    assert b2["start_h"] == a["end_h"] and b2["gpus"] == {"R": 8}
    assert waiting["avg_jct_h"] < greedy["avg_jct_h"]


@pytest.mark.parametrize("run", [bacepipe.run_scenario, twin], ids=["core", "twin"])
def test_a_job_alone_always_starts(run):
    one = {"regions": [{"name": "R", "gpus": 3, "price": 0.2, "bandwidth_gbps": 10}],
           "jobs": [dict(JOB, name="A")], "start_rule": "wait_if_faster"}
    row = run(one, "bace_pipe")["jobs"][0]
    assert row["start_h"] == 0 and row["gpus"] == {"R": 3}  # L < K*, but nothing runs


def test_spt_plan_targets_are_ceil_of_tenths():
    assert QUOTAS == (10, 9, 8, 7, 6, 5)
    for kstar in range(1, 200):
        for q in QUOTAS:
            assert target(kstar, q) == -(-kstar * q // 10)
    assert [target(8, q) for q in QUOTAS] == [8, 8, 7, 6, 5, 4]


def _options(rows):
    out = np.zeros((len(rows), 5))
    for i, (tau, jct, cost, gpus, k) in enumerate(rows):
        out[i, [OPT_TAU, OPT_JCT, OPT_COST, OPT_GPUS, OPT_Q]] = tau, jct, cost, gpus, k
    return out


def test_spt_plan_choice_rule():
    # (τ, JCT, cost, GPUs, K′)
    rows = [(0, 100, 10.0, 8, 8), (0, 115, 9.0, 7, 7), (0, 130, 5.0, 6, 6), (50, 110, 9.0, 8, 8)]
    # ε = 0.2 keeps JCT <= 120: options 0, 1, 3; the cheapest cost 9 at τ 0 and 50 -> earliest
    assert choose(_options(rows), 4, 0.2) == 1
    # ε = 0 keeps only the fastest
    assert choose(_options(rows), 4, 0.0) == 0
    # ε = 0.5 keeps all; the cheapest is option 2
    assert choose(_options(rows), 4, 0.5) == 2
    # equal cost within 1e-9 and equal epoch: the most GPUs, then the larger K′
    tied = [(0, 100, 9.0, 7, 8), (0, 100, 9.0 * (1 + 1e-10), 8, 8), (0, 100, 9.0, 8, 7)]
    assert choose(_options(tied), 3, 0.1) == 1
    assert choose(_options([(0, 100, 9.0, 8, 7), (0, 100, 9.0, 8, 8)]), 2, 0.1) == 1


def _outputs(batch, rules, names, stable_hold: bool, builtin: bool = True):
    """Every output array of the compiled core under ``rules``, with the stable-hold skip on or
    forced off, and the parts taken as built in or not (not: no memo, no lanes, no holds
    without a call)."""
    parts, index = compiled_parts()
    codes = _codes(names, rules.start_rule, index)
    if not stable_hold:
        codes[:, CODE_STABLE_HOLD] = 0
    if not builtin:
        codes[:, CODE_BUILTIN] = 0
    out = empty_outputs(batch.gpus.shape[0], len(names), batch.params_b.shape[1],
                        path_width(batch.gpus.shape[1], batch.layers))
    simulate_batch_kernel(batch_inputs(batch, rules), out, codes, shares(batch.gpus.shape[0]),
                          *parts)
    return out


def test_only_builtin_greedy_and_wait_if_faster_hold_stably():
    """SPEC §13: a job greedy or wait_if_faster holds on a state and prices is held on them later
    (t + E_j(p) only grows); spt_plan's choice depends on t through the JCT (SPEC §14)."""
    _, index = compiled_parts()
    for rule in ("greedy", "wait_if_faster"):
        assert (_codes(["bace_pipe", "ldf"], rule, index)[:, CODE_STABLE_HOLD] == 1).all()
    assert _codes(["spt_plan"], "greedy", index)[0, CODE_STABLE_HOLD] == 0


@pytest.mark.parametrize("rule", ["greedy", "wait_if_faster"])
@pytest.mark.parametrize("prices", ["flat", "business"])
def test_skipping_stably_held_jobs_changes_nothing(rule, prices):
    """Jobs held at an earlier event and not decided again while nothing changed: every output
    bit-identical to deciding every pending job at every event, on crowded Poisson arrivals."""
    names = ["bace_pipe", "ldf", "cr_lcf", "spt_wait"]
    for seed in range(3):
        batch = generate_batch("random", seed, range(12), num_jobs=40, num_regions=8,
                               gpu_scale=0.5, arrivals="poisson", arrival_rate_per_h=3.0,
                               price_profile=prices)
        rules = Rules(start_rule=rule)
        skipped, decided = _outputs(batch, rules, names, True), _outputs(batch, rules, names, False)
        for field in skipped._fields:
            np.testing.assert_array_equal(getattr(skipped, field), getattr(decided, field),
                                          err_msg=f"{field}, seed {seed}")


@pytest.mark.parametrize("slack", [0.0, 0.05, 0.2, 1.0])
@pytest.mark.parametrize("prices", ["flat", "business"])
def test_spt_plans_memo_and_lane_holds_change_nothing(slack, prices):
    """From MEMO_MIN_JOBS jobs spt_plan memoizes offers per class and target and holds the
    younger jobs of a lane without a call (``lane_hold``): every output bit-identical to
    deciding every pending job with every offer made, on crowded Poisson arrivals of Table
    III's eight jobs cycled (lanes of equal jobs), a third on mixed fleets."""
    for seed in range(3):
        batch = generate_batch("random", seed, range(8), num_jobs=60, num_regions=10,
                               gpu_scale=0.5, arrivals="poisson", arrival_rate_per_h=4.0,
                               price_profile=prices, gpu_mix="cloud" if seed == 2 else "none")
        rules = Rules(plan_slack=slack)
        fast = _outputs(batch, rules, ["spt_plan"], False)
        slow = _outputs(batch, rules, ["spt_plan"], False, builtin=False)
        for field in fast._fields:
            np.testing.assert_array_equal(getattr(fast, field), getattr(slow, field),
                                          err_msg=f"{field}, seed {seed}")


def _lane_work(arrivals, slack=0.2):
    """Jobs of one lane (lane 0, class 0) arriving at ``arrivals`` s, on version 5."""
    run = _example_run()._replace(jobs=np.zeros((len(arrivals), N_CONST)), plan_slack=slack)
    run.jobs[:, C_ARRIVAL_S] = arrivals
    work = make_work(1, len(arrivals), 1)
    work.version[:3] = 5, 5, 5
    work.job_class[:], work.class_run[:] = 0, 5
    return run, work, np.zeros(len(arrivals), np.int64)


def test_a_lane_hold_holds_younger_jobs_while_the_slack_lasts():
    """SPEC §14: a job's JCTs all count from its arrival, so for a job a seconds younger an
    option's slack (1 + ε)·least JCT − JCT is ε·a smaller. A hold kept by job 0 (arrival
    100 s) at t = 500 s with slack 30 s and margin 1 s holds jobs of its lane up to
    (30 − 1) / 0.2 = 145 s younger, not older ones, not at another time or version, and not
    jobs of another lane."""
    run, work, lane = _lane_work([100.0, 99.0, 100.0, 200.0, 244.0, 246.0])
    assert not lane_hold(run, work, lane, 3, 500.0)  # nothing kept on this version yet
    keep_lane_hold(work, 0, 0, 500.0, 30.0, 1.0)
    assert [lane_hold(run, work, lane, j, 500.0) for j in range(6)] == \
        [True, False, True, True, True, False]
    assert not lane_hold(run, work, lane, 3, 501.0)
    lane[3] = 3
    assert not lane_hold(run, work, lane, 3, 500.0)
    work.version[0] = 6
    assert not lane_hold(run, work, lane, 2, 500.0)


def _one_class_work(iters: float):
    """A run of one job (I_j = ``iters``) and a workspace on version 5 where it is class 0."""
    run = _example_run()._replace(jobs=np.zeros((1, N_CONST)))
    run.jobs[0, C_ITERS] = iters
    work = make_work(1, 1, 1)
    work.version[:3] = 5, 5, 5
    work.job_class[0], work.class_run[0] = 0, 5
    return run, work


def test_a_class_hold_holds_strictly_as_wait_if_faster_does():
    """SPEC §13: j waits iff τ + E_j(p_τ) < t + E_j(p), strictly. The hold the event loop applies
    without calling the rule (``certified_hold``) makes that comparison for the job's own I_j:
    an epoch with τ = 12 s and t_iter 1 s against t_iter 2 s now holds a job of 2 iterations at
    t = 10.5 s (14 < 14.5), not at t = 10 s (a tie), and a job of 1 iteration at neither."""
    run, work = _one_class_work(2.0)
    assert not certified_hold(run, work, 0, 10.5)  # nothing kept on this version yet
    keep_hold(work, 0, 10.0, 12.0, 1.0, 2.0)
    assert certified_hold(run, work, 0, 10.5)
    assert not certified_hold(run, work, 0, 10.0)
    run.jobs[0, C_ITERS] = 1.0
    assert not certified_hold(run, work, 0, 10.5)
    work.version[0] = 6  # the state changed: the hold is of another state
    run.jobs[0, C_ITERS] = 2.0
    assert not certified_hold(run, work, 0, 10.5)


def test_a_class_keeps_the_hold_that_holds_from_fewer_iterations():
    """Of two epochs that held a job of the class, the one kept makes waiting pay from fewer
    iterations on ((τ − t) / (t_iter now − t_iter at τ)); an offer of nothing holds them all."""
    run, work = _one_class_work(3.0)
    keep_hold(work, 0, 10.0, 20.0, 1.0, 2.0)  # pays from 10 iterations: 3 are not held
    assert not certified_hold(run, work, 0, 10.0)
    keep_hold(work, 0, 10.0, 11.0, 1.5, 2.0)  # pays from 2: kept
    keep_hold(work, 0, 10.0, 20.0, 1.0, 2.0)  # pays from 10: not kept
    assert certified_hold(run, work, 0, 10.0)  # 11 + 4.5 < 10 + 6
    keep_hold(work, 0, 10.0, -np.inf, 0.0, 0.0)
    run.jobs[0, C_ITERS] = 1e-9
    assert certified_hold(run, work, 0, 10.0)
