"""Content hashes of the package's own source files: which code made a kernel or a result.

One helper, two uses: :mod:`bacepipe.core.jit` keys numba's disk cache to the hash of every file
the kernels are built from (numba itself only notices an edit of the file that defines a cached
kernel), and :func:`source_hash` versions sweep results (the manifest records it, and it is part of
a point's identity, so results of other code are never resumed into). Plain standard library: the
report and the sweep's config read it without loading numba.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent

#: What the compiled kernels are built from (package-relative; a folder means every file in it).
KERNEL_SOURCES = ("core", "policies", "model/hardware.py", "metrics.py")
#: What decides a sweep's rows: the job model and generation (with their data files), the kernels,
#: the schedulers, the single-run and reference paths, and the worker that turns results into rows.
RESULT_SOURCES = ("core", "policies", "model", "sim", "data", "metrics.py", "errors.py",
                  "sweep/chunks.py")


def _files(root: Path, parts: Iterable[str]) -> list[Path]:
    out = []
    for part in parts:
        path = root / part
        found = path.rglob("*") if path.is_dir() else [path]
        # Bytecode and numba's in-tree cache follow the sources; they are not sources.
        out += [f for f in found if f.is_file() and "__pycache__" not in f.parts
                and not f.name.startswith(".") and f.suffix not in (".pyc", ".nbi", ".nbc")]
    return sorted(set(out))


def tree_hash(parts: Iterable[str], root: Path = PACKAGE_DIR) -> str:
    """sha256 (hex) over the relative path and bytes of every file of ``parts`` under ``root``.

    Parameters
    ----------
    parts : package-relative files or folders (a folder: every file in it, recursively).
    root : the package directory.
    """
    sha = hashlib.sha256()
    for file in _files(root, parts):
        sha.update(file.relative_to(root).as_posix().encode() + b"\0")
        sha.update(file.read_bytes())
        sha.update(b"\0")
    return sha.hexdigest()


@functools.cache
def source_hash() -> str:
    """sha256 (hex) of the sources that determine sweep results (:data:`RESULT_SOURCES`),
    computed once per process."""
    return tree_hash(RESULT_SOURCES)
