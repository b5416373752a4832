"""Find the sweep engine's ``runs/`` datasets and scan them lazily as one frame (SPEC §10).

The sweep writes a fixed-depth hive layout (``bacepipe.sweep.store.LEVELS``, then ``point=``;
:data:`~bacepipe.analysis.schema.HIVE_SCHEMA`) that polars, pyarrow and duckdb read directly
(docs/usage.md, "Reading results"). This module does what they cannot:

- find every ``runs/`` dataset under multirun directories, and read several as one frame;
- read only the keys below ``runs/`` (duckdb parses every ``k=v`` of the absolute path, so a
  Hydra run directory named like ``bandwidth_scale=0.5/`` above ``runs/`` adds a wrong value),
  and refuse in one line a dataset out of that layout (an older bacepipe's), which a reader
  would misread;
- give the analysis its view of the SPEC §12 switches: a switch left to the scenario
  (``default``) is null ("off"), ``arrivals=poisson-<rate>`` and ``arrivals=trace-<stem>`` are
  split into ``arrivals`` plus ``arrival_rate_per_h`` / ``trace``, as the analysis groups them.

Files whose names start with ``.`` or ``_`` are skipped (the sweep's temporaries are
``.<name>.<pid>.tmp``); every other file must be a ``*.parquet`` in a ``point=`` folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from itertools import zip_longest
from pathlib import Path

import polars as pl

from bacepipe.analysis.schema import (
    HIVE_SCHEMA,
    ID_COLUMNS,
    METRICS,
    POINT_COLUMNS,
    REQUIRED,
    SWITCH_LEVELS,
    YARDSTICK_COLUMNS,
)
from bacepipe.cli import first_line
from bacepipe.errors import InputError
from bacepipe.settings import SCENARIO_DEFAULT as _SCENARIO_DEFAULT

RUNS_DIR = "runs"
_HIDDEN = (".", "_")
#: Columns of a runs file read, in the order :func:`scan_runs` gives them (after the keys).
_RUN_VALUES = {**POINT_COLUMNS, **ID_COLUMNS, **{m: pl.Float64() for m in METRICS},
               **YARDSTICK_COLUMNS}


def _check_place(directory: Path, parts: tuple[str, ...]) -> None:
    """Refuse a file (``parts``: its path below ``directory``) out of the fixed layout."""
    have = [part[:part.find("=") + 1] for part in parts[:-1]]  # "key=", or "" without "="
    want = [f"{key}=" for key in HIVE_SCHEMA]
    if have == want:
        return
    depth = next(i for i, (h, w) in enumerate(zip_longest(have, want)) if h != w)
    expected = f"{want[depth]}…" if depth < len(want) else "only files"
    raise InputError(str(directory.joinpath(*parts[:depth + 1])),
                     f"not in the results layout of this bacepipe (expected {expected} there): "
                     "results of an older bacepipe, made by code without a source hash, "
                     "cannot be converted; run the sweep again to read them")


def _result_files(directory: Path) -> list[Path]:
    """The result files of a ``runs/`` (or ``jobs/``) dataset, sorted.

    Raises
    ------
    InputError
        A file that is not hidden and not a ``*.parquet`` in a ``point=`` folder of the fixed
        layout (``err.field`` names the first folder out of place, or the file).
    """
    files = []
    for top, dirs, names in os.walk(directory):
        dirs.sort()
        for name in sorted(n for n in names if not n.startswith(_HIDDEN)):
            file = Path(top, name)
            _check_place(directory, file.relative_to(directory).parts)
            if not name.endswith(".parquet"):
                raise InputError(str(file), "not a .parquet file (a results dataset holds only "
                                 "the sweep's files)")
            files.append(file)
    return files


def _runs_dirs(root: Path) -> list[Path]:
    """Directories named ``runs`` under ``root`` (or ``root`` itself) that hold result files."""
    if root.name == RUNS_DIR and _result_files(root):
        return [root]
    found = []
    for top, dirs, _ in os.walk(root):
        dirs.sort()
        if RUNS_DIR in dirs:
            candidate = Path(top) / RUNS_DIR
            if _result_files(candidate):
                found.append(candidate)
            # A runs/ dataset never holds another result directory.
            dirs.remove(RUNS_DIR)
    return found


def find_runs(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The ``runs/`` datasets under result or multirun directories, searched recursively.

    Parameters
    ----------
    paths : iterable of path-like
        Result directories (holding ``runs/``), multirun directories (holding several result
        directories at any depth), or ``runs/`` directories themselves.

    Returns
    -------
    list of Path
        Resolved ``runs/`` directories in the order found (``paths`` in order, each walked in
        sorted order), each once even when reached from two paths.

    Raises
    ------
    InputError
        A path does not exist, is not a directory, or holds no ``runs/`` dataset with a
        ``.parquet`` file (``err.field`` is the path as given); a dataset is out of the fixed
        layout (one line naming the first folder out of place).
    """
    found: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise InputError(str(raw), "no such file or directory")
        if not path.is_dir():
            raise InputError(str(raw), "not a directory (give a result or multirun directory)")
        runs = _runs_dirs(path.resolve())
        if not runs:
            raise InputError(str(raw), "no results: no runs/ directory with .parquet files in it")
        for runs_dir in runs:
            if runs_dir not in seen:
                seen.add(runs_dir)
                found.append(runs_dir)
    return found


def _switches_view() -> list[pl.Expr]:
    """The hive keys, SPEC §12 levels as the analysis reads them (see the module docstring)."""
    arrivals = pl.col("arrivals")
    split = arrivals.str.extract_groups(r"^(?<kind>poisson|trace)-(?<detail>.*)$")
    kind, detail = split.struct.field("kind"), split.struct.field("detail")
    exprs = []
    for key in HIVE_SCHEMA:
        if key == "arrivals":
            exprs += [pl.when(arrivals != _SCENARIO_DEFAULT).then(pl.coalesce(kind, arrivals))
                      .alias(key),
                      pl.when(kind == "poisson").then(detail).alias("arrival_rate_per_h"),
                      pl.when(kind == "trace").then(detail).alias("trace")]
        elif key in SWITCH_LEVELS:
            exprs.append(pl.when(pl.col(key) != _SCENARIO_DEFAULT).then(pl.col(key)).alias(key))
        else:
            exprs.append(pl.col(key))
    return exprs


def scan_dataset(directory: Path, values: dict[str, pl.DataType],
                 required: Iterable[str]) -> pl.LazyFrame | None:
    """The rows of one ``runs/`` or ``jobs/`` dataset of the fixed layout; None without files.

    Parameters
    ----------
    directory : Path
        The dataset (its hive keys are read from the folders below it only).
    values : dict of column name -> dtype
        The file columns read, in this order after the keys; null where a file lacks one.
    required : iterable of str
        Columns the first file of each ``point=`` folder must have.

    Raises
    ------
    InputError
        A file out of the fixed layout (as :func:`find_runs`), or the first file of a folder
        cannot be read or lacks a required column.
    """
    files = _result_files(directory)
    for file in {f.parent: f for f in reversed(files)}.values():  # the first of each folder
        try:
            names = pl.read_parquet_schema(file)
        except (pl.exceptions.PolarsError, OSError) as err:
            raise InputError(str(file), first_line(err)) from None
        missing = [c for c in required if c not in names]
        if missing:
            raise InputError(str(file), f"missing column(s) {', '.join(missing)}")
    if not files:
        return None
    lf = pl.scan_parquet(directory, hive_partitioning=True, hive_schema=HIVE_SCHEMA,
                         hidden_file_prefix=_HIDDEN, schema=values,
                         missing_columns="insert", extra_columns="ignore")
    return lf.select(*_switches_view(), *values)


def scan_runs(paths: Iterable[str | os.PathLike[str]]) -> pl.LazyFrame:
    """All result rows under ``paths`` as one lazy frame.

    Parameters
    ----------
    paths : iterable of path-like
        As for :func:`find_runs`.

    Returns
    -------
    polars.LazyFrame
        Columns: the hive keys in path order, typed by
        :data:`~bacepipe.analysis.schema.HIVE_SCHEMA`, ``arrivals`` followed by
        ``arrival_rate_per_h`` and ``trace`` (str); ``plan_slack``; ``seed``, ``topology``
        (i64), ``scheduler`` (str); the metrics of :data:`~bacepipe.analysis.schema.METRICS`
        (f64); the SPEC §15 yardsticks of :data:`~bacepipe.analysis.schema.YARDSTICK_COLUMNS`.
        A value column a file lacks is null. Rows keep the order of :func:`find_runs`, so
        "first" means "from the earlier path".

    Raises
    ------
    InputError
        As :func:`find_runs` and :func:`scan_dataset`.
    """
    return pl.concat([scan_dataset(runs_dir, _RUN_VALUES, REQUIRED)
                      for runs_dir in find_runs(paths)])
