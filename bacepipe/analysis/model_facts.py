"""Numbers the claim explanations quote, computed from the current model on the shipped data.

The explanations of :mod:`bacepipe.analysis.claims` are templates; every number in them is a
``{name}`` filled from :func:`model_facts`, so a change of the model or of the shipped tables
changes the prose with it. The facts come from the plain-Python twin of SPEC
(:mod:`bacepipe.sim.reference`) on the built-in ``paper`` scenario (Table II regions, Table III
jobs, seed 0, topology 0), imported only when called: reading results never loads the simulator.
"""

from __future__ import annotations


def _gpus(run: dict) -> dict[str, int]:
    return {j["name"]: sum(j["gpus"].values()) for j in run["jobs"]}


def model_facts() -> dict[str, str]:
    """The facts, formatted as the prose shows them.

    Returns
    -------
    dict of str to str
        ``intra_gbps`` (bandwidth inside a region, Gbit/s), ``kstar_lo``/``kstar_hi`` (K* of
        Table III on the paper topology, GPUs),
        ``region_gpus_lo``/``_hi``, ``paper_links_lo``/``_hi`` and ``random_links_lo``/``_hi``
        (Gbit/s), ``bstar_lo``/``_hi``/``_sum`` (b_j(K*), Gbit/s), ``gpus_total``,
        ``gpus_half`` (GPUs at gpu_scale 0.5), ``sum_kstar`` and ``sum_kstar_24`` (Σ K* of 8
        and 24 jobs), ``long_job``/``long_bace``/``long_ldf`` (the job of the longest
        single-GPU time and its GPUs under bace_pipe and ldf on paper topology 0 of seed 0),
        ``starved_job``/``starved_crldf``/``starved_ldf`` (the job CR-LDF gives the fewest
        GPUs relative to LDF there).
    """
    from bacepipe.model.generate import generate_batch, load_scenario
    from bacepipe.model.tables import BANDWIDTH_RANGE_GBPS
    from bacepipe.sim.model import job_model
    from bacepipe.sim.reference import simulate_reference

    sc = load_scenario("paper", seed=0, topology=0)
    total = sum(r.gpus for r in sc.regions)
    models = [job_model(j, sc.hardware, total, index=i) for i, j in enumerate(sc.jobs)]
    links = [b for row in sc.links_gbps for b in row if b > 0]
    bstar = [m.b_star_bps / 1e9 for m in models]
    half = generate_batch("paper", 0, [0], gpu_scale=0.5).scenario(0)
    many = generate_batch("paper", 0, [0], num_jobs=24).scenario(0)
    many_total = sum(r.gpus for r in many.regions)
    sum24 = sum(job_model(j, many.hardware, many_total, index=i).k_star
                for i, j in enumerate(many.jobs))
    runs = {name: _gpus(simulate_reference(sc, name)) for name in ("bace_pipe", "ldf", "cr_ldf")}
    longest = sc.jobs[max(range(len(models)), key=lambda i: models[i].exec_1gpu_s)].name
    starved = max(runs["ldf"], key=lambda n: runs["ldf"][n] - runs["cr_ldf"][n])
    return {
        "intra_gbps": f"{sc.hardware.intra_region_gbps:g}",
        "kstar_lo": str(min(m.k_star for m in models)),
        "kstar_hi": str(max(m.k_star for m in models)),
        "region_gpus_lo": str(min(r.gpus for r in sc.regions)),
        "region_gpus_hi": str(max(r.gpus for r in sc.regions)),
        "paper_links_lo": f"{min(links):g}",
        "paper_links_hi": f"{max(links):g}",
        "random_links_lo": f"{BANDWIDTH_RANGE_GBPS[0]:g}",
        "random_links_hi": f"{BANDWIDTH_RANGE_GBPS[1]:g}",
        "bstar_lo": f"{min(bstar):.1f}",
        "bstar_hi": f"{max(bstar):.1f}",
        "bstar_sum": f"{sum(bstar):.1f}",
        "gpus_total": f"{total:,}",
        "gpus_half": f"{sum(r.gpus for r in half.regions):,}",
        "sum_kstar": f"{sum(m.k_star for m in models):,}",
        "sum_kstar_24": f"{sum24:,}",
        "long_job": longest,
        "long_bace": str(runs["bace_pipe"][longest]),
        "long_ldf": str(runs["ldf"][longest]),
        "starved_job": starved,
        "starved_crldf": str(runs["cr_ldf"][starved]),
        "starved_ldf": str(runs["ldf"][starved]),
    }
