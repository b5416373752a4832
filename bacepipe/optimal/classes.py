"""The placements of SPEC §15's schedule class, grouped into path classes on the whole-second grid.

A placement (SPEC §3) is an ordered path of distinct regions with n_r ≥ 1 GPUs each. Its
execution time E_j (Eq. 1/2, §12 latency included) depends on the path ORDER and on the GPU count
L = Σ n_r, but not on how the L GPUs are split: every split has L − m intra-region hops (m = path
length), and Δ sees the intra-region hop exactly when L > m. Its resources are the GPUs n_r of
each region and b_j(L) on both directions of each hop, the same for the path and its reverse.

So one **path class** gathers the paths with the same resources: the same regions and the same
binding hops (a path and its reverse always; more when some hops can never be short, see
:func:`job_classes`). For each L it keeps the fastest of them, whole seconds ``ceil(E)``, and the
demand ``ceil(b_j(L) / 1000)`` kbit/s (SPEC §15: demands rounded up, capacities rounded down).
A path allows L in ``max(m, m_j) .. min(K*_j, Σ_path G_r, the largest L whose demand fits every
hop)``; b_j(L) grows with L, so these are one interval, and a class's union of them is one too
(same regions, same lower end).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import permutations

from bacepipe.errors import InputError
from bacepipe.model.scenario import Scenario
from bacepipe.sim.model import JobModel, iteration_time_s, job_model, min_bandwidth_bps

#: Above this many (job, path class) pairs the exact model is refused: the number of paths grows
#: like R!, and at this size CP-SAT cannot prove anything within minutes anyway.
MAX_CLASSES = 20_000


@dataclass(frozen=True)
class PathClass:
    """Placements of one job that use the same regions and the same binding hops, with their
    tables over L = ``l_min`` .. ``l_max`` (index L − l_min).

    Attributes
    ----------
    regions : the region indices, ascending (the order of the per-region GPU counts).
    hops : the binding undirected pairs (u < v) the paths use (see :func:`job_classes`).
    l_min, l_max : the GPU counts the class allows.
    duration_s : ceil(E_j) in whole seconds per L, of the fastest path of the class.
    paths : per L, that fastest path (pipeline order).
    demand_kbps : ceil(b_j(L) / 1000) per L, kbit/s reserved on both directions of every hop.
    """

    regions: tuple[int, ...]
    hops: tuple[tuple[int, int], ...]
    l_min: int
    l_max: int
    duration_s: tuple[int, ...]
    paths: tuple[tuple[int, ...], ...]
    demand_kbps: tuple[int, ...]

    def path(self, gpus: int) -> tuple[int, ...]:
        """The path used for ``gpus`` GPUs (pipeline order)."""
        return self.paths[gpus - self.l_min]


@dataclass(frozen=True)
class JobClasses:
    """Every path class of one job. ``release_s`` = ceil(arrival in s), its earliest start;
    ``binding`` the hops that can ever be short of bandwidth (the same for every job)."""

    model: JobModel
    arrival_s: float
    release_s: int
    classes: tuple[PathClass, ...]
    binding: frozenset[tuple[int, int]]

    def find(self, path) -> int | None:
        """The index of the class holding the ordered ``path``, or None."""
        key = _key(path, self.binding)
        return next((k for k, c in enumerate(self.classes) if (c.regions, c.hops) == key), None)


def _pairs(path) -> tuple[tuple[int, int], ...]:
    return tuple((min(u, v), max(u, v)) for u, v in zip(path[:-1], path[1:], strict=False))


def _key(path, binding) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
    return tuple(sorted(path)), tuple(sorted(h for h in _pairs(path) if h in binding))


def link_capacity_kbps(scenario: Scenario) -> list[list[int]]:
    """floor(min(B[u,v], B[v,u]) · 1e6) kbit/s per pair: a job reserves the same on both
    directions, so the tighter direction decides (SPEC §4, §15)."""
    links = scenario.links_gbps
    n = len(links)
    return [[0 if u == v else math.floor(min(links[u][v], links[v][u]) * 1e6) for v in range(n)]
            for u in range(n)]


def demand_kbps(jm: JobModel, gpus: int) -> int:
    """b_j(L) rounded up to whole kbit/s (SPEC §15)."""
    return math.ceil(min_bandwidth_bps(jm, gpus) / 1000)


def duration_s(jm: JobModel, scenario: Scenario, path, gpus: int) -> int:
    """ceil(E_j) in whole seconds of ``gpus`` GPUs on the ordered ``path`` (Eq. 1/2).

    The split does not change E (module docstring), so the surplus goes to the first region.
    """
    counts = [gpus - len(path) + 1] + [1] * (len(path) - 1)
    return math.ceil(jm.iterations * iteration_time_s(jm, scenario, path, counts))


def _paths(scenario: Scenario, capacity: list[list[int]]):
    """Every simple ordered path over regions with GPUs and hops with capacity."""
    live = [r for r, region in enumerate(scenario.regions) if region.gpus > 0]
    for m in range(1, len(live) + 1):
        for path in permutations(live, m):
            if all(capacity[u][v] > 0 for u, v in _pairs(path)):
                yield path


def _gpu_range(jm: JobModel, scenario: Scenario, path, capacity) -> range:
    """The Ls a path allows: m..K*, its GPUs, and the demand within its tightest hop."""
    l_min = max(len(path), jm.min_gpus)
    l_max = min(jm.k_star, sum(scenario.regions[r].gpus for r in path))
    if len(path) > 1:
        tightest = min(capacity[u][v] for u, v in _pairs(path))
        while l_max >= l_min and demand_kbps(jm, l_max) > tightest:
            l_max -= 1
    return range(l_min, l_max + 1)


def _merge(jm: JobModel, scenario: Scenario, paths, key, ranges) -> PathClass:
    """The class of ``key``: per L the fastest of its paths that allow L."""
    l_min = min(ranges[p].start for p in paths)
    l_max = max(ranges[p].stop for p in paths) - 1
    durations, chosen = [], []
    for gpus in range(l_min, l_max + 1):
        best = min((duration_s(jm, scenario, p, gpus), p) for p in paths if gpus in ranges[p])
        durations.append(best[0])
        chosen.append(best[1])
    demands = tuple(demand_kbps(jm, g) if key[1] else 0 for g in range(l_min, l_max + 1))
    return PathClass(key[0], key[1], l_min, l_max, tuple(durations), tuple(chosen), demands)


def job_classes(scenario: Scenario) -> list[JobClasses]:
    """The path classes of every job of ``scenario``.

    A hop is **binding** when every job at once at its largest demand on it would exceed its
    capacity; the others can never be short, so they need no constraint, and paths that differ
    only in them (the same regions, the same binding hops) are one class whose duration per L
    is the fastest of them (an exact reduction: their resources are the same).

    Raises
    ------
    InputError
        ``jobs[j]`` when a job has no placement at all (memory minimum or links too thin);
        ``scenario`` when the model would exceed :data:`MAX_CLASSES` paths.
    """
    total = sum(r.gpus for r in scenario.regions)
    capacity = link_capacity_kbps(scenario)
    paths = list(_paths(scenario, capacity))
    if len(paths) * len(scenario.jobs) > MAX_CLASSES:
        raise InputError("scenario", f"too large for the exact model: {len(paths)} paths × "
                         f"{len(scenario.jobs)} jobs exceeds {MAX_CLASSES} path classes")
    models, ranges, peak = [], [], {}
    for j, job in enumerate(scenario.jobs):
        jm = job_model(job, scenario.hardware, total, scenario.memory_model, j)
        allowed = {p: r for p in paths if (r := _gpu_range(jm, scenario, p, capacity))}
        if not allowed:
            raise InputError(f"jobs[{j}]", f"{job.name!r} has no placement in the schedule "
                             "class (memory minimum or bandwidth)")
        for hop in {h for p, r in allowed.items() for h in _pairs(p)}:
            most = max(r.stop - 1 for p, r in allowed.items() if hop in _pairs(p))
            peak[hop] = peak.get(hop, 0) + demand_kbps(jm, most)
        models.append(jm)
        ranges.append(allowed)
    binding = frozenset(h for h, need in peak.items() if need > capacity[h[0]][h[1]])
    out = []
    for job, jm, allowed in zip(scenario.jobs, models, ranges, strict=True):
        groups: dict[tuple, list] = {}
        for p in allowed:
            groups.setdefault(_key(p, binding), []).append(p)
        classes = tuple(_merge(jm, scenario, ps, key, allowed) for key, ps in groups.items())
        arrival_s = job.arrival_h * 3600
        out.append(JobClasses(jm, arrival_s, math.ceil(arrival_s), classes, binding))
    return out
