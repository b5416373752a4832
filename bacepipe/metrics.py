"""Names of the per-run metrics of SPEC §10, in column order: the core fills them, the sweep
writes them as columns and the analysis reads them. Plain names, no imports, so the analysis can
share them without loading the simulator."""

METRICS = ("avg_jct_h", "total_cost", "energy_kwh", "makespan_h", "mean_wait_h", "mean_gpus",
           "multi_region_share", "gpu_utilization")
