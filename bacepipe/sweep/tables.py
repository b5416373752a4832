"""The result tables of a sweep point: their Parquet schemas, atomic writes, and reads.

A chunk file holds one scheduler's rows of one topology range (:func:`bacepipe.sweep.store.
chunk_name`), with the scheduler's identity in its metadata
(:data:`bacepipe.sweep.store.SCHEDULER_KEY`). A file appears under its final name only by
``os.replace`` of a fully written and fsynced temporary (:func:`bacepipe.io.atomic_write`), so a
``*.parquet`` file that exists is complete, whatever moment a run was killed at; a write that
fails is the results directory's one line (:func:`bacepipe.sweep.store.unwritable`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from bacepipe.io import atomic_write
from bacepipe.settings import COLUMNS, scalar_type
from bacepipe.sweep.chunks import JOB_COLUMNS, RUN_COLUMNS
from bacepipe.sweep.store import SCHEDULER_KEY, PointPaths, chunk_name, unwritable

_INT = ("seed", "topology", "job", "k_star", "gpus", "regions")
_STR = ("scheduler", "name", "model", "dataset", "path", "path_gpus", "path_gpu_types")
_BOOL = ("opt_proven",)
#: Arrow types of the settings written as columns, by their declared type.
_SETTING_TYPES = {name: {int: pa.int64(), str: pa.string()}.get(scalar_type(name), pa.float64())
                  for name in COLUMNS}
RUN_SCHEMA = pa.schema([(c, _SETTING_TYPES[c] if c in _SETTING_TYPES else pa.int64()
                         if c in _INT else pa.string() if c in _STR
                         else pa.bool_() if c in _BOOL else pa.float64()) for c in RUN_COLUMNS])
JOB_SCHEMA = pa.schema([(c, pa.int64() if c in _INT else pa.string() if c in _STR
                         else pa.float64()) for c in JOB_COLUMNS])


def _atomic_write(path: Path, write) -> None:
    """:func:`bacepipe.io.atomic_write`, with an OSError as the results directory's one line."""
    try:
        atomic_write(path, write)
    except OSError as err:
        raise unwritable(path, err) from None


def write_table(path: Path, columns: dict, schema: pa.Schema, identity: str = "") -> None:
    """Write columns (dict of arrays, in ``schema`` order) as one Parquet file, atomically;
    ``identity``: the scheduler's (:data:`~bacepipe.sweep.store.SCHEDULER_KEY`)."""
    # from_pandas: NaN becomes null, the mark of a run that could not finish (unplaceable=record)
    table = pa.table({name: pa.array(columns[name], type=schema.field(name).type,
                                     from_pandas=True)
                      for name in schema.names},
                     schema=schema.with_metadata({SCHEDULER_KEY: identity.encode()}))
    _atomic_write(path, lambda f: pq.write_table(table, f))


def write_result(paths: PointPaths, result: dict, identities: dict[str, str]) -> Iterator[str]:
    """Write one chunk's result (:func:`bacepipe.sweep.chunks.run_chunk`), a scheduler at a time:
    its runs file, after its jobs file when there is one (a chunk counts as complete once its
    runs file exists). Yields each scheduler once its files are complete.

    Parameters
    ----------
    identities : scheduler name -> identity recorded in its files ("" for a built-in).
    """
    for name, runs in result["runs"].items():
        file = chunk_name(result["start"], result["stop"], name)
        if result["jobs"] is not None:
            write_table(paths.jobs / file, result["jobs"][name], JOB_SCHEMA, identities[name])
        write_table(paths.runs / file, runs, RUN_SCHEMA, identities[name])
        yield name


def write_json(path: Path, data: dict) -> None:
    """Write ``data`` as indented JSON, atomically."""
    text = json.dumps(data, indent=2, sort_keys=False) + "\n"
    _atomic_write(path, lambda f: f.write(text.encode()))


def chunk_files(directory: Path, ranges: list[tuple[int, int]], schedulers) -> list[Path]:
    """The chunk files of ``ranges`` × ``schedulers``, in topology order, then scheduler order."""
    return [directory / chunk_name(a, b, s) for a, b in sorted(ranges) for s in schedulers]


def scan_runs(paths: PointPaths, ranges: list[tuple[int, int]], schedulers) -> pl.LazyFrame:
    """The point's runs rows for ``ranges`` × ``schedulers``, lazily: a summary of 100,000
    topologies streams through the files instead of holding them in memory."""
    files = [str(f) for f in chunk_files(paths.runs, ranges, schedulers)]
    if not files:
        return pl.from_arrow(RUN_SCHEMA.empty_table()).lazy()
    return pl.scan_parquet(files)


def read_chunk(directory: Path, start: int, stop: int, scheduler: str,
               columns: list[str]) -> dict:
    """Some columns of one complete chunk file, as numpy arrays."""
    table = pq.read_table(directory / chunk_name(start, stop, scheduler), columns=columns)
    return {name: table.column(name).to_numpy() for name in columns}


def read_ranges(directory: Path, ranges: list[tuple[int, int]], schedulers,
                columns: list[str]) -> Iterator[dict]:
    """Per topology range, in topology order: scheduler -> :func:`read_chunk` of ``columns``
    (what :func:`bacepipe.sweep.summary.summarize` is fed, a range at a time)."""
    for start, stop in sorted(ranges):
        yield {name: read_chunk(directory, start, stop, name, columns) for name in schedulers}


def count_rows(directory: Path, ranges: list[tuple[int, int]], schedulers) -> int:
    """Rows in the chunk files of ``ranges`` × ``schedulers`` (from the Parquet footers)."""
    return sum(pq.ParquetFile(f).metadata.num_rows
               for f in chunk_files(directory, ranges, schedulers))
