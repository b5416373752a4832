"""Properties of the placement kernels (SPEC §7): Alg. 2 is the cheapest allocation of its path,
phase 1 picks the cheapest region that fits K*, the uniform allocator spreads evenly; the
allocators and Pathfinder agree with their twins on tied prices and bandwidths."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from random_scenarios import SMALL_JOB
from tiers import examples

from bacepipe.core.model import C_ACT_BITS, C_FLOP, C_KSTAR, C_OVERHEAD_S, C_WORK, N_CONST
from bacepipe.core.placement import order_by_price, visible_by_price
from bacepipe.model.scenario import parse_scenario
from bacepipe.policies import cost_min, fill, pathfinder, uniform
from bacepipe.policies.api import Cluster, Decision, compiled, make_work
from bacepipe.sim.model import ClusterState, job_model

# Compiled as the registry compiles them (a direct call would compile another specialization).
A_COST_MIN, A_FILL, A_UNIFORM = (compiled(p.kernel) for p in (cost_min, fill, uniform))
PATHFINDER = compiled(pathfinder.kernel)

small_paths = st.lists(st.tuples(st.integers(1, 6), st.sampled_from([0.1, 0.2, 0.2, 0.3, 0.5])),
                       min_size=1, max_size=4)


def _alloc(allocate, free, price, path, g):
    out = np.zeros(len(free), dtype=np.int64)
    cluster = Cluster(free, np.zeros((len(free), len(free))), np.asarray(price, dtype=float),
                      np.ones(len(free)))
    allocate(np.asarray(path, dtype=np.int64), len(path), g, cluster, out)
    return out


@pytest.mark.breadth
@settings(max_examples=examples(200), deadline=None)
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


@pytest.mark.breadth
@settings(max_examples=examples(200), deadline=None)
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


@pytest.mark.breadth
@settings(max_examples=examples(100), deadline=None)
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


@pytest.mark.breadth
@settings(max_examples=examples(200), deadline=None)
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
    fitting = [r for r in range(n) if free[r] >= kstar]
    for ordered in (False, True):  # a scan, and the price order the loop keeps in flat runs
        scratch = make_work(n, 1, 1).scratch
        if ordered:
            order_by_price(price, scratch.price_order)
            scratch.price_ready[0] = 1
        out = Decision(np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64))
        path, alloc = out
        plen, g = PATHFINDER(const, kstar, Cluster(free, resid, price, np.ones(n)), scratch,
                            A_COST_MIN, out)
        if fitting:
            cheapest = min(fitting, key=lambda r: (price[r], r))
            assert (plen, g, path[0], alloc[cheapest]) == (1, kstar, cheapest, kstar)
        elif free.sum():
            # phase 2: no single region fits, so a path of several regions or fewer GPUs
            assert 1 <= g <= kstar and (plen > 1 or g < kstar)
        else:
            assert g == 0


@pytest.mark.breadth
@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from([0.1, 0.15, 0.2, 0.3])),
                min_size=1, max_size=40))
def test_price_orders_are_by_price_then_index(regions):
    free = np.array([g for g, _ in regions], dtype=np.int64)
    price = np.array([p for _, p in regions])
    by_price = sorted(range(len(regions)), key=lambda r: (price[r], r))
    scratch = make_work(len(regions), 1, 1).scratch
    order_by_price(price, scratch.price_order)
    assert list(scratch.price_order) == by_price
    for ordered in (0, 1):  # by insertion, and read off the run's order
        scratch.price_ready[0] = ordered
        count = visible_by_price(free, price, scratch)
        assert list(scratch.by_price[:count]) == [r for r in by_price if free[r] > 0]


# Kernels against their twins (SPEC's readable reading). Few free GPUs per region, prices and
# bandwidths drawn from short lists: ties in price order and in the widest hop, paths that take
# every region, and paths that stop at K*.
TIED_PRICES = st.sampled_from([0.1, 0.2, 0.2, 0.3])
TIED_GBPS = st.sampled_from([0.0, 0.05, 5.0, 20.0, 20.0, 80.0])


@pytest.mark.breadth
@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), TIED_PRICES), min_size=1, max_size=8), st.data())
def test_allocators_agree_with_their_twins(regions, data):
    free = np.array([g for g, _ in regions], dtype=np.int64)
    price = [p for _, p in regions]
    path = data.draw(st.permutations(range(len(regions))))
    g = data.draw(st.integers(len(path), int(free.sum())))
    for part in (cost_min, fill, uniform):
        got = _alloc(part.kernel, free, price, path, g)
        assert [int(got[r]) for r in path] == part.twin(path, g, list(free), price), part.__name__


@pytest.mark.breadth
@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.integers(1, 128), min_size=1, max_size=8), st.data())
def test_uniform_agrees_with_its_twin_on_large_regions(free, data):
    # random topologies hold up to 128 GPUs a region: the kernel bisects for x where the twin
    # counts up to it, and must land on the same x
    path = data.draw(st.permutations(range(len(free))))
    g = data.draw(st.integers(len(path), sum(free)))
    got = _alloc(uniform.kernel, np.array(free, dtype=np.int64), [1.0] * len(free), path, g)
    assert [int(got[r]) for r in path] == uniform.twin(path, g, free, [1.0] * len(free))


def _pathfinder_both(free, price, links, k, scratch=None):
    """Pathfinder's kernel and twin on one state: (path, GPUs per path region, g) of each; the
    kernel with ``scratch`` (and the walks it keeps) when given."""
    n = len(free)
    scn = parse_scenario({"regions": [{"name": f"R{r}", "gpus": free[r], "price": price[r]}
                                      for r in range(n)],
                          "links_gbps": links, "jobs": [SMALL_JOB]})
    jm = job_model(scn.jobs[0], scn.hardware, sum(free), scn.memory_model, 0)
    state = ClusterState(scn)
    const = np.zeros(N_CONST)
    const[C_ACT_BITS], const[C_FLOP], const[C_OVERHEAD_S] = \
        jm.activation_bits, jm.flop, jm.overhead_s
    cluster = Cluster(np.array(free, dtype=np.int64), np.array(state.residual),
                      np.array(price), np.array(state.speed))
    out = Decision(np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64))
    scratch = make_work(n, 1, 1).scratch if scratch is None else scratch
    plen, g = PATHFINDER(const, k, cluster, scratch, A_COST_MIN, out)
    path, counts = pathfinder.twin(state, jm, k, price, cost_min.twin)
    return ((list(out.path[:plen]), [int(out.alloc[r]) for r in out.path[:plen]], g),
            (path, counts, sum(counts)))


@pytest.mark.breadth
@settings(max_examples=examples(300), deadline=None)
@given(st.integers(2, 24), st.data())
def test_pathfinder_agrees_with_its_twin(n, data):
    free = data.draw(st.lists(st.integers(0, 5), min_size=n, max_size=n).filter(any))
    price = data.draw(st.lists(TIED_PRICES, min_size=n, max_size=n))
    links = [[0.0 if u == v else data.draw(TIED_GBPS) for v in range(n)] for u in range(n)]
    kernel, twin = _pathfinder_both(free, price, links, data.draw(st.integers(1, 40)))
    assert kernel == twin


def test_pathfinder_path_through_every_region_may_lose_on_price():
    # From R0 the widest hops take R2, then R1: every region, K = 10 of 11 GPUs, and the
    # one-GPU minimum puts a GPU on the dear R2 (avg 0.12). From R1 the path R1, R0 reaches 10
    # GPUs at 0.1: the search may stop early only when a path holds every free GPU.
    links = [[0, 50, 80], [50, 0, 50], [80, 50, 0]]
    kernel, twin = _pathfinder_both([5, 5, 1], [0.1, 0.1, 0.3], links, 10)
    assert kernel == twin == ([1, 0], [5, 5], 10)


@pytest.mark.breadth
@settings(max_examples=examples(150), deadline=None)
@given(st.integers(3, 16), st.data())
def test_pathfinder_walks_kept_across_states_change_nothing(n, data):
    # One scratch across a run of states as a start rule makes them: the same state again for
    # other targets, one link's bandwidth changed (the same visible regions), other free GPUs
    # (the same hops), a region emptied, an empty one refilled (visible again) — each must
    # place as a fresh search does.
    free = data.draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))
    price = data.draw(st.lists(TIED_PRICES, min_size=n, max_size=n))
    links = [[0.0 if u == v else data.draw(TIED_GBPS) for v in range(n)] for u in range(n)]
    scratch = make_work(n, 1, 1).scratch
    for _ in range(8):
        change = data.draw(st.sampled_from(["none", "link", "free", "empty", "refill"]))
        if change == "link":
            u, v = data.draw(st.permutations(range(n)))[:2]
            links[u][v] = data.draw(TIED_GBPS)
        elif change == "free":
            r = data.draw(st.integers(0, n - 1))
            free[r] = data.draw(st.integers(1, 5))
        elif change == "empty" and sum(f > 0 for f in free) > 1:
            free[data.draw(st.sampled_from([r for r in range(n) if free[r]]))] = 0
        elif change == "refill" and not all(free):
            free[data.draw(st.sampled_from([r for r in range(n) if not free[r]]))] = \
                data.draw(st.integers(1, 5))
        kernel, twin = _pathfinder_both(free, price, links, data.draw(st.integers(1, 30)),
                                        scratch)
        assert kernel == twin
