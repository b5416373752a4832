"""Fill allocator (SPEC §7, CR-LCF and CR-LDF): the path in order, each region up to its free
GPUs, until g GPUs are placed."""

from bacepipe.policies.api import allocator_kernel


@allocator_kernel
def kernel(path, plen, g, cluster, alloc):
    left, free = g, cluster.free
    for p in range(plen):
        r = path[p]
        n = min(free[r], left)
        alloc[r] = n
        left -= n


def twin(path, g, free, prices):
    counts, remaining = [], g
    for r in path:
        n = min(free[r], remaining)
        counts.append(n)
        remaining -= n
    return counts
