"""FCFS ordering (SPEC §6): by arrival, then job index (a static key)."""

from bacepipe.core.model import C_ARRIVAL_S
from bacepipe.policies.api import ordering_kernel

#: The key of a job never changes while it waits.
STATIC = True


@ordering_kernel
def kernel(jobs, pending, n_pending, alpha, keys):
    for i in range(n_pending):
        j = pending[i]
        keys[j] = jobs[j, C_ARRIVAL_S]


def twin(pending, models, arrivals_s, alpha):
    return sorted(pending, key=lambda j: (arrivals_s[j], j))
