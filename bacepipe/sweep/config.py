"""The sweep's structured config (Hydra), and its validation into plain, frozen settings.

:class:`SweepConfig` is the schema: every field with its default and unit. It is registered in
Hydra's ConfigStore as ``sweep_schema``; ``conf/config.yaml`` builds on it and only overrides
values. :func:`validate` turns a composed config into :class:`SweepSettings` or raises one
:class:`~bacepipe.errors.InputError` naming the first bad field. Validation is pure: it does no
I/O (a scenario file is read later, by :func:`bacepipe.sweep.engine.prepare_point`, still before
any simulation starts).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, make_dataclass
from functools import partial
from pathlib import Path
from typing import get_type_hints

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from bacepipe.errors import InputError
from bacepipe.model.generate import BUILTIN_SCENARIOS, OPTION_RULES, check_gpu_mix
from bacepipe.model.hardware import Hardware
from bacepipe.model.scenario import SWITCH_RULES, parse_hardware
from bacepipe.policies import SCHEDULERS, check_schedulers, load_plugins
from bacepipe.validation import choice, flag, number, text

BACKENDS = ("loky", "dask")
UNPLACEABLE = ("error", "record")
#: Repository root: ``conf/`` (the Hydra config) and ``sweeps/`` (presets) live there.
REPO_ROOT = Path(__file__).resolve().parents[2]
CONF_DIR = REPO_ROOT / "conf"
SWEEPS_DIR = REPO_ROOT / "sweeps"


#: Hardware constants of SPEC §1 as a Hydra structured config: made from
#: :class:`bacepipe.model.hardware.Hardware` field by field (its docstring says what each is), so
#: the two never drift apart. Not frozen, unlike Hardware, so that overrides can set values.
HardwareConfig = make_dataclass(
    "HardwareConfig",
    [(f.name, get_type_hints(Hardware)[f.name], field(default=f.default))
     for f in fields(Hardware)])


@dataclass
class SweepConfig:
    """One sweep point: the topologies of one scenario under a set of schedulers.

    Attributes
    ----------
    scenario : ``random`` (SPEC §8), ``paper``, ``motivation`` or the path of a scenario YAML
        file (SPEC §9; relative to the working directory).
    bandwidth_scale : factor on every bandwidth, links and regions' B_r (> 0).
    gpu_scale : factor on every region's GPU count (> 0; SPEC §10a rounding).
    num_jobs : jobs per topology for ``random`` and ``paper`` (Table III cycled).
    num_regions : regions per topology for ``random``.
    topologies : topologies of the point; topology t is generated from (seed, t) alone.
    seed : the sweep's seed (>= 0).
    schedulers : scheduler names of SPEC §7, simulated on every topology (paired).
    workers : parallel workers; null = every core this process may use.
    chunk_size : topologies per chunk (the unit of work, of resume and of one Parquet file).
        Chunk boundaries depend on this alone, never on ``workers`` or ``backend``.
    backend : ``loky`` (joblib processes on this machine) or ``dask`` (dask.distributed).
    dask_address : scheduler address of an existing dask cluster (``tcp://host:port``);
        null with ``backend=dask`` starts a LocalCluster on 127.0.0.1 for the run.
    save_jobs : also write the per-job table (``jobs/``, SPEC §10).
    validate : replay every simulated schedule against the invariants of SPEC §4
        (:func:`bacepipe.sim.invariants.check_schedule`, in the workers); a violation stops the
        run naming topology, scheduler and job (exit status 3). Slower; see docs/performance.md.
    unplaceable : what a run with a job that can never be placed (SPEC §10a; only the memory
        model of SPEC §12 makes one) does: ``error`` stops the sweep naming topology, scheduler
        and job; ``record`` writes that run's metrics as null and goes on.
    results_dir : root of the result datasets; keep it across runs so that re-runs resume.
    progress : progress bar over chunks; null = only when stderr is a terminal.
    hardware : SPEC §1 constants, applied to every topology.
    arrivals : SPEC §12 switch: ``batch``, ``poisson`` or ``trace``; null keeps the scenario's.
    arrival_rate_per_h : Poisson arrival rate, jobs per hour (required with
        ``arrivals=poisson``, ignored otherwise).
    trace : CSV of jobs (with ``arrivals=trace``; relative to the working directory).
    latency : ``none`` or ``geo`` (SPEC §12); null keeps the scenario's.
    memory_model : ``none`` or ``adam_mixed`` (SPEC §12); null keeps the scenario's.
    price_profile : ``flat`` or ``business`` time-of-use prices (SPEC §12); null keeps the
        scenario's.
    start_rule : ``greedy`` or ``wait_if_faster`` (SPEC §13), for every scheduler that does not
        fix its own.
    plan_slack : the slack ε of ``spt_plan`` (SPEC §14, >= 0); a column of the runs table.
    gpu_mix : GPU types of the regions (SPEC §16): ``none`` (the hardware's own values) or
        ``cloud`` (each region's type drawn from A6000, A100, L40S, H100; ``random`` and
        ``aws10`` only). A fixed hive level.
    plugins : Python files or module names that register schedulers (docs/extending.md);
        loaded before ``schedulers`` is checked, and in every worker.
    optimal : also compute SPEC §15's OPT of every topology (:func:`bacepipe.optimal.solve_batch`,
        CP-SAT, in the workers): the runs table's ``opt_avg_jct_h`` and ``opt_proven``, null
        otherwise. Small points only: at most :data:`OPTIMAL_MAX_REGIONS` regions,
        :data:`OPTIMAL_MAX_JOBS` jobs and :data:`OPTIMAL_MAX_GPUS` GPUs a region after
        ``gpu_scale``, one GPU type (``gpu_mix=none``); refused otherwise, before any work.
    optimal_time_limit_s : CP-SAT's wall-clock limit per topology, s (> 0); past it the best
        schedule found is kept and ``opt_proven`` is false.
    """

    scenario: str = "random"
    bandwidth_scale: float = 1.0
    gpu_scale: float = 1.0
    num_jobs: int = 8
    num_regions: int = 6
    topologies: int = 1000
    seed: int = 0
    schedulers: list[str] = field(default_factory=lambda: list(SCHEDULERS))
    workers: int | None = None
    chunk_size: int = 500
    backend: str = "loky"
    dask_address: str | None = None
    save_jobs: bool = False
    validate: bool = False
    unplaceable: str = "error"
    results_dir: str = "outputs/results"
    progress: bool | None = None
    hardware: HardwareConfig = field(default_factory=HardwareConfig)
    arrivals: str | None = None
    arrival_rate_per_h: float | None = None
    trace: str | None = None
    latency: str | None = None
    memory_model: str | None = None
    price_profile: str | None = None
    start_rule: str = "greedy"
    plan_slack: float = 0.2
    gpu_mix: str = "none"
    plugins: list[str] = field(default_factory=list)
    optimal: bool = False
    optimal_time_limit_s: float = 10.0


#: The SPEC §12 switches: passed to ``generate_batch`` when not null.
EXTENSIONS = ("arrivals", "arrival_rate_per_h", "trace", "latency", "memory_model",
              "price_profile")


@dataclass(frozen=True)
class SweepSettings:
    """A validated :class:`SweepConfig` in plain Python types.

    ``scenario`` is a built-in name or an absolute file path; ``scenario_label`` is the value of
    the ``scenario=`` partition (the name, or the file's stem). ``results_dir`` is absolute.
    ``workers`` is resolved (>= 1). ``extensions`` holds the SPEC §12 switches that are set
    (a trace path made absolute), as keyword arguments of ``generate_batch``. ``plugins`` are
    absolute file paths (module names as given). This object is what workers receive.
    """

    scenario: str
    scenario_label: str
    bandwidth_scale: float
    gpu_scale: float
    num_jobs: int
    num_regions: int
    topologies: int
    seed: int
    schedulers: tuple[str, ...]
    workers: int
    chunk_size: int
    backend: str
    dask_address: str | None
    save_jobs: bool
    unplaceable: str
    results_dir: Path
    progress: bool | None
    hardware: Hardware
    extensions: dict = field(default_factory=dict)
    validate: bool = False
    start_rule: str = "greedy"
    plan_slack: float = 0.2
    gpu_mix: str = "none"
    plugins: tuple[str, ...] = ()
    optimal: bool = False
    optimal_time_limit_s: float = 10.0

    @property
    def is_file(self) -> bool:
        """True when the scenario is a YAML file rather than a built-in name."""
        return self.scenario not in BUILTIN_SCENARIOS

    def to_dict(self) -> dict:
        """JSON-ready: paths as strings, hardware as a dict."""
        out = asdict(self)
        out["results_dir"] = str(self.results_dir)
        out["schedulers"] = list(self.schedulers)
        out["plugins"] = list(self.plugins)
        out["hardware"] = self.hardware.to_dict()
        return out


def register_configs() -> None:
    """Register the schema in Hydra's ConfigStore (idempotent)."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name="sweep_schema", node=SweepConfig)


def usable_cores() -> int:
    """Cores this process may run on (CPU affinity where the OS has it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


# --------------------------------------------------------------------------- field rules


def _scenario(v, name: str) -> str:
    given = text(v, name)
    if given in BUILTIN_SCENARIOS:
        return given
    if not given.endswith((".yaml", ".yml")):
        raise InputError(name, f"must be {', '.join(BUILTIN_SCENARIOS)} or the path of a "
                         f".yaml file, got {given!r}")
    return given


def _optional(rule):
    """``rule``, or null for "keep the scenario's"."""
    return lambda v, name: None if v is None else rule(v, name)


def _plugins(v, name: str) -> tuple[str, ...]:
    """File paths (made absolute) or module names, loaded here: their schedulers then pass
    :func:`_schedulers`."""
    if isinstance(v, str) or not isinstance(v, (list, tuple)):
        raise InputError(name, f"must be a list of Python files or module names, got {v!r}")
    out = tuple(os.path.abspath(p) if isinstance(p, str) and p.endswith(".py") else p
                for p in v)
    load_plugins(out)
    return out


def _schedulers(v, name: str) -> tuple[str, ...]:
    if isinstance(v, str) or not isinstance(v, (list, tuple)):
        raise InputError(name, f"must be a list of scheduler names, got {v!r}")
    names = check_schedulers(v, name)
    for i, n in enumerate(names):
        if n in names[:i]:
            raise InputError(name, f"lists {n!r} twice")
    return names


def _count(maximum: int):
    """An integer in [1, maximum]."""
    return partial(number, integer=True, minimum=1, maximum=maximum)


#: Rule per scalar field: (value, field name) -> checked value, or an InputError. The fields of
#: generation and of a scenario's switches have the rules generation and scenario files use.
RULES = {
    # plugins first: the schedulers they register are checked by the "schedulers" rule.
    "plugins": _plugins,
    "scenario": _scenario,
    # Upper bounds keep a typo (topologies=10**12, num_regions=10**6) from being attempted;
    # MAX_CHUNK_BYTES and MAX_CHUNKS below bound their products.
    "bandwidth_scale": OPTION_RULES["bandwidth_scale"],
    "gpu_scale": OPTION_RULES["gpu_scale"],
    "num_jobs": OPTION_RULES["num_jobs"],
    "num_regions": OPTION_RULES["num_regions"],
    "topologies": _count(10**8),
    "seed": OPTION_RULES["seed"],
    "schedulers": _schedulers,
    "workers": _optional(_count(1_024)),
    "chunk_size": _count(10**8),
    "backend": partial(choice, options=BACKENDS),
    "dask_address": _optional(text),
    "save_jobs": flag,
    "validate": flag,
    "unplaceable": partial(choice, options=UNPLACEABLE),
    "results_dir": text,
    "progress": _optional(flag),
    "arrivals": _optional(SWITCH_RULES["arrivals"]),
    "arrival_rate_per_h": _optional(SWITCH_RULES["arrival_rate_per_h"]),
    "trace": _optional(text),
    "latency": _optional(SWITCH_RULES["latency"]),
    "memory_model": _optional(SWITCH_RULES["memory_model"]),
    "price_profile": _optional(SWITCH_RULES["price_profile"]),
    "start_rule": SWITCH_RULES["start_rule"],
    "plan_slack": SWITCH_RULES["plan_slack"],
    "gpu_mix": OPTION_RULES["gpu_mix"],
    "optimal": flag,
    "optimal_time_limit_s": partial(number, minimum=0.0, strict=True, maximum=86_400),
}

#: Largest point ``optimal=true`` accepts (regions, jobs, GPUs of a region after gpu_scale).
#: CP-SAT proves 3 regions × 4 jobs × <= 16 GPUs a region in seconds and 4 regions × 4 jobs in
#: about 15 s; 6 jobs on 3 regions may take a minute (docs/optimality.md,
#: benchmarks/optimal_time.py). Up to this size a point finishes in hours at worst (the time
#: limit bounds each topology); past it OPT is rarely proven and the model grows like R!.
OPTIMAL_MAX_REGIONS, OPTIMAL_MAX_JOBS, OPTIMAL_MAX_GPUS = 4, 6, 16


def check_optimal_size(regions: int, jobs: int, gpus: int) -> None:
    """Refuse ``optimal=true`` on a point larger than the limits above (one line)."""
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
    if key == "hardware":
        parse_hardware(value)
    elif key.startswith("hardware."):
        parse_hardware({key.split(".", 1)[1]: value})
    elif key in RULES:
        RULES[key](value, key)


def validate(cfg: DictConfig | Mapping) -> SweepSettings:
    """The settings of a composed config, or an InputError naming the first bad field.

    Parameters
    ----------
    cfg : a config composed from :class:`SweepConfig` (Hydra's) or a plain mapping with its
        keys; missing keys take the schema's defaults, unknown keys are an error.
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
    known = {f.name for f in fields(SweepConfig)}
    for key in raw:
        if key not in known:
            raise InputError(str(key), f"unknown key (known: {', '.join(sorted(known))})")
    defaults = asdict(SweepConfig())
    values = {k: raw.get(k, defaults[k]) for k in known}
    checked = {k: rule(values[k], k) for k, rule in RULES.items()}
    _check_size(checked)
    hardware = parse_hardware(values["hardware"])
    if checked["dask_address"] is not None and checked["backend"] != "dask":
        raise InputError("dask_address", "is only used with backend=dask")
    extensions = {k: checked[k] for k in EXTENSIONS if checked[k] is not None}
    if extensions.get("arrivals") != "poisson":
        # A rate belongs to Poisson arrivals: a grid over arrivals=null,poisson keeps one rate.
        extensions.pop("arrival_rate_per_h", None)
    elif "arrival_rate_per_h" not in extensions:
        raise InputError("arrival_rate_per_h", "is required with arrivals=poisson")
    if "trace" in extensions:
        extensions["trace"] = os.path.abspath(extensions["trace"])
    scenario = checked["scenario"]
    check_gpu_mix(checked["gpu_mix"], scenario)
    if checked["optimal"] and checked["gpu_mix"] != "none":
        raise InputError("optimal", "needs gpu_mix=none: bacepipe.optimal models one GPU type "
                         "(SPEC §16)")
    if scenario not in BUILTIN_SCENARIOS:
        scenario = os.path.abspath(scenario)
    return SweepSettings(
        scenario=scenario,
        scenario_label=checked["scenario"] if scenario in BUILTIN_SCENARIOS
        else Path(scenario).stem,
        bandwidth_scale=checked["bandwidth_scale"], gpu_scale=checked["gpu_scale"],
        num_jobs=checked["num_jobs"], num_regions=checked["num_regions"],
        topologies=checked["topologies"], seed=checked["seed"],
        schedulers=checked["schedulers"],
        workers=checked["workers"] or usable_cores(),
        chunk_size=checked["chunk_size"], backend=checked["backend"],
        dask_address=checked["dask_address"], save_jobs=checked["save_jobs"],
        unplaceable=checked["unplaceable"], validate=checked["validate"],
        results_dir=Path(os.path.abspath(checked["results_dir"])),
        progress=checked["progress"], hardware=hardware, extensions=extensions,
        start_rule=checked["start_rule"], plan_slack=checked["plan_slack"],
        gpu_mix=checked["gpu_mix"], plugins=checked["plugins"], optimal=checked["optimal"],
        optimal_time_limit_s=checked["optimal_time_limit_s"],
    )
