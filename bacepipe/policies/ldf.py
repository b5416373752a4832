"""LDF placement (SPEC §7): the region with the most free GPUs (ties: cheaper, then index);
n = min(K, G_r)."""

from bacepipe.core.placement import largest_visible
from bacepipe.policies.api import placement_kernel
from bacepipe.sim.reference import largest


@placement_kernel
def kernel(job, k, cluster, work, allocate, out):
    r = largest_visible(cluster)
    if r < 0:
        return 0, 0
    out.path[0] = r
    g = min(k, cluster.free[r])
    allocate(out.path, 1, g, cluster, out.alloc)
    return 1, g


def twin(state, jm, k, prices, allocate):
    r = largest(state, prices)
    if r is None:
        return None
    return [r], allocate([r], min(k, state.free[r]), state.free, prices)
