"""The registry of parts and schedulers (issue "Open the engine"): SPEC §7/§13/§14's table written
out here, plug-ins from outside the package, and their contract."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import bacepipe
import bacepipe.policies as policies
from bacepipe.errors import InputError
from bacepipe.model.generate import generate_batch
from bacepipe.model.rules import Rules
from bacepipe.sim.reference import simulate_reference

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "plugins" / "sjf_ldf.py"

#: SPEC §7 (and §IV-E, §14), written from the text, not read back from the registry:
#: scheduler -> (ordering, start rule, placement, allocator, role); None = the scenario's rule.
SPEC_TABLE = {
    "bace_pipe": ("priority", None, "pathfinder", "cost_min", "paper"),
    "lcf": ("fcfs", None, "lcf", "fill", "baseline"),
    "ldf": ("fcfs", None, "ldf", "fill", "baseline"),
    "cr_lcf": ("fcfs", None, "cr_lcf", "fill", "baseline"),
    "cr_ldf": ("fcfs", None, "cr_ldf", "fill", "baseline"),
    "bace_pipe_no_priority": ("fcfs", None, "pathfinder", "cost_min", "ablation"),
    "bace_pipe_no_pathfinder": ("priority", None, "cr_ldf", "fill", "ablation"),
    "bace_pipe_no_costmin": ("priority", None, "pathfinder", "uniform", "ablation"),
    "spt_wait": ("spt", "wait_if_faster", "pathfinder", "cost_min", "ours"),
    "spt_plan": ("spt", "spt_plan", "pathfinder", "cost_min", "ours"),
}


def test_builtin_schedulers_are_spec_table():
    assert set(policies.BUILTIN_SCHEDULERS) == set(SPEC_TABLE)
    for name, (ordering, rule, placement, allocator, role) in SPEC_TABLE.items():
        got = policies.BUILTIN_SCHEDULERS[name]
        assert (got.ordering, got.start_rule, got.placement, got.allocator, got.role) == \
            (ordering, rule, placement, allocator, role), name
    assert policies.REFERENCE_SCHEDULER == "bace_pipe" and policies.role_of("bace_pipe") == "paper"
    assert policies.PAPER_SCHEDULERS == tuple(SPEC_TABLE)[:8]


def test_every_builtin_part_has_kernel_twin_and_spec_docstring():
    for kind, names in policies.BUILTIN_PARTS.items():
        for name in names:
            part = policies.get_part(kind, name)
            assert part.kernel is not None and callable(part.twin), (kind, name)
            assert policies.api.kind_of_kernel(part.kernel) == kind
            assert "SPEC §" in (sys.modules[part.source].__doc__ or ""), part.source


def test_scenario_start_rule_applies_unless_the_scheduler_fixes_one():
    assert policies.parts_of("bace_pipe", "wait_if_faster")["start_rule"].name == "wait_if_faster"
    assert policies.parts_of("spt_plan", "greedy")["start_rule"].name == "spt_plan"
    assert policies.parts_of("spt_wait", "greedy")["start_rule"].name == "wait_if_faster"


@pytest.mark.long
def test_example_plugin_runs_compiled_and_matches_its_twin(registry):
    registry.load_plugins([str(EXAMPLE)])
    assert registry.role_of("sjf_ldf") == "user" and registry.engine_of("sjf_ldf") == "compiled"
    batch = generate_batch("random", 3, range(6), num_jobs=10)
    for t in range(batch.size):
        scenario = batch.scenario(t)
        fast = bacepipe.run_scenario(scenario, "sjf_ldf")
        slow = simulate_reference(scenario, "sjf_ldf")
        assert [j["start_h"] for j in fast["jobs"]] == pytest.approx(
            [j["start_h"] for j in slow["jobs"]], rel=1e-12)
        assert [j["gpus"] for j in fast["jobs"]] == [j["gpus"] for j in slow["jobs"]]
        # shortest single-GPU time first: SJF's first start is the job with the least E_j(1)
        assert fast["avg_jct_h"] == pytest.approx(slow["avg_jct_h"], rel=1e-12)
    # loading twice registers nothing twice
    registry.load_plugins([str(EXAMPLE)])


@pytest.mark.long
@pytest.mark.parametrize("rule", ["greedy", "wait_if_faster"])
def test_builtin_parts_paired_anew_run_compiled_like_their_twins(registry, rule):
    # The dispatch inlines an allocator only into the placements built-in schedulers pair it
    # with; a new pair of built-in parts runs the placement's kernel, handed the allocator.
    registry.register_scheduler("pathfinder_fill", ordering="priority", placement="pathfinder",
                                allocator="fill")
    registry.register_scheduler("cr_ldf_cost_min", ordering="fcfs", placement="cr_ldf",
                                allocator="cost_min")
    batch = generate_batch("random", 7, range(5), num_jobs=9)
    for name in ("pathfinder_fill", "cr_ldf_cost_min"):
        assert registry.engine_of(name) == "compiled"
        for t in range(batch.size):
            fast = bacepipe.run_scenario(batch.scenario(t), name, start_rule=rule)
            slow = simulate_reference(batch.scenario(t), name, Rules(start_rule=rule))
            assert [j["gpus"] for j in fast["jobs"]] == [j["gpus"] for j in slow["jobs"]]
            assert [j["start_h"] for j in fast["jobs"]] == pytest.approx(
                [j["start_h"] for j in slow["jobs"]], rel=1e-12)


@pytest.mark.long
def test_plain_python_plugin_runs_through_the_reference_loop(registry, tmp_path):
    plugin = tmp_path / "py_sjf.py"
    plugin.write_text(textwrap.dedent("""
        from bacepipe.policies import register_part, register_scheduler
        def order(pending, models, arrivals_s, alpha):
            return sorted(pending, key=lambda j: (models[j].exec_1gpu_s, arrivals_s[j], j))
        register_part("ordering", "py_sjf", twin=order, static=True)
        register_scheduler("py_sjf_ldf", ordering="py_sjf", placement="ldf", allocator="fill")
    """))
    registry.load_plugins([str(EXAMPLE), str(plugin)])
    assert registry.engine_of("py_sjf_ldf") == "reference"
    batch = generate_batch("random", 5, range(4), num_jobs=9)
    from bacepipe.core import simulate_batch

    both = simulate_batch(batch, ("sjf_ldf", "py_sjf_ldf", "ldf"))
    np.testing.assert_array_equal(both.alloc[:, 0], both.alloc[:, 1])
    np.testing.assert_allclose(both.metrics[:, 0], both.metrics[:, 1], rtol=1e-12)
    np.testing.assert_allclose(both.end_s[:, 0], both.end_s[:, 1], rtol=1e-12)


@pytest.mark.parametrize("body, problem", [
    ("register_part('sorting', 'x', twin=lambda a, b, c, d: a)", "unknown part kind"),
    ("register_part('placement', 'lcf', twin=lambda a, b, c, d, e: None)", "already registered"),
    ("register_scheduler('ldf', ordering='fcfs', placement='ldf', allocator='fill')",
     "already registered"),
    ("register_part('ordering', 'o', twin=lambda a, b: a)", "takes 2 parameters"),
    ("register_part('ordering', 'o', kernel=print)", "must be compiled"),
    ("register_scheduler('s', ordering='nope', placement='ldf', allocator='fill')",
     "unknown ordering part"),
    ("raise RuntimeError('boom')", "RuntimeError: boom"),
    ("import numpy as np\nfrom bacepipe.policies.api import ordering_kernel\n"
     "@ordering_kernel\ndef k(jobs, pending, n_pending, alpha, keys):\n"
     "    keys[:] = np.zeros(keys.shape[0])\n",
     r"TypingError at line 6 \(keys\[:\] = np.zeros\(keys.shape\[0\]\)\): No implementation "
     r"of function .*zeros.* — a compiled part must not allocate"),
])
def test_broken_plugins_are_one_line(registry, tmp_path, body, problem):
    plugin = tmp_path / "broken.py"
    plugin.write_text("from bacepipe.policies import register_part, register_scheduler\n" + body)
    before = dict(registry.SCHEDULER_PARTS)
    with pytest.raises(InputError, match=problem) as err:
        registry.load_plugins([str(plugin)])
    assert err.value.field == f"plugin {plugin}" and "\n" not in str(err.value)
    assert registry.SCHEDULER_PARTS == before


@pytest.mark.long
def test_example_command_prints_json(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "bacepipe.simulate", "paper", "--scheduler",
                           "sjf_ldf", "--plugin", str(EXAMPLE), "--json"], capture_output=True,
                          text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["scheduler"] == "sjf_ldf" and len(result["jobs"]) == 8
