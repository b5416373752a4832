"""One place that sets the numba flags of every kernel.

No fastmath: every float here can decide a schedule, and SPEC §1 asks for plain float64. Kernels
are cached on disk (``NUMBA_CACHE_DIR`` moves the cache where the package directory is read-only).
"""

import numba


def kernel(fn=None, *, parallel: bool = False):
    """``numba.njit`` with the project's flags; use as ``@kernel`` or ``@kernel(parallel=True)``."""
    decorate = numba.njit(cache=True, fastmath=False, nogil=True, parallel=parallel)
    return decorate if fn is None else decorate(fn)
