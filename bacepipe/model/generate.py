"""Scenario generation (SPEC §8): built-in scenarios and random topologies, batched.

Topology t of seed s is a pure function of (s, t): every random draw is a counter-based hash of
(seed, topology, stream, index) (splitmix64 finaliser), so any topology can be generated alone, in
any chunk, on any worker, and come out bit for bit the same. No global or shared generator exists.
:func:`generate_batch` makes a whole chunk with numpy in one pass; :func:`generate_scenario` is the
same function for one topology.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

import numpy as np

from bacepipe.errors import InputError
from bacepipe.model.batch import ScenarioBatch, batch_from_scenario
from bacepipe.model.hardware import Hardware
from bacepipe.model.scenario import Scenario, _number, parse_scenario, read_yaml, scale_gpus
from bacepipe.model.tables import BANDWIDTH_RANGE_GBPS, DATASETS, GPU_CHOICES, PRICE_TABLE

BUILTIN_SCENARIOS = ("random", "paper", "motivation")

# Streams of the counter-based generator: one per kind of draw, so adding draws of one kind never
# shifts another.
_STREAM_GPUS, _STREAM_BANDWIDTH, _STREAM_PRICE, _STREAM_DATASET = 0, 1, 2, 3

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


@functools.cache
def _paper_data() -> dict:
    return read_yaml(resources.files("bacepipe") / "data" / "paper.yaml")


@functools.cache
def _builtin_scenario(name: str) -> Scenario:
    return parse_scenario(read_yaml(resources.files("bacepipe") / "data" / f"{name}.yaml"))


def _paper_jobs(num_jobs: int) -> list[dict]:
    """Table III cycled to ``num_jobs`` jobs; job i is row i mod 8, named with its index."""
    rows = _paper_data()["jobs"]
    jobs = []
    for i in range(num_jobs):
        job = dict(rows[i % len(rows)])
        if num_jobs > len(rows):
            job["name"] = f"{job['name']}#{i}"
        job["dataset_samples"] = DATASETS[0][1]  # placeholder; drawn per topology below
        jobs.append(job)
    return jobs


def _draw_datasets(batch: ScenarioBatch, seed: int, topologies: np.ndarray) -> ScenarioBatch:
    count = batch.params_b.shape[1]
    dataset = _choice(uniforms(seed, topologies, _STREAM_DATASET, count), len(DATASETS))
    samples = np.asarray([n for _, n in DATASETS], dtype=np.int64)[dataset]
    return batch._replace(dataset=dataset, dataset_samples=samples)


def _random_batch(seed: int, topologies: np.ndarray, num_regions: int, num_jobs: int,
                  bandwidth_scale: float, gpu_scale: float, hardware: Hardware) -> ScenarioBatch:
    t, n = len(topologies), num_regions
    gpus = np.asarray(GPU_CHOICES, dtype=np.int64)[
        _choice(uniforms(seed, topologies, _STREAM_GPUS, n), len(GPU_CHOICES))]
    gpus = scale_gpus(gpus, gpu_scale)
    lo, hi = BANDWIDTH_RANGE_GBPS
    bandwidth = lo + (hi - lo) * uniforms(seed, topologies, _STREAM_BANDWIDTH, n)
    links = (bandwidth[:, :, None] + bandwidth[:, None, :]) / 2
    if bandwidth_scale != 1.0:
        links = links * bandwidth_scale
    links[:, np.arange(n), np.arange(n)] = 0.0
    price = np.asarray(PRICE_TABLE)[_choice(uniforms(seed, topologies, _STREAM_PRICE, n),
                                            len(PRICE_TABLE))]
    template = parse_scenario({
        "hardware": hardware.to_dict(),
        "regions": [{"name": f"R{r}", "gpus": 1, "price": 1.0, "bandwidth_gbps": 1.0}
                    for r in range(n)],
        "jobs": _paper_jobs(num_jobs),
    })
    batch = batch_from_scenario(template, t)._replace(
        gpus=gpus, price=price, links_gbps=links, bandwidth_gbps=bandwidth)
    return _draw_datasets(batch, seed, topologies)


def generate_batch(scenario: str | Path = "random", seed: int = 0, topologies=(0,), *,
                   bandwidth_scale: float = 1.0, gpu_scale: float = 1.0, num_jobs: int = 8,
                   num_regions: int = 6, hardware: Hardware | None = None) -> ScenarioBatch:
    """The topologies ``topologies`` of a sweep point, as one batch.

    Parameters
    ----------
    scenario : ``random``, ``paper``, ``motivation`` or the path of a scenario YAML file.
    seed : the sweep's seed; topology t depends on (seed, t) alone.
    topologies : topology indices (any order, any subset).
    bandwidth_scale, gpu_scale : scales of SPEC §10a, applied to links and GPUs.
    num_jobs : jobs per topology for ``random`` and ``paper`` (Table III cycled); ignored by the
        fixed scenarios ``motivation`` and files, which keep their own jobs.
    num_regions : regions per topology for ``random``.
    hardware : hardware constants; None keeps a file's own (or the defaults).
    """
    seed = int(_number(seed, "seed", minimum=0, integer=True, maximum=2**63 - 1))
    topologies = np.asarray(topologies, dtype=np.int64).reshape(-1)
    if topologies.size and topologies.min() < 0:
        raise InputError("topology", f"must be >= 0, got {int(topologies.min())}")
    num_jobs = int(_number(num_jobs, "num_jobs", minimum=1, integer=True, maximum=1_000_000))
    num_regions = int(_number(num_regions, "num_regions", minimum=1, integer=True,
                              maximum=100_000))
    scales = {"bandwidth_scale": bandwidth_scale, "gpu_scale": gpu_scale}
    for key, value in scales.items():
        _number(value, key, minimum=0.0, strict=True)
    if scenario == "random":
        return _random_batch(seed, topologies, num_regions, num_jobs, float(bandwidth_scale),
                             float(gpu_scale), hardware or Hardware())
    if scenario == "paper":
        data = {"regions": _paper_data()["regions"], "jobs": _paper_jobs(num_jobs)}
        if hardware is not None:
            data["hardware"] = hardware.to_dict()
        base = parse_scenario(data, **scales)
        return _draw_datasets(batch_from_scenario(base, len(topologies)), seed, topologies)
    if scenario == "motivation":
        data = _builtin_scenario("motivation").to_dict()
    else:
        data = read_yaml(scenario)
    if hardware is not None:
        data["hardware"] = hardware.to_dict()
    return batch_from_scenario(parse_scenario(data, **scales), len(topologies))


def generate_scenario(scenario: str | Path = "random", seed: int = 0, topology: int = 0, *,
                      bandwidth_scale: float = 1.0, gpu_scale: float = 1.0, num_jobs: int = 8,
                      num_regions: int = 6, hardware: Hardware | None = None) -> dict:
    """The scenario dict (SPEC §9 shape, scaled values) that a sweep simulated for one row."""
    batch = generate_batch(scenario, seed, [topology], bandwidth_scale=bandwidth_scale,
                           gpu_scale=gpu_scale, num_jobs=num_jobs, num_regions=num_regions,
                           hardware=hardware)
    return batch.scenario(0).to_dict()


def load_scenario(source) -> Scenario:
    """A :class:`Scenario` from a dict (SPEC §9 shape), a YAML path, a built-in name or a Scenario.

    Built-in names give topology 0 of seed 0 (for ``paper``: the datasets of seed 0).
    """
    if isinstance(source, Scenario):
        return source
    if isinstance(source, dict):
        return parse_scenario(source)
    if isinstance(source, (str, Path)):
        if str(source) in BUILTIN_SCENARIOS:
            return generate_batch(str(source)).scenario(0)
        return parse_scenario(read_yaml(source))
    raise InputError("scenario", f"must be a dict, a YAML path or one of "
                     f"{', '.join(BUILTIN_SCENARIOS)}, got {type(source).__name__}")
