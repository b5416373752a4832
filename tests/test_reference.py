"""Hand-computable checks of the plain-Python reference simulator (SPEC §2–§7, §10a, §12)."""

import math

import pytest
from random_scenarios import SMALL_JOB

from bacepipe.errors import InputError
from bacepipe.model.generate import load_scenario
from bacepipe.model.hardware import Hardware
from bacepipe.model.scenario import parse_scenario
from bacepipe.policies import (
    PAPER_SCHEDULERS,
    SCHEDULERS,
    cost_min,
    cr_lcf,
    cr_ldf,
    fcfs,
    fill,
    lcf,
    pathfinder,
    priority,
    uniform,
)
from bacepipe.sim import model as twin
from bacepipe.sim import reference as ref
from bacepipe.sim.model import ClusterState, job_model
from bacepipe.sim.reference import simulate_reference

allocate_fill, allocate_cost_min, allocate_uniform = fill.twin, cost_min.twin, uniform.twin


def scenario(gpus, prices, links, jobs=(SMALL_JOB,), **extra):
    """A scenario with regions R0.. of the given GPUs and prices and a full links matrix."""
    regions = [{"name": f"R{i}", "gpus": g, "price": p}
               for i, (g, p) in enumerate(zip(gpus, prices, strict=True))]
    return parse_scenario({"regions": regions, "links_gbps": links, "jobs": list(jobs), **extra})


def model_of(scn, j=0):
    return job_model(scn.jobs[j], scn.hardware, sum(r.gpus for r in scn.regions),
                     scn.memory_model, j)


# --------------------------------------------------------------------------- job model


def test_llama_70b_constants():
    job = load_scenario("paper").jobs[2]
    assert job.model == "Llama-3.1-70B"
    jm = job_model(job, Hardware(), 336)
    assert jm.activation_bits / 8 == 2048 * 8192 * 2 == 33_554_432  # 33.5 MB (SPEC §2)
    assert jm.micro_batches == 128
    assert jm.iterations == math.ceil(job.dataset_samples / 128)
    assert jm.work_s == pytest.approx(2 * 70e9 * 2048 / (154.8e12 * 0.4))
    assert jm.intra_hop_s == pytest.approx(33_554_432 * 8 / 100e9)
    assert 1 <= jm.k_star <= 80


def test_one_job_one_region_by_hand():
    job = {"name": "tiny", "params_b": 1, "layers": 2, "hidden": 1024, "batch_size": 4,
           "dataset_samples": 8}
    scn = scenario([4], [0.2], [[0.0]], jobs=[job])
    w = 2 * 1e9 * 2048 / (154.8e12 * 0.4)
    tc1, tc2 = w + 0.002, w / 2 + 0.002
    hop = 8 * 2048 * 1024 * 2 / 100e9
    t1 = 2 * (tc1 + 3 * tc1)  # M = 4 micro-batches, no hop
    t2 = 2 * (hop + 2 * tc2 + 3 * max(tc2, hop))
    assert t2 < t1  # so K* = 2
    exec_s = 2 * t2  # I = ceil(8 / 4) = 2
    for name in SCHEDULERS:
        out = simulate_reference(scn, name)
        row = out["jobs"][0]
        assert row["k_star"] == 2 and row["path"] == ["R0"] and row["gpus"] == {"R0": 2}
        assert row["start_h"] == 0.0
        assert row["end_h"] == pytest.approx(exec_s / 3600, rel=1e-12)
        assert row["cost"] == pytest.approx(exec_s / 3600 * 2 * 0.2 * 0.3, rel=1e-12)
        assert out["avg_jct_h"] == row["jct_h"] == out["makespan_h"] == row["end_h"]
        assert out["energy_kwh"] == pytest.approx(exec_s / 3600 * 2 * 0.3, rel=1e-12)
        assert out["gpu_utilization"] == pytest.approx(0.5)
        assert out["mean_gpus"] == 2 and out["multi_region_share"] == 0 and out["mean_wait_h"] == 0


def test_k_star_is_capped_by_cluster_and_layers():
    scn = scenario([3], [0.2], [[0.0]])
    assert model_of(scn).k_star == 3
    scn = scenario([128], [0.2], [[0.0]])
    assert model_of(scn).k_star == 8  # layers


def test_iteration_time_of_a_cross_region_path():
    links = [[0, 40, 0], [20, 0, 0], [0, 0, 0]]
    scn = scenario([4, 4, 4], [0.1, 0.2, 0.3], links)
    jm = model_of(scn)
    cross = jm.activation_bits / (20 * 1e9)  # min of both directions, nominal
    hops = [jm.intra_hop_s, cross, jm.intra_hop_s, jm.intra_hop_s]
    delta = max(twin.t_comp(jm, 5), cross)
    want = 2 * (sum(hops) + 5 * twin.t_comp(jm, 5) + (jm.micro_batches - 1) * delta)
    assert twin.iteration_time_s(jm, scn, [0, 1], [2, 3]) == pytest.approx(want, rel=1e-14)
    with_latency = scenario([4, 4, 4], [0.1, 0.2, 0.3], links,
                            latency_ms=[[0, 30, 0], [30, 0, 0], [0, 0, 0]])
    # latency is paid once in the fill sum, not in Δ (SPEC §12)
    assert twin.iteration_time_s(jm, with_latency, [0, 1], [2, 3]) == pytest.approx(want + 0.06)


# --------------------------------------------------------------------------- allocators


def test_cost_min_allocator_alg2():
    # one GPU each, then the surplus of 4 to the cheapest (R1: +3, full), then R2 (+1)
    assert allocate_cost_min([0, 1, 2], 7, [3, 4, 5], [0.3, 0.1, 0.2]) == [1, 4, 2]
    assert allocate_cost_min([2, 0], 2, [3, 4, 5], [0.3, 0.1, 0.2]) == [1, 1]
    # equal prices: path order breaks the tie
    assert allocate_cost_min([1, 0], 5, [4, 4], [0.2, 0.2]) == [4, 1]


def test_uniform_allocator_spec_examples():
    free = [2, 5, 3]
    assert allocate_uniform([0, 1, 2], 3, free, [1, 1, 1]) == [1, 1, 1]
    assert allocate_uniform([0, 1, 2], 4, free, [1, 1, 1]) == [2, 1, 1]  # x = 1, +1 in path order
    assert allocate_uniform([0, 1, 2], 7, free, [1, 1, 1]) == [2, 3, 2]  # x = 2, R0 is full
    assert allocate_uniform([0, 1, 2], 9, free, [1, 1, 1]) == [2, 4, 3]  # x = 3
    # g equals the path's free GPUs: every region gets all its GPUs (SPEC §10a)
    assert allocate_uniform([0, 1, 2], 10, free, [1, 1, 1]) == [2, 5, 3]
    assert allocate_uniform([2, 1], 8, free, [1, 1, 1]) == [3, 5]


def test_fill_allocator():
    assert allocate_fill([2, 0], 6, [3, 4, 5], [0, 0, 0]) == [5, 1]
    assert allocate_fill([0, 1], 7, [3, 4, 5], [0, 0, 0]) == [3, 4]


# --------------------------------------------------------------------------- placement policies


def test_lcf_picks_the_cheapest_region_and_ldf_the_largest():
    links = [[0, 50, 50], [50, 0, 50], [50, 50, 0]]
    scn = scenario([64, 4, 64], [0.3, 0.1, 0.2], links)
    lcf = simulate_reference(scn, "lcf")["jobs"][0]
    assert lcf["path"] == ["R1"] and lcf["gpus"] == {"R1": 4}
    ldf = simulate_reference(scn, "ldf")["jobs"][0]
    assert ldf["path"] == ["R2"] and ldf["gpus"] == {"R2": 8}  # tie on GPUs: cheaper


def test_regions_without_free_gpus_are_invisible():
    scn = scenario([4, 4], [0.1, 0.2], [[0, 50], [50, 0]])
    state = ClusterState(scn)
    state.free[0] = 0
    jm = model_of(scn)
    assert lcf.twin(state, jm, jm.k_star, [0.1, 0.2], allocate_fill) == ([1], [4])
    assert pathfinder.twin(state, jm, jm.k_star, [0.1, 0.2], allocate_cost_min) == ([1], [4])


def test_pathfinder_phase1_cheapest_region_that_fits_k():
    links = [[0, 50, 50], [50, 0, 50], [50, 50, 0]]
    scn = scenario([100, 4, 100], [0.3, 0.1, 0.2], links)
    jm = model_of(scn)
    assert jm.k_star == 8
    state = ClusterState(scn)
    got = pathfinder.twin(state, jm, jm.k_star, [0.3, 0.1, 0.2], allocate_cost_min)
    assert got == ([2], [8])


def test_pathfinder_phase2_most_gpus_then_lower_average_price():
    links = [[0, 10, 10], [10, 0, 10], [10, 10, 0]]
    prices = [0.3, 0.1, 0.1]
    scn = scenario([4, 4, 2], prices, links)
    jm = model_of(scn)
    assert jm.k_star == 8
    state = ClusterState(scn)
    # starts 0 and 1 give [0,1]/[1,0] at avg 0.2; start 2 gives [2,0,1] = [2,2,4] at avg 0.15
    assert twin.grow_path(state, jm, jm.k_star, 0) == ([0, 1], 8)
    assert twin.grow_path(state, jm, jm.k_star, 2) == ([2, 0, 1], 8)
    got = pathfinder.twin(state, jm, jm.k_star, prices, allocate_cost_min)
    assert got == ([2, 0, 1], [2, 2, 4])


def test_pathfinder_equal_average_price_keeps_the_earlier_start():
    links = [[0, 10, 0.001], [10, 0, 50], [0.001, 50, 0]]
    prices = [0.3, 0.1, 0.2]
    scn = scenario([3, 3, 3], prices, links)
    jm = model_of(scn)
    state = ClusterState(scn)
    assert twin.grow_path(state, jm, jm.k_star, 1) == ([1, 2], 6)  # hop 2→0 is too thin
    # starts 0 and 2 both reach 8 GPUs with the same allocation; sums in path order may differ by
    # rounding, which the 1e-12 tolerance absorbs
    got = pathfinder.twin(state, jm, jm.k_star, prices, allocate_cost_min)
    assert got == ([0, 1, 2], [2, 3, 3])


def test_cr_lcf_skips_an_infeasible_region_and_continues():
    links = [[0, 0, 10], [0, 0, 10], [10, 10, 0]]  # no link R0-R1
    scn = scenario([3, 3, 3], [0.1, 0.2, 0.3], links)
    jm = model_of(scn)
    state = ClusterState(scn)
    assert cr_lcf.twin(state, jm, jm.k_star, [0.1, 0.2, 0.3], allocate_fill) == ([0, 2], [3, 3])


def test_cr_ldf_stops_at_the_first_infeasible_hop():
    links = [[0, 0, 10], [0, 0, 0], [10, 0, 0]]
    scn = scenario([3, 5, 3], [0.1, 0.2, 0.3], links)
    jm = model_of(scn)
    state = ClusterState(scn)
    # starts at R1 (most GPUs); its best hop has 0 Gbit/s: infeasible, stop
    assert cr_ldf.twin(state, jm, jm.k_star, [0.1, 0.2, 0.3], allocate_fill) == ([1], [5])


def test_reservation_and_exact_reset_on_release():
    scn = scenario([3, 3], [0.1, 0.2], [[0, 10], [8, 0]])
    state = ClusterState(scn)
    state.reserve([0, 1], [2, 1], 0.1)
    state.reserve([1, 0], [1, 1], 0.2)
    assert state.free == [0, 1]
    assert state.hop_gbps(0, 1) == pytest.approx(7.7)
    state.release([0, 1], [2, 1], 0.1)
    assert state.residual[0][1] == pytest.approx(9.8)
    state.release([1, 0], [1, 1], 0.2)
    assert state.residual == [[0, 10], [8, 0]] and state.free == [3, 3]


# --------------------------------------------------------------------------- ordering


def test_priority_order_follows_alpha():
    short = dict(SMALL_JOB, name="short", params_b=7, hidden=8192)  # less work, more bandwidth
    long = dict(SMALL_JOB, name="long", params_b=28, hidden=1024)
    scn = scenario([8], [0.1], [[0]], jobs=[long, short])
    models = [model_of(scn, 0), model_of(scn, 1)]
    assert models[1].exec_1gpu_s < models[0].exec_1gpu_s
    assert models[1].b_star_bps > models[0].b_star_bps
    arrivals = [0.0, 0.0]
    assert priority.twin([0, 1], models, arrivals, 0.0) == [1, 0]  # shortest first
    assert priority.twin([0, 1], models, arrivals, 1.0) == [0, 1]  # least bandwidth first
    assert fcfs.twin([1, 0], models, [5.0, 5.0], 0.0) == [0, 1]


def test_link_share_alpha():
    scn = scenario([3, 3, 3], [0.1, 0.2, 0.3], [[0, 10, 10], [10, 0, 10], [10, 10, 0]])
    paths = [[0, 1, 2], [2], [1, 0]]
    reserved = [0.5, 9.0, 1.5]
    assert ref.link_share(scn, [0, 1, 2], paths, reserved) == pytest.approx(
        (2 * 2 * 0.5 + 2 * 1 * 1.5) / 60)
    no_links = scenario([3], [0.1], [[0]])
    assert ref.link_share(no_links, [0], [[0]], [0.0]) == 0.0


# --------------------------------------------------------------------------- event loop


def test_staggered_arrivals_wait_for_release():
    jobs = [dict(SMALL_JOB, name="A"), dict(SMALL_JOB, name="B", arrival_h=0.01),
            dict(SMALL_JOB, name="C", arrival_h=1000.0)]
    scn = scenario([8], [0.1], [[0]], jobs=jobs)
    jm = model_of(scn)
    exec_s = jm.iterations * twin.iteration_time_s(jm, scn, [0], [8])
    assert exec_s > 36  # A still runs when B arrives
    for name in PAPER_SCHEDULERS:  # greedy start rule (SPEC §5)
        out = simulate_reference(scn, name)
        a, b, c = out["jobs"]
        assert a["start_h"] == 0 and a["end_h"] == exec_s / 3600
        assert b["start_h"] == a["end_h"] and b["end_h"] == (exec_s + exec_s) / 3600
        assert b["jct_h"] == pytest.approx(2 * exec_s / 3600 - 0.01)
        assert c["start_h"] == 1000.0 and c["gpus"] == {"R0": 8}
        assert out["mean_wait_h"] == pytest.approx((exec_s / 3600 - 0.01) / 3)


def test_a_waiting_job_takes_what_is_left():
    jobs = [dict(SMALL_JOB, name="A", layers=5), dict(SMALL_JOB, name="B")]
    scn = scenario([8], [0.1], [[0]], jobs=jobs)
    a, b = simulate_reference(scn, "lcf")["jobs"]
    assert a["gpus"] == {"R0": 5} and b["gpus"] == {"R0": 3} and b["start_h"] == 0


def test_time_of_use_prices_and_cost():
    profile = [1.0] * 24
    profile[1] = 2.0
    regions = [{"name": "R0", "gpus": 2, "price": 0.1, "price_profile": profile,
                "utc_offset_h": 1.0},
               {"name": "R1", "gpus": 2, "price": 0.15}]
    scn = parse_scenario({"regions": regions, "links_gbps": [[0, 10], [10, 0]],
                          "jobs": [SMALL_JOB]})
    r0 = scn.regions[0]
    assert twin.price_at(r0, 0.0) == pytest.approx(0.2)  # local hour 1
    assert twin.price_at(r0, 3600.0) == pytest.approx(0.1)
    assert twin.price_integral(r0, 1800.0, 5400.0) == pytest.approx(0.5 * 0.2 + 0.5 * 0.1)
    cost = twin.job_cost(scn, [0, 1], [2, 1], 1800.0, 3600.0)
    assert cost == pytest.approx(0.3 * (2 * 0.15 + 1 * 0.15))
    # LCF decides on the price at t = 0: R0 costs 0.2 then, R1 0.15
    assert simulate_reference(scn, "lcf")["jobs"][0]["path"] == ["R1"]


# --------------------------------------------------------------------------- errors and names


def test_unknown_scheduler_is_an_input_error():
    with pytest.raises(InputError) as err:
        simulate_reference(load_scenario("motivation"), "fifo")
    assert err.value.field == "scheduler"


def test_memory_model_impossible_job_is_an_input_error():
    job = dict(SMALL_JOB, params_b=70, layers=2)  # m = ceil(16·70 / 43.2) = 26 > 2
    scn = scenario([64], [0.1], [[0]], jobs=[SMALL_JOB, job], memory_model="adam_mixed")
    with pytest.raises(InputError) as err:
        simulate_reference(scn, "bace_pipe")
    assert err.value.field == "jobs[1]"


def test_memory_model_job_that_never_fits_one_region():
    job = dict(SMALL_JOB, params_b=70, layers=80)  # m = 26, but LCF only sees 16-GPU regions
    scn = scenario([16, 16], [0.1, 0.2], [[0, 50], [50, 0]], jobs=[job],
                   memory_model="adam_mixed")
    assert model_of(scn).min_gpus == 26
    with pytest.raises(InputError, match="can never be placed") as err:
        simulate_reference(scn, "lcf")
    assert err.value.field == "jobs[0]"
    row = simulate_reference(scn, "cr_ldf")["jobs"][0]
    assert sum(row["gpus"].values()) >= 26


def test_the_model_twin_is_still_importable_from_the_reference_module():
    """Plug-in twins written before the split import the model's helpers from sim.reference."""
    from bacepipe.sim.reference import grow_path, job_model, visible

    assert (grow_path, job_model, visible) == (twin.grow_path, twin.job_model, twin.visible)
    assert not hasattr(ref, "math")  # an import of sim.model is not a name of it
