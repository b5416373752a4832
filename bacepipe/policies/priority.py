"""BACE-Pipe's priority ordering (SPEC §6, Eq. 9–12): over the jobs pending at that moment,
I_j = E_j(1) / max_k E_k(1), D_j = b_j / max_k b_k, priority_j = (1 − α)(1 − I_j) + α(1 − D_j);
highest priority first, ties by arrival, then index (exact float compares)."""

from bacepipe.core.model import C_BSTAR, C_E1
from bacepipe.policies.api import ordering_kernel

#: Keys depend on α and on which jobs are pending: recomputed after every start.
STATIC = False


@ordering_kernel
def kernel(jobs, pending, n_pending, alpha, keys):
    max_e1, max_b = 0.0, 0.0
    for i in range(n_pending):
        j = pending[i]
        max_e1 = max(max_e1, jobs[j, C_E1])
        max_b = max(max_b, jobs[j, C_BSTAR])
    for i in range(n_pending):
        j = pending[i]
        intensity = jobs[j, C_E1] / max_e1
        sensitivity = jobs[j, C_BSTAR] / max_b
        keys[j] = -((1.0 - alpha) * (1.0 - intensity) + alpha * (1.0 - sensitivity))


def twin(pending, models, arrivals_s, alpha):
    e_max = max(models[j].exec_1gpu_s for j in pending)
    b_max = max(models[j].b_star_bps for j in pending)

    def key(j):
        urgency = models[j].exec_1gpu_s / e_max
        demand = models[j].b_star_bps / b_max
        return (-((1 - alpha) * (1 - urgency) + alpha * (1 - demand)), arrivals_s[j], j)

    return sorted(pending, key=key)
