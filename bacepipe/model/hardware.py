"""Hardware constants of SPEC §1 (defaults: NVIDIA A6000, bf16)."""

from dataclasses import asdict, dataclass, fields

import numpy as np


@dataclass(frozen=True)
class Hardware:
    """Per-GPU and per-region hardware constants, shared by every job of a scenario.

    Attributes
    ----------
    seq_len : tokens per sample.
    micro_batch_size : samples per micro-batch.
    bytes_per_element : bytes of one activation element (2 for bf16).
    gpu_tflops : peak dense TFLOP/s of one GPU.
    mfu : model FLOPs utilisation, in (0, 1].
    stage_overhead_ms : fixed per-stage, per-micro-batch overhead in ms.
    intra_region_gbps : bandwidth of a hop between two GPUs of one region, Gbit/s.
    gpu_power_kw : power drawn by one busy GPU, kW (Eq. 4).
    gpu_mem_gb : memory of one GPU in GB; only read by ``memory_model: adam_mixed`` (SPEC §12).
    """

    seq_len: int = 2048
    micro_batch_size: int = 1
    bytes_per_element: float = 2.0
    gpu_tflops: float = 154.8
    mfu: float = 0.4
    stage_overhead_ms: float = 2.0
    intra_region_gbps: float = 100.0
    gpu_power_kw: float = 0.3
    gpu_mem_gb: float = 48.0

    def as_array(self) -> np.ndarray:
        """The values in field order as float64, the form the numba core takes."""
        return np.array([float(getattr(self, f.name)) for f in fields(self)], dtype=np.float64)

    def to_dict(self) -> dict:
        return asdict(self)


#: Field names in the order of :meth:`Hardware.as_array` (the core indexes by position).
HARDWARE_FIELDS = tuple(f.name for f in fields(Hardware))
INTEGER_HARDWARE_FIELDS = ("seq_len", "micro_batch_size")


@dataclass(frozen=True)
class GpuType:
    """A GPU type (SPEC §16): dense bf16 tensor TFLOP/s, memory in GB, board power in kW."""

    tflops: float
    mem_gb: float
    power_kw: float


#: SPEC §16's built-in catalog. A scenario may override fields or add types (``gpu_types``).
GPU_CATALOG = {
    "A6000": GpuType(154.8, 48.0, 0.30),
    "V100": GpuType(125.0, 32.0, 0.30),
    "A100": GpuType(312.0, 80.0, 0.40),
    "L40S": GpuType(362.0, 48.0, 0.35),
    "H100": GpuType(989.0, 80.0, 0.70),
}
#: The types ``gpu_mix: cloud`` draws a region's type from, uniformly (SPEC §16).
CLOUD_GPU_MIX = ("A6000", "A100", "L40S", "H100")
GPU_MIXES = ("none", "cloud")


def default_gpu_type(hardware: Hardware) -> GpuType:
    """The type of a region that names none: the scenario's hardware values (SPEC §16)."""
    return GpuType(hardware.gpu_tflops, hardware.gpu_mem_gb, hardware.gpu_power_kw)

#: Time-of-use spans longer than this (hours; ~10⁸ years, which validated jobs can still reach)
#: are priced at the profile's mean, by the kernels and the twin alike: stepping the local clock
#: hour by hour toward 2⁵² h, where float64 loses the hour, would never end.
TOU_STEPPED_MAX_H = 1e12
