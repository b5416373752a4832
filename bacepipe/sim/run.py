"""Single runs: a scenario, a scheduler and its rules in, the SPEC §9 result dict out (numba core
inside)."""

from __future__ import annotations

from bacepipe.core import (
    METRICS,
    STATUS_BAD_DECISION,
    STATUS_NEVER_PLACED,
    STATUS_TOO_FEW_GPUS,
    BatchResult,
    simulate_batch,
)
from bacepipe.errors import InputError
from bacepipe.model.batch import ScenarioBatch
from bacepipe.model.generate import topology_batch
from bacepipe.model.rules import Rules
from bacepipe.policies import SCHEDULER_PARTS, check_schedulers, get_part, load_plugins
from bacepipe.sim.decisions import BadDecision
from bacepipe.sim.reference import simulate_reference

#: What the core's check of a decision (``_valid`` of bacepipe.core.loop) can refuse, when the
#: reference loop cannot replay the decision to say which.
_ANY_CHECK = ("more GPUs than free or than K*, a region twice, an infeasible hop, or a GPU count "
              "other than the allocation's sum")


def raise_for_status(batch: ScenarioBatch, rules: Rules, result: BatchResult,
                     where: str = "", first: int = 0) -> None:
    """Turn the first non-OK run (row-major) of a batch simulated under ``rules`` into an
    InputError naming the job, after ``where`` (formatted with the run's ``topology``, counted
    from ``first``, the index of the batch's first topology, and its ``scheduler``)."""
    bad = (result.status != 0).nonzero()
    if not bad[0].size:
        return
    t, s = int(bad[0][0]), int(bad[1][0])
    j = int(result.bad_job[t, s])
    prefix = where.format(topology=first + t, scheduler=result.schedulers[s]) if where else ""
    name = batch.job_names[j]
    if result.status[t, s] == STATUS_TOO_FEW_GPUS:
        usable = min(int(batch.layers[t, j]), int(batch.gpus[t].sum()))
        raise InputError(f"{prefix}jobs[{j}]", f"{name!r} needs at least "
                         f"{int(result.min_gpus[t, j]) or 'more'} GPUs for its memory but can use "
                         f"at most {usable} (min of layers and the cluster's GPUs)")
    if result.status[t, s] == STATUS_BAD_DECISION:
        spec = SCHEDULER_PARTS[result.schedulers[s]]
        culprits = [get_part(kind, getattr(spec, kind)).source or kind for kind in
                    ("start_rule", "placement", "allocator") if getattr(spec, kind)]
        raise InputError(f"{prefix}scheduler {result.schedulers[s]}",
                         f"{bad_decision(batch, rules, t, result.schedulers[s], j)}; parts from "
                         f"{', '.join(dict.fromkeys(culprits))}")
    assert result.status[t, s] == STATUS_NEVER_PLACED
    raise InputError(f"{prefix}jobs[{j}]", f"{name!r} can never be placed under "
                     f"{result.schedulers[s]}: nothing runs and nothing more arrives")


def bad_decision(batch: ScenarioBatch, rules: Rules, t: int, scheduler: str, j: int) -> str:
    """Why ``scheduler`` (told ``rules``) placed job j of topology t against SPEC §4, which the
    core reports as
    a status alone: the run replayed through the reference loop, whose check of each decision
    (:func:`bacepipe.sim.decisions.decision_problem`) is the core's, names the check that failed
    and its numbers (``placed job j ('name') ...``). When the replay does not stop at job j (a
    part without a twin, or a twin that decides otherwise than its kernel), the message lists
    every check the core applies and says why it cannot tell which."""
    try:
        simulate_reference(batch.scenario(t), scheduler, rules)
        why = "its parts' twins place that job within SPEC §4, unlike their kernels"
    except BadDecision as err:
        if err.job == j:
            return err.problem
        why = f"its parts' twins place job {err.job} against it first, unlike their kernels"
    except InputError as err:
        why = f"the reference loop cannot replay the run: {err.problem}"
    except Exception as err:  # a user's twin may fail anyhow; the core's verdict stands
        first = str(err).strip().splitlines()[:1]
        why = f"the reference loop cannot replay the run: {type(err).__name__}: {''.join(first)}"
    return f"placed job {j} ({batch.job_names[j]!r}) against SPEC §4 ({_ANY_CHECK}); {why}"


def result_dict(batch: ScenarioBatch, result: BatchResult, t: int, s: int) -> dict:
    """One (topology, scheduler) of a batch result as the SPEC §9 JSON object (+ §10 metrics)."""
    out = {"scheduler": result.schedulers[s]}
    out.update({m: float(result.metrics[t, s, i]) for i, m in enumerate(METRICS)})
    jobs = []
    for j, name in enumerate(batch.job_names):
        n = result.path_len[t, s, j]
        path = [int(r) for r in result.path[t, s, j, :n]]
        arrival_s = float(batch.arrival_h[t, j]) * 3600.0
        start, end = float(result.start_s[t, s, j]), float(result.end_s[t, s, j])
        jobs.append({
            "name": name,
            "k_star": int(result.k_star[t, j]),
            "start_h": start / 3600.0,
            "end_h": end / 3600.0,
            "jct_h": (end - arrival_s) / 3600.0,
            "cost": float(result.cost[t, s, j]),
            "path": [batch.region_names[r] for r in path],
            "gpus": {batch.region_names[r]: int(g)
                     for r, g in zip(path, result.path_gpus[t, s, j, :n], strict=True)},
        })
    out["lower_bound_h"] = float(result.lower_bound_h[t])
    out["jobs"] = jobs
    return out


def run_scenario(scenario, scheduler: str, *, plugins=(), **rules) -> dict:
    """Simulate one scenario under one scheduler.

    Parameters
    ----------
    scenario : a dict of the SPEC §9 YAML shape, the path of such a YAML file, a built-in name
        (``paper``, ``motivation``, ``random``: topology 0 of seed 0) or a parsed Scenario.
        Its ``start_rule`` (SPEC §13) and ``plan_slack`` (SPEC §14) keys apply.
    scheduler : a registered scheduler (:data:`bacepipe.policies.SCHEDULER_PARTS`).
    plugins : Python files or module names that register parts and schedulers
        (:func:`bacepipe.policies.load_plugins`), loaded first.
    rules : ``start_rule``, ``plan_slack`` (:class:`~bacepipe.model.rules.Rules`): each given
        (not None) replaces the scenario's own key (a parsed Scenario has none: the defaults).

    Returns
    -------
    dict
        ``scheduler``, ``avg_jct_h``, ``total_cost``, ``makespan_h``, the other SPEC §10 metrics,
        ``lower_bound_h`` (SPEC §15: no schedule of this scenario has a lower avg JCT), and
        ``jobs``: per job in input order ``name``, ``k_star``, ``start_h``, ``end_h``,
        ``jct_h``, ``cost``, ``path`` (region names in pipeline order), ``gpus`` ({region: n}).

    Raises
    ------
    InputError
        Bad scenario, scheduler or plug-in; a job that can never be placed; a plug-in part
        that places against SPEC §4 (the message names the check and its numbers).
    """
    load_plugins(plugins)
    if not isinstance(scheduler, str):
        raise InputError("scheduler", f"must be a scheduler name, got {scheduler!r}")
    check_schedulers(scheduler)
    batch, own = topology_batch(scenario)
    return run_batch(batch, own.updated(rules), scheduler)


def run_batch(batch: ScenarioBatch, rules: Rules, scheduler: str) -> dict:
    """Topology 0 of ``batch`` under a registered ``scheduler`` told ``rules``:
    :func:`run_scenario`'s result for a scenario already generated (no second pass through a
    Scenario)."""
    result = simulate_batch(batch, (scheduler,), rules)
    raise_for_status(batch, rules, result)
    return result_dict(batch, result, 0, 0)
