"""One place that sets the numba flags of every kernel, and where their compiled code is cached.

No fastmath: every float here can decide a schedule, and SPEC §1 asks for plain float64. No
wrap of negative indices in the package's functions (:func:`_unwrapped_index`).

Kernels are cached on disk, but numba's cache only notices an edit of the file that *defines* a
cached kernel: a kernel that calls a helper of another file would silently keep the old helper.
So the cache lives in a folder named by the hash of every file the kernels are built from
(:data:`bacepipe.sources.KERNEL_SOURCES`): ``<parent>/bacepipe-<hash>/``, where ``<parent>`` is
``NUMBA_CACHE_DIR`` if the user set it, else ``bacepipe/__pycache__/numba`` (numba's own
default place, beside the sources). Any edit there starts an empty folder; a plug-in's kernels
(a file outside the package) are cached there too, and numba keys them to their own file's
content. Folders of other code unused for :data:`PRUNE_AFTER_DAYS` are deleted.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import types
from pathlib import Path

import numba
from numba.np import arrayobj

from bacepipe.sources import KERNEL_SOURCES, PACKAGE_DIR, tree_hash

#: A cache folder of other sources untouched for this long is deleted.
PRUNE_AFTER_DAYS = 14
_PREFIX = "bacepipe-"


def _parent() -> Path:
    """Where the hash-named folders go: the user's ``NUMBA_CACHE_DIR``, else beside the package.

    Worker processes inherit the parent's environment, which this module never changes, so they
    compute the same folder.
    """
    given = os.environ.get("NUMBA_CACHE_DIR", "")
    return Path(given) if given else PACKAGE_DIR / "__pycache__" / "numba"


def _prune(parent: Path, keep: Path) -> None:
    """Delete hash folders of other sources that no process has used for a while."""
    cutoff = time.time() - PRUNE_AFTER_DAYS * 86400
    try:
        old = [p for p in parent.iterdir() if p.name.startswith(_PREFIX) and p != keep
               and p.stat().st_mtime < cutoff]
    except OSError:
        return
    for path in old:
        shutil.rmtree(path, ignore_errors=True)


def _cache_dir(name: str) -> Path:
    """The first of ``<parent>/<name>`` and a per-user temporary folder that can be written.

    (Where neither can be written, numba falls back to folders of its own, not keyed by the hash:
    a machine without a writable temporary folder is not supported.)
    """
    user = os.getuid() if hasattr(os, "getuid") else "user"
    spare = Path(tempfile.gettempdir()) / f"bacepipe-numba-{user}" / name
    for path in (_parent() / name, spare):
        try:
            path.mkdir(parents=True, exist_ok=True)
            os.utime(path)  # marks it used, for the pruning of other processes
            return path
        except OSError:
            continue
    return spare


#: sha256 of the kernels' sources (:data:`~bacepipe.sources.KERNEL_SOURCES`).
KERNEL_HASH = tree_hash(KERNEL_SOURCES)
#: The cache folder of this process's kernels.
CACHE_DIR = _cache_dir(f"{_PREFIX}{KERNEL_HASH[:16]}")
_prune(CACHE_DIR.parent, CACHE_DIR)
numba.config.CACHE_DIR = str(CACHE_DIR)

#: How numba's mangled name of a function defined in this package begins (Itanium style: the
#: length of each part of the dotted path, then the part).
_PACKAGE = __name__.split(".")[0]
OWN_SYMBOL_PREFIX = f"_ZN{len(_PACKAGE)}{_PACKAGE}"
#: numba's lowering of an integer index (numba 0.60-0.68; None if a later numba moved it: the
#: kernels then keep the wrap, and tests/test_jit.py says so).
_wrapped_index = getattr(arrayobj, "fix_integer_index", None)


def _unwrapped_index(context, builder, idxty, idx, size):
    """numba's ``fix_integer_index``, but an index into an array in a function of this package
    is taken as it is, not wrapped when negative (Cython's ``wraparound=False``).

    The kernels never index from the end: -1 is a sentinel they test before they index. Yet
    numba wraps every signed index it cannot prove non-negative (an index read from an array:
    ``free[path[p]]``), a shift, a mask and an add per access, a fifth of a paper-setting
    simulation's instructions and time (docs/performance.md). Functions of other
    modules (a plug-in's parts, a user's kernels, numba's own) keep numba's wrap."""
    if idxty.signed and builder.function.name.startswith(OWN_SYMBOL_PREFIX):
        return context.cast(builder, idx, idxty, numba.types.intp)
    return _wrapped_index(context, builder, idxty, idx, size)


if _wrapped_index is not None:
    arrayobj.fix_integer_index = _unwrapped_index

#: The flags of every kernel (for ``numba.njit(signature, **JIT_FLAGS)`` where a part needs an
#: explicit signature). ``_nrt: False``: no reference counting (see :func:`kernel`).
JIT_FLAGS = {"cache": True, "fastmath": False, "nogil": True, "_nrt": False}


def kernel(fn=None, *, parallel: bool = False, inline: bool = False, allocates: bool = False):
    """``numba.njit`` with the project's flags; use as ``@kernel``, ``@kernel(parallel=True)`` or
    ``@kernel(inline=True)`` (inlined into its callers by numba: a helper that takes a large
    NamedTuple otherwise copies every array of it at each call, the tuple being passed by value).

    Kernels run without numba's reference counting: it costs a call per array per use (each
    array of a NamedTuple argument, at every call and field read) — half the time of an event
    loop, measured (docs/performance.md). A kernel without it borrows every array from its
    caller, so it may neither allocate nor hand a new array to a counting kernel. The kernels
    that allocate say ``allocates=True``; they own what they allocate and outlive every kernel
    they lend it to.
    """
    def decorate(f):
        # numba picks a function's cache folder when it is decorated, from config.CACHE_DIR,
        # and re-reads its config from the environment whenever a NUMBA_* variable changes:
        # set again here, so that a late decoration (a plug-in's) still uses the hash folder.
        numba.config.CACHE_DIR = str(CACHE_DIR)
        return numba.njit(**(JIT_FLAGS | {"_nrt": allocates}), parallel=parallel,
                          inline="always" if inline else "never")(f)

    return decorate if fn is None else decorate(fn)


def renamed(fn, name: str):
    """A copy of function ``fn`` under another name, so that each variant compiled from one body
    has a disk cache of its own."""
    clone = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    clone.__qualname__ = name
    return clone


@kernel
def copy_into(dst, src):
    """``dst[...] = src`` for arrays of one shape (numba's slice assignment from an array needs
    reference counting, see :func:`kernel`)."""
    if dst.ndim == 1:  # a constant: numba compiles one branch per shape
        for i in range(dst.shape[0]):
            dst[i] = src[i]
    else:
        for i in range(dst.shape[0]):
            for k in range(dst.shape[1]):
                dst[i, k] = src[i, k]
