"""SPEC §16 by hand: GPU types, balanced stages, prices per unit of work, per-type power, and
the one-line errors of bad types."""

import pytest

import bacepipe
from bacepipe.errors import InputError
from bacepipe.model.generate import generate_batch
from bacepipe.model.scenario import parse_scenario
from bacepipe.sim.reference import simulate_reference

JOB = {"name": "J", "params_b": 14, "layers": 48, "hidden": 5120, "batch_size": 512,
       "dataset_samples": 52002}


def fleet(types, gpus=(64, 64), prices=(0.1, 0.3), **extra):
    regions = [{"name": f"R{i}", "gpus": g, "price": p, "bandwidth_gbps": 50.0,
                **({"gpu_type": t} if t else {})}
               for i, (g, p, t) in enumerate(zip(gpus, prices, types, strict=True))]
    return parse_scenario({"regions": regions, "jobs": [JOB], **extra})


@pytest.mark.parametrize("run", [bacepipe.run_scenario, simulate_reference], ids=["core", "twin"])
def test_price_per_unit_of_work_picks_the_faster_dearer_region(run):
    # A6000 at 0.1 $/kWh: π = 0.1·0.30/154.8 = 1.94e-4; H100 at 0.3: π = 0.3·0.70/989 = 2.12e-4;
    # at 0.2 $/kWh the H100's π = 1.42e-4 is the lower one although its price is higher.
    assert run(fleet(["A6000", "H100"]), "lcf")["jobs"][0]["path"] == ["R0"]
    assert run(fleet(["A6000", "H100"], prices=(0.1, 0.2)), "lcf")["jobs"][0]["path"] == ["R1"]
    # without types the cheaper price wins, as in SPEC §7
    assert run(fleet([None, None], prices=(0.1, 0.2)), "lcf")["jobs"][0]["path"] == ["R0"]


@pytest.mark.parametrize("run", [bacepipe.run_scenario, simulate_reference], ids=["core", "twin"])
def test_most_free_compute_and_balanced_stages(run):
    scn = fleet(["A6000", "H100"], gpus=(40, 8), prices=(0.1, 0.1))
    row = run(scn, "ldf")["jobs"][0]
    assert row["path"] == ["R1"]  # 8 H100s (7.9 PFLOP/s) beat 40 A6000s (6.2 PFLOP/s)
    # K* and W come from the fastest type; an 8-GPU H100 stage takes flop / (8·s) + overhead
    flop = 2 * 14e9 * 1 * 2048
    s = 989e12 * 0.4
    tc = flop / (8 * s) + 0.002
    hop = 8 * 2048 * 5120 * 2 / 100e9
    iterations = -(-52002 // 512)
    t_iter = 2 * (7 * hop + 8 * tc + 511 * max(tc, hop))
    assert row["end_h"] * 3600 == pytest.approx(iterations * t_iter, rel=1e-12)
    assert row["cost"] == pytest.approx(iterations * t_iter / 3600 * 8 * 0.1 * 0.70, rel=1e-12)


def test_one_type_everywhere_keeps_every_choice_of_spec_7():
    plain = generate_batch("paper").scenario(0)
    typed = parse_scenario({**plain.to_dict(), "regions": [
        {**r, "gpu_type": "A6000"} for r in plain.to_dict()["regions"]]})
    for scheduler in bacepipe.SCHEDULERS:
        a, b = bacepipe.run_scenario(plain, scheduler), bacepipe.run_scenario(typed, scheduler)
        assert [j["gpus"] for j in a["jobs"]] == [j["gpus"] for j in b["jobs"]], scheduler
        assert a["avg_jct_h"] == pytest.approx(b["avg_jct_h"], rel=1e-12)
        assert a["total_cost"] == pytest.approx(b["total_cost"], rel=1e-12)


def test_gpu_mix_cloud_draws_types_after_every_other_draw():
    plain = generate_batch("random", 4, range(30))
    mixed = generate_batch("random", 4, range(30), gpu_mix="cloud")
    for field in ("gpus", "price", "links_gbps", "params_b", "dataset_samples"):
        assert (getattr(plain, field) == getattr(mixed, field)).all(), field
    names = {mixed.gpu_types[k][0] for k in mixed.gpu_type.ravel()}
    assert names == {"A6000", "A100", "L40S", "H100"} and not plain.hetero and mixed.hetero
    assert mixed.scenario(3).to_dict()["regions"][0]["gpu_type"] in names


@pytest.mark.parametrize("extra, field, problem", [
    ({"gpu_types": {}}, "regions[1].gpu_type", "unknown GPU type 'B200'"),
    ({"gpu_types": {"B200": {"tflops": 2250, "mem_gb": 192}}}, "gpu_types.B200.power_kw",
     "missing"),
    ({"gpu_types": {"B200": {"tflops": -1, "mem_gb": 192, "power_kw": 1}}},
     "gpu_types.B200.tflops", "must be > 0"),
    ({"gpu_types": {"H100": {"mem_gb": float("inf")}}}, "gpu_types.H100.mem_gb",
     "must be finite"),
    ({"gpu_types": {"H100": {"speed": 3}}}, "gpu_types.H100.speed", "unknown key"),
])
def test_bad_types_are_one_line(extra, field, problem):
    with pytest.raises(InputError) as err:
        fleet(["H100", "B200"], **extra) if "B200" in str(extra) or not extra["gpu_types"] \
            else fleet(["H100", "A100"], **extra)
    assert err.value.field == field and problem in err.value.problem
