"""LDF placement (SPEC §7): the region with the most free GPUs (ties: cheaper, then index);
n = min(K, G_r)."""

from bacepipe.core.placement import largest_visible, place_in_region
from bacepipe.policies.api import placement_kernel
from bacepipe.sim.model import largest


@placement_kernel
def kernel(job, k, cluster, scratch, allocate, out):
    return place_in_region(largest_visible(cluster), k, cluster, allocate, out)


def twin(state, jm, k, prices, allocate):
    r = largest(state, prices)
    if r is None:
        return None
    return [r], allocate([r], min(k, state.free[r]), state.free, prices)
