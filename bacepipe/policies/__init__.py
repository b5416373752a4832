"""The registry of scheduler parts and schedulers, the one place that names them (SPEC §7, §13-14).

A scheduler is an ordering × a start rule × a placement policy × an allocator, with a role
(``paper``, ``baseline``, ``ablation``, ``ours``, ``user``). Each built-in part is one module of
this package holding its compiled kernel (``kernel``, see :mod:`bacepipe.policies.api`) and its
plain-Python twin (``twin``, read by :mod:`bacepipe.sim.reference`); a new built-in part is that
file plus one line in :data:`BUILTIN_PARTS`. A user's plug-in registers the same way from its own
file with :func:`register_part` and :func:`register_scheduler`, loaded by :func:`load_plugins`.

This module imports no numba: the analysis reads names and roles from it. Part modules are
imported on first use.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import NamedTuple

from bacepipe.errors import InputError
from bacepipe.model.rules import START_RULES

KINDS = ("ordering", "start_rule", "placement", "allocator")
ROLES = ("paper", "baseline", "ablation", "ours", "user")
#: The scheduler every ratio of the report is relative to.
REFERENCE_SCHEDULER = "bace_pipe"

#: Built-in parts: kind -> part names, each the module ``bacepipe.policies.<name>``.
BUILTIN_PARTS = {
    "ordering": ("fcfs", "priority", "spt"),
    "start_rule": ("greedy", "wait_if_faster", "spt_plan"),
    "placement": ("lcf", "ldf", "cr_lcf", "cr_ldf", "pathfinder"),
    "allocator": ("fill", "cost_min", "uniform"),
}


class Scheduler(NamedTuple):
    """A scheduler's parts and role. ``start_rule`` None follows the run's rules
    (:class:`bacepipe.model.rules.Rules`)."""

    ordering: str
    placement: str
    allocator: str
    role: str
    start_rule: str | None = None


#: SPEC §7, §IV-E and §14. LCF and LDF place on one region, where every allocator gives
#: min(K, G_r).
BUILTIN_SCHEDULERS = {
    "bace_pipe": Scheduler("priority", "pathfinder", "cost_min", "paper"),
    "lcf": Scheduler("fcfs", "lcf", "fill", "baseline"),
    "ldf": Scheduler("fcfs", "ldf", "fill", "baseline"),
    "cr_lcf": Scheduler("fcfs", "cr_lcf", "fill", "baseline"),
    "cr_ldf": Scheduler("fcfs", "cr_ldf", "fill", "baseline"),
    "bace_pipe_no_priority": Scheduler("fcfs", "pathfinder", "cost_min", "ablation"),
    "bace_pipe_no_pathfinder": Scheduler("priority", "cr_ldf", "fill", "ablation"),
    "bace_pipe_no_costmin": Scheduler("priority", "pathfinder", "uniform", "ablation"),
    "spt_wait": Scheduler("spt", "pathfinder", "cost_min", "ours", "wait_if_faster"),
    "spt_plan": Scheduler("spt", "pathfinder", "cost_min", "ours", "spt_plan"),
}

#: Every registered scheduler (built-ins, then plug-ins in registration order).
SCHEDULER_PARTS: dict[str, Scheduler] = dict(BUILTIN_SCHEDULERS)
#: Names of the built-in schedulers (``SCHEDULER_PARTS`` also holds the plug-ins' once loaded).
SCHEDULERS: tuple[str, ...] = tuple(SCHEDULER_PARTS)
#: The schedulers of the paper (SPEC §7): its claims (SPEC §11) read only these.
PAPER_SCHEDULERS = tuple(n for n, s in BUILTIN_SCHEDULERS.items()
                         if s.role in ("paper", "baseline", "ablation"))


class Part(NamedTuple):
    """A registered part: its compiled kernel (None: plain Python only), its plain-Python twin
    (None: compiled only), whether it is static, and where it comes from.

    Static, for an ordering: a job's key never changes while it waits. For a built-in start
    rule: a job it holds back on a cluster state (GPUs, bandwidth, running jobs) and prices it
    holds back again on the same state and prices at any later time (the compiled loop then
    skips deciding it again; built-in placements are pure functions of that state)."""

    kind: str
    name: str
    kernel: object
    twin: object
    static: bool
    source: str


_user_parts: dict[tuple[str, str], Part] = {}
_loaded_builtins: dict[tuple[str, str], Part] = {}
_plugin_sources: dict[str, str] = {}  # scheduler or part name -> content hash of its file


def part_names(kind: str) -> tuple[str, ...]:
    """Registered parts of one kind: built-ins first, then plug-ins."""
    return BUILTIN_PARTS[kind] + tuple(n for k, n in _user_parts if k == kind)


def get_part(kind: str, name: str) -> Part:
    """The part ``name`` of ``kind`` (a built-in module is imported on first use)."""
    key = (kind, name)
    if key in _user_parts:
        return _user_parts[key]
    if name not in BUILTIN_PARTS.get(kind, ()):
        raise InputError(kind, f"unknown {kind} part {name!r} (known: "
                         f"{', '.join(part_names(kind))})")
    if key not in _loaded_builtins:
        module = importlib.import_module(f"{__name__}.{name}")
        _loaded_builtins[key] = Part(kind, name, _compiled(module.kernel), module.twin,
                                     getattr(module, "STATIC", False), module.__name__)
    return _loaded_builtins[key]


def _compiled(kernel):
    """``kernel`` compiled for its kind's signature (:func:`bacepipe.policies.api.compiled`;
    that module loads numba, which this one does not)."""
    return importlib.import_module(f"{__name__}.api").compiled(kernel)


def role_of(name: str) -> str:
    """The role of a scheduler; names not registered here (a plug-in's) are ``user``."""
    spec = SCHEDULER_PARTS.get(name)
    return spec.role if spec is not None else "user"


def parts_of(name: str, start_rule: str = "greedy") -> dict[str, Part]:
    """The four parts of scheduler ``name``, its start rule resolved against the run's
    ``start_rule`` (:class:`bacepipe.model.rules.Rules`)."""
    spec = SCHEDULER_PARTS[name]
    names = {"ordering": spec.ordering, "start_rule": spec.start_rule or start_rule,
             "placement": spec.placement, "allocator": spec.allocator}
    return {kind: get_part(kind, part) for kind, part in names.items()}


def engine_of(name: str) -> str:
    """``compiled`` when every part of the scheduler has a kernel, else ``reference`` (the
    plain-Python event loop runs it)."""
    for start_rule in START_RULES:
        if any(p.kernel is None for p in parts_of(name, start_rule).values()):
            return "reference"
    return "compiled"


def identity_of(name: str) -> str:
    """What a stored result of scheduler ``name`` depends on beyond the package's sources: its
    parts, and the content hash of each plug-in file it uses ("" for a built-in)."""
    spec = SCHEDULER_PARTS[name]
    used = [name, *(p for p in (spec.ordering, spec.start_rule, spec.placement, spec.allocator)
                    if p)]
    hashes = sorted({_plugin_sources[n] for n in used if n in _plugin_sources})
    return "" if name in BUILTIN_SCHEDULERS else f"{spec}|{','.join(hashes)}"


def check_schedulers(names, field: str = "scheduler") -> tuple[str, ...]:
    """The names as a tuple, or an InputError naming the first unknown one."""
    names = (names,) if isinstance(names, str) else tuple(names)
    if not names:
        raise InputError(field, "no scheduler given")
    for name in names:
        if not isinstance(name, str) or name not in SCHEDULER_PARTS:
            raise InputError(field, f"unknown scheduler {name!r} (known: "
                             f"{', '.join(SCHEDULER_PARTS)})")
    return names


# --------------------------------------------------------------------------- plug-ins

_SIGNATURE_PARAMS = {  # the parameters of each kind's twin, for a one-line contract check
    "ordering": 4, "start_rule": 5, "placement": 5, "allocator": 4}
_loading: list[str] = []  # the plug-in being loaded, for error messages


def _where() -> str:
    return f"plugin {_loading[-1]}" if _loading else "plugin"


def register_part(kind: str, name: str, *, kernel=None, twin=None, static: bool = False) -> None:
    """Register a part of ``kind`` under ``name``.

    Parameters
    ----------
    kernel : a function compiled with the decorator of its kind in :mod:`bacepipe.policies.api`
        (``ordering_kernel``, ...): the scheduler then runs in the compiled core.
    twin : the same part in plain Python, with the signature of the built-in twins (see
        ``bacepipe/policies/fcfs.py`` etc.): without a kernel the scheduler runs through the
        reference event loop, with the same rows.
    static : for an ordering, True when a job's key never changes while it waits (other kinds:
        ignored; only built-in start rules are trusted to be static, see :class:`Part`).

    Raises
    ------
    InputError
        Unknown kind, a clash with a registered name, no kernel and no twin, a kernel compiled
        for another kind, a twin with the wrong number of parameters.
    """
    where = _where()
    if kind not in KINDS:
        raise InputError(where, f"unknown part kind {kind!r} (one of {', '.join(KINDS)})")
    if not isinstance(name, str) or not name.isidentifier():
        raise InputError(where, f"part name must be an identifier, got {name!r}")
    if name in part_names(kind):
        raise InputError(where, f"{kind} part {name!r} is already registered")
    if kernel is None and twin is None:
        raise InputError(where, f"{kind} part {name!r} has neither a kernel nor a twin")
    if kernel is not None:
        made_for = getattr(kernel, "part_kind", None)
        if made_for != kind:
            raise InputError(where, f"{kind} part {name!r}: kernel must be compiled with "
                             f"bacepipe.policies.api.{kind}_kernel"
                             + (f" (it was made for {made_for})" if made_for else ""))
    if twin is not None:
        if not callable(twin):
            raise InputError(where, f"{kind} part {name!r}: twin is not callable")
        try:
            params = len(inspect.signature(twin).parameters)
        except (TypeError, ValueError):
            params = _SIGNATURE_PARAMS[kind]
        if params != _SIGNATURE_PARAMS[kind]:
            raise InputError(where, f"{kind} part {name!r}: twin takes {params} parameters, "
                             f"a {kind} twin takes {_SIGNATURE_PARAMS[kind]}")
    _user_parts[(kind, name)] = Part(kind, name, kernel, twin, bool(static),
                                     _loading[-1] if _loading else "")
    if _loading:
        _plugin_sources[name] = _plugin_hashes[_loading[-1]]


def register_scheduler(name: str, *, ordering: str, placement: str, allocator: str,
                       start_rule: str | None = None, role: str = "user") -> None:
    """Register scheduler ``name`` made of registered parts (``start_rule`` None: the run's).
    Raises InputError on a clash, an unknown part or role."""
    where = _where()
    if not isinstance(name, str) or not name.isidentifier():
        raise InputError(where, f"scheduler name must be an identifier, got {name!r}")
    if name in SCHEDULER_PARTS:
        raise InputError(where, f"scheduler {name!r} is already registered")
    if role not in ROLES or role == "paper":
        raise InputError(where, f"role must be one of {', '.join(ROLES[1:])}, got {role!r}")
    chosen = {"ordering": ordering, "placement": placement, "allocator": allocator}
    if start_rule is not None:
        chosen["start_rule"] = start_rule
    for kind, part in chosen.items():
        if part not in part_names(kind):
            raise InputError(where, f"scheduler {name!r}: unknown {kind} part {part!r} "
                             f"(known: {', '.join(part_names(kind))})")
    SCHEDULER_PARTS[name] = Scheduler(ordering, placement, allocator, role, start_rule)
    if _loading:
        _plugin_sources[name] = _plugin_hashes[_loading[-1]]


_plugin_hashes: dict[str, str] = {}  # plug-in (as given) -> sha256 of its file


def _plugin_path(plugin: str) -> Path | None:
    """The file of a plug-in given as a path (``.py``) or a module name (None if not found)."""
    if plugin.endswith(".py"):
        path = Path(plugin).expanduser().resolve()
        return path if path.is_file() else None
    spec = importlib.util.find_spec(plugin) if plugin.replace(".", "").isidentifier() else None
    return Path(spec.origin) if spec is not None and spec.origin else None


def load_plugins(plugins) -> tuple[str, ...]:
    """Import each plug-in (a ``.py`` file path or a module name) once; it registers its parts
    and schedulers as it is imported. Returns the plug-ins as resolved file paths.

    Raises
    ------
    InputError
        ``plugin <name>: problem`` for a missing file, an import that fails, or a contract
        violation; nothing is registered from a plug-in that fails.
    """
    if isinstance(plugins, str):
        plugins = [plugins]
    resolved = []
    for plugin in plugins or ():
        if not isinstance(plugin, str) or not plugin.strip():
            raise InputError("plugins", f"must be file paths or module names, got {plugin!r}")
        path = _plugin_path(plugin)
        if path is None:
            raise InputError(f"plugin {plugin}", "no such file or module")
        key = str(path)
        resolved.append(key)
        if key in _plugin_hashes:
            continue
        _plugin_hashes[key] = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        before_parts, before_schedulers = dict(_user_parts), dict(SCHEDULER_PARTS)
        _loading.append(key)
        try:
            module_name = f"bacepipe_plugin_{_plugin_hashes[key]}"
            spec = importlib.util.spec_from_file_location(module_name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
        except InputError as err:
            _rollback(key, before_parts, before_schedulers)
            raise InputError(f"plugin {plugin}", err.problem) from None
        except Exception as err:  # any failure of a user's file is reported in one line
            _rollback(key, before_parts, before_schedulers)
            raise InputError(f"plugin {plugin}", _one_line(err, path)) from None
        finally:
            _loading.pop()
    return tuple(resolved)


def _one_line(err: Exception, path: Path) -> str:
    """An exception of a plug-in's import in one line. A numba compile error's first line says
    only which pipeline step failed: take the problem it reports ("No implementation of ...")
    and the plug-in's line it points at instead."""
    lines = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
    if not lines:
        return type(err).__name__
    if not type(err).__module__.startswith("numba"):
        return f"{type(err).__name__}: {lines[0]}"
    i = next((i for i, line in enumerate(lines) if line.startswith((
        "No implementation", "Unknown attribute", "Untyped global", "Cannot"))), 0)
    problem = lines[i]
    if problem.endswith(":") and i + 1 < len(lines) and lines[i + 1].startswith(">>>"):
        problem = f"{problem} {lines[i + 1].removeprefix('>>>').strip()}"
    where = [i for i, line in enumerate(lines) if line.startswith('File "') and
             line.split('"')[1].endswith(path.name)]
    at = ""
    if where and where[-1] + 2 < len(lines):  # File "...", line N: / def ...: / <the line>
        i = where[-1]
        at = f" at line {lines[i].rsplit('line ', 1)[-1].rstrip(':')} ({lines[i + 2]})"
    hint = (" — a compiled part must not allocate (docs/extending.md)"
            if any(f"function {fn}>" in problem for fn in _ALLOCATING) else "")
    return f"{type(err).__name__}{at}: {problem}{hint}"


#: numpy functions that allocate, which a compiled part cannot call (see bacepipe.core.jit).
_ALLOCATING = ("zeros", "empty", "ones", "full", "array", "arange", "copy", "sort", "argsort",
               "zeros_like", "empty_like", "ones_like", "full_like", "concatenate")


def _rollback(key, parts, schedulers) -> None:
    _user_parts.clear()
    _user_parts.update(parts)
    SCHEDULER_PARTS.clear()
    SCHEDULER_PARTS.update(schedulers)
    _plugin_hashes.pop(key, None)
