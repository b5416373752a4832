"""OPT: the least average JCT over SPEC §15's schedule class, computed with CP-SAT (OR-Tools).

Contract
--------
``solve(scenario, time_limit_s=60.0) -> dict`` returns ``opt_avg_jct_h`` (the best schedule
found, h), ``lower_bound_h`` (CP-SAT's proven bound on the same grid problem, h), ``proven``
(True when the two meet), ``jobs`` (that schedule in SPEC §9's job format), ``wall_s``,
``status``, ``hint`` (the heuristic schedule the search started from) and ``note`` (the rounding,
:data:`ROUNDING_NOTE`). ``python -m bacepipe.optimal SCENARIO`` prints the same.

The grid (SPEC §15): starts are whole seconds ≥ ceil(arrival), durations ceil(E_j), link demands
and capacities whole kbit/s (demands rounded up, capacities down). Against the real-time optimum
this is pessimistic by at most 2·J seconds per job for J jobs: any schedule of the class maps to
the grid by t ↦ ceil(t) + (number of its start/end times before t), which keeps every overlap,
lengthens no job below ceil(E), and moves each time by less than 2·J s. Meant for small
instances (≈ 3 regions, 4 jobs, ≤ 8 GPUs a region: well under a second); on larger ones the
search starts from the best schedulers' schedule and returns the best found and the proven bound.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from bacepipe.errors import InputError
from bacepipe.model.generate import load_scenario
from bacepipe.model.scenario import Scenario
from bacepipe.optimal.classes import JobClasses, job_classes
from bacepipe.optimal.cpsat import GridSchedule, ScheduleModel
from bacepipe.sim.bounds import lower_bound_h
from bacepipe.sim.model import iteration_time_s, job_cost

__all__ = ["DEFAULT_WORKERS", "ROUNDING_NOTE", "rounding_slack_h", "solve", "solve_batch"]

ROUNDING_NOTE = ("whole-second grid (starts >= ceil(arrival), durations ceil(E), bandwidth in "
                 "whole kbit/s, demands up, capacities down): pessimistic by at most 2*J s per "
                 "job for J jobs, so every scheduler's avg JCT >= opt_avg_jct_h - 2*J s "
                 "(about relative 1e-4 at hour-long JCTs)")


#: CP-SAT's portfolio at 8 workers includes its core-based search, which closes the bound of these
#: models fastest; the threads share the cores when there are fewer.
DEFAULT_WORKERS = 8


def rounding_slack_h(num_jobs: int) -> float:
    """The most by which the grid can overstate the class's optimum avg JCT, h (2·J s)."""
    return 2.0 * num_jobs / 3600.0


def _to_grid(scenario: Scenario, jobs: list[JobClasses], result: dict) -> GridSchedule | None:
    """A scheduler's result mapped onto the grid by t ↦ ceil(t) + #(event times before t) (the
    module docstring's argument); None when a placement is outside the grid's classes."""
    index = {r.name: i for i, r in enumerate(scenario.regions)}
    starts = [row["start_h"] * 3600 for row in result["jobs"]]
    events = np.unique(starts + [row["end_h"] * 3600 for row in result["jobs"]])
    schedule = GridSchedule([], [], [])
    for job, row, start in zip(jobs, result["jobs"], starts, strict=True):
        k = job.find(tuple(index[name] for name in row["path"]))
        gpus = sum(row["gpus"].values())
        if k is None or not job.classes[k].l_min <= gpus <= job.classes[k].l_max:
            return None
        schedule.cls.append(k)
        schedule.counts.append([row["gpus"][scenario.regions[r].name]
                                for r in job.classes[k].regions])
        grid = math.ceil(start) + int(np.searchsorted(events, start))
        schedule.start_s.append(max(grid, job.release_s))
    return schedule


def _best_heuristic(scenario: Scenario) -> tuple[str, dict] | None:
    """The scheduler with the least avg JCT on ``scenario`` and its result (None if none runs)."""
    import bacepipe

    best = None
    for name in bacepipe.SCHEDULERS:
        try:
            result = bacepipe.run_scenario(scenario, name)
        except InputError:  # a job this scheduler can never place: no hint from it
            continue
        if best is None or result["avg_jct_h"] < best[1]["avg_jct_h"]:
            best = (name, result)
    return best


def _job_rows(scenario: Scenario, jobs: list[JobClasses], schedule: GridSchedule) -> list[dict]:
    """The grid schedule in SPEC §9's job format; cost is charged for the real E (Eq. 4)."""
    rows = []
    for spec, job, k, counts, start in zip(scenario.jobs, jobs, schedule.cls, schedule.counts,
                                           schedule.start_s, strict=True):
        cls = job.classes[k]
        gpus = sum(counts)
        by_region = dict(zip(cls.regions, counts, strict=True))
        path = cls.path(gpus)
        ordered = [by_region[r] for r in path]
        exec_s = job.model.iterations * iteration_time_s(job.model, scenario, path, ordered)
        end = start + cls.duration_s[gpus - cls.l_min]
        names = [scenario.regions[r].name for r in path]
        rows.append({
            "name": spec.name, "k_star": job.model.k_star,
            "start_h": start / 3600, "end_h": end / 3600,
            "jct_h": (end - job.arrival_s) / 3600,
            "cost": job_cost(scenario, path, ordered, start, exec_s),
            "path": names, "gpus": dict(zip(names, ordered, strict=True)),
        })
    return rows


def solve(scenario, time_limit_s: float = 60.0, workers: int | None = None,
          progress: bool | None = None, hint: bool = True) -> dict:
    """The least average JCT over SPEC §15's schedule class, on the whole-second grid.

    Parameters
    ----------
    scenario : anything :func:`bacepipe.model.generate.load_scenario` takes (a YAML path, a
        dict of SPEC §9's shape, a built-in name, a parsed Scenario).
    time_limit_s : CP-SAT's wall-clock limit, s.
    workers : CP-SAT search workers (default :data:`DEFAULT_WORKERS`).
    progress : a progress line on stderr while searching (default: when stderr is a TTY).
    hint : start the search from the best scheduler's schedule (one run of each scheduler).

    Returns
    -------
    dict
        ``opt_avg_jct_h`` (NaN if nothing was found in time), ``lower_bound_h``, ``proven``,
        ``jobs`` (SPEC §9 job rows of the best schedule), ``wall_s`` (the whole call, model
        and hint included),
        ``status`` (``optimal`` | ``feasible`` | ``hint``: CP-SAT found nothing in time and
        this is the hint's schedule | ``unknown``), ``hint`` ({scheduler,
        avg_jct_h} or None), ``note`` (:data:`ROUNDING_NOTE`).

    Raises
    ------
    InputError
        Bad scenario or time limit; heterogeneous GPU types (SPEC §16); a job with no
        placement; a model too large
        (:data:`bacepipe.optimal.classes.MAX_CLASSES`).
    """
    if (isinstance(time_limit_s, bool) or not isinstance(time_limit_s, (int, float))
            or not time_limit_s > 0 or not math.isfinite(time_limit_s)):
        raise InputError("time_limit_s", f"must be a positive number of seconds, got "
                         f"{time_limit_s!r}")
    t0 = time.perf_counter()
    scenario = load_scenario(scenario)
    if scenario.hetero:
        raise InputError("regions", "bacepipe.optimal models one GPU type; this scenario has "
                         "gpu_type on some region (SPEC §16)")
    jobs = job_classes(scenario)
    model = ScheduleModel(scenario, jobs)
    start_from = _best_heuristic(scenario) if hint else None
    grid = None if start_from is None else _to_grid(scenario, jobs, start_from[1])
    if grid is not None:
        model.hint(grid)
    workers = workers or DEFAULT_WORKERS
    progress = sys.stderr.isatty() if progress is None else progress
    schedule, objective, bound, proven = model.solve(time_limit_s, workers, progress)
    status = "optimal" if proven else "feasible"
    if schedule is None and grid is not None and grid.feasible(scenario, jobs):
        # CP-SAT found nothing in time (presolve alone can take that long): the hint is a
        # schedule of the grid too
        schedule, status = grid, "hint"
        objective = (sum(grid.end_s(jobs)) - sum(j.arrival_s for j in jobs)) / len(jobs) / 3600
    return {
        "opt_avg_jct_h": objective,
        # SPEC §15's LB bounds the real-time optimum, hence the grid's too
        "lower_bound_h": max(bound, lower_bound_h(scenario)),
        "proven": proven,
        "jobs": _job_rows(scenario, jobs, schedule) if schedule is not None else [],
        "wall_s": time.perf_counter() - t0,
        "status": status if schedule is not None else "unknown",
        "hint": None if start_from is None else {"scheduler": start_from[0],
                                                 "avg_jct_h": start_from[1]["avg_jct_h"]},
        "note": ROUNDING_NOTE,
    }


def solve_batch(batch, topologies=None, time_limit_s: float = 60.0,
                workers: int | None = None) -> dict[str, np.ndarray]:
    """OPT of topologies of a :class:`~bacepipe.model.batch.ScenarioBatch`, one :func:`solve`
    each (no progress line): what a sweep point's ``optimal`` key adds per topology.

    Parameters
    ----------
    batch : the sweep point's topologies.
    topologies : row indices of ``batch`` (default: every row).
    time_limit_s, workers : as :func:`solve`, per topology.

    Returns
    -------
    dict
        ``opt_avg_jct_h`` float64[n] (h; NaN when nothing was found) and ``opt_proven`` bool[n],
        in the order of ``topologies``.
    """
    rows = range(batch.size) if topologies is None else list(topologies)
    opt = np.full(len(rows), np.nan)
    proven = np.zeros(len(rows), dtype=bool)
    for i, t in enumerate(rows):
        result = solve(batch.scenario(int(t)), time_limit_s, workers, progress=False)
        opt[i], proven[i] = result["opt_avg_jct_h"], result["proven"]
    return {"opt_avg_jct_h": opt, "opt_proven": proven}
