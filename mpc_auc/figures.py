"""Figures as files (PNG and PDF, no display needed): the experiments' plots (sims.plots) and the curves of
``mpc-auc run --metrics roc,pr``."""

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#999999")  # Okabe-Ito


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


def curves(metrics: dict, stem: str, title: str, reference: dict = None,
           label: str = "private (opened at the cuts)") -> None:
    """The ROC and precision-recall curves of a report (``metrics``: mpc_auc.report.Report.value's form), side
    by side; ``reference``: the same from the clear data, drawn dashed beside them (experiments only).

    The legend gives the AUC (with DeLong's 95% interval when ``metrics`` holds "ci") and the AP when the report
    has them; with "pauc" the ROC panel shades FPR <= max_fpr, the region its partial AUC covers; the PR panel
    draws the chance baseline at the prevalence P/M, read off the curve itself: the precision at the last cut,
    where every row is flagged (c_K = M), which the curve releases (docs/protocols/mpc-exact.md; a DP curve's
    noisy P~/M)."""
    panels = [(name, axes) for name, axes in (("roc", ("fpr", "tpr")), ("pr", ("recall", "precision")))
              if name in metrics]
    fig, axs = pyplot().subplots(1, len(panels), figsize=(4.5 * len(panels), 4.2), squeeze=False)
    for ax, (name, (x, y)) in zip(axs[0], panels):
        origin = [0.0] if name == "roc" else []  # the ROC starts at (0, 0), before the first cut
        ax.plot(origin + list(metrics[name][x]), origin + list(metrics[name][y]), marker=".", markersize=3,
                color=PALETTE[0], label=_legend(label, metrics, name))
        if reference and name in reference:
            ax.plot(origin + list(reference[name][x]), origin + list(reference[name][y]), linestyle="--",
                    color=PALETTE[1], label=_legend("clear", reference, name))
        if name == "roc":
            _chance_and_partial(ax, metrics.get("pauc"))
        else:
            prevalence = metrics["pr"]["precision"][-1]
            ax.axhline(prevalence, color="0.5", linewidth=0.8, linestyle=":",
                       label=f"chance: prevalence {prevalence:.3f} (last cut's precision)")
        ax.set(xlabel=x.upper() if name == "roc" else x, ylabel=y.upper() if name == "roc" else y,
               xlim=(0, 1), ylim=(0, 1.02), title="ROC" if name == "roc" else "precision-recall")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="lower right" if name == "roc" else "lower left")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    save(fig, stem)


def _legend(label: str, metrics: dict, panel: str) -> str:
    """A curve's legend entry: ``label`` with the report's AUC (and its 95% interval) or AP, where it has them."""
    if panel == "roc" and isinstance(metrics.get("auc"), float):
        interval = metrics.get("ci")
        found = f"AUC {metrics['auc']:.3f}"
        if isinstance(interval, dict) and "ci" in interval:
            found += f" (95% CI {interval['ci'][0]:.3f}-{interval['ci'][1]:.3f})"
        return f"{label}: {found}"
    if panel == "pr" and isinstance(metrics.get("ap"), float):
        return f"{label}: AP {metrics['ap']:.3f}"
    return label


def _chance_and_partial(ax, pauc) -> None:
    """The ROC's chance diagonal; with a partial AUC, FPR <= max_fpr shaded and its standardised value given."""
    ax.plot([0, 1], [0, 1], color="0.7", linewidth=0.8)
    if isinstance(pauc, dict):
        ax.axvspan(0, pauc["max_fpr"], color=PALETTE[2], alpha=0.12, linewidth=0,
                   label=f"FPR <= {pauc['max_fpr']:g}: pAUC {pauc['mcclish']:.3f} (McClish)")
