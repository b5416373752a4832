"""Atomic file writes: a file appears under its final name only complete.

Every writer of the project (sweep chunks and manifests, the report, the reproduction document
and figures) goes through :func:`atomic_write`: the content is written to a temporary
(``.<name>.<pid>.tmp``) in the target's directory, flushed and fsynced, then renamed over the
target with ``os.replace``, which is atomic on POSIX and Windows. A reader therefore sees the old
file or the new one, never half of one, whatever moment the writer was killed at.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def _fsync_dir(directory: Path) -> None:
    """Make a rename durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike[str], write: Callable[[BinaryIO], object]) -> Path:
    """``write(file)`` to a temporary in ``path``'s directory, fsync, then rename over ``path``.

    Parameters
    ----------
    path : path-like
        The target; its parent directories are created.
    write : callable
        Receives the temporary opened for binary writing.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    OSError
        Unchanged from the file system; the temporary is removed whatever stops the write
        (an OSError, Ctrl-C), and ``path`` keeps its old content.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_write`)."""
    data = text.encode("utf-8")
    return atomic_write(path, lambda f: f.write(data))
