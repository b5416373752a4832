"""The tables the batched core keeps across the topologies of a worker — the memos of each job's
K* search and of its search for SPEC §15's (ℓ_j, a_j), and the sums of intra-region hops — give,
bit for bit, what computing afresh gives. (No differential test sees them: the twin has none.)"""

import numpy as np

from bacepipe.core.bounds import N_SOLO_MEMO
from bacepipe.core.bounds import lower_bound_h as lower_bound_kernel
from bacepipe.core.model import (
    C_INTRA_S,
    N_CONST,
    N_KSTAR_MEMO,
    fill_hop_sums,
    job_constants,
    placement_iter_time,
)
from bacepipe.core.structs import HOP_SUM_ROWS
from bacepipe.model.generate import generate_batch


def test_memoized_searches_match_fresh_ones():
    """The batched core memoizes each job's K* search (job_constants) and its search for
    (ℓ_j, a_j) (lower_bound_h) across the topologies of a worker, keyed by what each search reads.
    On a sequence of job sets drawn from few values (so keys repeat, whole or in part: the same
    model with another GPU total, memory minimum or r_max), every result with the memo equals
    the one computed afresh, bit for bit."""
    rng = np.random.default_rng(3)
    n_jobs = 6
    hw = generate_batch("random", 0, [0]).hardware.as_array()
    kstar_memo = np.full((n_jobs, N_KSTAR_MEMO), np.nan)
    solo_memo = np.full((n_jobs, N_SOLO_MEMO), np.nan)
    hits = 0
    models = np.array([(7.0, 32, 4096, 16), (13.0, 40, 5120, 32), (70.0, 80, 8192, 16)])
    for _ in range(400):
        m = models[rng.integers(len(models), size=n_jobs)]
        args = (m[:, 0].copy(), m[:, 1].astype(np.int64), m[:, 2].astype(np.int64),
                m[:, 3].astype(np.int64), rng.choice([10_000, 20_000], n_jobs), np.ones(n_jobs),
                np.zeros(n_jobs), int(rng.choice([24, 60, 400])), bool(rng.integers(2)))
        ref = (154.8, float(rng.choice([48.0, 80.0])))
        fresh, memoized = np.zeros((n_jobs, N_CONST)), np.zeros((n_jobs, N_CONST))
        before = kstar_memo.copy()
        bad = job_constants(hw, ref, *args, fresh)
        assert job_constants(hw, ref, *args, memoized, kstar_memo) == bad
        if bad >= 0:
            continue
        np.testing.assert_array_equal(memoized, fresh)
        hits += int((kstar_memo == before).all(axis=1).sum())
        r_max = float(rng.choice([100.0, 150.0]))
        scratch = (np.empty(N_CONST), np.empty(n_jobs))
        assert lower_bound_kernel(fresh, r_max, args[7], *scratch, solo_memo) == \
            lower_bound_kernel(fresh, r_max, args[7], *scratch)
    assert hits > 100  # the memo was used, not only filled


def test_hop_sums_match_adding_hop_by_hop():
    """Eq. 1 of a placement reads its first region's inner hops from ``hop_sums`` when the job's
    hop time has a row: the same float as adding them one by one (an empty table), on random
    placements of jobs whose hop times have rows, of jobs beyond the table's rows, and of one
    region's K* GPUs (the table's last column)."""
    rng = np.random.default_rng(11)
    n_regions, max_kstar = 5, 40
    empty = np.full((0, max_kstar + 1), np.nan)
    hop_sums = np.full((HOP_SUM_ROWS, max_kstar + 1), np.nan)
    with_row = without_row = 0
    for _ in range(60):
        const = np.zeros((HOP_SUM_ROWS + 4, N_CONST))
        const[:, C_INTRA_S] = rng.choice(rng.uniform(1e-4, 1e-2, 10), len(const))
        const[:, :C_INTRA_S] = rng.uniform(0.5, 5.0, (len(const), C_INTRA_S))
        fill_hop_sums(hop_sums, const)
        links = rng.uniform(1.0, 100.0, (n_regions, n_regions))
        latency = rng.uniform(0.0, 0.05, (n_regions, n_regions))
        for job in const:
            has_row = job[C_INTRA_S] in hop_sums[:, 0]
            with_row, without_row = with_row + has_row, without_row + (not has_row)
            plen = int(rng.integers(1, n_regions + 1))
            path = rng.permutation(n_regions)
            alloc = np.zeros(n_regions, np.int64)
            alloc[path[:plen]] = rng.integers(1, max_kstar // plen + 1, plen)
            if plen == 1 and rng.random() < 0.3:
                alloc[path[0]] = max_kstar
            tc = float(rng.uniform(0.01, 1.0))
            assert placement_iter_time(job, path, plen, alloc, links, latency, tc, hop_sums) == \
                placement_iter_time(job, path, plen, alloc, links, latency, tc, empty)
    assert with_row > 300 and without_row > 0
