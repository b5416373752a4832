"""The contract of a compiled scheduler part: the structures a part sees and one decorator per kind.

A part is a numba kernel with a fixed signature, compiled once (and cached on disk) when its
module is imported. The event loop keeps the parts of each kind in a tuple and calls them by
index, so adding a part never touches the loop. Parts read the state; only the loop changes it.

Kinds and signatures (every array C-contiguous; R regions, J jobs):

``@ordering_kernel``   ``f(jobs, pending, n_pending, alpha, keys) -> None``
    Write ``keys[j]`` for each ``j`` in ``pending[:n_pending]``; lower keys go first, ties by
    arrival, then index. ``jobs`` is float64[J, N_CONST] (columns ``C_*`` of
    :mod:`bacepipe.core.model`), ``alpha`` the reserved share of link capacity (Eq. 11).
``@placement_kernel``  ``f(job, k, cluster, work, allocate, out) -> (plen, g)``
    Place one job (``job``: its row of ``jobs``) aiming at ``k`` GPUs on ``cluster``; write the
    path (``out.path[:plen]``, region indices in pipeline order) and the GPUs per region
    (``out.alloc[r]`` for path regions) and return the path length and GPUs placed; g = 0 means
    nothing. ``allocate`` is the scheduler's allocator.
``@allocator_kernel``  ``f(path, plen, g, cluster, alloc) -> None``
    Spread g GPUs (plen <= g <= the path's free GPUs) over ``path[:plen]`` into ``alloc``.
``@start_rule_kernel`` ``f(j, t, run, cluster, work, place, allocate, out) -> (plen, g)``
    Decide whether pending job ``j`` starts at time ``t`` (s): write the placement to start on
    into ``out`` and return (plen, g), or return (0, 0) to skip it at this scan (it waits, or
    nothing fits). ``place`` is the scheduler's placement policy.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numba
import numpy as np
from numba import types
from numba.core.errors import NumbaExperimentalFeatureWarning

from bacepipe.core.jit import JIT_FLAGS, kernel

# Parts are first-class functions, which numba (0.60–0.68, tested) still calls experimental; the
# warning would break every command's one-line error output.
warnings.filterwarnings("ignore", category=NumbaExperimentalFeatureWarning)


class Cluster(NamedTuple):
    """The residual state a decision sees (SPEC §4).

    free : int64[R]        free GPUs per region.
    resid : float64[R, R]  residual bandwidth u→v, Gbit/s.
    price : float64[R]     $/kWh at the decision time (SPEC §12 time-of-use).
    """

    free: np.ndarray
    resid: np.ndarray
    price: np.ndarray


class Decision(NamedTuple):
    """A placement: ``path`` int64[R] (region indices in pipeline order, the first plen count)
    and ``alloc`` int64[R] (GPUs per region index; only path regions are read)."""

    path: np.ndarray
    alloc: np.ndarray


class Work(NamedTuple):
    """Scratch arrays a part may overwrite, so that no decision allocates.

    path, alloc : int64[R]            a second placement (e.g. Pathfinder's candidates).
    trial_path, trial_alloc : int64[R]  a third one (projections of SPEC §13/§14).
    in_path : bool[R]                 membership of a growing path.
    by_price : int64[R]               a region order.
    free, price : int64[R], float64[R]   a projected copy of the state (SPEC §13).
    resid : float64[R, R]
    users : int64[R, R]               jobs holding each link direction in the copy.
    order : int64[J]                  running jobs by end time.
    options : float64[6 (J + 1), 5]   options of a start rule (SPEC §14).
    """

    path: np.ndarray
    alloc: np.ndarray
    trial_path: np.ndarray
    trial_alloc: np.ndarray
    in_path: np.ndarray
    by_price: np.ndarray
    free: np.ndarray
    price: np.ndarray
    resid: np.ndarray
    users: np.ndarray
    order: np.ndarray
    options: np.ndarray


class Run(NamedTuple):
    """What a start rule sees of the run (read-only for parts).

    jobs : float64[J, N_CONST]   per-job constants (``C_*`` of :mod:`bacepipe.core.model`).
    state : int64[J]             ``FUTURE``, ``PENDING``, ``RUNNING`` or ``DONE`` below.
    end_s : float64[J]           end times of started jobs, s.
    start_seq : int64[J]         order in which started jobs started (0, 1, ...).
    path, alloc : int64[J, R]    placements of started jobs; plen : int64[J].
    reserved : float64[J]        Gbit/s each started job holds per hop direction.
    users : int64[R, R]          running jobs holding each link direction.
    links, latency_s : float64[R, R]  nominal bandwidth (Gbit/s) and one-way latency (s).
    price, utc_offset_h : float64[R]; profile : float64[R, 24]   prices (SPEC §12).
    time_of_use : bool; power_kw : float; plan_slack : float (SPEC §14's ε).
    """

    jobs: np.ndarray
    state: np.ndarray
    end_s: np.ndarray
    start_seq: np.ndarray
    path: np.ndarray
    alloc: np.ndarray
    plen: np.ndarray
    reserved: np.ndarray
    users: np.ndarray
    links: np.ndarray
    latency_s: np.ndarray
    price: np.ndarray
    profile: np.ndarray
    utc_offset_h: np.ndarray
    time_of_use: bool
    power_kw: float
    plan_slack: float


#: Job states of :attr:`Run.state`.
FUTURE, PENDING, RUNNING, DONE = 0, 1, 2, 3
#: Options a start rule may weigh per epoch (SPEC §14: q = 10 .. 5).
OPTIONS_PER_EPOCH = 6
#: Columns of :attr:`Work.options`.
OPT_TAU, OPT_JCT, OPT_COST, OPT_GPUS, OPT_Q = range(5)


def make_cluster(n_regions: int) -> Cluster:
    return Cluster(np.zeros(n_regions, np.int64), np.zeros((n_regions, n_regions)),
                   np.zeros(n_regions))


def make_decision(n_regions: int) -> Decision:
    return Decision(np.zeros(n_regions, np.int64), np.zeros(n_regions, np.int64))


@kernel
def make_work(n_regions, n_jobs):
    """Fresh scratch arrays for R regions and J jobs (called from Python and compiled code)."""
    r = n_regions
    return Work(np.zeros(r, np.int64), np.zeros(r, np.int64), np.zeros(r, np.int64),
                np.zeros(r, np.int64), np.zeros(r, np.bool_), np.zeros(r, np.int64),
                np.zeros(r, np.int64), np.zeros(r), np.zeros((r, r)), np.zeros((r, r), np.int64),
                np.zeros(n_jobs, np.int64), np.zeros((OPTIONS_PER_EPOCH * (n_jobs + 1), 5)))


def _example_run() -> Run:
    a1, a2 = np.zeros(1), np.zeros((1, 1))
    i1, i2 = np.zeros(1, np.int64), np.zeros((1, 1), np.int64)
    return Run(a2, i1, a1, i1, i2, i2, i1, a1, i2, a2, a2, a1, a2, a1, False, 0.0, 0.0)


_CLUSTER = numba.typeof(make_cluster(1))
_WORK = numba.typeof(make_work(1, 1))
_DECISION = numba.typeof(make_decision(1))
_RUN = numba.typeof(_example_run())
_F1, _F2, _I1 = types.float64[::1], types.float64[:, ::1], types.int64[::1]
_PAIR = types.UniTuple(types.int64, 2)

ORDERING_SIGNATURE = types.void(_F2, _I1, types.int64, types.float64, _F1)
ALLOCATOR_SIGNATURE = types.void(_I1, types.int64, types.int64, _CLUSTER, _I1)
ALLOCATOR = types.FunctionType(ALLOCATOR_SIGNATURE)
PLACEMENT_SIGNATURE = _PAIR(_F1, types.int64, _CLUSTER, _WORK, ALLOCATOR, _DECISION)
PLACEMENT = types.FunctionType(PLACEMENT_SIGNATURE)
START_RULE_SIGNATURE = _PAIR(types.int64, types.float64, _RUN, _CLUSTER, _WORK, PLACEMENT,
                             ALLOCATOR, _DECISION)

#: Signature of each kind of compiled part.
SIGNATURES = {"ordering": ORDERING_SIGNATURE, "start_rule": START_RULE_SIGNATURE,
              "placement": PLACEMENT_SIGNATURE, "allocator": ALLOCATOR_SIGNATURE}


def _part_kernel(kind: str):
    def decorate(fn):
        dispatcher = numba.njit(SIGNATURES[kind], **JIT_FLAGS)(fn)
        dispatcher.part_kind = kind
        return dispatcher
    decorate.__name__ = f"{kind}_kernel"
    decorate.__doc__ = f"Compile ``fn`` as a {kind} part (see the module docstring)."
    return decorate


ordering_kernel = _part_kernel("ordering")
placement_kernel = _part_kernel("placement")
allocator_kernel = _part_kernel("allocator")
start_rule_kernel = _part_kernel("start_rule")


def kind_of_kernel(obj) -> str | None:
    """The kind a kernel was compiled for by this module's decorators, else None."""
    return getattr(obj, "part_kind", None)
