"""The sweep engine (SPEC §8, §10): many topologies × schedulers per point, fanned out over
processes (joblib/loky) or a dask cluster, written as hive-partitioned Parquet that a re-run
resumes.

- :mod:`~bacepipe.sweep.config`: the Hydra structured config and its validation.
- :mod:`~bacepipe.sweep.chunks`: the pure worker (one chunk → columns).
- :mod:`~bacepipe.sweep.backends`: in-process, loky and dask fan-out.
- :mod:`~bacepipe.sweep.store`: on-disk layout, atomic writes, resume.
- :mod:`~bacepipe.sweep.engine`: one point end to end, and its summary.
- :mod:`~bacepipe.sweep.app`: the command line (``python -m bacepipe.sweep``).

In Python: ``run_point(validate({"topologies": 50, "bandwidth_scale": 0.3}))``.
"""

from bacepipe.sweep.config import SweepConfig, SweepSettings, validate
from bacepipe.sweep.engine import PointReport, Summary, format_summary, run_point

__all__ = ["PointReport", "Summary", "SweepConfig", "SweepSettings", "format_summary",
           "run_point", "validate"]
