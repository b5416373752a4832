"""A user plug-in: scheduler ``sjf_ldf`` = shortest-job-first ordering × LDF placement × fill.

The ordering key is a job's single-GPU execution time E_j(1) = I_j · t_iter(1 GPU) (ascending;
ties by arrival, then index — the event loop adds those), a key that never changes while the job
waits. LDF and fill are built-in parts; the start rule is the scenario's (``greedy`` unless the
scenario or sweep says ``wait_if_faster``).

    python -m bacepipe.simulate paper --scheduler sjf_ldf --plugin examples/plugins/sjf_ldf.py
    python -m bacepipe.sweep plugins=[examples/plugins/sjf_ldf.py] \\
        schedulers=[bace_pipe,ldf,sjf_ldf]
"""

from bacepipe.core.model import C_E1
from bacepipe.policies import register_part, register_scheduler
from bacepipe.policies.api import ordering_kernel


@ordering_kernel
def sjf_key(jobs, pending, n_pending, alpha, keys):
    """Compiled part: the key of each pending job is its E_j(1), in seconds."""
    for i in range(n_pending):
        j = pending[i]
        keys[j] = jobs[j, C_E1]


def sjf_order(pending, models, arrivals_s, alpha):
    """Its plain-Python twin: the pending jobs in order (the reference event loop runs it)."""
    return sorted(pending, key=lambda j: (models[j].exec_1gpu_s, arrivals_s[j], j))


register_part("ordering", "sjf", kernel=sjf_key, twin=sjf_order, static=True)
register_scheduler("sjf_ldf", ordering="sjf", placement="ldf", allocator="fill", role="user")
