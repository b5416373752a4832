"""Plain-Python reference simulator: the readable twin of the numba core, straight from SPEC.

Contract
--------
``simulate_reference(scenario, scheduler, rules) -> dict`` runs the event loop of SPEC §5 (with
§13's scan) with one registered scheduler told ``rules`` and returns the JSON object of SPEC §9
plus the run metrics of SPEC §10. Everything is float64 Python arithmetic, in the order SPEC §10a
fixes (sums in path order, exact float compares except the 1e-12 tie of Alg. 1 line 20), so the
numba core must agree with it to floating-point rounding. Time is in seconds inside, hours
(``_h``) outside.

A scheduler is an ordering × a start rule × a placement policy × an allocator, each a part of
:mod:`bacepipe.policies` whose ``twin`` this loop calls; this module holds the loop and what the
start rules' twins share (the offer, the projection of SPEC §13); the job model, the cluster
state and path growth are in :mod:`bacepipe.sim.model`. Parts only return decisions; only the
event loop changes the :class:`~bacepipe.sim.model.ClusterState`.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType

from bacepipe.errors import InputError
from bacepipe.model.rules import PAPER_RULES, Rules
from bacepipe.model.scenario import Scenario
from bacepipe.sim import model
from bacepipe.sim.decisions import BadDecision, check_decision
from bacepipe.sim.model import (
    ClusterState,
    JobModel,
    Placement,
    holds_model,
    iteration_time_s,
    job_cost,
    job_models,
    price_at,
    reservation_gbps,
)


def __getattr__(name: str):
    """The names of :mod:`bacepipe.sim.model`, which this module held until it was split: a
    plug-in's twin may import them from here, as the built-in parts' twins did."""
    value = getattr(model, name, None)
    if value is not None and not name.startswith("_") and not isinstance(value, ModuleType) \
            and getattr(value, "__module__", model.__name__) == model.__name__:
        return value
    raise AttributeError(f"module 'bacepipe.sim.reference' has no attribute {name!r}")


def offer(sim: ReferenceRun, j: int, k: int, state: ClusterState, prices: Sequence[float],
          place, allocate) -> Placement | None:
    """Job j's placement policy aiming at k GPUs; None when it is nothing or fails the memory
    rule (SPEC §12, §16)."""
    placed = place(state, sim.models[j], k, prices, allocate)
    if placed is None or not holds_model(sim.scenario, sim.models[j], *placed):
        return None
    return placed


def projections(sim: ReferenceRun):
    """SPEC §13's projection: for each distinct end time τ_k of the running jobs (ascending),
    yield (τ_k, state, prices at τ_k) where ``state`` is a copy of the residual state with every
    running job ending by τ_k released (in order of end time, then start order). The same
    copy is released further between yields; pending jobs are ignored, nothing is reserved."""
    running = sorted(sim.running, key=lambda j: (sim.end[j], sim.start_seq[j]))
    state = sim.state.copy()
    i = 0
    while i < len(running):
        tau = sim.end[running[i]]
        while i < len(running) and sim.end[running[i]] == tau:
            j = running[i]
            state.release(sim.paths[j], sim.counts[j], sim.reserved[j])
            i += 1
        yield tau, state, sim.prices_at(tau)


# --------------------------------------------------------------------------- ordering (§6)


def link_share(scenario: Scenario, running: Sequence[int], paths: Sequence[Sequence[int]],
               reserved_gbps: Sequence[float]) -> float:
    """α (SPEC §6): Σ over running jobs (index order) of 2 · hops_j · reserved_j, divided by
    Σ_{u≠v} B[u,v]; 0 when there are no links."""
    capacity = 0.0
    for u, row in enumerate(scenario.links_gbps):
        for v, b in enumerate(row):
            if u != v:
                capacity += b
    if capacity == 0:
        return 0.0
    used = 0.0
    for j in sorted(running):
        used += 2 * (len(paths[j]) - 1) * reserved_gbps[j]
    return used / capacity


# --------------------------------------------------------------------------- event loop (§5)


class ReferenceRun:
    """The run as start rules see it (SPEC §13, §14): the cluster state, the started jobs and
    the model, with the helpers their decisions need. Only :func:`simulate_reference` changes
    it."""

    def __init__(self, scenario: Scenario, models: list[JobModel], rules: Rules = PAPER_RULES):
        n = len(scenario.jobs)
        self.scenario, self.models = scenario, models
        self.arrivals = [job.arrival_h * 3600 for job in scenario.jobs]
        self.state = ClusterState(scenario)
        self.start, self.end, self.exec_s, self.cost_of = [0.0] * n, [0.0] * n, [0.0] * n, [0.0] * n
        self.paths: list[list[int]] = [[] for _ in range(n)]
        self.counts: list[list[int]] = [[] for _ in range(n)]
        self.reserved = [0.0] * n
        self.start_seq = [0] * n
        self.started = 0
        self.running: list[int] = []
        self.plan_slack = rules.plan_slack

    def prices_at(self, t_s: float) -> list[float]:
        """What price-based choices compare at t: P_r(t) (SPEC §12), or with GPU types the price
        per unit of work π_r = (P_r(t) · power_r) / s_r (SPEC §16)."""
        regions = self.scenario.regions
        if not self.scenario.hetero:
            return [price_at(r, t_s) for r in regions]
        return [(price_at(r, t_s) * self.scenario.gpu_type_of(r).power_kw) / s
                for r, s in zip(regions, self.state.speed, strict=True)]

    def execution_s(self, j: int, path: Sequence[int], counts: Sequence[int]) -> float:
        """E_j of a placement (Eq. 2 with Eq. 1, SPEC §12 latency included), s."""
        return self.models[j].iterations * iteration_time_s(self.models[j], self.scenario, path,
                                                             counts)

    def cost(self, path: Sequence[int], counts: Sequence[int], start_s: float,
             exec_s: float) -> float:
        return job_cost(self.scenario, path, counts, start_s, exec_s)

    def start_job(self, j: int, t: float, path: list[int], counts: list[int]) -> None:
        self.paths[j], self.counts[j] = path, counts
        self.start[j] = t
        self.exec_s[j] = self.execution_s(j, path, counts)
        self.end[j] = t + self.exec_s[j]
        self.reserved[j] = reservation_gbps(self.models[j], self.scenario, path, counts)
        self.cost_of[j] = self.cost(path, counts, t, self.exec_s[j])
        self.start_seq[j] = self.started
        self.started += 1
        self.state.reserve(path, counts, self.reserved[j])
        self.running.append(j)


def simulate_reference(scenario: Scenario, scheduler: str, rules: Rules = PAPER_RULES) -> dict:
    """Run one scenario with one scheduler told ``rules`` (SPEC §5, §10a, §13-14); returns the
    SPEC §9 dict + §10 metrics.

    Raises
    ------
    InputError
        ``scheduler`` when unknown; ``jobs[i]`` when a job can never be placed (memory model);
        :class:`~bacepipe.sim.decisions.BadDecision` (``scheduler <name>``, the check that
        failed) when one of its parts places a job against SPEC §3, §4 or §15.
    """
    from bacepipe.policies import check_schedulers, parts_of

    check_schedulers(scheduler)
    parts = parts_of(scheduler, rules.start_rule)
    for kind, part in parts.items():
        if part.twin is None:
            raise InputError("scheduler", f"{scheduler}: {kind} part {part.name!r} has no "
                             "plain-Python twin")
    order, rule = parts["ordering"].twin, parts["start_rule"].twin
    place, allocate = parts["placement"].twin, parts["allocator"].twin
    jobs = scenario.jobs
    models = job_models(scenario)
    sim = ReferenceRun(scenario, models, rules)
    arrivals = sim.arrivals
    future = sorted(range(len(jobs)), key=lambda j: (arrivals[j], j))
    pending: list[int] = []

    def try_start_one(t: float) -> bool:
        """One scan (SPEC §13): the pending jobs in order; start the first the rule starts."""
        alpha = link_share(scenario, sim.running, sim.paths, sim.reserved) \
            if not parts["ordering"].static else 0.0
        for j in order(list(pending), models, arrivals, alpha):
            placed = rule(j, t, sim, place, allocate)
            if placed is None:
                continue
            check_decision(sim, j, placed, scheduler)
            sim.start_job(j, t, list(placed[0]), [int(n) for n in placed[1]])
            pending.remove(j)
            return True
        return False

    t = arrivals[future[0]]
    while True:
        for j in sorted(sim.running):
            if sim.end[j] <= t:
                sim.state.release(sim.paths[j], sim.counts[j], sim.reserved[j])
                sim.running.remove(j)
        while future and arrivals[future[0]] <= t:
            pending.append(future.pop(0))
        while pending and try_start_one(t):
            pass
        if not sim.running and not future:
            if pending:
                j = min(pending)
                raise InputError(f"jobs[{j}]", "can never be placed (no placement gives it "
                                 f"{models[j].min_gpus} GPU(s) on the empty cluster)")
            break
        candidates = [sim.end[j] for j in sim.running] + [arrivals[j] for j in future[:1]]
        t = min(candidates)
    return _result(scenario, scheduler, models, arrivals, sim.start, sim.end, sim.exec_s,
                   sim.cost_of, sim.paths, sim.counts)


def _result(scenario, scheduler, models, arrivals, start, end, exec_s, cost, paths,
            counts) -> dict:
    """The SPEC §9 JSON object plus the SPEC §10 metrics."""
    names = [r.name for r in scenario.regions]
    n = len(scenario.jobs)
    kw = scenario.hardware.gpu_power_kw
    total_gpus = sum(r.gpus for r in scenario.regions)
    gpus = [sum(c) for c in counts]
    rows = []
    for j, job in enumerate(scenario.jobs):
        rows.append({
            "name": job.name, "k_star": models[j].k_star,
            "start_h": start[j] / 3600, "end_h": end[j] / 3600,
            "jct_h": (end[j] - arrivals[j]) / 3600, "cost": cost[j],
            "path": [names[r] for r in paths[j]],
            "gpus": {names[r]: c for r, c in zip(paths[j], counts[j], strict=True)},
        })
    last_end = max(end)
    busy = 0.0
    energy = 0.0
    for j in range(n):
        busy += gpus[j] * exec_s[j]
        if scenario.hetero:  # Σ_r n_r · power_r (SPEC §16)
            power = sum(c * scenario.gpu_type_of(scenario.regions[r]).power_kw
                        for r, c in zip(paths[j], counts[j], strict=True))
            energy += exec_s[j] / 3600 * power
        else:
            energy += exec_s[j] / 3600 * gpus[j] * kw
    return {
        "scheduler": scheduler,
        "avg_jct_h": sum(row["jct_h"] for row in rows) / n,
        "total_cost": sum(cost),
        "makespan_h": last_end / 3600,
        "energy_kwh": energy,
        "mean_wait_h": sum((start[j] - arrivals[j]) / 3600 for j in range(n)) / n,
        "mean_gpus": sum(gpus) / n,
        "multi_region_share": sum(1 for p in paths if len(p) > 1) / n,
        "gpu_utilization": busy / (total_gpus * last_end),
        "jobs": rows,
    }


def fill_outputs(batch, rules: Rules, names: Sequence[str], columns: Sequence[int],
                 out) -> None:
    """Run schedulers ``names`` (told ``rules``) through this loop on every topology of ``batch``
    and write their
    rows into scheduler columns ``columns`` of the core's outputs ``out``
    (:class:`bacepipe.core.batch.BatchOutputs`): the slow path of plain-Python plug-ins. A run
    that stops (a job never placed, a part's bad decision) gets the status and job the core
    would give it."""
    from bacepipe.core.loop import STATUS_BAD_DECISION, STATUS_NEVER_PLACED, STATUS_TOO_FEW_GPUS
    from bacepipe.core.model import C_KSTAR, C_MIN_GPUS
    from bacepipe.metrics import METRICS
    from bacepipe.sim.bounds import lower_bound_h

    for t in range(batch.size):
        scenario = batch.scenario(t)
        try:
            models = job_models(scenario)
        except InputError as err:
            bad = int(err.field[len("jobs["):-1])
            out.status[t, list(columns)] = STATUS_TOO_FEW_GPUS
            out.bad_job[t, list(columns)] = bad
            continue
        out.lower_bound_h[t] = lower_bound_h(scenario)
        out.const[t, :, C_KSTAR] = [m.k_star for m in models]
        out.const[t, :, C_MIN_GPUS] = [m.min_gpus for m in models]
        for name, s in zip(names, columns, strict=True):
            try:
                result = simulate_reference(scenario, name, rules)
            except BadDecision as err:  # reported as the core reports its own
                out.status[t, s], out.bad_job[t, s] = STATUS_BAD_DECISION, err.job
                continue
            except InputError as err:
                if not err.field.startswith("jobs["):
                    raise
                out.status[t, s], out.bad_job[t, s] = STATUS_NEVER_PLACED, int(err.field[5:-1])
                continue
            out.metrics[t, s] = [result[m] for m in METRICS]
            for j, row in enumerate(result["jobs"]):
                out.start_s[t, s, j] = row["start_h"] * 3600
                out.end_s[t, s, j] = row["end_h"] * 3600
                out.cost[t, s, j] = row["cost"]
                path = [batch.region_names.index(r) for r in row["path"]]
                out.plen[t, s, j] = len(path)
                out.path[t, s, j, :len(path)] = path
                out.path_gpus[t, s, j, :len(path)] = [row["gpus"][r] for r in row["path"]]

