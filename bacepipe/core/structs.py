"""The structures a scheduler part sees (the contract of :mod:`bacepipe.policies.api`), kept here
so that the event loop and the shared kernels use them without importing the plug-in API."""

from typing import NamedTuple

import numpy as np

from bacepipe.core.jit import kernel
from bacepipe.core.model import N_CONST


class Cluster(NamedTuple):
    """The residual state a decision sees (SPEC §4).

    free : int64[R]        free GPUs per region.
    resid : float64[R, R]  residual bandwidth u→v, Gbit/s.
    price : float64[R]     what price-based choices compare, at the decision time (SPEC §12
                           time-of-use): $/kWh, or with GPU types the price per unit of work
                           π_r = P_r · power_r / s_r (SPEC §16).
    speed : float64[R]     s_r, FLOP/s of one GPU of the region's type (equal without types).
    """

    free: np.ndarray
    resid: np.ndarray
    price: np.ndarray
    speed: np.ndarray


class Decision(NamedTuple):
    """A placement: ``path`` int64[R] (region indices in pipeline order, the first plen count)
    and ``alloc`` int64[R] (GPUs per region index; only path regions are read)."""

    path: np.ndarray
    alloc: np.ndarray


class Scratch(NamedTuple):
    """The arrays a placement may overwrite (kept apart from :class:`Work`: a placement's call is
    not inlined, and every array of its arguments is passed by value).

    path, alloc : int64[R]   a second placement (e.g. Pathfinder's candidates).
    in_path : bool[R]        membership of a growing path.
    by_price : int64[R]      a list of regions (a price order, the visible regions).
    hop, hop_ready : float64[R, R], bool[R]   hop bandwidths between visible regions, rows
                             filled on use (:func:`bacepipe.core.placement.grow_path`).
    walk_* : the walk cache of :func:`bacepipe.core.placement.walk_slot`, per slot (WALK_SLOTS):
      walk_regions : int64[S, R + 2]   the visible regions, how many (col 0; −1: empty), when
                                       last used (col 1), then the regions from col 2.
      walk_hop : float64[S, R, R]      hop bandwidths between them (by position).
      walk_rank : int64[S, R, R], walk_scans : int64[S, R]   rows ranked widest first once
                                       scanned often enough (scans so far; −1: ranked).
      walk : int64[S, R, R], walk_len : int64[S, R]          each start's walk (positions).
    price_order : int64[R]   the regions by ascending unit price (ties: lower index), valid
    price_ready : int64[1]   when [0] is 1: the loop orders them as a run of flat prices
                             starts (:func:`bacepipe.core.placement.order_by_price`), and every
                             state of the run, live or projected, shares them; read-only for
                             placements.
    """

    path: np.ndarray
    alloc: np.ndarray
    in_path: np.ndarray
    by_price: np.ndarray
    hop: np.ndarray
    hop_ready: np.ndarray
    walk_regions: np.ndarray
    walk_hop: np.ndarray
    walk_rank: np.ndarray
    walk_scans: np.ndarray
    walk: np.ndarray
    walk_len: np.ndarray
    price_order: np.ndarray
    price_ready: np.ndarray


class Work(NamedTuple):
    """Scratch arrays a start rule may overwrite, so that no decision allocates.

    scratch : Scratch                 what placements get (see :class:`Scratch`).
    trial_path, trial_alloc : int64[R]  a third placement (projections of SPEC §13/§14).
    free, price : int64[R], float64[R]   a projected copy of the state (SPEC §13), written only
    resid : float64[R, R]             by :func:`~bacepipe.core.projection.begin_projection` and
    users : int64[R, R]               ``advance_projection`` (``users``: jobs holding each link
                                      direction in the copy).
    stale : int64[R²]                 the link directions (a·R + b) changed, in the live state or
    n_stale : int64[1]                the copy, since the copy was last made; −1: all of them.
    order : int64[J]                  running jobs by end time.
    options : float64[6 (J + 1), 6]   options of a start rule (SPEC §14), columns ``OPT_*``.
    now_path, now_alloc : int64[6, R]  the placements of the options at the decision's own
                                      time (the first 6 rows of ``options``), to start on.
    row : float64[N_CONST]            a scratch row of job constants.
    least : float64[S, K + 1]         ℓ_j / I_j per GPU cap up to K* of the job, cached in each
                                      of S slots (K: the largest K* of the batch;
                                      :func:`bacepipe.core.projection.least_exec_table`).
    least_job : int64[S]              the job (or its class's first) whose table each slot
                                      holds, −1 for none.
    version : int64[5]                [0] the version of the state a decision sees (the loop's
                                      count of starts, releases and price changes; −1 when a
                                      part may read more than the state), [1] the last version
                                      of this workspace (versions never repeat across its runs),
                                      [2] the run's first version, [3] the version that began
                                      the state's chain and [4] how many jobs the chain has
                                      released since: from a start (or the run's beginning) on,
                                      releases of one job at a time leave every later epoch of a
                                      projection (SPEC §13) in the same state, so a projection's
                                      memo is kept per chain, in row (jobs released) + (the
                                      epoch's index into ``order``).
    job_class, class_run : int64[J]   a job's offer class (:func:`~bacepipe.core.projection.
                                      offer_class`, −1: none) and the run (its first version)
                                      that found it.
    classes : int64[M + 2]            a job of each of the run's classes, M at most
                                      (:data:`MEMO_CLASSES`); [M] how many, [M + 1] their run.
    memo_version : int64[J, M + 1]    per epoch of a projection (its row, see ``version``) and
    memo_gpus : int64[J, M + 1]       class, the chain an offer was memoized on, its GPUs and
    memo_iter_s : float64[J, M]       its iteration time; column M: the epoch's free GPUs.
    now_version : int64[M]            per class, the version its offer on the live state was
    now_size : int64[M, 2]            memoized at, its (plen, g), path and GPUs per path
    now_regions, now_gpus : int64[M, R]  position (:func:`~bacepipe.core.projection.recall_offer`,
                                      ``keep_offer``).
    hold_version : int64[M]           per class, the version at which a start rule found an
    hold : float64[M, 3]              epoch that holds its jobs back, and (τ, t_iter of the
                                      class's offer at τ, t_iter of its offer now): on that
                                      version a job of I_j iterations is held at time t when
                                      τ + I_j·t_iter(τ) < t + I_j·t_iter(now) (SPEC §13;
                                      :func:`~bacepipe.core.projection.certified_hold`).
    plan_stamp : int64[P + 1, M, 6]   per epoch of a projection (its row, below P =
    plan_offer : float64[P + 1, M, 6, 3]  :data:`PLAN_MEMO_ROWS`) or the live state (row P),
                                      class and target K′ of ``spt_plan`` (SPEC §14, by its
                                      index in the targets), the chain (live: the version) the
                                      offer was memoized on and its (GPUs, t_iter, Σ GPUs ·
                                      price of its path: :func:`~bacepipe.core.projection.
                                      weighted_price`).
    lane_hold_at : int64[M, 2]        per class, the version at which ``spt_plan`` certified
    lane_hold : float64[M, 3]         that the younger jobs of a lane wait, and the job it
                                      decided; (its time t, the slack of the option that makes
                                      them wait, the margin the slack must keep;
                                      :func:`~bacepipe.core.projection.lane_hold`).
    """

    scratch: Scratch
    trial_path: np.ndarray
    trial_alloc: np.ndarray
    free: np.ndarray
    price: np.ndarray
    resid: np.ndarray
    users: np.ndarray
    stale: np.ndarray
    n_stale: np.ndarray
    order: np.ndarray
    options: np.ndarray
    now_path: np.ndarray
    now_alloc: np.ndarray
    row: np.ndarray
    least: np.ndarray
    least_job: np.ndarray
    version: np.ndarray
    job_class: np.ndarray
    class_run: np.ndarray
    classes: np.ndarray
    memo_version: np.ndarray
    memo_gpus: np.ndarray
    memo_iter_s: np.ndarray
    now_version: np.ndarray
    now_size: np.ndarray
    now_regions: np.ndarray
    now_gpus: np.ndarray
    hold_version: np.ndarray
    hold: np.ndarray
    plan_stamp: np.ndarray
    plan_offer: np.ndarray
    lane_hold_at: np.ndarray
    lane_hold: np.ndarray


class Run(NamedTuple):
    """What a start rule sees of the run (read-only for parts).

    jobs : float64[J, N_CONST]   per-job constants (``C_*`` of :mod:`bacepipe.core.model`).
    state : int64[J]             ``FUTURE``, ``PENDING``, ``RUNNING`` or ``DONE`` below.
    end_s : float64[J]           end times of started jobs, s.
    start_seq : int64[J]         order in which started jobs started (0, 1, ...).
    path, path_gpus : int64[J, W]  placements of started jobs: regions in pipeline order and the
                                 GPUs on each, the first plen[j]; W = min(R, the most layers of
                                 any job), since a placement holds at most K*_j ≤ layers GPUs, at
                                 least one per region (so memory is O(J + R²)); plen : int64[J].
    reserved : float64[J]        Gbit/s each started job holds per hop direction.
    running : int64[J]           the running jobs, the first ``n_running[0]``, by end time then
                                 start order, the latest first (the loop keeps it so).
    n_running : int64[1]
    users : int64[R, R]          running jobs holding each link direction.
    links, latency_s : float64[R, R]  nominal bandwidth (Gbit/s) and one-way latency (s).
    price, utc_offset_h : float64[R]; profile : float64[R, 24]   prices (SPEC §12).
    time_of_use : bool; power_kw : float; plan_slack : float (SPEC §14's ε).
    fastest_hop_gbps : float     r_max of SPEC §15 (what bounds any placement's execution).
    speed, gpu_power_kw, gpu_mem_gb : float64[R]   the regions' GPU types (SPEC §16).
    hetero : bool                some region names a GPU type; memory_on : bool (SPEC §12).
    hop_sums : float64[H, K + 1]  per distinct intra-region hop time h of the jobs (key in column
                                 0), h added 0..K − 1 times to 0.0, one by one: Eq. 1's inner
                                 hops of a path's first region, looked up instead of added
                                 (:func:`~bacepipe.core.model.placement_iter_time`).
    """

    jobs: np.ndarray
    state: np.ndarray
    end_s: np.ndarray
    start_seq: np.ndarray
    path: np.ndarray
    path_gpus: np.ndarray
    plen: np.ndarray
    reserved: np.ndarray
    running: np.ndarray
    n_running: np.ndarray
    users: np.ndarray
    links: np.ndarray
    latency_s: np.ndarray
    price: np.ndarray
    profile: np.ndarray
    utc_offset_h: np.ndarray
    time_of_use: bool
    power_kw: float
    plan_slack: float
    fastest_hop_gbps: float
    speed: np.ndarray
    gpu_power_kw: np.ndarray
    gpu_mem_gb: np.ndarray
    hetero: bool
    memory_on: bool
    hop_sums: np.ndarray


#: Job states of :attr:`Run.state`.
FUTURE, PENDING, RUNNING, DONE = 0, 1, 2, 3
#: Options a start rule may weigh per epoch (SPEC §14: q = 10 .. 5).
OPTIONS_PER_EPOCH = 6
#: Columns of :attr:`Work.options`.
OPT_TAU, OPT_JCT, OPT_COST, OPT_GPUS, OPT_Q, OPT_PLEN = range(6)
#: States whose Pathfinder walks a placement's scratch keeps (:attr:`Scratch.walk`): the live
#: state and the projected one a start rule decides on in turn.
WALK_SLOTS = 2
#: Distinct intra-region hop times a run keeps summed (:attr:`Run.hop_sums`; the paper's models
#: have five).
HOP_SUM_ROWS = 8
#: Jobs whose ℓ_j tables :attr:`Work.least` keeps at once (job j in slot j mod this).
LEAST_SLOTS = 16
#: Offer classes a run memoizes projected offers for (:attr:`Work.memo_gpus`); jobs of further
#: classes are decided without the memo.
MEMO_CLASSES = 8
#: Jobs a run needs before it memoizes offers: with fewer, a queue seldom holds two jobs of one
#: class and the bookkeeping costs more than it saves (on the paper's 8 jobs it cost ~10 %).
MEMO_MIN_JOBS = 32
#: Projected epochs per chain whose ``spt_plan`` offers :attr:`Work.plan_offer` keeps (rows are
#: jobs released on the chain + the epoch's index; a chain restarts at every start, so rows
#: beyond are rare and decided without the memo). Bounded: a row holds 48 offers; a workspace
#: for J jobs has min(J, this) rows.
PLAN_MEMO_ROWS = 1024


def make_cluster(n_regions: int) -> Cluster:
    return Cluster(np.zeros(n_regions, np.int64), np.zeros((n_regions, n_regions)),
                   np.zeros(n_regions), np.ones(n_regions))


def make_decision(n_regions: int) -> Decision:
    return Decision(np.zeros(n_regions, np.int64), np.zeros(n_regions, np.int64))


@kernel(allocates=True)
def make_work(n_regions, n_jobs, max_kstar):
    """Fresh scratch arrays for R regions, J jobs and K* up to ``max_kstar`` (called from Python
    and compiled code)."""
    r = n_regions
    plan_rows = min(PLAN_MEMO_ROWS, n_jobs) + 1  # used only from MEMO_MIN_JOBS jobs on
    scratch = Scratch(np.zeros(r, np.int64), np.zeros(r, np.int64), np.zeros(r, np.bool_),
                      np.zeros(r, np.int64), np.zeros((r, r)), np.zeros(r, np.bool_),
                      np.full((WALK_SLOTS, r + 2), -1, np.int64),
                      np.zeros((WALK_SLOTS, r, r)), np.zeros((WALK_SLOTS, r, r), np.int64),
                      np.zeros((WALK_SLOTS, r), np.int64), np.zeros((WALK_SLOTS, r, r), np.int64),
                      np.zeros((WALK_SLOTS, r), np.int64), np.arange(r),
                      np.zeros(1, np.int64))
    return Work(scratch, np.zeros(r, np.int64), np.zeros(r, np.int64),
                np.zeros(r, np.int64), np.zeros(r), np.zeros((r, r)), np.zeros((r, r), np.int64),
                np.zeros(r * r, np.int64), np.full(1, -1, np.int64), np.zeros(n_jobs, np.int64),
                np.zeros((OPTIONS_PER_EPOCH * (n_jobs + 1), 6)),
                np.zeros((OPTIONS_PER_EPOCH, r), np.int64),
                np.zeros((OPTIONS_PER_EPOCH, r), np.int64),
                np.zeros(N_CONST), np.zeros((LEAST_SLOTS, max_kstar + 1)),
                np.full(LEAST_SLOTS, -1, np.int64), np.full(5, -1, np.int64),
                np.full(n_jobs, -1, np.int64), np.full(n_jobs, -1, np.int64),
                np.full(MEMO_CLASSES + 2, -1, np.int64),
                np.full((n_jobs, MEMO_CLASSES + 1), -1, np.int64),
                np.zeros((n_jobs, MEMO_CLASSES + 1), np.int64),
                np.zeros((n_jobs, MEMO_CLASSES)), np.full(MEMO_CLASSES, -1, np.int64),
                np.zeros((MEMO_CLASSES, 2), np.int64), np.zeros((MEMO_CLASSES, r), np.int64),
                np.zeros((MEMO_CLASSES, r), np.int64), np.full(MEMO_CLASSES, -1, np.int64),
                np.zeros((MEMO_CLASSES, 3)),
                np.full((plan_rows, MEMO_CLASSES, OPTIONS_PER_EPOCH), -1, np.int64),
                np.zeros((plan_rows, MEMO_CLASSES, OPTIONS_PER_EPOCH, 3)),
                np.full((MEMO_CLASSES, 2), -1, np.int64), np.zeros((MEMO_CLASSES, 3)))
