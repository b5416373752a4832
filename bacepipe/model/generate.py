"""Scenario generation (SPEC §8, §12): built-in scenarios and random topologies, batched.

Topology t of seed s is a pure function of (s, t): every random draw is a counter-based hash of
(seed, topology, stream, index) (splitmix64 finaliser), so any topology can be generated alone, in
any chunk, on any worker, and come out bit for bit the same. No global or shared generator exists.
:func:`generate_batch` makes a whole chunk with numpy in one pass; :func:`generate_scenario` is the
same function for one topology.

Extension switches (SPEC §12) are keyword arguments; None keeps what the scenario itself says, so
the defaults give exactly the paper's world. :func:`generate_batch` takes its options as checked
(the sweep checks them with :data:`OPTION_RULES`); :func:`topology_batch`, behind every
single-topology function, checks them first. A scenario is read and parsed once per call: the
switches are applied to its mapping, and the keys of the schedulers' rules are split off it
(:func:`bacepipe.model.rules.split_rules`); generation makes the world, and
:func:`topology_batch` hands the rules on beside it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

import numpy as np

from bacepipe.errors import InputError
from bacepipe.model.batch import ScenarioBatch, batch_from_scenario
from bacepipe.model.hardware import CLOUD_GPU_MIX, GPU_CATALOG, GPU_MIXES, Hardware
from bacepipe.model.rules import PAPER_RULES, RULE_CHECKS, Rules, split_rules
from bacepipe.model.scenario import (
    SWITCH_RULES,
    Scenario,
    check_scale,
    geo_latency_ms,
    parse_scenario,
    read_yaml,
)
from bacepipe.model.tables import (
    AWS_PRICES,
    BANDWIDTH_RANGE_GBPS,
    DATASETS,
    GPU_CHOICES,
    PRICE_PROFILES,
    PRICE_TABLE,
    SITES,
)
from bacepipe.validation import choice, number

BUILTIN_SCENARIOS = ("random", "paper", "motivation", "aws10")
AWS_TABLE = "aws_inter_region_delay_bandwidth.csv"

# Streams of the counter-based generator: one per kind of draw, so adding draws of one kind never
# shifts another.
_STREAM_GPUS, _STREAM_BANDWIDTH, _STREAM_PRICE, _STREAM_DATASET, _STREAM_ARRIVAL, _STREAM_SITE, \
    _STREAM_GPU_TYPE = range(7)
#: Scenarios whose regions ``gpu_mix: cloud`` may type (SPEC §16).
GPU_MIX_SCENARIOS = ("random", "aws10")
#: Scenarios whose jobs are Table III's, with datasets drawn per topology.
_TABLE3_SCENARIOS = ("random", "paper", "aws10")

#: Rules (value, field) -> checked value of the options of a topology that are not part of its
#: scenario (the switches are :data:`~bacepipe.model.scenario.SWITCH_RULES`); the sweep checks
#: its values with the same rules. The bounds keep a typo from being attempted
#: (docs/reliability.md).
OPTION_RULES = {
    "seed": functools.partial(number, integer=True, minimum=0, maximum=2**63 - 1),
    "topology": functools.partial(number, integer=True, minimum=0, maximum=2**63 - 1),
    "bandwidth_scale": check_scale,
    "gpu_scale": check_scale,
    "num_jobs": functools.partial(number, integer=True, minimum=1, maximum=100_000),
    "num_regions": functools.partial(number, integer=True, minimum=1, maximum=1_000),
    "gpu_mix": functools.partial(choice, options=GPU_MIXES),
}

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _splitmix(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser on uint64 arrays (wrapping arithmetic)."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def uniforms(seed: int, topologies: np.ndarray, stream: int, count: int) -> np.ndarray:
    """U[0, 1) draws, float64[T, count]: draw ``i`` of ``stream`` for each topology.

    Each value hashes (seed, topology, stream, i) alone; 53 random bits per value.
    """
    with np.errstate(over="ignore"):
        key = _splitmix(np.full(1, seed, dtype=np.uint64) & _M64)
        key = _splitmix(key ^ np.asarray(topologies, dtype=np.uint64)[:, None])
        index = (np.uint64(stream) << np.uint64(32)) | np.arange(count, dtype=np.uint64)
        bits = _splitmix(key ^ _splitmix(index)[None, :])
    return (bits >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


def _choice(u: np.ndarray, n: int) -> np.ndarray:
    return np.minimum((u * n).astype(np.int64), n - 1)


def _data_file(name: str):
    return resources.files("bacepipe") / "data" / name


@functools.cache
def _paper_data() -> dict:
    return read_yaml(_data_file("paper.yaml"))


@functools.cache
def _aws_regions_and_links() -> tuple[list[dict], list[list[float]], list[list[float]]]:
    """The measured AWS table as regions, bandwidth (Gbit/s) and one-way latency (ms) matrices;
    the table's delay is taken as round-trip (SPEC §12)."""
    rows = [line.split(",") for line in _data_file(AWS_TABLE).read_text().splitlines()
            if line and not line.startswith("#")][1:]
    names = list(dict.fromkeys(name for a, b, _, _ in rows for name in (a, b)))
    n = len(names)
    bandwidth, latency = [[0.0] * n for _ in range(n)], [[0.0] * n for _ in range(n)]
    for a, b, delay, gbps in rows:
        u, v = names.index(a), names.index(b)
        bandwidth[u][v] = bandwidth[v][u] = float(gbps)
        latency[u][v] = latency[v][u] = float(delay) / 2
    regions = [{"name": name, "gpus": 1, "price": AWS_PRICES[name], "lat": SITES[name][0],
                "lon": SITES[name][1], "utc_offset_h": SITES[name][2]} for name in names]
    return regions, bandwidth, latency


def _table3_jobs(num_jobs: int) -> list[dict]:
    """Table III cycled to ``num_jobs`` jobs; job i is row i mod 8, named with its index when the
    table repeats. Datasets are drawn per topology afterwards."""
    rows = _paper_data()["jobs"]
    jobs = []
    for i in range(num_jobs):
        job = dict(rows[i % len(rows)])
        if num_jobs > len(rows):
            job["name"] = f"{job['name']}#{i}"
        job["dataset_samples"] = DATASETS[0][1]
        jobs.append(job)
    return jobs


def _switch(data: Mapping, *, arrivals=None, arrival_rate_per_h=None, trace=None, latency=None,
            memory_model=None, price_profile=None) -> Mapping:
    """The scenario mapping with the extension switches that are not None applied (a new mapping;
    ``data`` and its regions are left as they are). Parsing it checks them; ``price_profile`` is
    checked here."""
    data = dict(data)
    if arrivals is not None:
        for key in ("arrivals", "arrival_rate_per_h", "trace"):
            data.pop(key, None)
        data["arrivals"] = arrivals
        if arrivals == "poisson":
            data["arrival_rate_per_h"] = arrival_rate_per_h
        elif arrivals == "trace":
            data.pop("jobs", None)
            data["trace"] = trace
    if latency is not None:
        data.pop("latency_ms", None)
        data["latency"] = latency
    if memory_model is not None:
        data["memory_model"] = memory_model
    if price_profile is not None:
        profile = PRICE_PROFILES[SWITCH_RULES["price_profile"](price_profile, "price_profile")]
        own = {} if profile is None else {"price_profile": list(profile)}
        regions = data.get("regions")
        if isinstance(regions, (list, tuple)):
            # What is not a region mapping stays as it is, for the parser to name.
            data["regions"] = [{**{k: v for k, v in r.items() if k != "price_profile"}, **own}
                               if isinstance(r, Mapping) else r for r in regions]
    return data


def _draw_datasets(batch: ScenarioBatch, seed: int, topologies: np.ndarray) -> ScenarioBatch:
    count = batch.params_b.shape[1]
    dataset = _choice(uniforms(seed, topologies, _STREAM_DATASET, count), len(DATASETS))
    samples = np.asarray([n for _, n in DATASETS], dtype=np.int64)[dataset]
    return batch._replace(dataset=dataset, dataset_samples=samples)


def _draw_arrivals(batch: ScenarioBatch, rate_per_h: float, seed: int,
                   topologies: np.ndarray) -> ScenarioBatch:
    """Poisson arrivals (SPEC §12): job 0 at 0, job i at job i−1's arrival + Exp(λ)."""
    gaps = -np.log1p(-uniforms(seed, topologies, _STREAM_ARRIVAL, batch.params_b.shape[1]))
    gaps /= rate_per_h
    gaps[:, 0] = 0.0
    return batch._replace(arrival_h=np.cumsum(gaps, axis=1))


def _draw_gpus(seed: int, topologies: np.ndarray, n: int) -> np.ndarray:
    drawn = _choice(uniforms(seed, topologies, _STREAM_GPUS, n), len(GPU_CHOICES))
    return np.asarray(GPU_CHOICES, dtype=np.int64)[drawn]


def _random_batch(template: Scenario, seed: int, topologies: np.ndarray) -> ScenarioBatch:
    """§8's random topologies (unscaled) on the regions of ``template`` (placeholders for the
    draws)."""
    t, n = len(topologies), len(template.regions)
    lo, hi = BANDWIDTH_RANGE_GBPS
    bandwidth = lo + (hi - lo) * uniforms(seed, topologies, _STREAM_BANDWIDTH, n)
    links = (bandwidth[:, :, None] + bandwidth[:, None, :]) / 2
    links[:, np.arange(n), np.arange(n)] = 0.0
    price = np.asarray(PRICE_TABLE)[_choice(uniforms(seed, topologies, _STREAM_PRICE, n),
                                            len(PRICE_TABLE))]
    sites = np.asarray(list(SITES.values()))[_choice(uniforms(seed, topologies, _STREAM_SITE, n),
                                                     len(SITES))]
    batch = batch_from_scenario(template, t)._replace(
        gpus=_draw_gpus(seed, topologies, n), price=price, links_gbps=links,
        bandwidth_gbps=bandwidth, lat=sites[..., 0], lon=sites[..., 1], utc_offset_h=sites[..., 2])
    if batch.latency_on:
        batch = batch._replace(latency_ms=geo_latency_ms(batch.lat, batch.lon))
    return batch


def _base_data(scenario, num_jobs: int, num_regions: int):
    """The scenario dict before switches, and the folder relative trace paths start from."""
    if isinstance(scenario, dict):
        return scenario, None
    if not isinstance(scenario, (str, Path)):
        raise InputError("scenario", f"must be a dict, a YAML path or one of "
                         f"{', '.join(BUILTIN_SCENARIOS)}, got {type(scenario).__name__}")
    name = str(scenario)
    if name == "random":
        regions = [{"name": f"R{r}", "gpus": 1, "price": 1.0, "bandwidth_gbps": 1.0, "lat": 0.0,
                    "lon": 0.0} for r in range(num_regions)]
        data = {"regions": regions, "jobs": _table3_jobs(num_jobs)}
    elif name == "paper":
        data = {"regions": _paper_data()["regions"], "jobs": _table3_jobs(num_jobs)}
    elif name == "aws10":
        regions, links, latency = _aws_regions_and_links()
        data = {"regions": regions, "links_gbps": links, "latency_ms": latency,
                "jobs": _table3_jobs(num_jobs)}
    elif name == "motivation":
        data = read_yaml(_data_file("motivation.yaml"))
    else:
        return read_yaml(scenario), Path(scenario).parent
    return data, None


def _base_scenario(scenario, num_jobs: int, num_regions: int, hardware: Hardware | None,
                   switches: dict) -> tuple[Scenario, Rules]:
    """The world with its switches (None: keep) and ``hardware`` applied, parsed once, before the
    random draws and the scales; and the rules its mapping sets (the defaults for a parsed
    Scenario, which holds none and is taken as it is).

    Raises
    ------
    InputError
        A parsed Scenario given with switches or hardware (give them with its source), or
        whatever parsing the mapping finds.
    """
    if isinstance(scenario, Scenario):
        if hardware is not None or any(value is not None for value in switches.values()):
            raise InputError("scenario", "a parsed Scenario is taken as it is: give the "
                             "switches and hardware with its source (a dict, a YAML path or a "
                             "built-in name)")
        return scenario, PAPER_RULES
    data, base_dir = _base_data(scenario, num_jobs, num_regions)
    data, rules = split_rules(data)
    if isinstance(data, Mapping):
        data = _switch(data, **switches)
    return parse_scenario(data, base_dir=base_dir, hardware=hardware), rules


def check_gpu_mix(gpu_mix: str, scenario) -> None:
    """A GPU mix other than ``none`` types the regions of GPU_MIX_SCENARIOS only (SPEC §16)."""
    if gpu_mix != "none" and scenario not in GPU_MIX_SCENARIOS:
        shown = scenario if isinstance(scenario, (str, Path)) else type(scenario).__name__
        raise InputError("gpu_mix", f"{gpu_mix} applies to {' and '.join(GPU_MIX_SCENARIOS)} "
                         f"only, not scenario={shown}")


def generate_batch(scenario="random", seed: int = 0, topologies=(0,), *,
                   bandwidth_scale: float = 1.0, gpu_scale: float = 1.0, num_jobs: int = 8,
                   num_regions: int = 6, hardware: Hardware | None = None,
                   arrivals: str | None = None, arrival_rate_per_h: float | None = None,
                   trace: str | None = None, latency: str | None = None,
                   memory_model: str | None = None, price_profile: str | None = None,
                   gpu_mix: str = "none") -> ScenarioBatch:
    """The topologies ``topologies`` of a sweep point, as one batch (the world alone: a
    scenario file's rules are checked and left out; :func:`topology_batch` hands them on).

    The options are taken as checked (by the sweep's settings, or by :func:`topology_batch`,
    with :data:`OPTION_RULES`); the scenario and its switches are checked as they are parsed.

    Parameters
    ----------
    scenario : ``random``, ``paper``, ``motivation``, ``aws10``, the path of a scenario YAML
        file, a scenario dict (SPEC §9 shape) or a parsed :class:`Scenario` (taken as it is:
        no switches or hardware).
    seed : the sweep's seed; topology t depends on (seed, t) alone.
    topologies : topology indices (any order, any subset).
    bandwidth_scale, gpu_scale : scales of SPEC §10a, applied to bandwidths and GPUs
        (:meth:`ScenarioBatch.scaled`).
    num_jobs : jobs per topology for ``random``, ``paper`` and ``aws10`` (Table III cycled);
        the fixed scenarios keep their own jobs.
    num_regions : regions per topology for ``random``.
    hardware : hardware constants; None keeps a file's own (or the defaults).
    arrivals, arrival_rate_per_h, trace : ``batch`` | ``poisson`` (at the rate, per hour) |
        ``trace`` (jobs from the CSV ``trace``); None keeps the scenario's.
    latency : ``none`` | ``geo`` (from coordinates); None keeps the scenario's (``aws10``:
        measured).
    memory_model : ``none`` | ``adam_mixed``; None keeps the scenario's.
    price_profile : ``flat`` | ``business`` (time-of-use multipliers on every region); None keeps
        the scenario's.
    gpu_mix : ``none`` | ``cloud``: each region's GPU type drawn uniformly from A6000, A100, L40S
        and H100 after every other draw (SPEC §16; ``random`` and ``aws10`` only).
    """
    return _generate(scenario, seed, topologies, bandwidth_scale=bandwidth_scale,
                     gpu_scale=gpu_scale, num_jobs=num_jobs, num_regions=num_regions,
                     hardware=hardware, gpu_mix=gpu_mix, arrivals=arrivals,
                     arrival_rate_per_h=arrival_rate_per_h, trace=trace, latency=latency,
                     memory_model=memory_model, price_profile=price_profile)[0]


def _generate(scenario, seed: int, topologies, *, bandwidth_scale: float = 1.0,
              gpu_scale: float = 1.0, num_jobs: int = 8, num_regions: int = 6,
              hardware: Hardware | None = None, gpu_mix: str = "none",
              **switches) -> tuple[ScenarioBatch, Rules]:
    """:func:`generate_batch` (``switches``: the keywords of :func:`_switch`), and the rules
    the scenario's mapping sets."""
    topologies = np.asarray(topologies, dtype=np.int64).reshape(-1)
    base, rules = _base_scenario(scenario, num_jobs, num_regions, hardware, switches)
    name = scenario if isinstance(scenario, str) else None
    if name == "random":
        batch = _random_batch(base, seed, topologies)
    else:
        batch = batch_from_scenario(base, len(topologies))
        if name == "aws10":
            batch = batch._replace(gpus=_draw_gpus(seed, topologies, len(base.regions)))
    batch = batch.scaled(bandwidth_scale, gpu_scale)
    if name in _TABLE3_SCENARIOS and switches.get("arrivals") != "trace":
        batch = _draw_datasets(batch, seed, topologies)
    if base.arrivals == "poisson":
        batch = _draw_arrivals(batch, base.arrival_rate_per_h, seed, topologies)
    if gpu_mix == "cloud":
        n = batch.gpus.shape[1]
        kind = _choice(uniforms(seed, topologies, _STREAM_GPU_TYPE, n), len(CLOUD_GPU_MIX))
        batch = batch._replace(gpu_type=kind, gpu_types=tuple(
            (name, GPU_CATALOG[name]) for name in CLOUD_GPU_MIX))
    return batch, rules


def topology_batch(scenario="random", seed: int = 0, topology: int = 0,
                   **options) -> tuple[ScenarioBatch, Rules]:
    """Topology ``topology`` of ``seed`` as a batch of one, and the schedulers' rules: what
    :func:`generate_scenario`, :func:`load_scenario`, :func:`bacepipe.run_scenario` and
    ``python -m bacepipe.simulate`` build on.

    ``seed``, ``topology`` and the ``options`` of :func:`generate_batch` are checked first
    (:data:`OPTION_RULES`). ``options`` may also name rules (``start_rule``, ``plan_slack``:
    :class:`~bacepipe.model.rules.Rules`): each not None replaces the scenario's own.
    """
    given = {key: options.pop(key) for key in RULE_CHECKS if key in options}
    checked = {key: OPTION_RULES[key](value, key) if key in OPTION_RULES else value
               for key, value in {"seed": seed, "topology": topology, **options}.items()}
    check_gpu_mix(checked.get("gpu_mix", "none"), scenario)
    seed, topology = checked.pop("seed"), checked.pop("topology")
    batch, rules = _generate(scenario, seed, [topology], **checked)
    return batch, rules.updated(given)


def generate_scenario(scenario="random", seed: int = 0, topology: int = 0, **options) -> dict:
    """The scenario dict (SPEC §9 shape, scaled values) that a sweep simulated for one row, with
    the rules it ran under that differ from the defaults.

    ``options`` are those of :func:`topology_batch`.
    """
    batch, rules = topology_batch(scenario, seed, topology, **options)
    return {**batch.scenario(0).to_dict(), **rules.to_dict()}


def load_scenario(source, seed: int = 0, topology: int = 0) -> Scenario:
    """The world of a dict (SPEC §9 shape), a YAML path, a built-in name or a Scenario.

    Built-in names and random draws (datasets, Poisson arrivals) give topology ``topology`` of
    ``seed``; the result holds the drawn values.
    """
    return topology_batch(source, seed, topology)[0].scenario(0)
