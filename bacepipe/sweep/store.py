"""On-disk layout of sweep results, the point's lock, and what a re-run may skip (the result
tables themselves are :mod:`bacepipe.sweep.tables`).

Layout under ``results_dir``: hive partitions of a FIXED depth, every level always written
(:data:`~bacepipe.settings.LEVELS`: the settings declared as levels, in declaration order), so
polars, pyarrow and duckdb read any results directory as one dataset (with the key types of
``bacepipe.analysis.HIVE_SCHEMA``, given to pyarrow as ``HIVE_PARTITIONING`` and to duckdb as
``DUCKDB_HIVE_TYPES``, the numeric keys read as numbers)::

    runs/scenario=<s>/bandwidth_scale=<x>/gpu_scale=<y>/num_jobs=<n>/arrivals=<a>/latency=<l>/
        memory_model=<m>/price_profile=<p>/start_rule=<r>/gpu_mix=<g>/point=<id>/
        chunk-<a>-<b>-<scheduler>.parquet
    jobs/<same partitions>/point=<id>/chunk-<a>-<b>-<scheduler>.parquet   (save_jobs=true only)
    manifests/<same partitions>/point=<id>.json

A SPEC §12 switch left to the scenario (null in the config) is written ``default``; Poisson
arrivals as ``poisson-<rate per h>``, trace arrivals as ``trace-<file stem>``.

``<id>`` = ``s<seed>-r<num_regions>-t<topologies>-<hash>-c<code>``: the hash covers every
setting that changes a row (:meth:`bacepipe.settings.SweepSettings.identity`) and the world of
topology 0 (so a scenario or trace file counts by its content), ``<code>`` is the start of
:func:`bacepipe.source_hash`, so results of other settings or other code never share a
directory. The schedulers are not part of it: each chunk file holds topologies ``a .. b-1``
(zero-padded) of ONE scheduler, so adding a scheduler to a point only adds files. A plug-in
scheduler's file records the scheduler's identity (its parts and its plug-in file's content hash) in
the Parquet metadata; a file of another identity is simulated again.

A file appears under its final name only by ``os.replace`` of a fully written and fsynced
temporary (``.<name>.<pid>.tmp`` in the same directory), so a ``*.parquet`` file that exists is
complete, whatever moment a run was killed at. Manifests live outside ``runs/`` because polars
refuses a bare directory scan that meets a non-Parquet file. A run holds the point's lock
(``manifests/<same partitions>/.point=<id>.lock``, :func:`point_lock`) while it writes, so two
runs of one point take turns instead of interleaving. The lock file exists only while a run
holds it, and a run removes the folders it created and left empty, so a run refused or failed
before its first chunk leaves the results directory as it found it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pyarrow.parquet as pq

from bacepipe.errors import InputError
from bacepipe.settings import LEVELS

try:
    import fcntl
except ImportError:  # Windows: no lock (two runs of one point must not overlap there)
    fcntl = None

#: Bumped when a change of the layout or of the row format makes old results unreadable as is.
FORMAT_VERSION = 2

RUNS, JOBS, MANIFESTS = "runs", "jobs", "manifests"
#: Parquet metadata key of a chunk file: the identity of its scheduler ("" for a built-in).
SCHEDULER_KEY = b"bacepipe.scheduler_identity"

_CHUNK_RE = re.compile(r"chunk-(\d+)-(\d+)-(\w+)\.parquet")


class PointPaths(NamedTuple):
    """Where one sweep point's files go."""

    runs: Path
    jobs: Path
    manifest: Path
    point_id: str


def point_id(seed: int, num_regions: int, topologies: int, identity: dict, code: str) -> str:
    """``s<seed>-r<num_regions>-t<topologies>-<12 hex>-c<8 hex>``: the hash of ``identity``
    (JSON), then the start of the source hash ``code``."""
    blob = json.dumps({"format": FORMAT_VERSION, **identity}, sort_keys=True,
                      separators=(",", ":"))
    digest = hashlib.sha256(blob.encode()).hexdigest()[:12]
    return f"s{seed}-r{num_regions}-t{topologies}-{digest}-c{code[:8]}"


def other_code_points(paths: PointPaths) -> list[str]:
    """Points of the same settings made by other code (the same id up to ``-c<code>``)."""
    same = paths.point_id.rsplit("-c", 1)[0]
    found = paths.runs.parent.glob(f"point={same}-c*") if paths.runs.parent.is_dir() else []
    return sorted(p.name.split("=", 1)[1] for p in found if p.name != paths.runs.name)


def partition(levels: dict[str, str]) -> Path:
    """The hive partition path of the level values ``levels``
    (:meth:`bacepipe.settings.SweepSettings.levels`)."""
    return Path(*(f"{key}={levels[key]}" for key in LEVELS))


def point_paths(results_dir: Path, part: Path, pid: str) -> PointPaths:
    return PointPaths(runs=results_dir / RUNS / part / f"point={pid}",
                      jobs=results_dir / JOBS / part / f"point={pid}",
                      manifest=results_dir / MANIFESTS / part / f"point={pid}.json", point_id=pid)


def check_layout(results_dir: Path) -> None:
    """Refuse a results directory in the variable-depth layout of format 1: writing beside it
    would leave a directory that polars, pyarrow and duckdb cannot read as one dataset.

    Raises
    ------
    InputError
        One line naming the first folder out of place and what to do. (No converter: results
        of that layout carry no source hash, so they could not be resumed into anyway.)
    """
    runs = results_dir / RUNS
    for top, dirs, _ in os.walk(runs):
        depth = len(Path(top).relative_to(runs).parts)
        want = LEVELS[depth] if depth < len(LEVELS) else "point"
        for name in dirs:
            if not name.startswith(f"{want}="):
                raise InputError("results_dir", f"{Path(top) / name} is in the layout of an "
                                 f"older bacepipe (expected {want}=… there), made by code "
                                 "without a source hash; use another results_dir (or move "
                                 "the old one away) and run the sweep again")
        if depth >= len(LEVELS):
            dirs.clear()  # point folders: only chunk files below


def chunk_name(start: int, stop: int, scheduler: str) -> str:
    return f"chunk-{start:09d}-{stop:09d}-{scheduler}.parquet"


def chunk_ranges(topologies: int, chunk_size: int) -> list[tuple[int, int]]:
    """Half-open topology ranges of the chunks: a function of these two numbers alone."""
    return [(a, min(a + chunk_size, topologies)) for a in range(0, topologies, chunk_size)]


def unwritable(path: Path, err: OSError) -> InputError:
    """The one-line error of a results directory that cannot take a file (EACCES, EROFS,
    ENOSPC, a file where a directory should be)."""
    where = err.filename if isinstance(err.filename, str) else str(path)
    return InputError("results_dir", f"cannot write {where!r}: {err.strerror or err}")


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


#: Attempts at creating and locking the lock file (each fails only when a run that released the
#: point removed the file or its empty folder at that instant).
_LOCK_ATTEMPTS = 100


def _missing(directory: Path) -> set[Path]:
    """``directory`` and those of its ancestors that do not exist."""
    missing = set()
    for folder in (directory, *directory.parents):
        if folder.exists():
            break
        missing.add(folder)
    return missing


def _remove_empty(folders) -> None:
    """Remove those of ``folders`` that are empty, the deepest first (a folder left with files,
    or made again by another run meanwhile, stays)."""
    for folder in sorted(folders, key=lambda f: len(f.parts), reverse=True):
        try:
            folder.rmdir()
        except OSError:
            pass


def _acquire(lock: Path, on_wait, created: set[Path]) -> int:
    """Create ``lock``, lock it and return its descriptor; add the folders made to ``created``.

    A run that releases the point deletes the file while it still holds it (:func:`point_lock`):
    a run that was waiting on that file then holds a lock nobody else can see, so it checks
    that the path still names the file it locked and starts again on the new one otherwise.
    """
    waited, last = False, None
    for _ in range(_LOCK_ATTEMPTS):
        created |= _missing(lock.parent)
        try:
            lock.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError as err:  # the folder was removed by a releasing run: again
            last = err
            continue
        except OSError as err:
            raise unwritable(lock, err) from None
        if fcntl is None:
            return fd
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait is not None and not waited:
                    on_wait(lock)
                waited = True
                fcntl.flock(fd, fcntl.LOCK_EX)
            if os.path.samestat(os.fstat(fd), os.stat(lock)):
                return fd
        except FileNotFoundError:
            pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raise unwritable(lock, last or OSError(errno.EAGAIN, "the lock file kept being replaced"))


@contextlib.contextmanager
def point_lock(paths: PointPaths, on_wait=None) -> Iterator[Path]:
    """Hold the point's lock (``fcntl.flock`` on :func:`lock_path`) for the ``with`` block.

    Two runs of the same point (the same command twice, or a multirun listing a point twice)
    then take turns: the second waits, finds the chunks written and only rewrites the manifest.
    The OS releases the lock when its process dies, so a killed run leaves no stale lock (only
    an empty lock file, which the next run of the point uses and removes).
    Creating it is also the first write of a run: an unwritable results directory is reported
    here, before any work.

    On leaving the block, however it is left, the run removes the folders of the point
    (``runs/``, ``jobs/`` and ``manifests/`` partitions, the results directory itself) that it
    created and left empty, and the lock file: a run refused or failed before its first chunk
    leaves the results directory as it found it. The lock file is deleted while still held,
    after the point's own folders: a run waiting for it then locks a new file
    (:func:`_acquire`), and never writes into a folder being removed.

    Parameters
    ----------
    on_wait : called with the lock's path when another run holds it, before waiting.

    Raises
    ------
    InputError
        The lock file cannot be created (``results_dir: cannot write ...``).
    """
    lock = lock_path(paths)
    created = _missing(paths.runs) | _missing(paths.jobs)
    try:
        fd = _acquire(lock, on_wait, created)
    except BaseException:  # unwritable, or Ctrl-C while waiting
        _remove_empty(created)
        raise
    try:
        yield lock
    finally:
        try:
            own = {f for f in created if f != lock.parent and f not in lock.parent.parents}
            _remove_empty(own)  # runs/ and jobs/ of this point: still under the lock
            with contextlib.suppress(OSError):  # Windows: an open file cannot be deleted
                lock.unlink()
            _remove_empty(created - own)
        finally:
            os.close(fd)  # releases the lock


class Plan(NamedTuple):
    """What a run of a point does (:func:`plan`).

    todo : (start, stop, schedulers) per topology range that lacks some scheduler's chunk file,
        naming only the missing schedulers (in the point's order).
    done : chunk files (one per range and scheduler) already complete on disk.
    notes : why results on disk are not used, one line each.
    """

    todo: list[tuple[int, int, tuple[str, ...]]]
    done: int
    notes: list[str]


def plan(paths: PointPaths, ranges: list[tuple[int, int]], identities: dict[str, str],
         save_jobs: bool) -> Plan:
    """The chunks of the point still to run: those whose runs file (and jobs file, with
    ``save_jobs``) is not complete on disk under the scheduler's identity.

    Parameters
    ----------
    identities : scheduler -> identity of its files (:func:`complete_chunks`), in the point's
        order of schedulers.

    Raises
    ------
    InputError
        The point's folder holds chunks of another chunk_size (:func:`complete_chunks`).
    """
    done, stale = complete_chunks(paths.runs, ranges, identities)
    if save_jobs:
        done &= complete_chunks(paths.jobs, ranges, identities)[0]
    notes = [] if done else [
        f"point {old} was computed by other code (the sources changed); running these "
        f"settings anew as point {paths.point_id}" for old in other_code_points(paths)]
    notes += [f"{name}: {count} chunks were computed by another version of its plug-in; "
              "running them again" for name, count in stale.items()]
    todo = [(start, stop, missing) for start, stop in ranges
            if (missing := tuple(s for s in identities if ((start, stop), s) not in done))]
    return Plan(todo, len(done), notes)


def complete_chunks(directory: Path, ranges: list[tuple[int, int]],
                    identities: dict[str, str]) -> tuple[set, dict[str, int]]:
    """The planned (range, scheduler) pairs that already have a chunk file in ``directory``.

    Parameters
    ----------
    identities : scheduler name -> identity (:func:`bacepipe.policies.identity_of`; "" for a
        built-in, whose version is the point's source hash). Files of other schedulers are
        left alone.

    Returns
    -------
    done : set of ((start, stop), scheduler).
    stale : scheduler -> files written under another identity (its plug-in changed).

    Raises
    ------
    InputError
        The directory holds chunk files of another chunk_size: resuming would duplicate rows.
    """
    done, stale = set(), {}
    if not directory.is_dir():
        return done, stale
    found = [(file, (int(m.group(1)), int(m.group(2))), m.group(3))
             for file in directory.iterdir() if (m := _CHUNK_RE.fullmatch(file.name))]
    odd = sorted(file.name for file, rng, _ in found if rng not in set(ranges))
    if odd:
        # The widest range is the chunk_size they were cut with (the last one may be shorter).
        size = max(b - a for _, (a, b), _ in found)
        raise InputError("chunk_size", f"{directory} holds chunks of another chunk_size "
                         f"({odd[0]}); re-run with chunk_size={size} or use another "
                         "results_dir")
    for file, rng, name in found:
        if name not in identities:
            continue
        if identities[name]:
            meta = pq.read_schema(file).metadata or {}
            if meta.get(SCHEDULER_KEY, b"").decode() != identities[name]:
                stale[name] = stale.get(name, 0) + 1
                continue
        done.add((rng, name))
    return done, stale
