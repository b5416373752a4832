"""Fan-out of chunks: in-process, joblib/loky processes, or a dask.distributed cluster.

Every backend runs the same pure :func:`~bacepipe.sweep.chunks.run_chunk` on the same chunks and
yields its results as they complete (in any order; each names its range). The parent alone
writes them, so the files and rows do not depend on the backend or the number of workers.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

from bacepipe.errors import InputError
from bacepipe.sweep.chunks import (
    ChunkSpec,
    run_chunk,
    run_chunk_one_thread,
)

#: How long to try to reach an existing dask scheduler before giving up, s.
CONNECT_TIMEOUT_S = 10.0


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
        for spec in specs:
            yield run_chunk(spec)
    else:
        yield from _loky(specs, workers)


def _loky(specs: Sequence[ChunkSpec], workers: int) -> Iterator[dict]:
    from joblib import Parallel, delayed

    # Loky sets NUMBA_NUM_THREADS=1 in its workers, so chunks do not oversubscribe the cores.
    # Unordered: the parent writes each chunk the moment it is done (progress, and less to
    # redo after a kill). Leaving the generator early cancels the chunks not yet started.
    parallel = Parallel(n_jobs=min(workers, len(specs)), backend="loky",
                        return_as="generator_unordered")
    yield from parallel(delayed(run_chunk)(spec) for spec in specs)


def _dask(specs: Sequence[ChunkSpec], workers: int, address: str | None) -> Iterator[dict]:
    from dask.distributed import Client, LocalCluster, as_completed

    # distributed logs every scheduler and nanny event at INFO, which Hydra's root handler
    # would print; the sweep has its own progress bar. (Set after import: importing distributed
    # applies its logging config.)
    log = logging.getLogger("distributed")
    level = log.level
    log.setLevel(logging.ERROR)
    cluster = None
    try:
        if address is None:
            # The scheduler always serves HTTP (health, metrics): on a free local port, so that
            # concurrent runs do not fight over 8787; the bokeh dashboard itself stays off.
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   host="127.0.0.1", dashboard_address="127.0.0.1:0",
                                   scheduler_kwargs={"dashboard": False},
                                   silence_logs=logging.ERROR)
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
            try:
                for future in as_completed(futures):
                    yield future.result()
            finally:
                client.cancel(futures)
    finally:
        if cluster is not None:
            cluster.close()
        log.setLevel(level)
