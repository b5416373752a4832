"""SPT ordering (SPEC §14): ascending best-case execution time E_j(K*_j), K*_j GPUs in one region
(ties by arrival, then index; a static key)."""

from bacepipe.core.model import C_ITERS, C_KSTAR, single_region_iter_time
from bacepipe.policies.api import ordering_kernel
from bacepipe.sim.model import single_region_time_s

STATIC = True


@ordering_kernel
def kernel(jobs, pending, n_pending, alpha, keys):
    for i in range(n_pending):
        j = pending[i]
        keys[j] = jobs[j, C_ITERS] * single_region_iter_time(jobs[j], int(jobs[j, C_KSTAR]))


def twin(pending, models, arrivals_s, alpha):
    def key(j):
        m = models[j]
        return (m.iterations * single_region_time_s(m, m.k_star), arrivals_s[j], j)

    return sorted(pending, key=key)
