"""Fan-out of chunks: in-process, joblib/loky processes, or a dask.distributed cluster.

Every backend runs the same pure :func:`~bacepipe.sweep.chunks.run_chunk` on the same chunks and
yields its results as they complete (in any order; each names its range). The parent alone
writes them, so the files and rows do not depend on the backend or the number of workers.

A worker process that dies mid-chunk (a crash, the OS's out-of-memory killer) costs a retry,
not the sweep: loky's broken pool is restarted and the unfinished chunks run again, at most
:data:`MAX_RETRIES` times per call; a dask LocalCluster's nanny restarts the worker and the
scheduler re-runs its chunk, each chunk at most :data:`MAX_RETRIES` times (``allowed-failures``;
an existing cluster keeps its own setting). Past that, :class:`~bacepipe.errors.WorkerLost`
says so in one line; the chunks already yielded have been written and a re-run resumes.
"""

from __future__ import annotations

import logging
import re
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence

from bacepipe.core.memory import retain_freed_memory
from bacepipe.errors import InputError, WorkerLost
from bacepipe.sweep.chunks import (
    ChunkSpec,
    run_chunk,
    run_chunk_one_thread,
)

#: How long to try to reach an existing dask scheduler before giving up, s.
CONNECT_TIMEOUT_S = 10.0
#: Re-runs allowed after worker processes die (loky: pool restarts per call; dask: per chunk).
MAX_RETRIES = 2


def iter_results(specs: Sequence[ChunkSpec], *, backend: str, workers: int,
                 dask_address: str | None = None) -> Iterator[dict]:
    """Results of :func:`run_chunk` for every spec, in completion order.

    Parameters
    ----------
    specs : the chunks to run.
    backend : ``loky`` or ``dask``.
    workers : worker processes (loky; a started LocalCluster). With loky and one worker, or one
        chunk, the chunks run in this process (numba's prange may then use every core).
    dask_address : an existing dask scheduler (``tcp://host:port``); None starts a LocalCluster.
    """
    if not specs:
        return
    if backend == "dask":
        yield from _dask(specs, workers, dask_address)
    elif workers == 1 or len(specs) == 1:
        retain_freed_memory()  # this process is the worker
        for spec in specs:
            yield run_chunk(spec)
    else:
        yield from _loky(specs, workers)


def _loky(specs: Sequence[ChunkSpec], workers: int) -> Iterator[dict]:
    from joblib import Parallel, delayed
    from joblib.externals.loky.process_executor import BrokenProcessPool

    pending = list(specs)
    retries = 0
    while pending:
        # Loky sets NUMBA_NUM_THREADS=1 in its workers, so chunks do not oversubscribe the
        # cores. Unordered: the parent writes each chunk the moment it is done (progress, and
        # less to redo after a kill). Closing the generator cancels the chunks not yet started.
        # At least 2: with n_jobs=1 joblib would run a retried chunk in this process, where
        # what killed its worker would kill the sweep.
        parallel = Parallel(n_jobs=min(workers, max(2, len(pending))), backend="loky",
                            return_as="generator_unordered", initializer=_start_worker)
        results = parallel(delayed(run_chunk)(spec) for spec in pending)
        finished = set()
        try:
            for result in results:
                finished.add(result["start"])
                yield result
            return
        except BrokenProcessPool as err:  # TerminatedWorkerError: a worker died mid-chunk
            pending = [spec for spec in pending if spec.start not in finished]
            retries += 1
            why = _exit_codes(err)
            if retries > MAX_RETRIES:
                raise WorkerLost(f"a worker process died {retries} times ({why}); "
                                 f"{len(pending)} chunks not done (the finished ones are "
                                 "written: a re-run resumes)") from None
            print(f"bacepipe.sweep: a worker process died ({why}); re-running "
                  f"{len(pending)} unfinished chunks (retry {retries} of {MAX_RETRIES})",
                  file=sys.stderr, flush=True)
        finally:
            with warnings.catch_warnings():
                # joblib warns that closing early discards work: that is what we want here
                # (Ctrl-C, a failed chunk); the chunks not yielded were never written.
                warnings.simplefilter("ignore")
                results.close()


def _exit_codes(err: BaseException) -> str:
    """``exit codes {SIGKILL(-9)}`` from loky's message, else its first line."""
    found = re.search(r"exit codes? of the workers? (?:is|are) (\{.*?\})", str(err))
    if found:
        return f"exit codes {found.group(1)}"
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _dask(specs: Sequence[ChunkSpec], workers: int, address: str | None) -> Iterator[dict]:
    import dask
    from dask.distributed import Client, LocalCluster, as_completed
    from distributed.scheduler import KilledWorker

    # distributed logs every scheduler and nanny event at INFO, which Hydra's root handler
    # would print; the sweep has its own progress bar. A failed chunk or a dead worker is
    # logged at ERROR over many lines, and reported by the sweep itself in one: only CRITICAL
    # passes. (Set after import: importing distributed applies its logging config, which gives
    # some children, e.g. distributed.client, levels of their own.)
    loggers = [logging.getLogger(name) for name in list(logging.root.manager.loggerDict)
               if name == "distributed" or name.startswith("distributed.")]
    levels = [log.level for log in loggers]
    for log in loggers:
        log.setLevel(logging.CRITICAL)
    cluster = None
    try:
        if address is None:
            # The scheduler always serves HTTP (health, metrics): on a free local port, so that
            # concurrent runs do not fight over 8787; the bokeh dashboard itself stays off.
            # allowed-failures: how often a chunk may take its worker down before KilledWorker.
            with dask.config.set({"distributed.scheduler.allowed-failures": MAX_RETRIES}):
                cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address="127.0.0.1:0",
                                       scheduler_kwargs={"dashboard": False},
                                       silence_logs=logging.CRITICAL, preload=[__name__])
            client = Client(cluster)
        else:
            try:
                client = Client(address, timeout=CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError, ValueError) as err:
                first = str(err).splitlines()[0] if str(err) else type(err).__name__
                raise InputError("dask_address", f"cannot connect to {address!r}: {first}") \
                    from None
        with client:
            futures = client.map(run_chunk_one_thread, list(specs), pure=False)
            chunk_of = {f.key: spec for f, spec in zip(futures, specs, strict=True)}
            yielded = 0
            try:
                for future in as_completed(futures):
                    try:
                        result = future.result()
                    except KilledWorker as err:
                        spec = chunk_of[future.key]
                        raise WorkerLost(
                            f"topologies {spec.start}-{spec.stop - 1}: the worker process "
                            f"running them died {err.allowed_failures + 1} times; "
                            f"{len(futures) - yielded} chunks not done (the finished ones are "
                            "written: a re-run resumes)") from None
                    yielded += 1
                    yield result
            finally:
                client.cancel(futures)
    finally:
        if cluster is not None:
            cluster.close()
        for log, level in zip(loggers, levels, strict=True):
            log.setLevel(level)


def _start_worker() -> None:
    """Run in each worker process as it starts (loky's initializer, dask's preload).

    Ctrl-C in a terminal reaches every process of its group. The parent stops the workers, so
    they ignore SIGINT rather than each print a KeyboardInterrupt traceback. Each chunk's
    outputs reuse the previous chunk's freed memory (:mod:`bacepipe.core.memory`).
    """
    retain_freed_memory()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def dask_setup(worker) -> None:
    """Preload of the LocalCluster's worker processes (``preload=[this module]``)."""
    _start_worker()
