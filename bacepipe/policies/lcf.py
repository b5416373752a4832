"""LCF placement (SPEC §7): the cheapest region with a free GPU (ties: lower index);
n = min(K, G_r)."""

from bacepipe.core.placement import cheapest_visible
from bacepipe.policies.api import placement_kernel
from bacepipe.sim.reference import visible


@placement_kernel
def kernel(job, k, cluster, work, allocate, out):
    r = cheapest_visible(cluster.free, cluster.price, 1)
    if r < 0:
        return 0, 0
    out.path[0] = r
    g = min(k, cluster.free[r])
    allocate(out.path, 1, g, cluster, out.alloc)
    return 1, g


def twin(state, jm, k, prices, allocate):
    regions = visible(state)
    if not regions:
        return None
    r = min(regions, key=lambda r: (prices[r], r))
    return [r], allocate([r], min(k, state.free[r]), state.free, prices)
