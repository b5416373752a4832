"""A golden small sweep: the runs table of two tiny sweep points, compared with a committed
copy. It fails on any change of the model or the layout that was not meant; after a meant change,
regenerate it with ``BACEPIPE_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py`` and say
why in the commit."""

import os
from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

from bacepipe.analysis import scan_runs
from bacepipe.sweep import run_point, validate

GOLDEN = Path(__file__).parent / "golden" / "small_sweep.csv"
#: The paper's eight schedulers (SPEC §7), named: a new scheduler adds no row here.
PAPER_EIGHT = ["bace_pipe", "lcf", "ldf", "cr_lcf", "cr_ldf", "bace_pipe_no_priority",
               "bace_pipe_no_pathfinder", "bace_pipe_no_costmin"]
POINTS = ({"scenario": "random", "topologies": 6, "bandwidth_scale": 0.9},
          {"scenario": "paper", "topologies": 3, "gpu_scale": 0.5, "num_jobs": 12})


def _small_sweep(root: Path) -> pl.DataFrame:
    for point in POINTS:
        run_point(validate({**point, "chunk_size": 4, "workers": 1, "progress": False,
                            "schedulers": PAPER_EIGHT, "results_dir": str(root)}))
    return (scan_runs([root]).drop("point").collect()
            .sort("scenario", "topology", "scheduler"))


def test_small_sweep_matches_golden(tmp_path):
    frame = _small_sweep(tmp_path)
    if os.environ.get("BACEPIPE_UPDATE_GOLDEN"):
        frame.write_csv(GOLDEN, float_precision=15)
    golden = pl.read_csv(GOLDEN, schema=frame.schema)
    assert_frame_equal(frame, golden, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
