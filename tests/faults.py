"""Fault injection for the sweep's workers (tests/test_hardening.py).

:class:`KillChunk` stands in for the function a backend sends to its workers. It lives in its own
small module so that loky and dask worker processes can import it by name (pickled by
reference), without importing the test module.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from bacepipe.sweep import chunks


class KillChunk:
    """Run a chunk, except that the worker process holding the chunk that starts at ``start``
    kills itself with SIGKILL, the first ``times`` times (counted with marker files in
    ``marks``, which every process sees).

    ``inner`` names the function of :mod:`bacepipe.sweep.chunks` that does the real work
    (``run_chunk`` for loky, ``run_chunk_one_thread`` for dask).
    """

    def __init__(self, start: int, marks: Path, times: int = 1, inner: str = "run_chunk"):
        self.start, self.marks, self.times, self.inner = start, str(marks), times, inner

    def kills(self) -> int:
        """How many times a worker has killed itself so far."""
        return len(list(Path(self.marks).glob("killed-*")))

    def __call__(self, spec):
        if spec.start == self.start and self.kills() < self.times:
            Path(self.marks, f"killed-{self.kills()}-{os.getpid()}").touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return getattr(chunks, self.inner)(spec)
