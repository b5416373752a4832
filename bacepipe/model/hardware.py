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
