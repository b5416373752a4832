"""Seeded random scenarios that stress every branch of SPEC: 1–10 regions, 1–30 jobs, staggered
and equal arrivals, missing links, asymmetric matrices, regions with 0 GPUs, price ties,
hardware overrides. Shared by the differential and property tests; and the small job of the
hand-built ones."""

import numpy as np

MODELS = (  # (model, params_b, layers, hidden, batch_size): Table III and a few small ones
    ("FLM-101B", 101, 80, 10240, 128), ("Solar-Open-100B", 100, 48, 4096, 128),
    ("Llama-3.1-70B", 70, 80, 8192, 128), ("Falcon-40B", 40, 60, 8192, 256),
    ("Qwen2.5-32B", 32, 64, 5120, 256), ("Gemma-3-27B", 27, 62, 5376, 256),
    ("Ministral-3-14B", 14, 40, 5120, 512), ("Qwen2.5-14B", 14, 48, 5120, 512),
    ("tiny-1B", 1.3, 6, 2048, 64), ("small-7B", 7, 32, 4096, 256),
)
#: A small job (K* = 8 on the hand-built scenarios of the reference and placement tests).
SMALL_JOB = {"name": "J", "params_b": 14, "layers": 8, "hidden": 5120, "batch_size": 512,
             "dataset_samples": 52002}
PRICES = (0.08, 0.12, 0.156, 0.191, 0.191, 0.222, 0.23, 0.251, 0.288, 0.35)


def random_scenario(rng: np.random.Generator, *, max_regions: int = 10, max_jobs: int = 30,
                    extensions: bool = False, gpu_types: bool = False,
                    min_jobs: int = 1) -> dict:
    """A valid scenario dict (SPEC §9 shape) drawn from ``rng``; with ``extensions``, each switch
    of SPEC §12 (latency, GPU memory, time-of-use prices) is on with probability 1/2; with
    ``gpu_types``, a mixed fleet (SPEC §16): catalog types, overridden and custom ones."""
    n = int(rng.integers(1, max_regions + 1))
    gpus = rng.choice([0, 1, 2, 3, 5, 8, 16, 32, 64, 128], size=n)
    if gpus.sum() == 0:
        gpus[rng.integers(n)] = int(rng.choice([4, 16, 64]))
    tie_prices = rng.random() < 0.3
    regions = []
    for r in range(n):
        price = 0.2 if tie_prices else float(rng.choice(PRICES))
        regions.append({"name": f"r{r}", "gpus": int(gpus[r]), "price": price,
                        "bandwidth_gbps": float(10 ** rng.uniform(-1, 2))})
    scenario = {"regions": regions}
    if rng.random() < 0.5:
        links = 10 ** rng.uniform(-1.5, 2, size=(n, n))
        if rng.random() < 0.5:  # symmetric half of the time
            links = np.triu(links, 1) + np.triu(links, 1).T
        links[rng.random((n, n)) < 0.2] = 0.0
        np.fill_diagonal(links, 0.0)
        scenario["links_gbps"] = links.round(6).tolist()
    hardware = {}
    if rng.random() < 0.4:
        hardware = {"mfu": float(rng.uniform(0.2, 0.6)),
                    "stage_overhead_ms": float(rng.choice([0.0, 1.0, 2.0, 5.0])),
                    "intra_region_gbps": float(rng.choice([25.0, 100.0, 400.0])),
                    "seq_len": int(rng.choice([1024, 2048, 4096]))}
        if rng.random() < 0.3:
            hardware["micro_batch_size"] = 2
        scenario["hardware"] = hardware
    staggered = rng.random() < 0.6
    jobs = []
    for j in range(int(rng.integers(min_jobs, max_jobs + 1))):
        model, params_b, layers, hidden, batch = MODELS[int(rng.integers(len(MODELS)))]
        arrival = 0.0
        if staggered:
            arrival = float(rng.choice([0.0, 1.0, 2.5])) if rng.random() < 0.3 \
                else float(rng.uniform(0, 40))
        jobs.append({"name": f"j{j}", "model": model, "params_b": params_b, "layers": layers,
                     "hidden": hidden, "batch_size": batch,
                     "dataset_samples": int(rng.choice([5_000, 52_002, 200_000, 1_810_000])),
                     "epochs": float(rng.choice([1, 1, 2, 0.5])), "arrival_h": arrival})
    scenario["jobs"] = jobs
    if gpu_types:
        _mixed_fleet(rng, scenario)
    if extensions:
        _switch_extensions(rng, scenario)
    return scenario


def _mixed_fleet(rng: np.random.Generator, scenario: dict) -> None:
    """Each region names a GPU type (a few keep the hardware's own); sometimes a catalog type is
    overridden or a custom one is added, and some types tie on speed."""
    names = ["A6000", "V100", "A100", "L40S", "H100"]
    types = {}
    if rng.random() < 0.5:
        types["A100"] = {"power_kw": float(rng.choice([0.25, 0.4, 0.5]))}
    if rng.random() < 0.5:
        types["X1"] = {"tflops": float(rng.choice([312.0, 500.0, 80.0])),
                       "mem_gb": float(rng.choice([24.0, 80.0, 192.0])),
                       "power_kw": float(rng.uniform(0.2, 1.0))}
        names.append("X1")
    if types:
        scenario["gpu_types"] = types
    for region in scenario["regions"]:
        if rng.random() < 0.85:
            region["gpu_type"] = str(rng.choice(names))


def _switch_extensions(rng: np.random.Generator, scenario: dict) -> None:
    n = len(scenario["regions"])
    if rng.random() < 0.5:
        if rng.random() < 0.5:
            latency = rng.uniform(0, 150, size=(n, n))
            np.fill_diagonal(latency, 0.0)
            scenario["latency_ms"] = latency.round(3).tolist()
        else:
            scenario["latency"] = "geo"
            for region in scenario["regions"]:
                region["lat"] = float(rng.uniform(-60, 60))
                region["lon"] = float(rng.uniform(-180, 180))
    if rng.random() < 0.5:
        scenario["memory_model"] = "adam_mixed"
        scenario.setdefault("hardware", {})["gpu_mem_gb"] = float(rng.choice([48.0, 80.0, 141.0]))
        # keep every job placeable: the memory floor must fit in min(layers, cluster GPUs)
        total = sum(r["gpus"] for r in scenario["regions"])
        mem = scenario["hardware"]["gpu_mem_gb"]
        scenario["jobs"] = [j for j in scenario["jobs"]
                            if -(-16 * j["params_b"] // (0.9 * mem)) <= min(j["layers"], total)
                            ] or scenario["jobs"][:0] + [_tiny_job()]
    if rng.random() < 0.5:
        for region in scenario["regions"]:
            if rng.random() < 0.8:
                region["price_profile"] = rng.uniform(0.5, 1.8, size=24).round(3).tolist()
                region["utc_offset_h"] = float(rng.choice([-8, -5, 0, 1, 5.5, 8, 9, 10]))


def _tiny_job() -> dict:
    return {"name": "tiny", "params_b": 1.0, "layers": 8, "hidden": 1024, "batch_size": 32,
            "dataset_samples": 10_000}
