"""The one place that names every scheduler (SPEC §7).

A scheduler is composed of an ordering, a placement policy and an allocator; no scheduler is a copy
of another. The integer codes are what the numba core dispatches on; the reference twin reads the
same table by name.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bacepipe.errors import InputError

ORDERINGS = ("fcfs", "priority")
PLACEMENTS = ("lcf", "ldf", "cr_lcf", "cr_ldf", "pathfinder")
ALLOCATORS = ("fill", "cost_min", "uniform")


class Scheduler(NamedTuple):
    ordering: str
    placement: str
    allocator: str


#: SPEC §7 and §IV-E. LCF and LDF place on one region, where every allocator gives min(K, G_r).
SCHEDULER_PARTS = {
    "bace_pipe": Scheduler("priority", "pathfinder", "cost_min"),
    "lcf": Scheduler("fcfs", "lcf", "fill"),
    "ldf": Scheduler("fcfs", "ldf", "fill"),
    "cr_lcf": Scheduler("fcfs", "cr_lcf", "fill"),
    "cr_ldf": Scheduler("fcfs", "cr_ldf", "fill"),
    "bace_pipe_no_priority": Scheduler("fcfs", "pathfinder", "cost_min"),
    "bace_pipe_no_pathfinder": Scheduler("priority", "cr_ldf", "fill"),
    "bace_pipe_no_costmin": Scheduler("priority", "pathfinder", "uniform"),
}
SCHEDULERS = tuple(SCHEDULER_PARTS)


def check_schedulers(names, field: str = "scheduler") -> tuple[str, ...]:
    """The names as a tuple, or an InputError naming the first unknown one."""
    names = (names,) if isinstance(names, str) else tuple(names)
    if not names:
        raise InputError(field, "no scheduler given")
    for name in names:
        if not isinstance(name, str) or name not in SCHEDULER_PARTS:
            raise InputError(field, f"unknown scheduler {name!r} (known: {', '.join(SCHEDULERS)})")
    return names


def scheduler_codes(names) -> np.ndarray:
    """int64[S, 3]: (ordering, placement, allocator) codes of each scheduler, for the core."""
    parts = [SCHEDULER_PARTS[n] for n in check_schedulers(names)]
    return np.array([[ORDERINGS.index(p.ordering), PLACEMENTS.index(p.placement),
                      ALLOCATORS.index(p.allocator)] for p in parts], dtype=np.int64)
