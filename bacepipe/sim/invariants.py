"""Schedule-replay invariant checker: does a result dict obey the model of SPEC §2–§5?

``check_schedule(scenario, result) -> list[str]`` takes a result in the shape of SPEC §9 (from the
reference simulator or the numba core) and replays it against the scenario WITHOUT re-running any
policy. It returns human-readable violations; an empty list means the schedule is consistent:

- every job has a finite start and end, starts no earlier than it arrives, and its path is made of
  distinct known regions with ≥ 1 GPU each (and ≥ m_j in total with the memory model);
- L ≤ layers and L ≤ K*, and ``k_star`` is the K* of Eq. 13;
- end − start = I_j · t_iter of the placement (Eq. 1, 2; relative 1e-9, or a few ulps of the end
  time when that is coarser: float64 seconds resolve ~4 ms after a million years) and the cost is
  Eq. 4 (relative 1e-9);
- at every start and end instant, GPUs in use per region ≤ capacity (Eq. 5) and the reservations
  b_j(L) on every directed link sum to ≤ its nominal bandwidth (Eq. 6, relative 1e-9);
- jct_h = end_h − arrival_h, and the totals agree with the per-job values.

All formulas come from :mod:`bacepipe.sim.model`; none is written twice.
"""

from __future__ import annotations

import math
from functools import lru_cache

from bacepipe.model.scenario import Scenario
from bacepipe.sim.model import (
    holds_model,
    iteration_time_s,
    job_cost,
    job_model,
    reference_hardware,
    reservation_gbps,
)

#: Relative tolerance of every float comparison (times, costs, bandwidth sums).
RTOL = 1e-9

#: K* (Eq. 13) is an argmin over up to ``layers`` evaluations of Eq. 1 that depends on the job
#: and the cluster alone: replaying every scheduler of one topology computes it once.
#: (Job and Hardware are frozen dataclasses, hashed by value.)
_job_model = lru_cache(maxsize=4096)(job_model)


def _close(a: float, b: float, rtol: float = RTOL) -> bool:
    return math.isclose(a, b, rel_tol=rtol, abs_tol=rtol)


def check_schedule(scenario: Scenario, result: dict) -> list[str]:
    """Violations of the SPEC model by ``result`` on ``scenario``; [] when there are none.

    Parameters
    ----------
    scenario : the scenario the result claims to schedule.
    result : a SPEC §9 dict: ``jobs`` in input order with ``start_h``, ``end_h``, ``jct_h``,
        ``cost``, ``k_star``, ``path`` (region names) and ``gpus`` (region name → GPUs), plus the
        totals ``avg_jct_h``, ``total_cost``, ``makespan_h`` (and optionally the §10 metrics).
    """
    problems: list[str] = []
    index = {r.name: i for i, r in enumerate(scenario.regions)}
    total_gpus = sum(r.gpus for r in scenario.regions)
    rows = result.get("jobs", [])
    if len(rows) != len(scenario.jobs):
        return [f"result has {len(rows)} jobs, scenario has {len(scenario.jobs)}"]

    # (start_h, end_h, path indices, counts, reserved Gbit/s) of every job that replays cleanly
    placed = []
    for i, (job, row) in enumerate(zip(scenario.jobs, rows, strict=True)):
        label = f"job {i} ({job.name})"
        if row.get("name") != job.name:
            problems.append(f"{label}: named {row.get('name')!r} in the result")
        start_h, end_h = row.get("start_h"), row.get("end_h")
        if start_h is None or end_h is None or not (math.isfinite(start_h)
                                                     and math.isfinite(end_h)):
            problems.append(f"{label}: has no finite start and end ({start_h}, {end_h})")
            continue
        if start_h < job.arrival_h - RTOL * max(1.0, job.arrival_h):
            problems.append(f"{label}: starts at {start_h} h before it arrives at "
                            f"{job.arrival_h} h")
        if not _close(row.get("jct_h", math.nan), end_h - job.arrival_h):
            problems.append(f"{label}: jct_h {row.get('jct_h')} != end_h - arrival_h "
                            f"{end_h - job.arrival_h}")

        names, gpus = list(row.get("path", [])), dict(row.get("gpus", {}))
        if not names:
            problems.append(f"{label}: empty path")
            continue
        unknown = [n for n in names if n not in index]
        if unknown:
            problems.append(f"{label}: unknown regions {unknown}")
            continue
        if len(set(names)) != len(names):
            problems.append(f"{label}: path {names} repeats a region")
            continue
        if set(gpus) != set(names):
            problems.append(f"{label}: gpus {sorted(gpus)} do not match path {names}")
            continue
        path = [index[n] for n in names]
        counts = [gpus[n] for n in names]
        if any(c < 1 for c in counts):
            problems.append(f"{label}: a path region has < 1 GPU ({gpus})")
            continue
        stages = sum(counts)
        if stages > job.layers:
            problems.append(f"{label}: {stages} GPUs > {job.layers} layers")

        try:
            jm = _job_model(job, reference_hardware(scenario), total_gpus,
                            scenario.memory_model, i)
        except ValueError as err:
            problems.append(f"{label}: {err}")
            continue
        if row.get("k_star") != jm.k_star:
            problems.append(f"{label}: k_star {row.get('k_star')} != K* {jm.k_star}")
        if stages > jm.k_star:
            problems.append(f"{label}: {stages} GPUs > K* {jm.k_star}")
        if not holds_model(scenario, jm, path, counts):
            problems.append(f"{label}: {gpus} cannot hold the model (SPEC §12, §16)")

        exec_s = jm.iterations * iteration_time_s(jm, scenario, path, counts)
        # Times are float64 seconds from t = 0 (SPEC §1): after years of simulated time a job
        # of milliseconds is resolved only to a few ulps of its end, not to RTOL.
        resolution_s = 4 * 3600 * math.ulp(max(abs(start_h), abs(end_h)))
        if not math.isclose((end_h - start_h) * 3600, exec_s, rel_tol=RTOL,
                            abs_tol=max(RTOL, resolution_s)):
            problems.append(f"{label}: runs {(end_h - start_h) * 3600} s, Eq. 1-2 give {exec_s} s")
        expected = job_cost(scenario, path, counts, start_h * 3600, exec_s)
        if not _close(row.get("cost", math.nan), expected):
            problems.append(f"{label}: cost {row.get('cost')} != Eq. 4 {expected}")
        placed.append((start_h, end_h, path, counts,
                       reservation_gbps(jm, scenario, path, counts), label))

    problems += _check_capacity(scenario, placed)
    problems += _check_totals(scenario, result, rows)
    return problems


def _check_capacity(scenario: Scenario, placed: list) -> list[str]:
    """Eq. 5 and 6 at every start and end instant: a job holds its resources on [start, end)."""
    problems = []
    n = len(scenario.regions)
    names = [r.name for r in scenario.regions]
    instants = sorted({p[0] for p in placed} | {p[1] for p in placed})
    for t in instants:
        active = [p for p in placed if p[0] <= t < p[1]]
        in_use = [0] * n
        load = [[0.0] * n for _ in range(n)]
        for _, _, path, counts, gbps, _ in active:
            for r, c in zip(path, counts, strict=True):
                in_use[r] += c
            for u, v in zip(path[:-1], path[1:], strict=True):
                load[u][v] += gbps
                load[v][u] += gbps
        for r in range(n):
            if in_use[r] > scenario.regions[r].gpus:
                problems.append(f"at {t} h region {names[r]} uses {in_use[r]} GPUs > capacity "
                                f"{scenario.regions[r].gpus}")
        for u in range(n):
            for v in range(n):
                nominal = scenario.links_gbps[u][v]
                if load[u][v] > 0 and load[u][v] > nominal * (1 + RTOL):
                    problems.append(f"at {t} h link {names[u]}->{names[v]} carries "
                                    f"{load[u][v]} Gbit/s > nominal {nominal}")
    return problems


def _check_totals(scenario: Scenario, result: dict, rows: list) -> list[str]:
    """The run totals of SPEC §9/§10 against the per-job values."""
    problems = []
    if any(r.get("end_h") is None for r in rows):
        return problems
    n = len(rows)
    wanted = {
        "avg_jct_h": sum(r["jct_h"] for r in rows) / n,
        "total_cost": sum(r["cost"] for r in rows),
        "makespan_h": max(r["end_h"] for r in rows),
        "mean_wait_h": sum(r["start_h"] - job.arrival_h
                           for r, job in zip(rows, scenario.jobs, strict=True)) / n,
        "mean_gpus": sum(sum(r["gpus"].values()) for r in rows) / n,
        "multi_region_share": sum(1 for r in rows if len(r["path"]) > 1) / n,
    }
    for key, value in wanted.items():
        if key in ("avg_jct_h", "total_cost", "makespan_h") or key in result:
            if not _close(result.get(key, math.nan), value):
                problems.append(f"{key} {result.get(key)} != {value} from the jobs")
    return problems
