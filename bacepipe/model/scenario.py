"""Scenarios: regions, links and jobs (SPEC §1, §9, §12), parsed and validated from YAML or a dict.

:func:`parse_scenario` is the only way in. It checks every field, fills the defaults, derives the
links (B_u + B_v)/2 when the matrix is left out, applies ``bandwidth_scale`` and ``gpu_scale``
(SPEC §10a) and returns a frozen :class:`Scenario` that holds the scaled values. Every problem is
an :class:`~bacepipe.errors.InputError` whose message names the field, e.g.
``regions[2].gpus: must be >= 0, got -1`` (the checks of :mod:`bacepipe.validation`).

A scenario is the world alone: the keys of a scenario file that set the schedulers' rules
(``start_rule``, ``plan_slack``) are split off before it is parsed (:mod:`bacepipe.model.rules`).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

import numpy as np
import yaml

from bacepipe.errors import InputError
from bacepipe.model.hardware import (
    GPU_CATALOG,
    HARDWARE_FIELDS,
    INTEGER_HARDWARE_FIELDS,
    GpuType,
    Hardware,
    default_gpu_type,
)
from bacepipe.model.tables import PRICE_PROFILES
from bacepipe.validation import choice, mapping, number, required, sequence, text

MEMORY_MODELS = ("none", "adam_mixed")
LATENCY_MODES = ("none", "geo")
#: One-way latency per great-circle km (SPEC §12: ~200 km/ms in fibre with a 2x route factor).
GEO_MS_PER_KM = 1.0 / 100.0
#: Upper bounds that keep every derived quantity finite and every count inside int64.
MAX_GPUS = 10_000_000
#: A GPU faster than this (TFLOP/s) would make a stage take no time at all in float64.
MAX_TFLOPS = 1e9
EARTH_RADIUS_KM = 6371.0

ARRIVALS = ("batch", "poisson", "trace")
#: Rules of the switches (SPEC §12), (value, field) -> checked value: a scenario file's
#: top-level keys and ``price_profile``, which generation applies to every region. A sweep's
#: values of them (:mod:`bacepipe.settings`) are checked by the same rules.
SWITCH_RULES = {
    "arrivals": partial(choice, options=ARRIVALS),
    # Slower rates push arrivals past the time resolution of float64 seconds.
    "arrival_rate_per_h": partial(number, minimum=1e-3, maximum=1e6),
    "latency": partial(choice, options=LATENCY_MODES),
    "memory_model": partial(choice, options=MEMORY_MODELS),
    "price_profile": partial(choice, options=tuple(PRICE_PROFILES)),
}
#: Largest SPEC §10a scales: past them the scaled values overflow or mean nothing.
MAX_SCALE = {"bandwidth_scale": 1e6, "gpu_scale": 1e3}
_TOP_KEYS = ("hardware", "regions", "links_gbps", "latency_ms", "latency", "memory_model", "jobs",
             "arrivals", "arrival_rate_per_h", "trace", "gpu_types")
_REGION_KEYS = ("name", "gpus", "price", "bandwidth_gbps", "lat", "lon", "price_profile",
                "utc_offset_h", "gpu_type")
_GPU_TYPE_KEYS = ("tflops", "mem_gb", "power_kw")
_JOB_KEYS = ("name", "model", "params_b", "layers", "hidden", "batch_size", "dataset_samples",
             "epochs", "arrival_h")


@dataclass(frozen=True)
class Region:
    """A cloud region. ``price`` in $/kWh, ``bandwidth_gbps`` B_r in Gbit/s, scaled like the links
    (None when links are given).

    ``price_profile`` (24 multipliers by local hour) switches on time-of-use prices (SPEC §12),
    read on the region's clock (UTC + ``utc_offset_h``); None means a flat price. ``gpu_type``
    names the region's GPU type (SPEC §16); None: the scenario's hardware values.
    """

    name: str
    gpus: int
    price: float
    bandwidth_gbps: float | None = None
    lat: float | None = None
    lon: float | None = None
    price_profile: tuple[float, ...] | None = None
    utc_offset_h: float = 0.0
    gpu_type: str | None = None


@dataclass(frozen=True)
class Job:
    """An LLM training job (SPEC §1): ``params_b`` in billions, ``arrival_h`` in hours."""

    name: str
    params_b: float
    layers: int
    hidden: int
    batch_size: int
    dataset_samples: int
    model: str = ""
    epochs: float = 1.0
    arrival_h: float = 0.0


@dataclass(frozen=True)
class Scenario:
    """A validated scenario with scaled values (every bandwidth and GPU count, SPEC §10a).

    ``links_gbps[u][v]`` is the nominal bandwidth u→v in Gbit/s (0: no link); ``latency_ms[u][v]``
    the one-way latency in ms, or None when latency is off. ``arrivals`` is ``batch`` (every job
    at its ``arrival_h``) or ``poisson`` (arrival times drawn per topology when a batch is
    generated, at ``arrival_rate_per_h``); a trace has already become the jobs.
    """

    regions: tuple[Region, ...]
    jobs: tuple[Job, ...]
    links_gbps: tuple[tuple[float, ...], ...]
    hardware: Hardware = field(default_factory=Hardware)
    latency_ms: tuple[tuple[float, ...], ...] | None = None
    memory_model: str = "none"
    arrivals: str = "batch"
    arrival_rate_per_h: float | None = None
    gpu_types: tuple[tuple[str, GpuType], ...] = ()

    @property
    def time_of_use(self) -> bool:
        return any(r.price_profile is not None for r in self.regions)

    @property
    def hetero(self) -> bool:
        """Some region names a GPU type (SPEC §16): prices per unit of work, balanced stages."""
        return any(r.gpu_type is not None for r in self.regions)

    def gpu_type_of(self, region: Region) -> GpuType:
        """The GPU type of a region (the hardware's values when it names none)."""
        if region.gpu_type is None:
            return default_gpu_type(self.hardware)
        return dict(self.gpu_types)[region.gpu_type]

    def scaled(self, bandwidth_scale: float, gpu_scale: float) -> Scenario:
        """SPEC §10a's scales on the links, the regions' B_r and GPU counts (the functions
        :meth:`bacepipe.model.batch.ScenarioBatch.scaled` applies to arrays)."""
        gpus = scale_gpus(np.array([r.gpus for r in self.regions], dtype=np.int64), gpu_scale)
        regions = tuple(
            replace(r, gpus=int(g), bandwidth_gbps=None if r.bandwidth_gbps is None
                    else float(scale_bandwidth(r.bandwidth_gbps, bandwidth_scale)))
            for r, g in zip(self.regions, gpus, strict=True))
        links = scale_bandwidth(self.links_gbps, bandwidth_scale).tolist()
        return replace(self, regions=regions, links_gbps=tuple(map(tuple, links)))

    def to_dict(self) -> dict:
        """The scenario in the YAML shape of SPEC §9, with the scaled values: parsing it again gives
        an equal scenario."""
        regions = []
        for r in self.regions:
            d = {"name": r.name, "gpus": r.gpus, "price": r.price}
            for key in ("bandwidth_gbps", "lat", "lon"):
                if getattr(r, key) is not None:
                    d[key] = getattr(r, key)
            if r.price_profile is not None:
                d["price_profile"] = list(r.price_profile)
            if r.utc_offset_h:
                d["utc_offset_h"] = r.utc_offset_h
            if r.gpu_type is not None:
                d["gpu_type"] = r.gpu_type
            regions.append(d)
        out = {
            "hardware": self.hardware.to_dict(),
            "regions": regions,
            "links_gbps": [list(row) for row in self.links_gbps],
            "jobs": [
                {"name": j.name, "model": j.model, "params_b": j.params_b, "layers": j.layers,
                 "hidden": j.hidden, "batch_size": j.batch_size,
                 "dataset_samples": j.dataset_samples, "epochs": j.epochs,
                 "arrival_h": j.arrival_h}
                for j in self.jobs
            ],
        }
        if self.latency_ms is not None:
            out["latency_ms"] = [list(row) for row in self.latency_ms]
        if self.memory_model != "none":
            out["memory_model"] = self.memory_model
        if self.arrivals == "poisson":
            out["arrivals"] = "poisson"
            out["arrival_rate_per_h"] = self.arrival_rate_per_h
        if self.gpu_types:
            out["gpu_types"] = {name: {"tflops": t.tflops, "mem_gb": t.mem_gb,
                                       "power_kw": t.power_kw} for name, t in self.gpu_types}
        return out


# --------------------------------------------------------------------------- scales (SPEC §10a)


def check_scale(value, name: str) -> float:
    """A scale ``name`` (``bandwidth_scale`` or ``gpu_scale``): a number in (0, MAX_SCALE[name]]."""
    return number(value, name, minimum=0.0, strict=True, maximum=MAX_SCALE[name])


def scale_gpus(gpus, gpu_scale: float) -> np.ndarray:
    """G → max(1, floor(G·gpu_scale + 0.5)) for G > 0; 0 stays 0. int64, any shape."""
    gpus = np.asarray(gpus)
    scaled = np.maximum(1, np.floor(gpus * gpu_scale + 0.5)).astype(np.int64)
    return np.where(gpus > 0, scaled, 0)


def scale_bandwidth(gbps, bandwidth_scale: float) -> np.ndarray:
    """Bandwidths (Gbit/s, any shape; NaN stays NaN) times ``bandwidth_scale``, float64."""
    return np.asarray(gbps, dtype=np.float64) * bandwidth_scale


# --------------------------------------------------------------------------- parsing


def _matrix(value, name: str, n: int) -> tuple[tuple[float, ...], ...]:
    """An n×n matrix of finite numbers >= 0 with a zero diagonal."""
    rows = sequence(value, name)
    if len(rows) != n:
        raise InputError(name, f"must have {n} rows (one per region), got {len(rows)}")
    out = []
    for u, row in enumerate(rows):
        row = sequence(row, f"{name}[{u}]")
        if len(row) != n:
            raise InputError(f"{name}[{u}]", f"must have {n} entries, got {len(row)}")
        vals = tuple(number(x, f"{name}[{u}][{v}]", minimum=0.0) for v, x in enumerate(row))
        if vals[u] != 0.0:
            raise InputError(f"{name}[{u}][{u}]", f"diagonal must be 0, got {vals[u]!r}")
        out.append(vals)
    return tuple(out)


def parse_hardware(data, name: str = "hardware") -> Hardware:
    """Hardware from a mapping of overrides (missing keys keep the SPEC §1 defaults)."""
    data = mapping({} if data is None else data, name, HARDWARE_FIELDS)
    values = {}
    for key, raw in data.items():
        field_name = f"{name}.{key}"
        if key in INTEGER_HARDWARE_FIELDS:
            values[key] = number(raw, field_name, minimum=1, integer=True, maximum=1e9)
        elif key == "stage_overhead_ms":
            values[key] = number(raw, field_name, minimum=0.0)
        elif key == "mfu":
            values[key] = number(raw, field_name, minimum=0.0, strict=True, maximum=1.0)
        elif key == "gpu_tflops":
            values[key] = number(raw, field_name, minimum=0.0, strict=True, maximum=MAX_TFLOPS)
        else:
            values[key] = number(raw, field_name, minimum=0.0, strict=True)
    return Hardware(**values)


def _parse_region(data, name: str) -> Region:
    data = mapping(data, name, _REGION_KEYS)
    gpus = number(required(data, "gpus", name), f"{name}.gpus", minimum=0, integer=True,
                  maximum=MAX_GPUS)
    bandwidth = data.get("bandwidth_gbps")
    if bandwidth is not None:
        bandwidth = number(bandwidth, f"{name}.bandwidth_gbps", minimum=0.0, strict=True)
    coords = {}
    for key, bound in (("lat", 90.0), ("lon", 180.0)):
        if data.get(key) is not None:
            coords[key] = number(data[key], f"{name}.{key}", minimum=-bound, maximum=bound)
    profile = data.get("price_profile")
    offset = 0.0
    if profile is not None:
        profile = sequence(profile, f"{name}.price_profile")
        if len(profile) != 24:
            raise InputError(f"{name}.price_profile", f"must have 24 entries, got {len(profile)}")
        profile = tuple(number(x, f"{name}.price_profile[{h}]", minimum=0.0, strict=True)
                        for h, x in enumerate(profile))
    if data.get("utc_offset_h") is not None:
        offset = number(data["utc_offset_h"], f"{name}.utc_offset_h", minimum=-24.0,
                        maximum=24.0)
    gpu_type = data.get("gpu_type")
    if gpu_type is not None:
        gpu_type = text(gpu_type, f"{name}.gpu_type")
    return Region(
        name=text(required(data, "name", name), f"{name}.name"),
        gpu_type=gpu_type,
        gpus=gpus,
        price=number(required(data, "price", name), f"{name}.price", minimum=0.0, strict=True),
        bandwidth_gbps=bandwidth,
        price_profile=profile,
        utc_offset_h=offset,
        **coords,
    )


def _parse_gpu_types(data, regions: Sequence[Region]) -> tuple[tuple[str, GpuType], ...]:
    """The types the regions name (SPEC §16): the catalog's, with the scenario's ``gpu_types``
    overriding fields or adding types (a new name gives all three fields)."""
    given = {} if data is None else data
    if not isinstance(given, Mapping):
        raise InputError("gpu_types", f"must be a mapping, got {type(given).__name__}")
    types = dict(GPU_CATALOG)
    for type_name, fields_ in given.items():
        where = f"gpu_types.{type_name}"
        text(type_name, "gpu_types")
        fields_ = mapping(fields_, where, _GPU_TYPE_KEYS)
        if type_name not in types:
            for key in _GPU_TYPE_KEYS:
                required(fields_, key, where)
        values = {key: number(fields_[key], f"{where}.{key}", minimum=0.0, strict=True,
                              maximum=MAX_TFLOPS if key == "tflops" else None)
                  for key in _GPU_TYPE_KEYS if fields_.get(key) is not None}
        base = types.get(type_name)
        types[type_name] = GpuType(**{key: values.get(key, getattr(base, key, None))
                                      for key in _GPU_TYPE_KEYS})
    used = []
    for i, region in enumerate(regions):
        if region.gpu_type is None:
            continue
        if region.gpu_type not in types:
            raise InputError(f"regions[{i}].gpu_type", f"unknown GPU type {region.gpu_type!r} "
                             f"(known: {', '.join(types)}; add it under gpu_types)")
        if region.gpu_type not in used:
            used.append(region.gpu_type)
    return tuple((name, types[name]) for name in used)


def _parse_job(data, name: str, hardware: Hardware) -> Job:
    data = mapping(data, name, _JOB_KEYS)
    batch = number(required(data, "batch_size", name), f"{name}.batch_size", minimum=1,
                   integer=True, maximum=1e12)
    if batch % hardware.micro_batch_size:
        raise InputError(f"{name}.batch_size", f"must be a multiple of hardware.micro_batch_size "
                         f"({hardware.micro_batch_size}), got {batch}")
    model = data.get("model", "")
    if not isinstance(model, str):
        raise InputError(f"{name}.model", f"must be a string, got {model!r}")
    return Job(
        name=text(required(data, "name", name), f"{name}.name"),
        model=model,
        params_b=number(required(data, "params_b", name), f"{name}.params_b", minimum=0.0,
                        strict=True, maximum=1e6),
        layers=number(required(data, "layers", name), f"{name}.layers", minimum=1, integer=True,
                      maximum=1e6),
        hidden=number(required(data, "hidden", name), f"{name}.hidden", minimum=1, integer=True,
                      maximum=1e9),
        batch_size=batch,
        dataset_samples=number(required(data, "dataset_samples", name),
                               f"{name}.dataset_samples", minimum=1, integer=True,
                               maximum=1e15),
        epochs=number(data.get("epochs", 1.0), f"{name}.epochs", minimum=0.0, strict=True,
                      maximum=1e6),
        arrival_h=number(data.get("arrival_h", 0.0), f"{name}.arrival_h", minimum=0.0,
                         maximum=1e9),
    )


def geo_latency_ms(lat, lon) -> np.ndarray:
    """One-way latency from coordinates (SPEC §12): great-circle km / 100, haversine formula.

    ``lat``, ``lon`` in degrees, shape [..., R]; returns float64[..., R, R] in ms.
    """
    p = np.radians(np.asarray(lat, dtype=np.float64))
    lam = np.radians(np.asarray(lon, dtype=np.float64))
    dp = p[..., None, :] - p[..., :, None]
    dl = lam[..., None, :] - lam[..., :, None]
    cos_cos = np.cos(p[..., :, None]) * np.cos(p[..., None, :])
    h = np.sin(dp / 2) ** 2 + cos_cos * np.sin(dl / 2) ** 2
    km = 2 * EARTH_RADIUS_KM * np.arcsin(np.minimum(1.0, np.sqrt(h)))
    return km * GEO_MS_PER_KM


def parse_scenario(data, *, bandwidth_scale: float = 1.0, gpu_scale: float = 1.0,
                   base_dir: str | Path | None = None, hardware: Hardware | None = None
                   ) -> Scenario:
    """Validate a scenario mapping (SPEC §9 shape, without the rules' keys) and return it with
    scales applied (:meth:`Scenario.scaled`).

    ``arrivals: trace`` reads the jobs from the CSV named by ``trace`` (relative paths against
    ``base_dir``, the scenario file's folder, else the working directory). ``hardware``, when
    given, applies to the scenario: a value the mapping's own ``hardware`` sets must agree with
    it (silently replacing it would simulate other hardware than the scenario says).

    Raises
    ------
    InputError
        For any unknown, missing or out-of-range field, naming it.
    """
    bandwidth_scale = check_scale(bandwidth_scale, "bandwidth_scale")
    gpu_scale = check_scale(gpu_scale, "gpu_scale")
    return _parse(data, base_dir, hardware).scaled(bandwidth_scale, gpu_scale)


def _parse(data, base_dir: str | Path | None, hardware: Hardware | None) -> Scenario:
    """:func:`parse_scenario` before the scales: links derived from the regions' B_r as given."""
    data = mapping(data, "", _TOP_KEYS)
    own = parse_hardware(data.get("hardware"))
    if hardware is None:
        hardware = own
    for key in data.get("hardware") or {}:
        if getattr(own, key) != getattr(hardware, key):
            raise InputError(f"hardware.{key}", f"the scenario sets {getattr(own, key)!r} but "
                             f"{getattr(hardware, key)!r} is given; give hardware.{key}="
                             f"{getattr(own, key)!r} or drop it from the scenario")

    raw_regions = sequence(required(data, "regions", "scenario"), "regions")
    if not raw_regions:
        raise InputError("regions", "must list at least one region")
    regions = tuple(_parse_region(r, f"regions[{i}]") for i, r in enumerate(raw_regions))
    seen = set()
    for i, r in enumerate(regions):
        if r.name in seen:
            raise InputError(f"regions[{i}].name", f"duplicate region name {r.name!r}")
        seen.add(r.name)
    if sum(r.gpus for r in regions) == 0:
        raise InputError("regions", "the cluster has 0 GPUs: no job could ever be placed")

    n = len(regions)
    if data.get("links_gbps") is not None:
        links = _matrix(data["links_gbps"], "links_gbps", n)
    else:
        for i, r in enumerate(regions):
            if r.bandwidth_gbps is None:
                raise InputError(f"regions[{i}].bandwidth_gbps",
                                 "missing (and no links_gbps given)")
        links = tuple(tuple(0.0 if u == v else (a.bandwidth_gbps + b.bandwidth_gbps) / 2
                            for v, b in enumerate(regions)) for u, a in enumerate(regions))

    latency_mode = SWITCH_RULES["latency"](data.get("latency", "none"), "latency")
    latency = None
    if data.get("latency_ms") is not None:
        if latency_mode == "geo":
            raise InputError("latency_ms", "give either latency_ms or latency: geo, not both")
        latency = _matrix(data["latency_ms"], "latency_ms", n)
    elif latency_mode == "geo":
        for i, r in enumerate(regions):
            if r.lat is None or r.lon is None:
                raise InputError(f"regions[{i}].lat",
                                 "latency: geo needs lat and lon on every region")
        ms = geo_latency_ms([r.lat for r in regions], [r.lon for r in regions])
        latency = tuple(tuple(map(float, row)) for row in ms)

    memory_model = SWITCH_RULES["memory_model"](data.get("memory_model", "none"), "memory_model")
    arrivals = SWITCH_RULES["arrivals"](data.get("arrivals", "batch"), "arrivals")
    rate = None
    if arrivals == "poisson":
        rate = SWITCH_RULES["arrival_rate_per_h"](
            required(data, "arrival_rate_per_h", "scenario"), "arrival_rate_per_h")
    elif data.get("arrival_rate_per_h") is not None:
        raise InputError("arrival_rate_per_h", "only allowed with arrivals: poisson")
    if arrivals == "trace":
        if data.get("jobs") is not None:
            raise InputError("jobs", "give either jobs or arrivals: trace, not both")
        trace = Path(text(required(data, "trace", "scenario"), "trace"))
        if not trace.is_absolute() and base_dir is not None:
            trace = Path(base_dir) / trace
        raw_jobs, job_field = read_trace(trace), "trace[{i}]"
        arrivals = "batch"  # the trace's arrival times are now the jobs' own
    else:
        if data.get("trace") is not None:
            raise InputError("trace", "only allowed with arrivals: trace")
        raw_jobs, job_field = sequence(required(data, "jobs", "scenario"), "jobs"), "jobs[{i}]"
    if not raw_jobs:
        raise InputError(job_field.split("[")[0], "must list at least one job")
    jobs = tuple(_parse_job(j, job_field.format(i=i), hardware) for i, j in enumerate(raw_jobs))
    return Scenario(regions=regions, jobs=jobs, links_gbps=links, hardware=hardware,
                    latency_ms=latency, memory_model=memory_model, arrivals=arrivals,
                    arrival_rate_per_h=rate,
                    gpu_types=_parse_gpu_types(data.get("gpu_types"), regions))


def read_trace(path: Path) -> list[dict]:
    """Jobs from a trace CSV: a header of SPEC §9 job fields, one row per job. Numbers are
    converted; validation happens in :func:`parse_scenario` like any job list."""
    content = _read_text(path, "trace", "no such file")
    lines = [line for line in content.splitlines() if line.strip() and not line.startswith("#")]
    rows = []
    for i, row in enumerate(csv.DictReader(lines)):
        if None in row or None in row.values():
            raise InputError(f"trace[{i}]", "row has a different number of fields than the header")
        rows.append({key.strip(): _csv_value(value) for key, value in row.items() if value != ""})
    return rows


def _read_text(path: Path, field: str, missing: str) -> str:
    """A UTF-8 text file, or an InputError for ``field`` that names the path."""
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise InputError(field, f"{missing}: {str(path)!r}") from None
    except UnicodeDecodeError:
        raise InputError(field, f"{str(path)!r} is not UTF-8 text") from None
    except OSError as err:
        raise InputError(field, f"cannot read {str(path)!r}: {err.strerror}") from None


def _csv_value(text: str):
    text = text.strip()
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def read_yaml(path: str | Path) -> dict:
    """Read a scenario YAML file; unreadable or malformed files are InputErrors naming the path."""
    path = Path(path)
    content = _read_text(path, "scenario", "no such file or built-in scenario")
    try:
        data = yaml.safe_load(content)
    except yaml.YAMLError as err:
        first = str(err).splitlines()[0] if str(err) else "malformed"
        raise InputError("scenario", f"{str(path)!r} is not valid YAML ({first})") from None
    if not isinstance(data, Mapping):
        raise InputError("scenario", f"{str(path)!r} must hold a mapping at the top level")
    return data
