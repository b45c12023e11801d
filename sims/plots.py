"""Paper-ready figures (PNG and PDF, no display needed) in one style for every experiment.

Each protocol keeps one colour, one marker and one line in every figure (:func:`styles`: its place in
the catalogue of mechanisms; Okabe-Ito's colour-blind-safe palette of 8 colours, 10 markers of distinct
shapes, the second round of colours dashed), so no two series of a figure share colour and marker; the
legend sits outside the axes, epsilon ticks sit at the grid's values and a shaded band shows each line's
95% interval over draws.
"""
import math
import textwrap

import numpy as np

from ..figures import PALETTE, pyplot as _pyplot, save
from ..protocols.dp.curve_grid import CURVE_MECHANISMS
from ..protocols.dp.suite import MECHANISMS

MARKERS = ("o", "s", "D", "^", "v", "<", ">", "P", "X", "*")  # no two alike in shape (no "8" beside "o")
DISTINCT = math.lcm(len(PALETTE), len(MARKERS))  # styles 0 .. DISTINCT - 1 differ in (colour, marker)
# every series name the experiments draw -> its style's index; a DP curve takes its AUC mechanism's look
CATALOGUE = {**{name: i for i, name in enumerate(MECHANISMS)},
             **{curve: list(MECHANISMS).index(auc) for curve, auc in
                zip(CURVE_MECHANISMS, ("mpc-central", "dpauc-threshold", "dpauc-histogram"))}}


def style(index: int) -> dict:
    """The colour, marker and line of the ``index``-th style: colours cycle by 8 and markers by 10, so the
    first DISTINCT (40) styles differ in (colour, marker); the second round of colours is dashed, too."""
    return {"color": PALETTE[index % len(PALETTE)], "marker": MARKERS[index % len(MARKERS)],
            "linestyle": "-" if index // len(PALETTE) % 2 == 0 else "--"}


def styles(names) -> dict:
    """Each series name -> its style: a catalogued name (CATALOGUE) its own in every figure, other names the
    styles after the catalogue's in order; no two names of one figure share colour and marker."""
    names = list(dict.fromkeys(names))
    known = [CATALOGUE[n] for n in names if n in CATALOGUE]
    if len(known) != len(set(known)):
        raise ValueError(f"series {names} take the same catalogued style twice")
    start = max(CATALOGUE.values()) + 1
    others = [n for n in names if n not in CATALOGUE]
    if start + len(others) > DISTINCT:
        raise ValueError(f"{len(others)} uncatalogued series: past the {DISTINCT} distinct styles")
    index = {**{n: CATALOGUE[n] for n in names if n in CATALOGUE},
             **{n: start + i for i, n in enumerate(others)}}
    return {n: style(index[n]) for n in names}


def figure(stem: str, draw, size=(10, 4.5)) -> None:
    """One axis drawn by ``draw(ax)``, its legend outside on the right, saved as PNG and PDF."""
    fig, ax = _pyplot().subplots(figsize=size)
    draw(ax)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
    save(fig, stem)


def epsilon_ticks(ax, epsilons) -> None:
    grid = sorted({float(e) for e in epsilons if np.isfinite(e)})
    ax.set_xticks(grid, [f"{e:g}" for e in grid])
    ax.xaxis.set_minor_locator(_pyplot().NullLocator())


def error_lines(stem: str, panels: list, metric: str, ylabel: str, xlabel: str, title: str, grid=(1, 1),
                size=(9, 4.5), dashed=()) -> None:
    """Log-log ``metric`` against epsilon, one line per protocol and one axis per panel.

    panels: [(panel title, rows)]; a row has "protocol", "epsilon", ``metric`` and, for the band,
    ``metric + "_lo"`` and ``metric + "_hi"``.  Rows with a non-finite epsilon (exact releases) or
    a metric of 0 have no place on a log axis and are left out.  Protocols in ``dashed`` are dotted.
    """
    plt = _pyplot()
    fig, axes = plt.subplots(*grid, figsize=size, squeeze=False)
    looks = styles(r["protocol"] for _, rows in panels for r in rows if np.isfinite(r["epsilon"]))
    for ax, (panel, rows) in zip(axes.ravel(), panels):
        for name, look in looks.items():
            points = sorted((r["epsilon"], r[metric], r.get(metric + "_lo"), r.get(metric + "_hi")) for r in rows
                            if r["protocol"] == name and np.isfinite(r["epsilon"]) and r[metric] > 0)
            if not points:
                continue
            eps, value, lo, hi = zip(*points)
            if name in dashed:
                look = dict(look, linestyle=":")
            ax.plot(eps, value, label=name, alpha=0.9, markersize=5, **look)
            if None not in lo and None not in hi:
                ax.fill_between(eps, np.maximum(lo, min(value) * 1e-3), hi, color=look["color"], alpha=0.15,
                                linewidth=0)
        ax.set(xscale="log", yscale="log", xlabel=xlabel, ylabel=ylabel, title=panel)
        epsilon_ticks(ax, [r["epsilon"] for r in rows])
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    for ax in axes.ravel()[1:]:
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    fig.suptitle(textwrap.fill(title, 110), fontsize=10)
    fig.tight_layout()
    fig.legend(handles, labels, fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    save(fig, stem)
