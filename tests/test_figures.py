"""The report's figures as a reader sees them: every kind rendered at the default point with more
than 20 schedulers, checked for text outside the canvas, overlapping text, and colours by role."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text
from results_dirs import write_rows

from bacepipe.analysis import paired_ratios, scan_runs, summarize
from bacepipe.analysis.figures import render_figures
from bacepipe.analysis.roles import BASELINE, palette, scheduler_order
from bacepipe.metrics import METRICS
from bacepipe.policies import SCHEDULERS, role_of

#: Registered schedulers plus 14 plug-ins the registry does not know (role ``user``).
NAMES = (*SCHEDULERS, *(f"plugin_{i:02d}" for i in range(14)))
POINTS = [
    {"bandwidth_scale": 1.0, "gpu_scale": 1.0, "num_jobs": 8},
    {"bandwidth_scale": 0.5, "gpu_scale": 1.0, "num_jobs": 8},
    {"bandwidth_scale": 1.5, "gpu_scale": 1.0, "num_jobs": 8},
    {"bandwidth_scale": 1.0, "gpu_scale": 0.5, "num_jobs": 8},
    {"bandwidth_scale": 1.0, "gpu_scale": 1.0, "num_jobs": 24},
]
TOPOLOGIES = 12


def write_results(root: Path) -> None:
    """One point per :data:`POINTS` (``tests/results_dirs.py``), every scheduler of
    :data:`NAMES` on the same topologies."""
    rng = np.random.default_rng(0)
    for axes in POINTS:
        base = rng.uniform(10, 100, TOPOLOGIES)
        rows = []
        for name in NAMES:
            factor = 1.0 if name == BASELINE else rng.lognormal(0.1, 0.3, TOPOLOGIES)
            for t in range(TOPOLOGIES):
                rows.append({"seed": 0, "topology": t, "scheduler": name,
                             **{m: 0.5 for m in METRICS},
                             "avg_jct_h": base[t] * factor[t] if name != BASELINE else base[t],
                             "total_cost": 3 * base[t] * rng.lognormal(0.05, 0.2)})
        write_rows(root, rows, **axes)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    root = tmp_path_factory.mktemp("many")
    write_results(root)
    lf = scan_runs([root])
    summary = summarize(lf, n_resamples=50)
    out = render_figures(summary, root / "report", paired_ratios(lf).collect())
    return {outcome.label: (outcome, build) for outcome, build in out}


def drawn(build):
    """The built Figure on an Agg canvas, drawn (so text extents are final)."""
    fig = build()
    FigureCanvasAgg(fig).draw()
    return fig


KINDS = ("Fig. 4", "Fig. 5", "Fig. 6", "Fig. 7", "Fig. 8", "Scatter", "CDF")


def _tick_labels(fig) -> tuple[list[Text], list[Text]]:
    """(drawn, undrawn) tick labels: matplotlib keeps labels of ticks outside the view limits
    but never draws them."""
    drawn, undrawn = [], []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            span = (hi - lo) * 1e-9
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                inside = lo - span <= tick.get_loc() <= hi + span
                for label in (tick.label1, tick.label2):
                    if label.get_visible() and label.get_text():
                        (drawn if inside else undrawn).append(label)
    return drawn, undrawn


def _texts(fig):
    """(artist, bbox) of every text artist drawn: titles, axis and tick labels, legend texts,
    annotations."""
    renderer = fig.canvas.get_renderer()
    skip = {id(t) for t in _tick_labels(fig)[1]}
    return [(t, t.get_window_extent(renderer)) for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip() and id(t) not in skip]


def _labels(fig):
    """The texts that must not overlap each other: suptitle, axes titles, axis labels, legends
    (as whole boxes), annotations. Tick labels are checked against these, not each other."""
    renderer = fig.canvas.get_renderer()
    boxes = []
    if fig._suptitle is not None:
        boxes.append(("suptitle", fig._suptitle.get_window_extent(renderer)))
    for i, ax in enumerate(fig.axes):
        for name, text in (("title", ax.title), ("xlabel", ax.xaxis.label),
                           ("ylabel", ax.yaxis.label)):
            if text.get_text():
                boxes.append((f"ax{i} {name}", text.get_window_extent(renderer)))
        boxes += [(f"ax{i} annotation", t.get_window_extent(renderer)) for t in ax.texts]
        if ax.get_legend():
            boxes.append((f"ax{i} legend", ax.get_legend().get_window_extent(renderer)))
    boxes += [(f"figure legend {i}", lg.get_window_extent(renderer))
              for i, lg in enumerate(fig.legends)]
    return boxes


def _ticks(fig):
    renderer = fig.canvas.get_renderer()
    return [(f"tick {t.get_text()}", t.get_window_extent(renderer)) for t in _tick_labels(fig)[0]]


def _overlap(a, b) -> bool:
    # Touching edges are not an overlap; 0.5 px absorbs rounding.
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > 0.5) and (min(a.y1, b.y1) - max(a.y0, b.y0) > 0.5)


@pytest.mark.parametrize("kind", KINDS)
def test_no_text_leaves_the_canvas_or_overlaps(rendered, kind):
    outcome, build = rendered[kind]
    assert build is not None, outcome.note
    check_layout(drawn(build), kind)


def _gap_figure():
    """The yardstick figure (analysis/yardsticks.py) with every scheduler of :data:`NAMES`."""
    from bacepipe.analysis.yardsticks import GAP_COLUMNS, plot_gaps

    rows = [{"scenario": "random", "gpu_scale": g, "num_jobs": j, "scheduler": n,
             **{c: 1 for c in GAP_COLUMNS}, "lb_gap_gmean": 1.0 + k / 10 + g,
             "lb_gap_gmean_ci_low": 1.0 + k / 10, "lb_gap_gmean_ci_high": 1.2 + k / 10 + g}
            for k, n in enumerate(NAMES) for g, j in ((1.0, 8), (0.5, 8), (1.25, 8), (1.0, 24))]
    return plot_gaps(pl.DataFrame(rows), "Gap: avg JCT ÷ lower bound by contention (SPEC §15)")


def _type_figure():
    """The GPU-type share figure (analysis/fleets.py) with every scheduler of :data:`NAMES`."""
    from bacepipe.analysis.fleets import plot_type_shares

    types = ("A6000", "A100", "L40S", "H100")
    rows = [{"scheduler": n, "gpu_type": t, "gpu_h_share": 0.25, "energy_share": 0.25,
             "cost_share": 0.25} for n in NAMES for t in types]
    return plot_type_shares(pl.DataFrame(rows), "Share of GPU-hours, energy and cost by GPU "
                            "type: scenario=random, gpu_mix=cloud")


@pytest.mark.parametrize("build", [_gap_figure, _type_figure], ids=["gap", "types"])
def test_report_section_figures_keep_text_on_the_canvas(build):
    check_layout(drawn(build), build.__name__)


def check_layout(fig, kind: str) -> None:
    """No text outside the canvas; titles, labels and legends do not overlap each other, and
    tick labels overlap none of them."""
    canvas = fig.bbox
    for artist, box in _texts(fig):
        assert (box.x0 >= -0.5 and box.y0 >= -0.5 and box.x1 <= canvas.x1 + 0.5
                and box.y1 <= canvas.y1 + 0.5), f"{kind}: {artist.get_text()!r} outside {canvas}"
    labels = _labels(fig)
    for (na, a), (nb, b) in itertools.combinations(labels, 2):
        assert not _overlap(a, b), f"{kind}: {na} overlaps {nb}"
    for (nt, t), (nl, b) in itertools.product(_ticks(fig), labels):
        assert not _overlap(t, b), f"{kind}: {nt} overlaps {nl}"


@pytest.mark.parametrize("kind", ["Fig. 4", "Fig. 5", "Scatter", "CDF"])
def test_every_scheduler_of_a_figure_is_named_once(rendered, kind):
    outcome, build = rendered[kind]
    fig = drawn(build)
    shown = [t.get_text() for t in fig.findobj(Text) if t.get_visible()]
    wanted = [n for n in NAMES if role_of(n) != "ablation"]
    if kind != "Fig. 4":
        wanted = [n for n in wanted if n != BASELINE]
    for name in wanted:
        assert shown.count(name) == (2 if kind == "Fig. 4" else 1), name  # Fig. 4: two panels


def test_titles_name_only_settings_that_differ_from_the_defaults(rendered):
    fig = drawn(rendered["Fig. 4"][1])
    title = fig._suptitle.get_text()
    assert "scenario=random" in title and title.startswith("Fig. 4: normalized")
    assert "bandwidth_scale" not in title and "gpu_scale" not in title and "seed" not in title
    for kind in KINDS:
        assert drawn(rendered[kind][1])._suptitle.get_text().startswith(kind)
    fig6 = drawn(rendered["Fig. 6"][1])
    assert "bandwidth_scale" not in fig6._suptitle.get_text()  # the slice is at the default


def test_colours_follow_roles_and_are_stable():
    colors = palette(NAMES)
    assert palette(reversed(NAMES)) == colors  # independent of the order names come in
    for r in ("baseline", "ablation", "ours", "user"):
        mine = [n for n in NAMES if role_of(n) == r]
        assert len({colors[n] for n in mine}) == len(mine), r  # distinct within a role
    # A hue per role: every baseline is bluer than red, every ablation redder than blue.
    assert all(colors[n][0][2] > colors[n][0][0] for n in NAMES if role_of(n) == "baseline")
    assert all(colors[n][0][0] > colors[n][0][2] for n in NAMES if role_of(n) == "ablation")
    assert colors[BASELINE][0] != colors[scheduler_order(NAMES)[1]][0]
