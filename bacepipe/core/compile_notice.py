"""Tell the user when a run is about to compile the simulator, and how long it has been at it.

numba compiles the kernels on their first call and keeps the machine code in a disk cache
(:data:`bacepipe.core.jit.CACHE_DIR`, named by the hash of the kernels' sources); a first run on
a machine, after an upgrade, or with a new plug-in waits minutes for it, later runs load it in
about a second. :func:`compile_notice` wraps the first call of a kernel variant: when this cache
has not seen it, it says so first (one line), shows the elapsed time on a terminal while it
waits, and says how long it took. What the cache has seen is a marker file written after a
successful call, keyed by the variant, numba's and Python's versions, and every registered part
and scheduler (a plug-in's file content included).

Command-line tools run under :func:`announce_on` with their stderr; otherwise the lines go to the
``bacepipe`` logger at WARNING, so that a plain ``run_scenario`` in a notebook shows them.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import platform
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import numba

from bacepipe.core.jit import CACHE_DIR
from bacepipe.policies import KINDS, SCHEDULER_PARTS, identity_of, part_names

LOG = logging.getLogger("bacepipe")
#: A cold compile of one variant on the reference machine (2 cores, docs/performance.md).
TYPICAL = "a few minutes on 2 cores"

_stream: list[TextIO] = []  # where command-line tools want the notice, innermost last


@contextlib.contextmanager
def announce_on(stream: TextIO) -> Iterator[None]:
    """Within the block, write the notice to ``stream`` (a tool's stderr), not to the logger."""
    _stream.append(stream)
    try:
        yield
    finally:
        _stream.pop()


def marker(variant: str) -> Path:
    """The marker file of ``variant`` under the registered parts and this interpreter."""
    key = [numba.__version__, platform.python_version(), variant,
           *(f"{kind}:{name}" for kind in KINDS for name in part_names(kind)),
           *(f"{name}={identity_of(name)}" for name in SCHEDULER_PARTS)]
    return CACHE_DIR / f"compiled-{hashlib.sha256('|'.join(key).encode()).hexdigest()[:16]}"


class _Ticker(threading.Thread):
    """Rewrites one terminal line with the elapsed time, once a second, until stopped."""

    def __init__(self, stream: TextIO):
        super().__init__(daemon=True)
        self.stream, self.done, self.tic = stream, threading.Event(), time.perf_counter()

    def run(self) -> None:
        while not self.done.wait(1.0):
            self.stream.write(f"\r  {time.perf_counter() - self.tic:.0f} s")
            self.stream.flush()

    def stop(self) -> None:
        self.done.set()
        self.join()
        self.stream.write("\r\033[K")  # the closing line overwrites the counter


def _say(text: str) -> None:
    if _stream:
        print(text, file=_stream[-1], flush=True)
    else:
        LOG.warning(text)


@contextlib.contextmanager
def compile_notice(variant: str) -> Iterator[None]:
    """Announce a compile of the core's ``variant`` (``serial`` or ``parallel``) around the
    block that calls it for the first time.

    The marker is written only when the block ends without an exception, so a run that fails
    or is interrupted announces the compile again next time.
    """
    path = marker(variant)
    if path.exists():
        yield
        return
    text = (f"compiling the simulator ({variant} kernels; once per machine, version and set of "
            f"plug-ins, {TYPICAL})…")
    _say(text)
    stream = _stream[-1] if _stream else None
    ticker = _Ticker(stream) if stream is not None and stream.isatty() else None
    if ticker is not None:
        ticker.start()
    tic = time.perf_counter()
    try:
        yield
    finally:
        if ticker is not None:
            ticker.stop()
    elapsed = time.perf_counter() - tic
    _say(f"compiled the simulator's {variant} kernels in {elapsed:.0f} s (cached in {CACHE_DIR})")
    with contextlib.suppress(OSError):  # a read-only cache only repeats the notice
        path.write_text(f"{elapsed:.1f}\n")
