"""Figures as files (PNG and PDF, no display needed): the experiments' plots (sims.plots) and the curves of
``mpc-auc run --metrics roc,pr``."""


def pyplot():
    """matplotlib's pyplot on the Agg backend."""
    import matplotlib  # lazily: pyplot only once the Agg backend is chosen, and only for a figure

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazily, as above

    return plt


def save(fig, stem: str) -> None:
    """``stem``.png (150 dpi) and ``stem``.pdf (vector), legend included."""
    for ext in ("png", "pdf"):
        fig.savefig(f"{stem}.{ext}", dpi=150, bbox_inches="tight")
    pyplot().close(fig)


def curves(metrics: dict, stem: str, title: str, reference: dict = None) -> None:
    """The ROC and precision-recall curves of a report (``metrics``: mpc_auc.report.Report.value's form), side
    by side; ``reference``: the same from the clear data, drawn dashed beside them (experiments only)."""
    panels = [(name, axes) for name, axes in (("roc", ("fpr", "tpr")), ("pr", ("recall", "precision")))
              if name in metrics]
    fig, axs = pyplot().subplots(1, len(panels), figsize=(4.5 * len(panels), 4.2), squeeze=False)
    for ax, (name, (x, y)) in zip(axs[0], panels):
        origin = [0.0] if name == "roc" else []  # the ROC starts at (0, 0), before the first cut
        ax.plot(origin + list(metrics[name][x]), origin + list(metrics[name][y]), marker=".", markersize=3,
                label="private (opened at the cuts)")
        if reference and name in reference:
            ax.plot(origin + list(reference[name][x]), origin + list(reference[name][y]), linestyle="--",
                    label="clear")
        if name == "roc":
            ax.plot([0, 1], [0, 1], color="0.7", linewidth=0.8)
        ax.set(xlabel=x.upper() if name == "roc" else x, ylabel=y.upper() if name == "roc" else y,
               xlim=(0, 1), ylim=(0, 1.02), title="ROC" if name == "roc" else "precision-recall")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="lower right" if name == "roc" else "lower left")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    save(fig, stem)
