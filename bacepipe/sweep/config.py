"""The sweep's settings (Hydra's structured config), and their validation into frozen settings.

Every setting is declared once, in :class:`bacepipe.settings.SweepConfig` (type, default, unit,
check, help, roles). It is registered in Hydra's ConfigStore as ``sweep_schema``;
``conf/config.yaml`` builds on it and only overrides values. :func:`validate` turns a composed
config into :class:`~bacepipe.settings.SweepSettings`, each field checked by its declared check
in declaration order, then the bounds that tie fields together, or raises one
:class:`~bacepipe.errors.InputError` naming the first bad field. Validation is pure: it does no
I/O (a scenario file is read later, by :func:`bacepipe.sweep.engine.prepare_point`, still before
any simulation starts).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from bacepipe.errors import InputError
from bacepipe.model.batch import ScenarioBatch
from bacepipe.model.generate import BUILTIN_SCENARIOS, check_gpu_mix
from bacepipe.model.scenario import parse_hardware, scale_gpus
from bacepipe.model.tables import GPU_CHOICES
from bacepipe.settings import DEFAULTS, SETTINGS, SweepConfig, SweepSettings

#: Repository root: ``conf/`` (the Hydra config) and ``sweeps/`` (presets) live there.
REPO_ROOT = Path(__file__).resolve().parents[2]
CONF_DIR = REPO_ROOT / "conf"
SWEEPS_DIR = REPO_ROOT / "sweeps"


def register_configs() -> None:
    """Register the schema in Hydra's ConfigStore (idempotent)."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name="sweep_schema", node=SweepConfig)


#: Largest point ``optimal=true`` accepts (regions, jobs, GPUs of a region after gpu_scale).
#: CP-SAT proves 3 regions × 4 jobs × <= 16 GPUs a region in seconds and 4 regions × 4 jobs in
#: about 15 s; 6 jobs on 3 regions may take a minute (docs/optimality.md,
#: benchmarks/optimal_time.py). Up to this size a point finishes in hours at worst (the time
#: limit bounds each topology); past it OPT is rarely proven and the model grows like R!.
OPTIMAL_MAX_REGIONS, OPTIMAL_MAX_JOBS, OPTIMAL_MAX_GPUS = 4, 6, 16


#: Scenarios whose GPU counts are drawn per topology from GPU_CHOICES (SPEC §8).
_DRAWN_GPUS = ("random", "aws10")


def check_optimal_size(settings: SweepSettings, first: ScenarioBatch) -> None:
    """Refuse ``optimal=true`` on a point larger than the limits above (one line): sized from
    its topology 0 (``first``), GPUs from the largest possible draw where they are drawn."""
    regions, jobs = first.gpus.shape[1], first.params_b.shape[1]
    if settings.scenario in _DRAWN_GPUS:
        gpus = int(scale_gpus(np.asarray([max(GPU_CHOICES)]), settings.gpu_scale)[0])
    else:
        gpus = int(first.gpus.max())
    if regions > OPTIMAL_MAX_REGIONS or jobs > OPTIMAL_MAX_JOBS or gpus > OPTIMAL_MAX_GPUS:
        raise InputError("optimal", f"exact OPT is for small points: at most "
                         f"{OPTIMAL_MAX_REGIONS} regions, {OPTIMAL_MAX_JOBS} jobs and "
                         f"{OPTIMAL_MAX_GPUS} GPUs a region after gpu_scale, this point has "
                         f"{regions} regions, {jobs} jobs and up to {gpus} GPUs a region "
                         "(e.g. num_regions=3 num_jobs=4 gpu_scale=0.0625)")


#: Memory one chunk may need (its batch and result arrays), bytes; see :func:`_check_size`.
MAX_CHUNK_BYTES = 4 * 2**30
#: Chunks (= Parquet files) one point may have.
MAX_CHUNKS = 1_000_000
#: Regions of the built-in scenarios other than ``random``, for the size estimate.
_FIXED_REGIONS = 10


def chunk_bytes(topologies: int, schedulers: int, jobs: int, regions: int,
                save_jobs: bool) -> int:
    """Rough memory of one chunk, bytes: the result's ``path`` and ``path_gpus`` arrays
    (int64[T, S, J, min(R, layers)] each, bounded by R here), the links and latency matrices
    (float64[T, R, R]) and, with ``save_jobs``, ~200 bytes per job row."""
    per_topology = 16 * schedulers * jobs * regions + 16 * regions * regions
    if save_jobs:
        per_topology += 200 * schedulers * jobs
    return topologies * per_topology


def _check_size(checked: dict) -> None:
    """Bounds on products of fields that are each within bounds: too many chunk files, or a
    chunk too large for memory. (A scenario file's own size is not known here.)"""
    topologies, chunk = checked["topologies"], checked["chunk_size"]
    chunks = -(-topologies // chunk)
    if chunks > MAX_CHUNKS:
        raise InputError("chunk_size", f"{topologies} topologies in chunks of {chunk} make "
                         f"{chunks} files (at most {MAX_CHUNKS:,}); raise chunk_size")
    if checked["scenario"] not in BUILTIN_SCENARIOS:
        return
    regions = checked["num_regions"] if checked["scenario"] == "random" else _FIXED_REGIONS
    size = chunk_bytes(min(chunk, topologies), len(checked["schedulers"]), checked["num_jobs"],
                       regions, checked["save_jobs"])
    if size > MAX_CHUNK_BYTES:
        one = chunk_bytes(1, len(checked["schedulers"]), checked["num_jobs"], regions,
                          checked["save_jobs"])
        field_, fix = (("chunk_size", "lower chunk_size") if one <= MAX_CHUNK_BYTES
                       else ("num_jobs", "lower num_jobs or num_regions"))
        raise InputError(field_, f"a chunk of {min(chunk, topologies)} topologies × "
                         f"{checked['num_jobs']} jobs × {regions} regions needs about "
                         f"{size / 2**30:.1f} GiB of memory (at most "
                         f"{MAX_CHUNK_BYTES / 2**30:g} GiB); {fix}")


def check_value(key: str, value) -> None:
    """Check one value of a top-level field (``hardware.*`` included); raise InputError if bad.

    Used to reject bad sweep values (``-m bandwidth_scale=1,-1``) before a multirun starts.
    """
    if key.startswith("hardware."):
        parse_hardware({key.split(".", 1)[1]: value})
    elif key in SETTINGS:
        SETTINGS[key].check(value, key)


def validate(cfg: DictConfig | Mapping) -> SweepSettings:
    """The settings of a composed config, or an InputError naming the first bad field.

    Parameters
    ----------
    cfg : a config composed from :class:`SweepConfig` (Hydra's) or a plain mapping with its
        keys; missing keys take the declared defaults, unknown keys are an error.
    """
    try:
        if isinstance(cfg, DictConfig):
            raw = OmegaConf.to_container(cfg, resolve=True)
        else:
            raw = {k: OmegaConf.to_container(v, resolve=True) if OmegaConf.is_config(v) else v
                   for k, v in cfg.items()}
    except OmegaConfBaseException as err:  # an interpolation that does not resolve: ${oops}
        text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise InputError(str(getattr(err, "full_key", None) or "config"), text) from None
    for key in raw:
        if key not in SETTINGS:
            raise InputError(str(key), f"unknown key (known: {', '.join(sorted(SETTINGS))})")
    checked = {name: s.check(raw.get(name, DEFAULTS[name]), name)
               for name, s in SETTINGS.items()}
    _check_size(checked)
    if checked["dask_address"] is not None and checked["backend"] != "dask":
        raise InputError("dask_address", "is only used with backend=dask")
    if checked["arrivals"] != "poisson":
        # A rate belongs to Poisson arrivals: a grid over arrivals=null,poisson keeps one rate.
        checked["arrival_rate_per_h"] = None
    elif checked["arrival_rate_per_h"] is None:
        raise InputError("arrival_rate_per_h", "is required with arrivals=poisson")
    check_gpu_mix(checked["gpu_mix"], checked["scenario"])
    if checked["optimal"] and checked["gpu_mix"] != "none":
        raise InputError("optimal", "needs gpu_mix=none: bacepipe.optimal models one GPU type "
                         "(SPEC §16)")
    return SweepSettings(**checked)
