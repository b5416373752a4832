"""Hand-made results directories, written as the sweep writes them (``bacepipe.sweep.store``,
``bacepipe.sweep.tables``):
the fixed-depth hive folders of :func:`store.partition`, one chunk file per scheduler named by
:func:`store.chunk_name`, every column of the table's schema (null where the rows lack one).

Tests of the analysis write rows whose answers they know (often :func:`ratio_rows`) with
:func:`write_rows`; a test of a broken file writes it into :func:`point_dir` itself.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from bacepipe.settings import DEFAULTS, level_values
from bacepipe.sweep import store, tables

SCHEMAS = {store.RUNS: tables.RUN_SCHEMA, store.JOBS: tables.JOB_SCHEMA}
#: bace_pipe's avg JCT per topology in :func:`ratio_rows`, h.
BASE = (2.0, 4.0, 8.0, 16.0, 32.0)


def point_dir(root: Path, table: str = store.RUNS, *, point: str = "p0", **settings) -> Path:
    """``root/<table>/<partition>/point=<point>``, created; ``settings``: the sweep's settings
    (the SPEC §12 switches named as in the config: ``arrivals="poisson",
    arrival_rate_per_h=0.5``), the declared defaults for the others (a switch left to the
    scenario)."""
    unknown = set(settings) - set(DEFAULTS)
    assert not unknown, f"not a sweep setting: {sorted(unknown)}"
    levels = level_values({**DEFAULTS, **settings})
    paths = store.point_paths(root, store.partition(levels), point)
    folder = paths.runs if table == store.RUNS else paths.jobs
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def write_rows(root: Path, rows: list[dict] | pl.DataFrame, table: str = store.RUNS, *,
               point: str = "p0", **settings) -> list[Path]:
    """Write ``rows`` (with ``scheduler`` and ``topology``) into :func:`point_dir`, one chunk
    file per scheduler covering its topologies; return the files in scheduler order."""
    frame = rows if isinstance(rows, pl.DataFrame) else pl.DataFrame(rows)
    schema = SCHEMAS[table]
    unknown = set(frame.columns) - set(schema.names)
    assert not unknown, f"not a {table} column: {sorted(unknown)}"
    folder = point_dir(root, table, point=point, **settings)
    files = []
    for (scheduler,), part in frame.group_by("scheduler", maintain_order=True):
        topology = part["topology"]
        path = folder / store.chunk_name(topology.min(), topology.max() + 1, scheduler)
        tables.write_table(path, {c: part[c].to_list() if c in part.columns else [None] * len(part)
                                 for c in schema.names}, schema)
        files.append(path)
    return files


def ratio_rows(jct: dict, cost: dict | None = None, base=BASE) -> pl.DataFrame:
    """Runs rows of one point whose ratios to bace_pipe are known: ``jct[s]`` (a factor, or one
    per topology; NaN: a run that could not finish) times ``base`` is s's avg JCT, ``cost[s]``
    likewise times 10 ``base`` its total cost (default: the JCT factors); bace_pipe is 1.

    Columns: ``seed`` (0), ``topology``, ``scheduler``, ``avg_jct_h``, ``total_cost``; add
    others with ``.with_columns``.
    """
    base = np.asarray(base, float)
    factors = {"bace_pipe": 1.0, **jct}
    costs = {"bace_pipe": 1.0, **(cost if cost is not None else jct)}
    rows = []
    for name, f in factors.items():
        fj = np.broadcast_to(np.asarray(f, float), base.shape)
        fc = np.broadcast_to(np.asarray(costs.get(name, 1.0), float), base.shape)
        rows += [{"seed": 0, "topology": t, "scheduler": name, "avg_jct_h": b * fj[t],
                  "total_cost": 10 * b * fc[t]} for t, b in enumerate(base)]
    return pl.DataFrame(rows)
