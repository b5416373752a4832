"""The checks of a scheduler part's decision (SPEC §3, §4, §15), each failure named with numbers.

The compiled loop applies these checks to a plug-in part's decision (``_valid`` in
:mod:`bacepipe.core.loop`) but returns only a status code. The reference loop
(:mod:`bacepipe.sim.reference`) applies them, in the same order, to every decision through
:func:`check_decision`, which names the first that fails; :func:`bacepipe.sim.run.raise_for_status`
replays a run the core refused through that loop to say which check it was. In order:

1. the path has 1..R regions (R: the cluster's);
2. L = Σ n_r ≤ K*_j (SPEC §15's schedule class);
3. along the path, each region exists, appears once (SPEC §3) and gets 1..free GPUs (SPEC §4,
   Eq. 5), the first region that fails one of them deciding;
4. every inter-region hop v→u carries what the placement reserves: bw = min(R[v,u], R[u,v]) > 0
   and a_j / (bw · 1e9) ≤ t_comp(placement) (SPEC §4, Alg. 1 line 13; §16 with GPU types).

The core's fifth check, a returned GPU count that is not the sum of the allocation, has no
counterpart here: a twin returns only the path and the counts.
"""

from __future__ import annotations

import operator

from bacepipe.errors import InputError
from bacepipe.sim.model import reservation_gbps, stage_time_s


class BadDecision(InputError):
    """A part's decision broke a check of this module: ``field`` names the scheduler,
    ``problem`` starts ``placed job <j> ('<name>')`` and ends with the SPEC section, ``job`` is
    j."""

    def __init__(self, field: str, problem: str, job: int):
        super().__init__(field, problem)
        self.job = job

    def __reduce__(self):  # pickles across worker processes (loky, dask)
        return (type(self), (self.field, self.problem, self.job))


def _apart(a: float, b: float) -> tuple[str, str]:
    """``a`` and ``b`` with the fewest significant digits (≥ 3) that tell them apart."""
    for digits in range(3, 18):
        x, y = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if x != y:
            return x, y
    return repr(a), repr(b)


def decision_problem(sim, j: int, placed) -> str | None:
    """The first check job j's decision ``placed`` (path, GPUs per path region) fails on the
    state of ``sim`` (a :class:`~bacepipe.sim.reference.ReferenceRun`), as the phrase that
    follows "placed job j ('name')", with its numbers and SPEC section; None when it passes."""
    scenario, state, jm = sim.scenario, sim.state, sim.models[j]
    regions = scenario.regions
    try:
        path = [operator.index(r) for r in placed[0]]
        counts = [int(n) for n in placed[1]]
        if len(path) != len(counts):
            raise ValueError
    except (TypeError, ValueError, IndexError):
        return (f"as {placed!r}, not a path of region indices with a GPU count for each "
                "(SPEC §3)")
    if not path:
        return "on an empty path (SPEC §3)"
    if len(path) > len(regions):
        return f"on a path of {len(path)} regions but the cluster has {len(regions)} (SPEC §3)"
    if sum(counts) > jm.k_star:
        return f"with {sum(counts)} GPUs but K* is {jm.k_star} (SPEC §15)"
    seen = set()
    for r, n in zip(path, counts, strict=True):
        if not 0 <= r < len(regions):
            return f"on region index {r} but the cluster has {len(regions)} regions (SPEC §3)"
        if r in seen:
            return f"on region {regions[r].name!r} twice on the path (SPEC §3)"
        seen.add(r)
        if n < 1:
            return f"on region {regions[r].name!r} with {n} GPUs, fewer than 1 (SPEC §3)"
        if n > state.free[r]:
            return f"on region {regions[r].name!r} with {n} GPUs but it has {state.free[r]} " \
                   "free (SPEC §4)"
    tc = stage_time_s(jm, scenario, path, counts)
    for v, u in zip(path[:-1], path[1:], strict=True):
        bandwidth = state.hop_gbps(v, u)
        if not (bandwidth > 0 and jm.activation_bits / (bandwidth * 1e9) <= tc):
            have, need = _apart(bandwidth, reservation_gbps(jm, scenario, path, counts))
            hops = "→".join(regions[r].name for r in path)
            return (f"on path {hops}: hop {regions[v].name}→{regions[u].name} has {have} Gbit/s "
                    f"residual but a pipeline of {sum(counts)} GPUs needs {need} Gbit/s "
                    "(SPEC §4)")
    return None


def check_decision(sim, j: int, placed, scheduler: str) -> None:
    """Raise :class:`BadDecision` (field ``scheduler <name>``) when job j's decision fails a
    check (:func:`decision_problem`)."""
    problem = decision_problem(sim, j, placed)
    if problem is not None:
        raise BadDecision(f"scheduler {scheduler}", f"placed job {j} "
                          f"({sim.scenario.jobs[j].name!r}) {problem}", j)
