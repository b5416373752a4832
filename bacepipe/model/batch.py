"""Many scenarios of one shape as stacked arrays: the form the numba core takes.

A :class:`ScenarioBatch` holds T topologies with the same number of regions R and jobs J, arrays
stacked on a leading topology axis. Names are shared by the whole batch (a sweep point's topologies
all use the same region and job names). :func:`batch_from_scenario` and
:meth:`ScenarioBatch.scenario` convert one way and the other, so a single topology of a sweep can be
replayed through :func:`bacepipe.run_scenario`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bacepipe.model.hardware import Hardware, default_gpu_type
from bacepipe.model.scenario import (
    Job,
    Region,
    Scenario,
    scale_bandwidth,
    scale_gpus,
)


class ScenarioBatch(NamedTuple):
    """T scenarios of R regions and J jobs.

    Attributes
    ----------
    gpus : int64[T, R]            GPUs per region (scaled).
    price : float64[T, R]         $/kWh.
    links_gbps : float64[T, R, R] nominal bandwidth u→v in Gbit/s (scaled); 0 = no link.
    latency_ms : float64[T, R, R] one-way latency in ms (zeros when latency is off).
    price_profile : float64[T, R, 24]  time-of-use multipliers by local hour (ones when off).
    utc_offset_h : float64[T, R]  local time = UTC + offset.
    params_b, epochs, arrival_h : float64[T, J]
    layers, hidden, batch_size, dataset_samples : int64[T, J]
    region_names, job_names, job_models : tuple[str, ...]
    dataset : int64[T, J]         index into ``DATASETS`` (-1: given by a scenario file).
    hardware : Hardware
    latency_on, time_of_use, memory_on : bool   extension switches (SPEC §12).
    gpu_type : int64[T, R]        index into ``gpu_types`` (−1: the hardware's values, SPEC §16).
    gpu_types : tuple[(name, GpuType), ...]  the GPU types regions may name.
    bandwidth_gbps : float64[T, R] per-region B_r, scaled (NaN when unknown); kept for replay.
    lat, lon : float64[T, R]      coordinates (NaN when unknown).
    """

    gpus: np.ndarray
    price: np.ndarray
    links_gbps: np.ndarray
    latency_ms: np.ndarray
    price_profile: np.ndarray
    utc_offset_h: np.ndarray
    params_b: np.ndarray
    layers: np.ndarray
    hidden: np.ndarray
    batch_size: np.ndarray
    dataset_samples: np.ndarray
    epochs: np.ndarray
    arrival_h: np.ndarray
    dataset: np.ndarray
    bandwidth_gbps: np.ndarray
    lat: np.ndarray
    lon: np.ndarray
    region_names: tuple[str, ...]
    job_names: tuple[str, ...]
    job_models: tuple[str, ...]
    hardware: Hardware
    latency_on: bool
    time_of_use: bool
    memory_on: bool
    gpu_type: np.ndarray = None
    gpu_types: tuple = ()

    @property
    def size(self) -> int:
        return self.gpus.shape[0]

    @property
    def hetero(self) -> bool:
        """Some region of some topology names a GPU type (SPEC §16)."""
        return bool((self.gpu_type >= 0).any())

    def scaled(self, bandwidth_scale: float, gpu_scale: float) -> ScenarioBatch:
        """SPEC §10a's scales on the links, the regions' B_r and GPU counts (the functions
        :meth:`bacepipe.model.scenario.Scenario.scaled` applies)."""
        return self._replace(gpus=scale_gpus(self.gpus, gpu_scale),
                             links_gbps=scale_bandwidth(self.links_gbps, bandwidth_scale),
                             bandwidth_gbps=scale_bandwidth(self.bandwidth_gbps, bandwidth_scale))

    def gpu_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(TFLOP/s, memory GB, power kW) of every region's GPU type, float64[T, R] each."""
        own = default_gpu_type(self.hardware)
        table = np.array([[t.tflops, t.mem_gb, t.power_kw] for _, t in self.gpu_types]
                         + [[own.tflops, own.mem_gb, own.power_kw]], dtype=np.float64)
        values = table[self.gpu_type]  # index −1 picks the hardware's own row
        return values[..., 0].copy(), values[..., 1].copy(), values[..., 2].copy()

    def scenario(self, i: int) -> Scenario:
        """Topology ``i`` as a :class:`Scenario` (scaled values; parsing its dict changes
        nothing)."""
        regions = []
        for r, name in enumerate(self.region_names):
            bw, lat, lon = self.bandwidth_gbps[i, r], self.lat[i, r], self.lon[i, r]
            regions.append(Region(
                name=name, gpus=int(self.gpus[i, r]), price=float(self.price[i, r]),
                bandwidth_gbps=None if np.isnan(bw) else float(bw),
                lat=None if np.isnan(lat) else float(lat),
                lon=None if np.isnan(lon) else float(lon),
                price_profile=(tuple(map(float, self.price_profile[i, r]))
                               if self.time_of_use else None),
                utc_offset_h=float(self.utc_offset_h[i, r]),
                gpu_type=self.gpu_types[self.gpu_type[i, r]][0] if self.gpu_type[i, r] >= 0
                else None,
            ))
        jobs = tuple(
            Job(name=name, model=self.job_models[j], params_b=float(self.params_b[i, j]),
                layers=int(self.layers[i, j]), hidden=int(self.hidden[i, j]),
                batch_size=int(self.batch_size[i, j]),
                dataset_samples=int(self.dataset_samples[i, j]), epochs=float(self.epochs[i, j]),
                arrival_h=float(self.arrival_h[i, j]))
            for j, name in enumerate(self.job_names)
        )
        as_tuple = lambda m: tuple(tuple(map(float, row)) for row in m)  # noqa: E731
        return Scenario(
            regions=tuple(regions), jobs=jobs, links_gbps=as_tuple(self.links_gbps[i]),
            hardware=self.hardware,
            latency_ms=as_tuple(self.latency_ms[i]) if self.latency_on else None,
            memory_model="adam_mixed" if self.memory_on else "none",
            gpu_types=tuple(self.gpu_types[k] for k in sorted(set(self.gpu_type[i]) - {-1})),
        )


def batch_from_scenario(scenario: Scenario, copies: int = 1) -> ScenarioBatch:
    """``copies`` identical topologies of one scenario."""
    regions, jobs = scenario.regions, scenario.jobs
    nan = float("nan")

    def rows(values, dtype):
        return np.tile(np.asarray(values, dtype=dtype), (copies,) + (1,) * np.ndim(values))

    n = len(regions)
    profile = [r.price_profile or (1.0,) * 24 for r in regions]
    names = [name for name, _ in scenario.gpu_types]
    return ScenarioBatch(
        gpus=rows([r.gpus for r in regions], np.int64),
        price=rows([r.price for r in regions], np.float64),
        links_gbps=rows(scenario.links_gbps, np.float64),
        latency_ms=rows(scenario.latency_ms or np.zeros((n, n)), np.float64),
        price_profile=rows(profile, np.float64),
        utc_offset_h=rows([r.utc_offset_h for r in regions], np.float64),
        params_b=rows([j.params_b for j in jobs], np.float64),
        layers=rows([j.layers for j in jobs], np.int64),
        hidden=rows([j.hidden for j in jobs], np.int64),
        batch_size=rows([j.batch_size for j in jobs], np.int64),
        dataset_samples=rows([j.dataset_samples for j in jobs], np.int64),
        epochs=rows([j.epochs for j in jobs], np.float64),
        arrival_h=rows([j.arrival_h for j in jobs], np.float64),
        dataset=np.full((copies, len(jobs)), -1, dtype=np.int64),
        bandwidth_gbps=rows([nan if r.bandwidth_gbps is None else r.bandwidth_gbps
                             for r in regions], np.float64),
        lat=rows([nan if r.lat is None else r.lat for r in regions], np.float64),
        lon=rows([nan if r.lon is None else r.lon for r in regions], np.float64),
        region_names=tuple(r.name for r in regions),
        job_names=tuple(j.name for j in jobs),
        job_models=tuple(j.model for j in jobs),
        hardware=scenario.hardware,
        latency_on=scenario.latency_ms is not None,
        time_of_use=scenario.time_of_use,
        memory_on=scenario.memory_model != "none",
        gpu_type=rows([-1 if r.gpu_type is None else names.index(r.gpu_type) for r in regions],
                      np.int64),
        gpu_types=scenario.gpu_types,
    )
