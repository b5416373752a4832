"""The sweep engine (SPEC §8, §10): many topologies × schedulers per point, fanned out over
processes (joblib/loky) or a dask cluster, written as hive-partitioned Parquet that a re-run
resumes.

- :mod:`~bacepipe.sweep.config`: the Hydra structured config (declared in
  :mod:`bacepipe.settings`) and its validation.
- :mod:`~bacepipe.sweep.chunks`: the pure worker (one chunk → columns).
- :mod:`~bacepipe.sweep.backends`: in-process, loky and dask fan-out.
- :mod:`~bacepipe.sweep.store`: on-disk layout, the point's lock, resume.
- :mod:`~bacepipe.sweep.tables`: the result tables' schemas, atomic writes and reads.
- :mod:`~bacepipe.sweep.summary`: a point's summary and its text table.
- :mod:`~bacepipe.sweep.engine`: one point end to end.
- :mod:`~bacepipe.sweep.app`: the command line (``python -m bacepipe.sweep``).

In Python: ``run_point(validate({"topologies": 50, "bandwidth_scale": 0.3}))``.
"""

from bacepipe.sweep.config import SweepConfig, SweepSettings, validate
from bacepipe.sweep.engine import PointReport, run_point
from bacepipe.sweep.summary import Summary, format_summary

__all__ = ["PointReport", "Summary", "SweepConfig", "SweepSettings", "format_summary",
           "run_point", "validate"]
