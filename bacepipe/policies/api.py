"""The contract of a compiled scheduler part: the structures a part sees and one decorator per kind.

A part is a numba kernel with a fixed signature, compiled once (and cached on disk): a built-in
one when the registry first hands it out (:func:`compiled`), a plug-in's when it is decorated.
The event loop keeps the parts of each kind in a tuple and calls them by index, so adding a part
never touches the loop. Parts read the state; only the loop changes it. A part is compiled
without reference counting (:func:`bacepipe.core.jit.kernel`): it must not allocate; it writes
into the arrays it is given.

Kinds and signatures (every array C-contiguous; R regions, J jobs):

``@ordering_kernel``   ``f(jobs, pending, n_pending, alpha, keys) -> None``
    Write ``keys[j]`` for each ``j`` in ``pending[:n_pending]``; lower keys go first, ties by
    arrival, then index. ``jobs`` is float64[J, N_CONST] (columns ``C_*`` of
    :mod:`bacepipe.core.model`), ``alpha`` the reserved share of link capacity (Eq. 11).
``@placement_kernel``  ``f(job, k, cluster, scratch, allocate, out) -> (plen, g)``
    Place one job (``job``: its row of ``jobs``) aiming at ``k`` GPUs on ``cluster``; write the
    path (``out.path[:plen]``, region indices in pipeline order) and the GPUs per region
    (``out.alloc[r]`` for path regions) and return the path length and GPUs placed; g = 0 means
    nothing; the loop rejects more than K*_j GPUs (SPEC §15's schedule class). ``scratch``
    (:class:`Scratch`) holds arrays it may overwrite (but ``price_order``/``price_ready``, which
    the loop fills); ``allocate`` is the scheduler's allocator.
``@allocator_kernel``  ``f(path, plen, g, cluster, alloc) -> None``
    Spread g GPUs (plen <= g <= the path's free GPUs) over ``path[:plen]`` into ``alloc``.
``@start_rule_kernel`` ``f(j, t, run, cluster, work, place, allocate, out) -> (plen, g)``
    Decide whether pending job ``j`` starts at time ``t`` (s): write the placement to start on
    into ``out`` and return (plen, g), or return (0, 0) to skip it at this scan (it waits, or
    nothing fits). ``place`` is the scheduler's placement policy.
"""

from __future__ import annotations

import warnings

import numba
import numpy as np
from numba import types
from numba.core.errors import NumbaExperimentalFeatureWarning

from bacepipe.core.jit import JIT_FLAGS
from bacepipe.core.structs import (  # noqa: F401  (the contract a part author reads here)
    DONE,
    FUTURE,
    OPT_COST,
    OPT_GPUS,
    OPT_JCT,
    OPT_PLEN,
    OPT_Q,
    OPT_TAU,
    OPTIONS_PER_EPOCH,
    PENDING,
    RUNNING,
    Cluster,
    Decision,
    Run,
    Scratch,
    Work,
    make_cluster,
    make_decision,
    make_work,
)

# Parts are first-class functions, which numba (0.60–0.68, tested) still calls experimental; the
# warning would break every command's one-line error output.
warnings.filterwarnings("ignore", category=NumbaExperimentalFeatureWarning)


def _example_run() -> Run:
    a1, a2 = np.zeros(1), np.zeros((1, 1))
    i1, i2 = np.zeros(1, np.int64), np.zeros((1, 1), np.int64)
    return Run(a2, i1, a1, i1, i2, i2, i1, a1, i1, i1, i2, a2, a2, a1, a2, a1, False, 0.0, 0.0,
               0.0, a1, a1, a1, False, False, a2)


_CLUSTER = numba.typeof(make_cluster(1))
_WORK = numba.typeof(make_work(1, 1, 1))
_SCRATCH = numba.typeof(make_work(1, 1, 1).scratch)
_DECISION = numba.typeof(make_decision(1))
_RUN = numba.typeof(_example_run())
_F1, _F2, _I1 = types.float64[::1], types.float64[:, ::1], types.int64[::1]
_PAIR = types.UniTuple(types.int64, 2)

ORDERING_SIGNATURE = types.void(_F2, _I1, types.int64, types.float64, _F1)
ALLOCATOR_SIGNATURE = types.void(_I1, types.int64, types.int64, _CLUSTER, _I1)
ALLOCATOR = types.FunctionType(ALLOCATOR_SIGNATURE)
PLACEMENT_SIGNATURE = _PAIR(_F1, types.int64, _CLUSTER, _SCRATCH, ALLOCATOR, _DECISION)
PLACEMENT = types.FunctionType(PLACEMENT_SIGNATURE)
START_RULE_SIGNATURE = _PAIR(types.int64, types.float64, _RUN, _CLUSTER, _WORK, PLACEMENT,
                             ALLOCATOR, _DECISION)

#: Signature of each kind of compiled part.
SIGNATURES = {"ordering": ORDERING_SIGNATURE, "start_rule": START_RULE_SIGNATURE,
              "placement": PLACEMENT_SIGNATURE, "allocator": ALLOCATOR_SIGNATURE}


def _part_kernel(kind: str):
    def decorate(fn):
        dispatcher = numba.njit(**JIT_FLAGS)(fn)
        dispatcher.part_kind = kind
        # A built-in part compiles when the registry first hands it out: importing the package
        # compiles nothing, and the first run, which tells the user
        # (:mod:`bacepipe.core.compile_notice`), compiles what it needs. A plug-in's part
        # compiles here, so that a kernel that does not compile names its file as it loads.
        builtin = fn.__module__.startswith(f"{__name__.split('.')[0]}.")
        return dispatcher if builtin else compiled(dispatcher)
    decorate.__name__ = f"{kind}_kernel"
    decorate.__doc__ = f"Compile ``fn`` as a {kind} part (see the module docstring)."
    return decorate


ordering_kernel = _part_kernel("ordering")
placement_kernel = _part_kernel("placement")
allocator_kernel = _part_kernel("allocator")
start_rule_kernel = _part_kernel("start_rule")


def compiled(dispatcher):
    """The part ``dispatcher`` compiled for its kind's signature alone, as ``numba.njit(signature)``
    would have compiled it (from the disk cache when it is there); idempotent."""
    if dispatcher.signatures:
        return dispatcher
    dispatcher.compile(SIGNATURES[dispatcher.part_kind])
    dispatcher.disable_compile()
    return dispatcher


def kind_of_kernel(obj) -> str | None:
    """The kind a kernel was compiled for by this module's decorators, else None."""
    return getattr(obj, "part_kind", None)
