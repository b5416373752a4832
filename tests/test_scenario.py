"""Scenario parsing and validation (SPEC §1, §9, §10a): every bad field is named."""

import math

import numpy as np
import pytest
import yaml

from bacepipe.errors import InputError
from bacepipe.model.generate import generate_batch, generate_scenario, load_scenario
from bacepipe.model.scenario import geo_latency_ms, parse_scenario
from bacepipe.sweep.config import validate


def test_defaults_and_derived_links(base_scenario):
    sc = parse_scenario(base_scenario)
    assert sc.hardware.seq_len == 2048 and sc.hardware.gpu_power_kw == 0.3
    assert sc.links_gbps == ((0.0, 0.75), (0.75, 0.0))
    assert sc.jobs[0].epochs == 1.0 and sc.jobs[0].arrival_h == 0.0
    assert sc.latency_ms is None and sc.memory_model == "none"


def test_scales_apply_to_links_and_gpus(base_scenario):
    base_scenario["regions"].append({"name": "Z", "gpus": 0, "price": 0.1, "bandwidth_gbps": 1})
    sc = parse_scenario(base_scenario, bandwidth_scale=0.5, gpu_scale=0.3)
    # G = max(1, floor(G*s + 0.5)); 0 stays 0
    assert [r.gpus for r in sc.regions] == [1, 1, 0]
    assert sc.links_gbps[0][1] == pytest.approx(0.375)
    assert [r.bandwidth_gbps for r in sc.regions] == [0.5, 0.25, 0.5]  # B_r like the links


def test_files_and_generation_scale_alike():
    """parse_scenario and generate_batch apply the same scaling functions: same bits."""
    scales = {"bandwidth_scale": 0.37, "gpu_scale": 2.3}
    parsed = parse_scenario(generate_scenario("paper", 0, 0), **scales)
    assert parsed == generate_batch("paper", 0, [0], **scales).scenario(0)


@pytest.mark.parametrize("key, value", [("bandwidth_scale", 1e7), ("bandwidth_scale", -1),
                                        ("gpu_scale", 0), ("gpu_scale", 1e4)])
def test_a_scale_has_one_rule(base_scenario, key, value):
    """A scale is checked by one rule, with one message, wherever it is given."""
    messages = set()
    for call in (lambda: parse_scenario(base_scenario, **{key: value}),
                 lambda: generate_scenario("paper", **{key: value}),
                 lambda: validate({key: value})):
        with pytest.raises(InputError) as err:
            call()
        messages.add(str(err.value))
    assert len(messages) == 1 and messages.pop().startswith(f"{key}: must be ")


def test_round_trip_through_dict(base_scenario):
    sc = parse_scenario(base_scenario, bandwidth_scale=2.0, gpu_scale=2.0)
    again = parse_scenario(sc.to_dict())
    assert again == sc


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.update(extra=1), "extra"),
    (lambda d: d["regions"][0].update(gpus=-1), "regions[0].gpus"),
    (lambda d: d["regions"][1].update(gpus=2.5), "regions[1].gpus"),
    (lambda d: d["regions"][0].update(price=0), "regions[0].price"),
    (lambda d: d["regions"][0].update(price=float("nan")), "regions[0].price"),
    (lambda d: d["regions"][0].update(price="cheap"), "regions[0].price"),
    (lambda d: d["regions"][0].update(price=True), "regions[0].price"),
    (lambda d: d["regions"][1].update(name="A"), "regions[1].name"),
    (lambda d: d["regions"][0].pop("bandwidth_gbps"), "regions[0].bandwidth_gbps"),
    (lambda d: d["regions"][0].update(colour="red"), "regions[0].colour"),
    (lambda d: d.update(regions=[]), "regions"),
    (lambda d: d.update(jobs=[]), "jobs"),
    (lambda d: d["jobs"][0].pop("layers"), "jobs[0].layers"),
    (lambda d: d["jobs"][0].update(batch_size=0), "jobs[0].batch_size"),
    (lambda d: d["jobs"][0].update(params_b=float("inf")), "jobs[0].params_b"),
    (lambda d: d["jobs"][0].update(arrival_h=-1), "jobs[0].arrival_h"),
    (lambda d: d.update(links_gbps=[[0, 1]]), "links_gbps"),
    (lambda d: d.update(links_gbps=[[0, 1], [1]]), "links_gbps[1]"),
    (lambda d: d.update(links_gbps=[[0, -1], [1, 0]]), "links_gbps[0][1]"),
    (lambda d: d.update(links_gbps=[[1, 1], [1, 0]]), "links_gbps[0][0]"),
    (lambda d: d.update(hardware={"mfu": 1.5}), "hardware.mfu"),
    (lambda d: d.update(hardware={"seq_len": 0}), "hardware.seq_len"),
    (lambda d: d.update(hardware={"warp": 9}), "hardware.warp"),
    (lambda d: d.update(hardware={"micro_batch_size": 3}), "jobs[0].batch_size"),
    (lambda d: [r.update(gpus=0) for r in d["regions"]], "regions"),
    (lambda d: d.update(memory_model="infinite"), "memory_model"),
    (lambda d: d.update(latency="geo"), "regions[0].lat"),
])
def test_bad_input_names_the_field(base_scenario, mutate, field):
    mutate(base_scenario)
    with pytest.raises(InputError) as err:
        parse_scenario(base_scenario)
    assert err.value.field == field
    assert "\n" not in str(err.value)


def test_asymmetric_links_kept(base_scenario):
    base_scenario["links_gbps"] = [[0, 2.0], [0.5, 0]]
    assert parse_scenario(base_scenario).links_gbps == ((0.0, 2.0), (0.5, 0.0))


def test_geo_latency_is_great_circle_over_100():
    paper = load_scenario("paper")
    lat = geo_latency_ms([r.lat for r in paper.regions], [r.lon for r in paper.regions])
    # Ireland → New York is about 5,100 km great-circle
    assert 49 < lat[0][1] < 53
    assert lat[0][1] == lat[1][0] and lat[2][2] == 0.0


def test_yaml_file_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"\xff\xfe not utf8")
    with pytest.raises(InputError, match="not UTF-8"):
        load_scenario(bad)
    bad.write_text("regions: [unclosed")
    with pytest.raises(InputError, match="not valid YAML"):
        load_scenario(bad)
    bad.write_text("- a list\n")
    with pytest.raises(InputError, match="mapping"):
        load_scenario(bad)


def test_builtin_scenarios():
    paper = load_scenario("paper")
    assert [r.name for r in paper.regions][:2] == ["EU-West", "US-East-2"]
    assert [j.model for j in paper.jobs][0] == "FLM-101B"
    assert {j.dataset_samples for j in paper.jobs} <= {52_002, 1_810_000, 8_010_000}
    motivation = load_scenario("motivation")
    assert motivation.links_gbps[0][2] == 1.0 and motivation.links_gbps[1][3] == 0.2


def test_generation_depends_on_seed_and_topology_alone():
    whole = generate_batch("random", 7, range(20), num_jobs=5)
    part = generate_batch("random", 7, [13, 4], num_jobs=5)
    for name in ("gpus", "price", "links_gbps", "dataset_samples"):
        assert (getattr(part, name) == getattr(whole, name)[[13, 4]]).all()
    other_seed = generate_batch("random", 8, range(20), num_jobs=5)
    assert (other_seed.gpus != whole.gpus).any()


def test_random_draws_follow_spec_ranges():
    b = generate_batch("random", 1, range(500), num_regions=6, num_jobs=10, gpu_scale=1.0)
    assert set(b.gpus.ravel()) == {16, 32, 64, 128}
    bw = b.bandwidth_gbps
    assert bw.min() >= 25 and bw.max() < 100
    assert set(b.price.ravel()) <= {0.251, 0.156, 0.288, 0.191, 0.222, 0.295, 0.230, 0.291,
                                    0.35, 0.12, 0.08}
    # links are (B_u + B_v) / 2 on the scaled batch too, B_r scaled like the links
    s = generate_batch("random", 1, range(3), bandwidth_scale=0.3)
    u, v = 1, 4
    assert math.isclose(s.links_gbps[2, u, v], (s.bandwidth_gbps[2, u] + s.bandwidth_gbps[2, v])
                        / 2)
    assert (s.bandwidth_gbps == b.bandwidth_gbps[:3] * 0.3).all()
    # jobs cycle Table III
    assert b.job_models[8] == b.job_models[0] == "FLM-101B"


def test_generate_scenario_is_valid_yaml_shape(tmp_path):
    d = generate_scenario("random", 3, 42, bandwidth_scale=1.5, gpu_scale=0.5, num_jobs=4)
    path = tmp_path / "t42.yaml"
    path.write_text(yaml.safe_dump(d))
    assert load_scenario(path) == parse_scenario(d)


# --------------------------------------------------------------------------- SPEC §12 switches


def test_poisson_arrivals_are_exponential_gaps_per_topology():
    b = generate_batch("random", 5, range(400), num_jobs=30, arrivals="poisson",
                       arrival_rate_per_h=2.0)
    assert (b.arrival_h[:, 0] == 0).all() and (np.diff(b.arrival_h, axis=1) >= 0).all()
    gaps = np.diff(b.arrival_h, axis=1)
    assert gaps.mean() == pytest.approx(0.5, rel=0.05)  # 1 / λ
    again = generate_batch("random", 5, [7], num_jobs=30, arrivals="poisson",
                           arrival_rate_per_h=2.0)
    assert (again.arrival_h[0] == b.arrival_h[7]).all()
    # switching arrivals on does not move any other draw
    plain = generate_batch("random", 5, range(400), num_jobs=30)
    assert (plain.gpus == b.gpus).all() and (plain.dataset == b.dataset).all()


def test_poisson_needs_rate(base_scenario):
    base_scenario["arrivals"] = "poisson"
    with pytest.raises(InputError) as err:
        parse_scenario(base_scenario)
    assert err.value.field == "scenario.arrival_rate_per_h"


def test_trace_file_becomes_the_jobs(tmp_path, base_scenario):
    (tmp_path / "t.csv").write_text(
        "# a trace\nname,params_b,layers,hidden,batch_size,dataset_samples,arrival_h\n"
        "x,7,32,4096,64,1000,0\ny,14,48,5120,512,52002,3.5\n")
    data = {"regions": base_scenario["regions"], "arrivals": "trace", "trace": "t.csv"}
    sc = parse_scenario(data, base_dir=tmp_path)
    assert [j.name for j in sc.jobs] == ["x", "y"] and sc.jobs[1].arrival_h == 3.5
    (tmp_path / "t.csv").write_text("name,params_b,layers,hidden,batch_size,dataset_samples\n"
                                    "x,-7,3,8,8,8\n")
    with pytest.raises(InputError) as err:
        parse_scenario(data, base_dir=tmp_path)
    assert err.value.field == "trace[0].params_b"
    with pytest.raises(InputError, match="no such file"):
        parse_scenario({**data, "trace": "missing.csv"}, base_dir=tmp_path)


def test_aws10_uses_measured_links_and_half_the_delay():
    b = generate_batch("aws10", 0, range(4), bandwidth_scale=2.0)
    names = b.region_names
    assert len(names) == 10 and names[0] == "Oregon"
    u, v = names.index("Oregon"), names.index("Virginia")
    assert b.links_gbps[0, u, v] == pytest.approx(0.79 * 2.0)
    assert b.latency_ms[0, u, v] == pytest.approx(67 / 2) and b.latency_on
    assert b.price[0, names.index("Seoul")] == b.price[0, names.index("Tokyo")] == 0.191
    assert set(b.gpus.ravel()) <= {16, 32, 64, 128}
    assert not generate_batch("aws10", 0, [0], latency="none").latency_on


def test_price_profile_switch_and_geo_latency_for_random():
    b = generate_batch("random", 2, range(3), price_profile="business", latency="geo")
    assert b.time_of_use and b.latency_on
    assert b.price_profile[0, 0].mean() == pytest.approx(1.0)
    assert (b.latency_ms[:, range(6), range(6)] == 0).all()
    with pytest.raises(InputError) as err:
        generate_batch("random", price_profile="peaky")
    assert err.value.field == "price_profile"
    with pytest.raises(InputError) as err:
        generate_batch("motivation", latency="geo")  # the figure gives no coordinates
    assert err.value.field == "regions[0].lat"
