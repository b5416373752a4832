"""Freed memory kept in the process for the next batch, instead of handed back to the system.

Each :func:`~bacepipe.core.simulate_batch` call allocates its outputs, ~1 kB per simulation of
the paper setting. With glibc's defaults, a process that calls it in a loop gets much of that as
fresh pages every call: blocks over the mmap threshold (at most 32 MB) are unmapped when freed,
and the heap's free top is trimmed, so each call's first writes fault the pages in again and the
kernel zeroes them. That is ~0.2 µs of a ~2.6 µs simulation (docs/performance.md).
:func:`retain_freed_memory` makes glibc serve every block from its heap and trim only past
:data:`RETAIN_BYTES` of free top: a call then reuses the previous call's pages.

It changes the whole process's allocator, so the package never calls it on import: the
processes bacepipe owns call it (the sweep's workers, and the sweep's own process when the
chunks run there); a user's loop may call it too. Results do not depend on it.
"""

from __future__ import annotations

import ctypes

#: Free memory at the top of the heap that glibc keeps rather than returns, bytes.
RETAIN_BYTES = 1 << 30
# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4


def retain_freed_memory() -> bool:
    """Set glibc's malloc to reuse freed memory (see the module docstring); False where the C
    library is not glibc (nothing is changed there)."""
    try:  # the process's own symbols, the C library's among them (no search for its file)
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    # mmap stays glibc's fallback when the heap cannot grow; mallopt returns 1 on success
    return mallopt(_M_MMAP_MAX, 0) == 1 and mallopt(_M_TRIM_THRESHOLD, RETAIN_BYTES) == 1
