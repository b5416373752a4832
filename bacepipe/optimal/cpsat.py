"""The CP-SAT model of SPEC §15's schedule class and its solution.

Variables, per job j: a start S_j ≥ ceil(arrival_j) and an end E_j (whole seconds); per path class
c of j (:mod:`bacepipe.optimal.classes`): a presence literal x_jc (exactly one per job), a GPU
count L_jc, GPUs n_jcr per region of the path (Σ_r n_jcr = L_jc, 1 ≤ n_jcr ≤ G_r), a duration
d_jc and a link demand w_jc read from the class's tables by L_jc (element constraints), and an
optional interval [S_j, E_j) of length d_jc present iff x_jc. Constraints: one cumulative per
region (demands n_jcr, capacity G_r), one per linked region pair (demands w_jc, capacity the
tighter direction in kbit/s: both directions carry the same reservations), and a redundant one
over all GPUs (demands L_jc), which tightens the bound. Objective: Σ_j E_j, i.e. Σ JCT + const.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass

from ortools.sat.python import cp_model

from bacepipe.model.scenario import Scenario
from bacepipe.optimal.classes import JobClasses, PathClass, link_capacity_kbps


@dataclass
class _ClassVars:
    present: cp_model.IntVar
    gpus: cp_model.LinearExprT  # L_jc
    index: cp_model.IntVar  # L_jc − l_min
    duration: cp_model.IntVar
    demand: cp_model.IntVar | int
    counts: list  # n_jcr in the order of PathClass.regions


@dataclass
class GridSchedule:
    """A schedule on the whole-second grid: per job its class index, GPUs per path region (in
    the order of ``PathClass.regions``) and start, s."""

    cls: list[int]
    counts: list[list[int]]
    start_s: list[int]

    def end_s(self, jobs: list[JobClasses]) -> list[int]:
        return [s + job.classes[k].duration_s[sum(n) - job.classes[k].l_min]
                for job, k, n, s in zip(jobs, self.cls, self.counts, self.start_s, strict=True)]

    def feasible(self, scenario: Scenario, jobs: list[JobClasses]) -> bool:
        """Whether every region and link holds at every start instant (usage only rises there)
        and every job starts at or after its release."""
        ends = self.end_s(jobs)
        capacity = link_capacity_kbps(scenario)
        for t in self.start_s:
            gpus = [0] * len(scenario.regions)
            links = [[0] * len(scenario.regions) for _ in scenario.regions]
            for job, k, counts, s, e in zip(jobs, self.cls, self.counts, self.start_s, ends,
                                            strict=True):
                if s <= t < e:
                    cls = job.classes[k]
                    for r, n in zip(cls.regions, counts, strict=True):
                        gpus[r] += n
                    for u, v in cls.hops:
                        links[u][v] += cls.demand_kbps[sum(counts) - cls.l_min]
            if any(g > r.gpus for g, r in zip(gpus, scenario.regions, strict=True)) or any(
                    links[u][v] > capacity[u][v] for u in range(len(links))
                    for v in range(len(links))):
                return False
        return all(s >= job.release_s for s, job in zip(self.start_s, jobs, strict=True))


def _fill(cls: PathClass, gpus: int, scenario: Scenario) -> list[int]:
    """A split of ``gpus`` over the path: one each, the surplus in path order up to G_r."""
    counts = [1] * len(cls.regions)
    rest = gpus - len(counts)
    for pos, r in enumerate(cls.regions):
        add = min(scenario.regions[r].gpus - 1, rest)
        counts[pos] += add
        rest -= add
    return counts


class ScheduleModel:
    """The CP-SAT model of one scenario; :meth:`solve` returns the best grid schedule found."""

    def __init__(self, scenario: Scenario, jobs: list[JobClasses]):
        self.scenario, self.jobs = scenario, jobs
        m = self.model = cp_model.CpModel()
        horizon = max(j.release_s for j in jobs) + sum(max(max(c.duration_s) for c in j.classes)
                                                      for j in jobs)
        self.starts, self.ends, self.vars = [], [], []
        regions = {r: ([], []) for r in range(len(scenario.regions))}
        links: dict[tuple[int, int], tuple[list, list]] = {}
        pool = ([], [])
        for j, job in enumerate(jobs):
            shortest = min(min(c.duration_s) for c in job.classes)
            start = m.new_int_var(job.release_s, horizon - shortest, f"S{j}")
            end = m.new_int_var(job.release_s + shortest, horizon, f"E{j}")
            row = []
            for k, cls in enumerate(job.classes):
                v = self._class_vars(j, k, cls)
                interval = m.new_optional_interval_var(start, v.duration, end, v.present,
                                                       f"I{j}_{k}")
                for r, n in zip(cls.regions, v.counts, strict=True):
                    regions[r][0].append(interval)
                    regions[r][1].append(n)
                for hop in cls.hops:
                    links.setdefault(hop, ([], []))
                    links[hop][0].append(interval)
                    links[hop][1].append(v.demand)
                pool[0].append(interval)
                pool[1].append(v.gpus)
                row.append(v)
            m.add_exactly_one(v.present for v in row)
            self.starts.append(start)
            self.ends.append(end)
            self.vars.append(row)
        for r, (intervals, demands) in regions.items():
            if intervals:
                m.add_cumulative(intervals, demands, scenario.regions[r].gpus)
        capacity = link_capacity_kbps(scenario)
        for (u, v), (intervals, demands) in links.items():
            m.add_cumulative(intervals, demands, capacity[u][v])
        m.add_cumulative(pool[0], pool[1], sum(r.gpus for r in scenario.regions))
        self._completion_cuts()
        m.minimize(sum(self.ends))

    def _completion_cuts(self) -> None:
        """Redundant cuts that give the LP the pooled-area bound of SPEC §15 per subset.

        Job j needs at least a_j = min over its placements of L · ceil(E) GPU-seconds, so on the
        N pooled GPUs it takes p_j ≥ a_j / N seconds of "machine". For any set S of jobs, all
        starting no earlier than r_S, the k-th of S to end does so no earlier than r_S + the p
        of the first k, whatever the order; hence Σ_S p_j E_j ≥ r_S Σ_S p + ½((Σ_S p)² + Σ_S p²)
        (Queyranne's inequality on a fluid machine). It stays valid for any smaller p', so p'
        is p in whole units of ``unit`` seconds, which keeps the coefficients small.
        """
        n_gpus = sum(r.gpus for r in self.scenario.regions)
        p = [min(min(g * d for g, d in zip(range(c.l_min, c.l_max + 1), c.duration_s,
                                           strict=True)) for c in job.classes) / n_gpus
             for job in self.jobs]
        unit = max(1, math.ceil(max(p) / 10_000))
        q = [int(x // unit) for x in p]
        n = len(self.jobs)
        subsets = (range(1, 2**n) if n <= 10 else  # else the nested sets of the shortest
                   [sum(1 << j for j in sorted(range(n), key=q.__getitem__)[:k])
                    for k in range(1, n + 1)])
        for mask in subsets:
            members = [j for j in range(n) if mask >> j & 1]
            total = sum(q[j] for j in members)
            squares = sum(q[j] ** 2 for j in members)
            release = min(self.jobs[j].release_s for j in members)
            self.model.add(sum(q[j] * self.ends[j] for j in members)
                           >= release * total + math.ceil((total**2 + squares) * unit / 2))

    def _class_vars(self, j: int, k: int, cls: PathClass) -> _ClassVars:
        m = self.model
        present = m.new_bool_var(f"x{j}_{k}")
        index = m.new_int_var(0, cls.l_max - cls.l_min, f"l{j}_{k}")
        m.add(index == 0).only_enforce_if(~present)  # an absent class has one value: no symmetry
        duration = m.new_int_var_from_domain(cp_model.Domain.from_values(sorted(set(
            cls.duration_s))), f"d{j}_{k}")
        m.add_element(index, cls.duration_s, duration)
        demand: cp_model.IntVar | int = 0
        if cls.hops:
            demand = m.new_int_var(min(cls.demand_kbps), max(cls.demand_kbps), f"w{j}_{k}")
            m.add_element(index, cls.demand_kbps, demand)
        gpus = index + cls.l_min
        if len(cls.regions) == 1:
            counts = [gpus]
        else:
            counts = [m.new_int_var(1, self.scenario.regions[r].gpus, f"n{j}_{k}_{r}")
                      for r in cls.regions]
            m.add(sum(counts) == gpus)
            for n, fixed in zip(counts, _fill(cls, cls.l_min, self.scenario), strict=True):
                m.add(n == fixed).only_enforce_if(~present)
        return _ClassVars(present, gpus, index, duration, demand, counts)

    def hint(self, schedule: GridSchedule) -> None:
        """A complete solution hint: the given schedule, absent classes at their l_min."""
        for j, job in enumerate(self.jobs):
            self.model.add_hint(self.starts[j], schedule.start_s[j])
            for k, (cls, v) in enumerate(zip(job.classes, self.vars[j], strict=True)):
                chosen = k == schedule.cls[j]
                counts = schedule.counts[j] if chosen else _fill(cls, cls.l_min, self.scenario)
                index = min(sum(counts), cls.l_max) - cls.l_min
                self.model.add_hint(v.present, chosen)
                self.model.add_hint(v.index, index)
                self.model.add_hint(v.duration, cls.duration_s[index])
                if cls.hops:
                    self.model.add_hint(v.demand, cls.demand_kbps[index])
                if len(cls.regions) > 1:
                    for n, value in zip(v.counts, counts, strict=True):
                        self.model.add_hint(n, value)
                if chosen:
                    self.model.add_hint(self.ends[j], schedule.start_s[j] + cls.duration_s[index])

    def solve(self, time_limit_s: float, workers: int, progress: bool):
        """Run CP-SAT. Returns (grid schedule or None, avg JCT h, bound h, proven)."""
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = float(time_limit_s)
        solver.parameters.num_workers = int(workers)
        # the default gives up on a complete hint of a few hundred intervals before presolve ends
        solver.parameters.hint_conflict_limit = 100_000
        shift = sum(j.arrival_s for j in self.jobs)
        scale = 3600.0 * len(self.jobs)
        callback = None
        if progress:
            callback = _Progress(shift, scale)
            solver.best_bound_callback = callback.on_bound
        status = solver.solve(self.model, callback)
        if callback is not None:
            callback.done()
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None, math.nan, (solver.best_objective_bound - shift) / scale, False
        schedule = GridSchedule([], [], [])
        for j in range(len(self.jobs)):
            k = next(k for k, v in enumerate(self.vars[j]) if solver.boolean_value(v.present))
            schedule.cls.append(k)
            schedule.counts.append([int(solver.value(n)) for n in self.vars[j][k].counts])
            schedule.start_s.append(int(solver.value(self.starts[j])))
        objective = (solver.objective_value - shift) / scale
        bound = (solver.best_objective_bound - shift) / scale
        return schedule, objective, bound, status == cp_model.OPTIMAL


class _Progress(cp_model.CpSolverSolutionCallback):
    """One line on stderr, rewritten at every new solution or bound: best, bound, elapsed."""

    def __init__(self, shift: float, scale: float):
        super().__init__()
        self.shift, self.scale = shift, scale
        self.best, self.bound = math.inf, -math.inf
        self.t0 = time.perf_counter()

    def on_solution_callback(self) -> None:
        self.best = (self.objective_value - self.shift) / self.scale
        self.bound = (self.best_objective_bound - self.shift) / self.scale
        self._print()

    def on_bound(self, bound: float) -> None:
        self.bound = (bound - self.shift) / self.scale
        self._print()

    def _print(self) -> None:
        print(f"\rbacepipe.optimal: best {self.best:.4f} h · bound {self.bound:.4f} h · "
              f"{time.perf_counter() - self.t0:.1f} s ", end="", file=sys.stderr, flush=True)

    def done(self) -> None:
        print(file=sys.stderr, flush=True)
