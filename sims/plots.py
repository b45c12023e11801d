"""Log-log line plots of an error against epsilon, one line per protocol (PNG, no display needed)."""
import numpy as np

STYLES = [("o", "-"), ("s", "--"), ("^", ":"), ("v", "-."), ("D", "-"), ("x", "--"), ("P", ":"), ("*", "-.")]


def error_lines(path: str, panels: list, metric: str, ylabel: str, xlabel: str, grid=(1, 1), size=(7, 4.5),
                dashed=()) -> None:
    """panels: [(title, rows)], rows with "protocol", "epsilon" and ``metric``; one axis per panel.

    Each protocol keeps its marker across panels; protocols in ``dashed`` are dashed, the others follow
    STYLES, so coinciding lines stay visible through their markers and dashes.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(*grid, figsize=size, squeeze=False)
    names = list(dict.fromkeys(r["protocol"] for _, rows in panels for r in rows))
    for ax, (title, rows) in zip(axes.ravel(), panels):
        for i, name in enumerate(names):
            points = [(r["epsilon"], r[metric]) for r in rows if r["protocol"] == name and np.isfinite(r["epsilon"])]
            if points:
                marker, line = STYLES[i % len(STYLES)]
                ax.plot(*zip(*points), marker=marker, linestyle="--" if name in dashed else line, label=name,
                        alpha=0.85)
        ax.set(xscale="log", yscale="log", xlabel=xlabel, ylabel=ylabel, title=title)
        ax.grid(True, which="both", alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
