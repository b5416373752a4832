"""The single-run interface (SPEC §9): run_scenario and ``python -m bacepipe.simulate``."""

import json
import subprocess
import sys

import pytest
import yaml

import bacepipe
from bacepipe.errors import InputError
from bacepipe.simulate import main

KEYS = {"scheduler", "avg_jct_h", "total_cost", "makespan_h", "jobs"}
JOB_KEYS = {"name", "k_star", "start_h", "end_h", "jct_h", "cost", "path", "gpus"}


@pytest.mark.parametrize("scheduler", bacepipe.SCHEDULERS)
def test_run_scenario_shape(scheduler, base_scenario):
    out = bacepipe.run_scenario(base_scenario, scheduler)
    assert KEYS <= set(out) and out["scheduler"] == scheduler
    (job,) = out["jobs"]
    assert JOB_KEYS <= set(job)
    assert list(job["gpus"]) == job["path"]
    assert out["avg_jct_h"] == pytest.approx(job["jct_h"])
    assert out["total_cost"] == pytest.approx(job["cost"])


def test_path_file_and_dict_agree(base_scenario, tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(base_scenario))
    assert bacepipe.run_scenario(str(path), "lcf") == bacepipe.run_scenario(base_scenario, "lcf")


def test_unknown_scheduler(base_scenario):
    with pytest.raises(InputError) as err:
        bacepipe.run_scenario(base_scenario, "fastest")
    assert err.value.field == "scheduler"


def test_json_output(capsys):
    assert main(["motivation", "--scheduler", "ldf", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == bacepipe.run_scenario("motivation", "ldf")


def test_table_output(capsys):
    assert main(["motivation"]) == 0
    text = capsys.readouterr().out
    assert "scheduler: bace_pipe" in text and "avg JCT" in text
    assert text.count("\n") >= 5


def test_replay_flags_pick_the_generated_topology(capsys):
    assert main(["random", "--seed", "3", "--topology", "17", "--gpu-scale", "0.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = bacepipe.run_scenario(
        bacepipe.generate_scenario("random", 3, 17, gpu_scale=0.5), "bace_pipe")
    assert out == expected


@pytest.mark.parametrize("argv, needle", [
    (["nope.yaml"], "scenario: no such file"),
    (["motivation", "--scheduler", "x"], "scheduler: unknown scheduler 'x'"),
    (["motivation", "--gpu-scale", "-1"], "gpu_scale: must be > 0"),
    (["random", "--num-jobs", "0"], "num_jobs: must be >= 1"),
    (["random", "--topology", "-3"], "topology: must be >= 0"),
    (["motivation", "--bandwidth-scale", "abc"], "invalid float value"),
])
def test_bad_input_exit_2_one_line(argv, needle, capsys):
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse's own errors
        code = stop.code
    assert code == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_module_entry_point_exit_status(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"regions": [{"name": "A", "gpus": 0, "price": 1,
                                                "bandwidth_gbps": 1}],
                                   "jobs": [{"name": "j", "params_b": 1, "layers": 1, "hidden": 1,
                                             "batch_size": 1, "dataset_samples": 1}]}))
    proc = subprocess.run([sys.executable, "-m", "bacepipe.simulate", str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("bacepipe.simulate: regions: the cluster has 0 GPUs: "
                                   "no job could ever be placed")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("rule", ["greedy", "wait_if_faster"])
def test_lower_bound_is_the_twins_and_below_every_scheduler(rule):
    from bacepipe.model.generate import generate_batch
    from bacepipe.sim.bounds import lower_bound_h

    for name, topology in (("paper", 0), ("random", 3), ("random", 7)):
        scenario = generate_batch(name, 0, [topology]).scenario(0)
        for scheduler in bacepipe.SCHEDULERS:
            out = bacepipe.run_scenario(scenario, scheduler, start_rule=rule)
            assert out["lower_bound_h"] == pytest.approx(lower_bound_h(scenario), rel=1e-12)
            assert out["lower_bound_h"] <= out["avg_jct_h"] * (1 + 1e-12)


def test_simulate_start_rule_and_slack_options(capsys):
    assert main(["paper", "--scheduler", "bace_pipe", "--start-rule", "wait_if_faster",
                 "--json"]) == 0
    waiting = json.loads(capsys.readouterr().out)
    assert main(["paper", "--scheduler", "bace_pipe", "--json"]) == 0
    greedy = json.loads(capsys.readouterr().out)
    assert waiting["jobs"] != greedy["jobs"]
    assert main(["paper", "--scheduler", "spt_plan", "--plan-slack", "-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "bacepipe.simulate: plan_slack: must be >= 0, got -1.0"
