"""What :mod:`bacepipe.core` exports: :func:`simulate_batch` validates a batch and the scheduler
names, converts them and the schedulers' rules to the kernels' arrays and runs the batched kernel
(:mod:`~bacepipe.core.batch`); :class:`BatchResult` is what it returns."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bacepipe.core.batch import (
    BatchInputs,
    empty_outputs,
    path_width,
    shares,
    simulate_batch_kernel,
    simulate_batch_serial,
)
from bacepipe.core.compile_notice import compile_notice
from bacepipe.core.loop import (
    STATUS_BAD_DECISION,
    STATUS_NEVER_PLACED,
    STATUS_OK,
    STATUS_TOO_FEW_GPUS,
)
from bacepipe.core.model import C_KSTAR, C_MIN_GPUS
from bacepipe.metrics import METRICS
from bacepipe.model.batch import ScenarioBatch
from bacepipe.model.rules import PAPER_RULES, Rules
from bacepipe.policies import KINDS, check_schedulers, get_part, part_names, parts_of

__all__ = ["METRICS", "STATUS_BAD_DECISION", "STATUS_NEVER_PLACED", "STATUS_OK",
           "STATUS_TOO_FEW_GPUS", "BatchResult", "simulate_batch"]


class BatchResult(NamedTuple):
    """Results of T topologies × S schedulers with J jobs and R regions.

    metrics : float64[T, S, len(METRICS)]  SPEC §10 run metrics, in :data:`METRICS` order.
    status : int64[T, S]       STATUS_OK, or why the run could not finish.
    bad_job : int64[T, S]      the job a non-OK status names (−1 when OK).
    k_star : int64[T, J]       optimal GPU count (Eq. 13).
    min_gpus : int64[T, J]     minimum GPU count (1 unless the memory model is on).
    start_s, end_s, cost : float64[T, S, J]  seconds from t = 0, and $.
    path : int64[T, S, J, W]   region indices in pipeline order, −1 padded; W ≤ R
        (:func:`bacepipe.core.batch.path_width`).
    path_gpus : int64[T, S, J, W]  GPUs on each path position, 0 padded.
    path_len : int64[T, S, J]
    lower_bound_h : float64[T]  SPEC §15's lower bound on any schedule's avg JCT (NaN when a
        job can never fit).
    schedulers : tuple[str, ...]
    n_regions : int   R.
    """

    metrics: np.ndarray
    status: np.ndarray
    bad_job: np.ndarray
    k_star: np.ndarray
    min_gpus: np.ndarray
    start_s: np.ndarray
    end_s: np.ndarray
    cost: np.ndarray
    path: np.ndarray
    path_gpus: np.ndarray
    path_len: np.ndarray
    lower_bound_h: np.ndarray
    schedulers: tuple[str, ...]
    n_regions: int

    @property
    def alloc(self) -> np.ndarray:
        """int64[T, S, J, R]: GPUs per region index, expanded from the path (O(J·R) memory:
        for small batches; the compact ``path``/``path_gpus`` serve at scale)."""
        out = np.zeros(self.path.shape[:3] + (self.n_regions,), dtype=np.int64)
        t, s, j, p = np.nonzero(self.path >= 0)
        out[t, s, j, self.path[t, s, j, p]] = self.path_gpus[t, s, j, p]
        return out


def compiled_parts() -> tuple[tuple, ...]:
    """Per kind (:data:`~bacepipe.policies.KINDS` order), the kernels of every registered part
    that has one, and a map (kind, name) -> index into them."""
    tuples, index = [], {}
    for kind in KINDS:
        kernels = []
        for name in part_names(kind):
            part = get_part(kind, name)
            if part.kernel is not None:
                index[kind, name] = len(kernels)
                kernels.append(part.kernel)
        tuples.append(tuple(kernels))
    return tuple(tuples), index


def _codes(names, start_rule: str, index: dict) -> np.ndarray:
    """int64[S, 8]: the part indices of each scheduler, whether its ordering is static, whether
    every part is built in, whether its start rule is the built-in greedy one, and whether a
    job its start rule holds stays held while the state and prices do not change (built-in parts
    only: a plug-in placement may read anything) (``bacepipe.core.loop.CODE_*``)."""
    rows = []
    for name in names:
        parts = parts_of(name, start_rule)
        builtin = all(p.source.startswith("bacepipe.policies.") for p in parts.values())
        rows.append([index[kind, parts[kind].name] for kind in KINDS]
                    + [int(parts["ordering"].static), int(builtin),
                       int(parts["start_rule"].source == "bacepipe.policies.greedy"),
                       int(builtin and parts["start_rule"].static)])
    return np.array(rows, dtype=np.int64).reshape(len(rows), len(KINDS) + 4)


def batch_inputs(batch: ScenarioBatch, rules: Rules) -> BatchInputs:
    """The batch and the rules as the kernel reads them (contiguous arrays, latency in
    seconds)."""
    c = np.ascontiguousarray
    return BatchInputs(
        batch.hardware.as_array(), batch.memory_on, batch.time_of_use, float(rules.plan_slack),
        batch.hetero, c(batch.gpus), c(batch.price), c(batch.links_gbps),
        c(batch.latency_ms) / 1000.0, c(batch.price_profile), c(batch.utc_offset_h),
        c(batch.params_b), c(batch.layers), c(batch.hidden), c(batch.batch_size),
        c(batch.dataset_samples), c(batch.epochs), c(batch.arrival_h), *batch.gpu_arrays())


def simulate_batch(batch: ScenarioBatch, schedulers, rules: Rules = PAPER_RULES) -> BatchResult:
    """Simulate every topology of ``batch`` under every scheduler (parallel over topologies),
    each told ``rules`` (SPEC §13-14).

    Schedulers whose parts all have kernels run in one call of the compiled core; a scheduler
    with a plain-Python part runs through the reference event loop, topology by topology, into
    the same arrays (``bacepipe.policies.engine_of`` says which).
    """
    names = check_schedulers(schedulers, "schedulers")
    t, r = batch.gpus.shape
    j = batch.params_b.shape[1]
    width = path_width(r, batch.layers)
    out = empty_outputs(t, len(names), j, width)
    variant = "parallel" if t > 1 else "serial"
    with compile_notice(variant):
        parts, index = compiled_parts()
        compiled = [s for s, name in enumerate(names)
                    if all((kind, part.name) in index
                           for kind, part in parts_of(name, rules.start_rule).items())]
        if compiled:
            run = simulate_batch_kernel if t > 1 else simulate_batch_serial
            sub = out if len(compiled) == len(names) else empty_outputs(t, len(compiled), j,
                                                                         width)
            run(batch_inputs(batch, rules), sub, _codes([names[s] for s in compiled],
                                                        rules.start_rule, index),
                shares(t), *parts)
            if sub is not out:
                _scatter(sub, out, compiled)
    slow = [s for s in range(len(names)) if s not in compiled]
    if slow:
        from bacepipe.sim.reference import fill_outputs

        fill_outputs(batch, rules, [names[s] for s in slow], slow, out)
    return BatchResult(out.metrics, out.status, out.bad_job,
                       out.const[:, :, C_KSTAR].astype(np.int64),
                       out.const[:, :, C_MIN_GPUS].astype(np.int64), out.start_s, out.end_s,
                       out.cost, out.path, out.path_gpus, out.plen, out.lower_bound_h, names, r)


def _scatter(sub, out, columns) -> None:
    """Copy the per-scheduler outputs of ``sub`` into scheduler columns ``columns`` of ``out``."""
    for field in out._fields:
        if field in ("const", "lower_bound_h"):
            getattr(out, field)[...] = getattr(sub, field)
        else:
            getattr(out, field)[:, columns] = getattr(sub, field)
