"""``validate=true``: replay every schedule of a chunk against the invariants of SPEC §4.

:func:`check_chunk` runs in the worker, on the batch and result that
:func:`~bacepipe.sweep.chunks.run_chunk` has just simulated, so the check parallelizes with the
simulation and nothing is simulated twice. Each (topology, scheduler) that finished is turned into
its SPEC §9 result dict (:func:`bacepipe.sim.run.result_dict`, the dict ``run_scenario`` returns)
and replayed by :func:`bacepipe.sim.invariants.check_schedule` against the topology's scenario
(:meth:`~bacepipe.model.batch.ScenarioBatch.scenario`). Runs recorded as unplaceable
(``unplaceable=record``) have no schedule and are skipped.
"""

from __future__ import annotations

from bacepipe.core import STATUS_OK, BatchResult
from bacepipe.errors import InvariantViolation
from bacepipe.model.batch import ScenarioBatch
from bacepipe.sim.invariants import check_schedule
from bacepipe.sim.run import result_dict


def check_chunk(batch: ScenarioBatch, result: BatchResult, start: int) -> None:
    """Replay every finished run of a chunk; raise on the first that breaks an invariant.

    Parameters
    ----------
    batch, result : the chunk's topologies and their simulation (T topologies × S schedulers).
    start : global index of the chunk's first topology (for the message).

    Raises
    ------
    InvariantViolation
        One line: ``topology <t>, <scheduler>: <first problem>`` (the problem names the job, or
        the region or link and the instant for a capacity violation), and how many more.
    """
    finished = result.status == STATUS_OK
    for t in range(batch.size):
        if not finished[t].any():
            continue
        scenario = batch.scenario(t)
        for s, scheduler in enumerate(result.schedulers):
            if not finished[t, s]:
                continue
            problems = check_schedule(scenario, result_dict(batch, result, t, s))
            if problems:
                more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
                raise InvariantViolation(f"topology {start + t}, {scheduler}: "
                                         f"invariant violated: {problems[0]}{more}")

