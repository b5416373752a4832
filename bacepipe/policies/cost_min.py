"""Cost-Min allocator (SPEC §7, Alg. 2): one GPU per path region, then the surplus to path regions
in ascending price (ties: path order), each up to its free GPUs."""

from bacepipe.policies.api import allocator_kernel


@allocator_kernel
def kernel(path, plen, g, cluster, alloc):
    free, price = cluster.free, cluster.price
    for p in range(plen):
        alloc[path[p]] = 1
    left = g - plen
    while left > 0:
        # Selection by repeated minimum keeps ties in path order; once topped up a region has
        # alloc > 1 and is never chosen again.
        best = -1
        for p in range(plen):
            r = path[p]
            if alloc[r] == 1 and free[r] > 1 and (best < 0 or price[r] < price[best]):
                best = r
        if best < 0:
            break
        n = min(free[best] - 1, left)
        alloc[best] += n
        left -= n


def twin(path, g, free, prices):
    counts = [1] * len(path)
    remaining = g - len(path)
    for pos in sorted(range(len(path)), key=lambda pos: (prices[path[pos]], pos)):
        if remaining == 0:
            break
        add = min(free[path[pos]] - 1, remaining)
        counts[pos] += add
        remaining -= add
    return counts
