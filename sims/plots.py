"""Paper-ready figures (PNG and PDF, no display needed) in one style for every experiment.

Each protocol keeps one colour and one marker (Okabe-Ito's colour-blind-safe palette; the marker
alone tells protocols apart when colours repeat), the legend sits outside the axes, epsilon
ticks sit at the grid's values and a shaded band shows each line's 95% interval over draws.
"""
import textwrap

import numpy as np

from ..figures import pyplot as _pyplot, save

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#999999")
MARKERS = ("o", "s", "D", "^", "v", "<", ">", "P", "X", "h", "*", "p", "8", "d")


def style(index: int) -> dict:
    """The colour, marker and line of the ``index``-th protocol: the second round of colours is dashed,
    so the first len(MARKERS) protocols differ in marker and in colour or line."""
    return {"color": PALETTE[index % len(PALETTE)], "marker": MARKERS[index % len(MARKERS)],
            "linestyle": "-" if index // len(PALETTE) % 2 == 0 else "--"}


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
    names = list(dict.fromkeys(r["protocol"] for _, rows in panels for r in rows if np.isfinite(r["epsilon"])))
    for ax, (panel, rows) in zip(axes.ravel(), panels):
        for i, name in enumerate(names):
            points = sorted((r["epsilon"], r[metric], r.get(metric + "_lo"), r.get(metric + "_hi")) for r in rows
                            if r["protocol"] == name and np.isfinite(r["epsilon"]) and r[metric] > 0)
            if not points:
                continue
            eps, value, lo, hi = zip(*points)
            look = style(i)
            if name in dashed:
                look["linestyle"] = ":"
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
