"""Properties of the placement kernels (SPEC §7): Alg. 2 is the cheapest allocation of its path,
phase 1 picks the cheapest region that fits K*, the uniform allocator spreads evenly."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bacepipe.core.model import C_ACT_BITS, C_FLOP, C_KSTAR, C_OVERHEAD_S, C_WORK, N_CONST
from bacepipe.policies import cost_min, fill, pathfinder, uniform
from bacepipe.policies.api import Cluster, Decision, make_work

A_COST_MIN, A_FILL, A_UNIFORM = cost_min.kernel, fill.kernel, uniform.kernel

small_paths = st.lists(st.tuples(st.integers(1, 6), st.sampled_from([0.1, 0.2, 0.2, 0.3, 0.5])),
                       min_size=1, max_size=4)


def _alloc(allocate, free, price, path, g):
    out = np.zeros(len(free), dtype=np.int64)
    cluster = Cluster(free, np.zeros((len(free), len(free))), np.asarray(price, dtype=float),
                      np.ones(len(free)))
    allocate(np.asarray(path, dtype=np.int64), len(path), g, cluster, out)
    return out


@settings(max_examples=200, deadline=None)
@given(small_paths, st.data())
def test_cost_min_is_cheapest_for_its_path(regions, data):
    free = np.array([g for g, _ in regions], dtype=np.int64)
    price = np.array([p for _, p in regions])
    path = list(range(len(regions)))
    g = data.draw(st.integers(len(path), int(free.sum())))
    got = _alloc(A_COST_MIN, free, price, path, g)
    assert got.sum() == g and (got >= 1).all() and (got <= free).all()
    best = min(
        sum(n * p for n, p in zip(ns, price, strict=True))
        for ns in itertools.product(*[range(1, f + 1) for f in free]) if sum(ns) == g)
    assert np.isclose((got * price).sum(), best, rtol=1e-12)


@settings(max_examples=200, deadline=None)
@given(small_paths, st.data())
def test_uniform_is_as_even_as_capacities_allow(regions, data):
    free = np.array([g for g, _ in regions], dtype=np.int64)
    path = list(range(len(regions)))
    g = data.draw(st.integers(len(path), int(free.sum())))
    got = _alloc(A_UNIFORM, free, np.ones(len(free)), path, g)
    assert got.sum() == g and (got >= 1).all() and (got <= free).all()
    # no region that could take more sits two or more below another region
    for r in path:
        if got[r] < free[r]:
            assert got.max() - got[r] <= 1
    if g == free.sum():
        assert (got == free).all()


@settings(max_examples=100, deadline=None)
@given(small_paths, st.data())
def test_fill_fills_in_path_order(regions, data):
    free = np.array([g for g, _ in regions], dtype=np.int64)
    path = list(range(len(regions)))[::-1]
    g = data.draw(st.integers(1, int(free.sum())))
    got = _alloc(A_FILL, free, np.ones(len(free)), path, g)
    left = g
    for r in path:
        assert got[r] == min(free[r], left)
        left -= got[r]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 100), min_size=1, max_size=8),
       st.lists(st.sampled_from([0.1, 0.15, 0.2, 0.3]), min_size=8, max_size=8),
       st.integers(1, 80))
def test_phase_one_picks_cheapest_region_that_fits(free, prices, kstar):
    n = len(free)
    free = np.array(free, dtype=np.int64)
    price = np.array(prices[:n])
    const = np.zeros(N_CONST)
    const[C_KSTAR], const[C_WORK], const[C_OVERHEAD_S], const[C_ACT_BITS] = kstar, 1.0, 0.0, 1e6
    const[C_FLOP] = 1.0  # W on a GPU of speed 1 (the Cluster's speeds below)
    resid = np.full((n, n), 10.0)
    out = Decision(np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64))
    path, alloc = out
    plen, g = pathfinder.kernel(const, kstar, Cluster(free, resid, price, np.ones(n)),
                                make_work(n, 1, 1).scratch,
                                cost_min.kernel, out)
    fitting = [r for r in range(n) if free[r] >= kstar]
    if fitting:
        cheapest = min(fitting, key=lambda r: (price[r], r))
        assert (plen, g, path[0], alloc[cheapest]) == (1, kstar, cheapest, kstar)
    elif free.sum():
        # phase 2: no single region fits, so a path of several regions or fewer GPUs
        assert 1 <= g <= kstar and (plen > 1 or g < kstar)
    else:
        assert g == 0
