"""Find the sweep engine's ``runs/`` datasets and scan them lazily as one frame (SPEC §10).

A result directory holds ``runs/key=value/.../<anything>.parquet``: hive-partitioned, one row per
(topology, scheduler). Every hive key is a sweep-point axis. Only files ending ``.parquet`` count;
temporaries (``*.tmp``) and hidden files (``.*``, ``_*``) are skipped.

The sweep writes a fixed-depth layout (``bacepipe.sweep.store.LEVELS``) that polars, pyarrow and
duckdb read directly (README, "Sweeps"). This module does what they cannot:

- find every ``runs/`` dataset under multirun directories, and read several as one frame;
- read only the keys below ``runs/`` (duckdb parses every ``k=v`` of the absolute path, so a
  Hydra run directory named like ``bandwidth_scale=0.5/`` above ``runs/`` adds a wrong value);
- read hand-made or older datasets whose depth varies (a leaf's keys are parsed per leaf);
- give the analysis its view of the SPEC §12 switches: a switch left to the scenario
  (``default``) is null ("off"), ``arrivals=poisson-<rate>`` and ``arrivals=trace-<stem>`` are
  split into ``arrivals`` plus ``arrival_rate_per_h`` / ``trace``, as the analysis groups them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote

import polars as pl

from bacepipe.analysis.schema import (
    HIVE_SCHEMA,
    ID_COLUMNS,
    METRICS,
    POINT_COLUMNS,
    REQUIRED,
    YARDSTICK_COLUMNS,
)
from bacepipe.errors import InputError

RUNS_DIR = "runs"
_NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
#: The level value of a SPEC §12 switch left to the scenario (``bacepipe.sweep.store``).
_SCENARIO_DEFAULT = "default"
_SWITCHES = ("arrivals", "latency", "memory_model", "price_profile")


def _is_result_file(name: str) -> bool:
    return name.endswith(".parquet") and not name.startswith((".", "_"))


def _result_files(runs_dir: Path) -> list[Path]:
    """Every result file under ``runs_dir``, sorted so that scans are reproducible."""
    files = []
    for top, dirs, names in os.walk(runs_dir):
        dirs.sort()
        files.extend(Path(top) / n for n in sorted(names) if _is_result_file(n))
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
        ``.parquet`` file. ``err.field`` is the path as given.
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


def _hive_value(key: str, text: str | None, where: Path) -> object:
    """``text`` parsed to the key's type (:data:`HIVE_SCHEMA`; ``seed``/``topology`` are ints)."""
    dtype = HIVE_SCHEMA.get(key, ID_COLUMNS.get(key, pl.String()))
    if text is None or dtype == pl.String():
        return text
    try:
        value = float(text) if dtype == pl.Float64() else int(text)
    except ValueError:
        kind = "a number" if dtype == pl.Float64() else "an integer"
        raise InputError(str(where), f"hive key {key}={text!r} is not {kind}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(str(where), f"hive key {key}={text!r} is not finite")
    return value


def hive_keys(leaf: Path, runs_dir: Path) -> dict[str, object]:
    """The typed hive keys of a partition directory, in path order.

    A path component counts when it holds exactly one ``=`` and a non-empty key (Hive's rule);
    keys and values are percent-decoded; ``__HIVE_DEFAULT_PARTITION__`` is null.
    """
    keys: dict[str, object] = {}
    for part in leaf.relative_to(runs_dir).parts:
        if part.count("=") != 1 or part.startswith("="):
            continue
        key, text = (unquote(s) for s in part.split("="))
        if key in keys:
            raise InputError(str(leaf), f"hive key {key!r} appears twice in the path")
        keys[key] = _hive_value(key, None if text == _NULL_PARTITION else text, leaf)
    return _switches_view(keys)


def _switches_view(keys: dict[str, object]) -> dict[str, object]:
    """SPEC §12 levels as the analysis reads them (see the module docstring)."""
    out = dict(keys)
    for key in _SWITCHES:
        if out.get(key) == _SCENARIO_DEFAULT:
            out[key] = None
    arrivals = out.get("arrivals")
    if isinstance(arrivals, str) and arrivals.startswith(("poisson-", "trace-")):
        kind, detail = arrivals.split("-", 1)
        items = list(out.items())
        at = [k for k, _ in items].index("arrivals")
        extra = {"arrival_rate_per_h" if kind == "poisson" else "trace": detail}
        out = dict(items[:at] + [("arrivals", kind), *extra.items()] + items[at + 1:])
    return out


def _scan_leaf(leaf: Path, files: list[Path], keys: dict[str, object]) -> pl.LazyFrame:
    lf = pl.scan_parquet(
        files, hive_partitioning=False, missing_columns="insert", extra_columns="ignore"
    )
    try:
        schema = lf.collect_schema()
    except (pl.exceptions.PolarsError, OSError) as err:
        raise InputError(str(files[0]), _first_line(err)) from None
    from_path = {k: v for k, v in keys.items() if k not in schema}
    missing = [c for c in REQUIRED if c not in schema and c not in from_path]
    if missing:
        raise InputError(str(files[0]), f"missing column(s) {', '.join(missing)}")
    exprs = [pl.col(name).cast(dtype) for name, dtype in POINT_COLUMNS.items() if name in schema]
    for key, value in from_path.items():
        dtype = HIVE_SCHEMA.get(key, ID_COLUMNS.get(key, pl.String()))
        exprs.append(pl.lit(value, dtype=dtype).alias(key))
    for name, dtype in ID_COLUMNS.items():
        if name not in from_path:
            exprs.append(pl.col(name).cast(dtype))
    for name, dtype in ({m: pl.Float64() for m in METRICS} | YARDSTICK_COLUMNS).items():
        if name in schema:
            exprs.append(pl.col(name).cast(dtype))
        else:
            exprs.append(pl.lit(None, dtype=dtype).alias(name))
    return lf.select(exprs)


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def scan_runs(paths: Iterable[str | os.PathLike[str]]) -> pl.LazyFrame:
    """All result rows under ``paths`` as one lazy frame.

    Parameters
    ----------
    paths : iterable of path-like
        As for :func:`find_runs`.

    Returns
    -------
    polars.LazyFrame
        Columns: the hive keys in order of first appearance (typed by
        :data:`~bacepipe.analysis.schema.HIVE_SCHEMA`, other keys ``str``; null where a dataset
        lacks a key), then ``seed``, ``topology`` (i64), ``scheduler`` (str) and the metrics of
        :data:`~bacepipe.analysis.schema.METRICS` (f64; null when a file lacks one), then the
        SPEC §15 yardsticks of :data:`~bacepipe.analysis.schema.YARDSTICK_COLUMNS` (null when a
        file lacks one). Rows keep the order of :func:`find_runs`, so "first" means "from the
        earlier path".

    Raises
    ------
    InputError
        As :func:`find_runs`; also a file without a required column or an unparsable hive value.
    """
    frames: list[pl.LazyFrame] = []
    axes: dict[str, None] = {}
    for runs_dir in find_runs(paths):
        by_leaf: dict[Path, list[Path]] = {}
        for file in _result_files(runs_dir):
            by_leaf.setdefault(file.parent, []).append(file)
        for leaf, files in by_leaf.items():
            keys = hive_keys(leaf, runs_dir)
            axes.update((k, None) for k in keys if k not in ID_COLUMNS and k not in METRICS)
            frame = _scan_leaf(leaf, files, keys)
            axes.update((k, None) for k in POINT_COLUMNS if k in frame.collect_schema())
            frames.append(frame)
    lf = pl.concat(frames, how="diagonal_relaxed")
    return lf.select(*axes, *ID_COLUMNS, *METRICS, *YARDSTICK_COLUMNS)
