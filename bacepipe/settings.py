"""Every setting of a sweep point, declared once: :class:`SweepConfig`, Hydra's structured config.

A field of :class:`SweepConfig` is a setting: its type and default, and in its metadata
(:func:`setting`) its unit, its check (bounds or choices), its help text and its roles:

- its domain: ``world`` (a keyword of :func:`bacepipe.model.generate.generate_batch`, or a key of
  a scenario file), ``scheduler`` (what the schedulers are told: a field of
  :class:`~bacepipe.model.rules.Rules`, the scheduler names, the plug-ins) or ``run`` (how the
  sweep runs: workers, backend, results_dir, ...);
- a hive level (its value names a folder of the results layout, in declaration order), a column
  (written on every row of the runs table), or neither;
- whether it changes results, and so is part of the point's identity: every setting is, unless
  declared otherwise.

Everything else comes from here: the validation (:func:`bacepipe.sweep.config.validate` checks
each field with its check, in declaration order), :class:`SweepSettings` (the validated values,
with the hive levels, the identity, the generation keywords and the rules they give), the results
layout (:data:`LEVELS`) and its readers' types (``bacepipe.analysis.HIVE_SCHEMA``), and the help
of ``python -m bacepipe.sweep --help``. No numba is loaded: the analysis reads these tables.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, is_dataclass, make_dataclass
from functools import partial
from pathlib import Path
from types import UnionType
from typing import NamedTuple, get_args, get_origin, get_type_hints

from bacepipe.errors import InputError
from bacepipe.model.generate import BUILTIN_SCENARIOS, OPTION_RULES
from bacepipe.model.hardware import Hardware
from bacepipe.model.rules import RULE_CHECKS, Rules
from bacepipe.model.scenario import SWITCH_RULES, parse_hardware
from bacepipe.policies import SCHEDULERS, check_schedulers, load_plugins
from bacepipe.validation import choice, flag, number, text

WORLD, SCHEDULER, RUN = "world", "scheduler", "run"
BACKENDS = ("loky", "dask")
UNPLACEABLE = ("error", "record")
#: The level value of a SPEC §12 switch left to the scenario (null in the config).
SCENARIO_DEFAULT = "default"


class Setting(NamedTuple):
    """What the declaration says of one setting besides its name, type and default.

    help : what it means, for ``--help`` and the docs.
    check : ``(value, name) -> value`` in its Python type, or an InputError naming the field.
    domain : :data:`WORLD`, :data:`SCHEDULER` or :data:`RUN`.
    unit : of its values ("" when it has none).
    level : None, or ``(value, values) -> str``: the name of its folder in the results layout
        (``values``: every checked setting).
    column : written on every row of the runs table.
    identity : ``False`` when it never changes a row; else ``True`` or ``value -> JSON value``:
        what the point's identity holds of it.
    """

    help: str
    check: Callable
    domain: str
    unit: str = ""
    level: Callable | None = None
    column: bool = False
    identity: bool | Callable = True


def setting(default, help: str, check: Callable, domain: str, **roles):
    """A field of :class:`SweepConfig`: ``default`` (a list is copied for each instance) and
    its :class:`Setting` (``roles``: ``unit``, ``level``, ``column``, ``identity``)."""
    meta = {"setting": Setting(help, check, domain, **roles)}
    if isinstance(default, list):
        return field(default_factory=partial(list, default), metadata=meta)
    if is_dataclass(default):
        return field(default_factory=type(default), metadata=meta)
    return field(default=default, metadata=meta)


# --------------------------------------------------------------------------- checks


def _or_null(value, name: str, check: Callable):
    return None if value is None else check(value, name)


def _optional(check: Callable) -> Callable:
    """``check``, or null: a switch left to the scenario."""
    return partial(_or_null, check=check)


def _count(maximum: int) -> Callable:
    """An integer in [1, maximum] (the bound keeps a typo from being attempted)."""
    return partial(number, integer=True, minimum=1, maximum=maximum)


def _scenario(value, name: str) -> str:
    """A built-in name, or the path of a ``.yaml`` file (made absolute; read later, by the
    engine, still before any work)."""
    given = text(value, name)
    if given in BUILTIN_SCENARIOS:
        return given
    if not given.endswith((".yaml", ".yml")):
        raise InputError(name, f"must be {', '.join(BUILTIN_SCENARIOS)} or the path of a "
                         f".yaml file, got {given!r}")
    return os.path.abspath(given)


def _path(value, name: str) -> str:
    """A file's path, made absolute."""
    return os.path.abspath(text(value, name))


def _folder(value, name: str) -> Path:
    """A folder, as an absolute Path."""
    return Path(_path(value, name))


def _plugins(value, name: str) -> tuple[str, ...]:
    """File paths (made absolute) or module names, loaded here: their schedulers then pass the
    check of ``schedulers``, declared after this one."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InputError(name, f"must be a list of Python files or module names, got {value!r}")
    out = tuple(os.path.abspath(p) if isinstance(p, str) and p.endswith(".py") else p
                for p in value)
    load_plugins(out)
    return out


def _schedulers(value, name: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InputError(name, f"must be a list of scheduler names, got {value!r}")
    names = check_schedulers(value, name)
    for i, n in enumerate(names):
        if n in names[:i]:
            raise InputError(name, f"lists {n!r} twice")
    return names


def usable_cores() -> int:
    """Cores this process may run on (CPU affinity where the OS has it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def _workers(value, name: str) -> int:
    """Null means every core this process may use."""
    return usable_cores() if value is None else _count(1_024)(value, name)


# --------------------------------------------------------------------------- levels, identity


def _written(value, values: Mapping) -> str:
    """A text level as the layout writes it; a switch left to the scenario as
    :data:`SCENARIO_DEFAULT`."""
    return SCENARIO_DEFAULT if value is None else str(value)


def _real(value, values: Mapping) -> str:
    """A real level as Python writes it (``1.0``, ``0.3``)."""
    return repr(float(value))


def _integer(value, values: Mapping) -> str:
    return str(int(value))


def _scenario_label(value, values: Mapping) -> str:
    """The built-in name, or the file's stem."""
    return value if value in BUILTIN_SCENARIOS else Path(value).stem


def _arrivals(value, values: Mapping) -> str:
    """``poisson-<rate per h>`` (the rate as :func:`_real`), ``trace-<file stem>``, or as
    :func:`_written`."""
    if value == "poisson":
        return f"poisson-{float(values['arrival_rate_per_h'])!r}"
    if value == "trace":
        return f"trace-{Path(values['trace']).stem}"
    return _written(value, values)


def _by_content(value):
    """An input file is known by its content (hashed by the engine), not by where it lies: a
    moved file is the same point, an edited one another."""
    return value if value is None or value in BUILTIN_SCENARIOS else "file"


#: Hardware constants of SPEC §1 as a Hydra structured config: made from
#: :class:`bacepipe.model.hardware.Hardware` field by field (its docstring says what each is), so
#: the two never drift apart. Not frozen, unlike Hardware, so that overrides can set values.
HardwareConfig = make_dataclass(
    "HardwareConfig",
    [(f.name, get_type_hints(Hardware)[f.name], field(default=f.default))
     for f in fields(Hardware)])


# --------------------------------------------------------------------------- the declaration


@dataclass
class SweepConfig:
    """One sweep point: the topologies of one scenario under a set of schedulers.

    Registered in Hydra's ConfigStore as ``sweep_schema``; ``conf/config.yaml`` builds on it and
    only overrides values. Each field is a setting (:func:`setting`); its help follows.
    """

    scenario: str = setting(
        "random", "``random`` (SPEC §8), ``paper``, ``motivation``, ``aws10`` or the path of a "
        "scenario YAML file (SPEC §9; relative to the working directory)", _scenario, WORLD,
        level=_scenario_label, identity=_by_content)
    bandwidth_scale: float = setting(
        1.0, "factor on every bandwidth, links and regions' B_r (SPEC §10a)",
        OPTION_RULES["bandwidth_scale"], WORLD, unit="×", level=_real)
    gpu_scale: float = setting(
        1.0, "factor on every region's GPU count (SPEC §10a rounding)",
        OPTION_RULES["gpu_scale"], WORLD, unit="×", level=_real)
    num_jobs: int = setting(
        8, "jobs per topology for ``random``, ``paper`` and ``aws10`` (Table III cycled); its "
        "level is the jobs each topology has", OPTION_RULES["num_jobs"], WORLD, level=_integer)
    num_regions: int = setting(
        6, "regions per topology for ``random``", OPTION_RULES["num_regions"], WORLD)
    topologies: int = setting(
        1000, "topologies of the point; topology t is generated from (seed, t) alone",
        _count(10**8), RUN)
    seed: int = setting(0, "the sweep's seed", OPTION_RULES["seed"], WORLD)
    plugins: list[str] = setting(
        [], "Python files or module names that register parts and schedulers "
        "(docs/extending.md); loaded before ``schedulers`` is checked, and in every worker "
        "(a plug-in scheduler's files record its own identity)", _plugins, SCHEDULER,
        identity=False)
    schedulers: list[str] = setting(
        list(SCHEDULERS), "scheduler names (SPEC §7), simulated on every topology (paired; "
        "stored one file each, so adding one to a point only adds files)", _schedulers,
        SCHEDULER, identity=False)
    workers: int | None = setting(
        None, "parallel workers; null: every core this process may use", _workers, RUN,
        identity=False)
    chunk_size: int = setting(
        500, "topologies per chunk: the unit of work, of resume and of one Parquet file; "
        "chunk boundaries depend on this alone", _count(10**8), RUN, identity=False)
    backend: str = setting(
        "loky", "``loky`` (joblib processes on this machine) or ``dask`` (dask.distributed)",
        partial(choice, options=BACKENDS), RUN, identity=False)
    dask_address: str | None = setting(
        None, "scheduler address of an existing dask cluster (``tcp://host:port``); null with "
        "``backend=dask`` starts a LocalCluster on 127.0.0.1 for the run", _optional(text),
        RUN, identity=False)
    save_jobs: bool = setting(
        False, "also write the per-job table (``jobs/``, SPEC §10)", flag, RUN, identity=False)
    validate: bool = setting(
        False, "replay every schedule against the invariants of SPEC §4 in the workers; a "
        "violation stops the run (exit status 3). Slower; see docs/performance.md", flag, RUN,
        identity=False)
    unplaceable: str = setting(
        "error", "a run with a job that can never be placed (SPEC §10a; only the memory model "
        "of SPEC §12 makes one): ``error`` stops the sweep naming topology, scheduler and job; "
        "``record`` writes that run's metrics as null and goes on",
        partial(choice, options=UNPLACEABLE), RUN, identity=False)
    results_dir: str = setting(
        "outputs/results", "root of the result datasets; keep it across runs so that re-runs "
        "resume", _folder, RUN, identity=False)
    progress: bool | None = setting(
        None, "progress bar over chunks; null: only when stderr is a terminal",
        _optional(flag), RUN, identity=False)
    hardware: HardwareConfig = setting(
        HardwareConfig(), "SPEC §1 constants, applied to every topology (``hardware.mfu=0.5``)",
        parse_hardware, WORLD)
    arrivals: str | None = setting(
        None, "SPEC §12: ``batch``, ``poisson`` (with ``arrival_rate_per_h``) or ``trace`` "
        "(with ``trace``); null keeps the scenario's", _optional(SWITCH_RULES["arrivals"]),
        WORLD, level=_arrivals)
    arrival_rate_per_h: float | None = setting(
        None, "Poisson arrival rate (required with ``arrivals=poisson``, ignored otherwise)",
        _optional(SWITCH_RULES["arrival_rate_per_h"]), WORLD, unit="jobs/h")
    trace: str | None = setting(
        None, "CSV of jobs, with ``arrivals=trace`` (relative to the working directory)",
        _optional(_path), WORLD, identity=_by_content)
    latency: str | None = setting(
        None, "SPEC §12: ``none`` or ``geo``; null keeps the scenario's",
        _optional(SWITCH_RULES["latency"]), WORLD, level=_written)
    memory_model: str | None = setting(
        None, "SPEC §12: ``none`` or ``adam_mixed``; null keeps the scenario's",
        _optional(SWITCH_RULES["memory_model"]), WORLD, level=_written)
    price_profile: str | None = setting(
        None, "SPEC §12: ``flat`` or ``business`` time-of-use prices; null keeps the "
        "scenario's", _optional(SWITCH_RULES["price_profile"]), WORLD, level=_written)
    start_rule: str = setting(
        Rules.start_rule, "``greedy`` or ``wait_if_faster`` (SPEC §13), for every scheduler "
        "that does not fix its own", RULE_CHECKS["start_rule"], SCHEDULER, level=_written)
    plan_slack: float = setting(
        Rules.plan_slack, "the slack ε of ``spt_plan`` (SPEC §14)", RULE_CHECKS["plan_slack"],
        SCHEDULER, column=True)
    gpu_mix: str = setting(
        "none", "GPU types of the regions (SPEC §16): ``none`` (the hardware's own values) or "
        "``cloud`` (each region's type drawn from A6000, A100, L40S, H100; ``random`` and "
        "``aws10`` only)", OPTION_RULES["gpu_mix"], WORLD, level=_written)
    optimal: bool = setting(
        False, "also compute SPEC §15's OPT of every topology (CP-SAT, in the workers): the "
        "runs table's ``opt_avg_jct_h`` and ``opt_proven``, null otherwise; small points and "
        "``gpu_mix=none`` only (bacepipe.sweep.config.check_optimal_size)", flag, RUN)
    optimal_time_limit_s: float = setting(
        10.0, "CP-SAT's wall-clock limit per topology; past it the best schedule found is "
        "kept and ``opt_proven`` is false",
        partial(number, minimum=0.0, strict=True, maximum=86_400), RUN, unit="s")


#: Every setting's declaration, in declaration order (the order of checks and of the layout).
SETTINGS: dict[str, Setting] = {f.name: f.metadata["setting"] for f in fields(SweepConfig)}
#: Every setting's type, as annotated.
TYPES: dict[str, object] = {name: get_type_hints(SweepConfig)[name] for name in SETTINGS}
#: Every setting's default, as plain data (``hardware`` a dict).
DEFAULTS: dict[str, object] = asdict(SweepConfig())
#: The hive levels of the results layout, in path order (then ``point=``).
LEVELS = tuple(name for name, s in SETTINGS.items() if s.level is not None)
#: The settings written on every row of the runs table.
COLUMNS = tuple(name for name, s in SETTINGS.items() if s.column)
#: The SPEC §12 switches: world settings whose null keeps what the scenario says.
SWITCHES = tuple(name for name, s in SETTINGS.items()
                 if s.domain == WORLD and DEFAULTS[name] is None)


def level_values(values: Mapping) -> dict[str, str]:
    """The folder name of every level of :data:`LEVELS`, from checked values (every setting
    a level's name reads)."""
    return {name: SETTINGS[name].level(values[name], values) for name in LEVELS}


def _json(value):
    """A value as JSON holds it: a dataclass as a dict, a tuple as a list, a path as text."""
    if is_dataclass(value):
        return asdict(value)
    if isinstance(value, tuple):
        return list(value)
    return str(value) if isinstance(value, Path) else value


class _Derived:
    """What the declaration derives from a validated point (the methods of SweepSettings)."""

    def values(self) -> dict:
        """Every setting's value, by name."""
        return {name: getattr(self, name) for name in SETTINGS}

    @property
    def scenario_label(self) -> str:
        """The ``scenario=`` level: the built-in name or the file's stem."""
        return _scenario_label(self.scenario, {})

    @property
    def is_file(self) -> bool:
        """True when the scenario is a YAML file rather than a built-in name."""
        return self.scenario not in BUILTIN_SCENARIOS

    def levels(self) -> dict[str, str]:
        """The folder of every hive level (:data:`LEVELS`), in path order."""
        return level_values(self.values())

    def identity(self) -> dict:
        """What the point's identity holds of every setting that changes results (JSON-ready):
        a setting is in it unless declared ``identity=False``."""
        out = {}
        for name, s in SETTINGS.items():
            if s.identity is not False:
                value = getattr(self, name)
                out[name] = _json(value) if s.identity is True else s.identity(value)
        return out

    def world(self) -> dict:
        """The world settings, as keywords of :func:`bacepipe.model.generate.generate_batch`."""
        return {name: getattr(self, name) for name, s in SETTINGS.items() if s.domain == WORLD}

    def rules(self) -> Rules:
        """The schedulers' rules (SPEC §13-14) these settings give."""
        return Rules(**{name: getattr(self, name) for name in RULE_CHECKS})

    def columns(self) -> dict:
        """The settings written on every row of the runs table, by name."""
        return {name: getattr(self, name) for name in COLUMNS}

    def to_dict(self) -> dict:
        """JSON-ready: paths as strings, lists for tuples, hardware as a dict."""
        return {name: _json(value) for name, value in self.values().items()}


#: A validated :class:`SweepConfig`, field by field (so the two never drift apart).
SweepSettings = make_dataclass(
    "SweepSettings", [(name, TYPES[name]) for name in SETTINGS], bases=(_Derived,), frozen=True,
    namespace={"__module__": __name__, "__doc__": """A validated :class:`SweepConfig` (frozen).

    Made by :func:`bacepipe.sweep.config.validate`: the checked value of every setting in its
    Python type (tuples for lists, a :class:`~bacepipe.model.hardware.Hardware`, absolute
    paths, ``workers`` resolved, ``arrival_rate_per_h`` null unless ``arrivals=poisson``), and
    what the declaration derives from them. This object is what the engine, the workers,
    generation and storage receive.
    """})


def _rule_text(check: Callable) -> str:
    """The bounds or choices of a check, as the help shows them ("" when it has none)."""
    if check is flag:
        return "true | false"
    if not isinstance(check, partial):
        return ""
    kw = check.keywords
    if check.func is _or_null:
        inner = _rule_text(kw["check"])
        return f"null | {inner}" if inner else ""
    if check.func is choice:
        return " | ".join(kw["options"])
    if check.func is number:
        low, high = kw.get("minimum"), kw.get("maximum")
        bounds = [] if low is None else [f"{'>' if kw.get('strict') else '>='} {low:g}"]
        bounds += [] if high is None else [f"<= {high:g}"]
        return ("integer " if kw.get("integer") else "") + ", ".join(bounds)
    return ""


def scalar_type(name: str) -> type | None:
    """``str``, ``int`` or ``float`` for a setting that takes one such value (or null); None
    for lists, flags and nested configs."""
    hint = TYPES[name]
    kinds = [t for t in get_args(hint) if t is not type(None)] \
        if get_origin(hint) is UnionType else [hint]
    return kinds[0] if len(kinds) == 1 and kinds[0] in (str, int, float) else None


def choices(name: str) -> tuple[str, ...] | None:
    """The values a setting may take, when its check is a choice (null aside)."""
    check = SETTINGS[name].check
    while isinstance(check, partial) and check.func is _or_null:
        check = check.keywords["check"]
    return check.keywords["options"] if isinstance(check, partial) and check.func is choice \
        else None


def help_text() -> str:
    """Every setting, a paragraph each: its name and default, its unit and bounds or choices,
    its roles, its help (what ``python -m bacepipe.sweep --help`` lists)."""
    out = []
    for name, s in SETTINGS.items():
        default = "null" if DEFAULTS[name] is None else json.dumps(DEFAULTS[name])
        rule = ", ".join(filter(None, (s.unit, _rule_text(s.check))))
        roles = [s.domain, *(["level"] if s.level else []), *(["column"] if s.column else []),
                 *([] if s.identity is not False else ["not in the point's identity"])]
        out.append(f"{name} = {default}" + (f"  [{rule}]" if rule else "")
                   + f"  ({', '.join(roles)})\n"
                   + textwrap.fill(plain(s.help), 96, initial_indent="    ",
                                   subsequent_indent="    "))
    return "\n".join(out)


def plain(help: str) -> str:
    """A help text as a terminal shows it (no reStructuredText literals)."""
    return help.replace("``", "")
