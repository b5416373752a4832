"""On-disk layout of sweep results, atomic writes, and what a re-run may skip.

Layout under ``results_dir`` (hive partitions by the sweep axes, SPEC §10)::

    runs/scenario=<s>/bandwidth_scale=<x>/gpu_scale=<y>/num_jobs=<n>/point=<id>/chunk-<a>-<b>.parquet
    jobs/<same partitions>/point=<id>/chunk-<a>-<b>.parquet         (save_jobs=true only)
    manifests/<same partitions>/point=<id>.json

``<id>`` = ``s<seed>-r<num_regions>-t<topologies>-<hash>``: the hash covers every other setting
that changes a row (scenario file content, hardware, schedulers), so runs with different
settings never share a directory. A chunk file holds topologies ``a .. b-1`` (zero-padded).

A file appears under its final name only by ``os.replace`` of a fully written and fsynced
temporary (``.<name>.<pid>.tmp`` in the same directory), so a ``*.parquet`` file that exists is
complete, whatever moment a run was killed at. Manifests live outside ``runs/`` because polars
refuses a bare directory scan that meets a non-Parquet file. A run holds the point's lock
(``manifests/<same partitions>/.point=<id>.lock``, :func:`point_lock`) while it writes, so two
runs of one point take turns instead of interleaving.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from bacepipe.errors import InputError
from bacepipe.io import atomic_write

try:
    import fcntl
except ImportError:  # Windows: no lock (two runs of one point must not overlap there)
    fcntl = None
from bacepipe.sweep.chunks import JOB_COLUMNS, RUN_COLUMNS

#: Bumped when a change of the row format or of the simulation makes old results stale.
FORMAT_VERSION = 1

RUNS, JOBS, MANIFESTS = "runs", "jobs", "manifests"

_INT = ("seed", "topology", "job", "k_star", "gpus", "regions")
_STR = ("scheduler", "name", "model", "dataset", "path")
RUN_SCHEMA = pa.schema([(c, pa.int64() if c in _INT else pa.string() if c in _STR
                         else pa.float64()) for c in RUN_COLUMNS])
JOB_SCHEMA = pa.schema([(c, pa.int64() if c in _INT else pa.string() if c in _STR
                         else pa.float64()) for c in JOB_COLUMNS])

_CHUNK_RE = re.compile(r"chunk-(\d+)-(\d+)\.parquet")


class PointPaths(NamedTuple):
    """Where one sweep point's files go."""

    runs: Path
    jobs: Path
    manifest: Path
    point_id: str


def point_id(seed: int, num_regions: int, topologies: int, identity: dict) -> str:
    """``s<seed>-r<num_regions>-t<topologies>-<12 hex>``; the hash is of ``identity`` (JSON)."""
    blob = json.dumps({"format": FORMAT_VERSION, **identity}, sort_keys=True,
                      separators=(",", ":"))
    digest = hashlib.sha256(blob.encode()).hexdigest()[:12]
    return f"s{seed}-r{num_regions}-t{topologies}-{digest}"


def partition(scenario_label: str, bandwidth_scale: float, gpu_scale: float,
              num_jobs: int, extensions: dict | None = None) -> Path:
    """The hive partition path of a point's axes (floats as Python writes them: ``1.0``).

    Each SPEC §12 switch that is set adds a level (``arrivals=poisson/…/latency=geo``; a trace
    by its file stem), so the report groups by it; with none set the layout is the paper's.
    """
    levels = [f"scenario={scenario_label}", f"bandwidth_scale={float(bandwidth_scale)!r}",
              f"gpu_scale={float(gpu_scale)!r}", f"num_jobs={int(num_jobs)}"]
    for key, value in (extensions or {}).items():
        levels.append(f"{key}={Path(value).stem if key == 'trace' else value}")
    return Path(*levels)


def point_paths(results_dir: Path, part: Path, pid: str) -> PointPaths:
    return PointPaths(runs=results_dir / RUNS / part / f"point={pid}",
                      jobs=results_dir / JOBS / part / f"point={pid}",
                      manifest=results_dir / MANIFESTS / part / f"point={pid}.json", point_id=pid)


def chunk_name(start: int, stop: int) -> str:
    return f"chunk-{start:09d}-{stop:09d}.parquet"


def chunk_ranges(topologies: int, chunk_size: int) -> list[tuple[int, int]]:
    """Half-open topology ranges of the chunks: a function of these two numbers alone."""
    return [(a, min(a + chunk_size, topologies)) for a in range(0, topologies, chunk_size)]


# --------------------------------------------------------------------------- atomic writes


def _unwritable(path: Path, err: OSError) -> InputError:
    """The one-line error of a results directory that cannot take a file (EACCES, EROFS,
    ENOSPC, a file where a directory should be)."""
    where = err.filename if isinstance(err.filename, str) else str(path)
    return InputError("results_dir", f"cannot write {where!r}: {err.strerror or err}")


def _atomic_write(path: Path, write) -> None:
    """:func:`bacepipe.io.atomic_write`, with an OSError as the results directory's one line."""
    try:
        atomic_write(path, write)
    except OSError as err:
        raise _unwritable(path, err) from None


def write_table(path: Path, columns: dict, schema: pa.Schema) -> None:
    """Write columns (dict of arrays, in ``schema`` order) as one Parquet file, atomically."""
    # from_pandas: NaN becomes null, the mark of a run that could not finish (unplaceable=record)
    table = pa.table({name: pa.array(columns[name], type=schema.field(name).type,
                                     from_pandas=True)
                      for name in schema.names}, schema=schema)
    _atomic_write(path, lambda f: pq.write_table(table, f))


def write_json(path: Path, data: dict) -> None:
    """Write ``data`` as indented JSON, atomically."""
    text = json.dumps(data, indent=2, sort_keys=False) + "\n"
    _atomic_write(path, lambda f: f.write(text.encode()))


# --------------------------------------------------------------------------- resume


def remove_stale_temporaries(paths: PointPaths) -> int:
    """Delete the ``*.tmp`` a killed run left for this point; return how many.

    Call it holding :func:`point_lock`: no other run is writing this point then. The manifests
    folder is shared by the points of a partition, so only this point's manifest temporaries
    are touched there.
    """
    count = 0
    for directory, pattern in ((paths.runs, "*.tmp"), (paths.jobs, "*.tmp"),
                               (paths.manifest.parent, f".{paths.manifest.name}.*.tmp")):
        if directory.is_dir():
            for tmp in directory.glob(pattern):
                tmp.unlink(missing_ok=True)
                count += 1
    return count


def lock_path(paths: PointPaths) -> Path:
    """``manifests/<partition>/.point=<id>.lock`` (beside the manifest, out of ``runs/``)."""
    return paths.manifest.with_name(f".{paths.manifest.stem}.lock")


@contextlib.contextmanager
def point_lock(paths: PointPaths, on_wait=None) -> Iterator[Path]:
    """Hold the point's lock (``fcntl.flock`` on :func:`lock_path`) for the ``with`` block.

    Two runs of the same point (the same command twice, or a multirun listing a point twice)
    then take turns: the second waits, finds the chunks written and only rewrites the manifest.
    The OS releases the lock when its process dies, so a killed run leaves no stale lock; the
    empty lock file stays (deleting it would let a third run lock another file).
    Creating it is also the first write of a run: an unwritable results directory is reported
    here, before any work.

    Parameters
    ----------
    on_wait : called with the lock's path when another run holds it, before waiting.

    Raises
    ------
    InputError
        The lock file cannot be created (``results_dir: cannot write ...``).
    """
    lock = lock_path(paths)
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as err:
        raise _unwritable(lock, err) from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait is not None:
                    on_wait(lock)
                fcntl.flock(fd, fcntl.LOCK_EX)
        yield lock
    finally:
        os.close(fd)  # releases the lock


def complete_chunks(directory: Path, ranges: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """The planned ranges that already have a chunk file in ``directory``.

    Raises
    ------
    InputError
        The directory holds chunk files of another chunk_size: resuming would duplicate rows.
    """
    if not directory.is_dir():
        return set()
    planned = set(ranges)
    found = set()
    for file in directory.iterdir():
        m = _CHUNK_RE.fullmatch(file.name)
        if not m:
            continue
        rng = (int(m.group(1)), int(m.group(2)))
        if rng not in planned:
            raise InputError("chunk_size", f"{directory} holds chunks of another chunk_size "
                             f"({file.name}); re-run with chunk_size={rng[1] - rng[0]} or use "
                             "another results_dir")
        found.add(rng)
    return found


def scan_runs(paths: PointPaths, ranges: list[tuple[int, int]]) -> pl.LazyFrame:
    """The point's runs rows for ``ranges``, in topology order, lazily: a summary of 100,000
    topologies streams through the files instead of holding them in memory."""
    files = [str(paths.runs / chunk_name(a, b)) for a, b in sorted(ranges)]
    if not files:
        return pl.from_arrow(RUN_SCHEMA.empty_table()).lazy()
    return pl.scan_parquet(files)


def read_chunk(directory: Path, start: int, stop: int, columns: list[str]) -> dict:
    """Some columns of one complete chunk file, as numpy arrays."""
    table = pq.read_table(directory / chunk_name(start, stop), columns=columns)
    return {name: table.column(name).to_numpy() for name in columns}


def count_rows(directory: Path, ranges: list[tuple[int, int]]) -> int:
    """Rows in the chunk files of ``ranges`` (from the Parquet footers, without reading data)."""
    return sum(pq.ParquetFile(directory / chunk_name(a, b)).metadata.num_rows for a, b in ranges)
