"""The ROC/PR figure (mpc_auc.figures.curves): AUC with its interval and AP in the legend, the prevalence
baseline read off the released curve, the max_fpr region shaded."""
import numpy as np
import pytest

import mpc_auc
from mpc_auc import figures


@pytest.fixture
def drawn(monkeypatch):
    found = []
    monkeypatch.setattr(figures, "save", lambda fig, stem: found.append(fig))
    return found


def _report(max_fpr=None):
    rng = np.random.default_rng(0)
    y = (rng.random(300) < 0.3).astype(int)
    s = np.clip(rng.random(300) * 0.7 + 0.3 * y, 0, 1)
    return y, mpc_auc.evaluate(y, s, metrics="all", protocol="clear", max_fpr=max_fpr, points=20).value


def test_legend_gives_auc_with_its_interval_and_ap_and_the_prevalence_baseline(drawn, tmp_path):
    y, value = _report()
    figures.curves(value, str(tmp_path / "c"), "title")
    roc, pr = drawn[0].axes
    lo, hi = value["ci"]["ci"]
    roc_labels = [t.get_text() for t in roc.get_legend().get_texts()]
    assert roc_labels == [f"private (opened at the cuts): AUC {value['auc']:.3f} (95% CI {lo:.3f}-{hi:.3f})"]
    pr_labels = [t.get_text() for t in pr.get_legend().get_texts()]
    assert pr_labels[0] == f"private (opened at the cuts): AP {value['ap']:.3f}"
    assert pr_labels[1].startswith(f"chance: prevalence {y.mean():.3f}")
    baseline = [line for line in pr.get_lines() if line.get_label().startswith("chance")][0]
    assert baseline.get_ydata()[0] == pytest.approx(y.mean())  # P/M: the last cut's precision
    assert value["pr"]["precision"][-1] == pytest.approx(y.mean())
    assert not roc.patches  # no partial AUC asked: nothing shaded


def test_max_fpr_region_is_shaded_with_the_partial_auc(drawn, tmp_path):
    _, value = _report(max_fpr=0.2)
    figures.curves(value, str(tmp_path / "c"), "title")
    roc = drawn[0].axes[0]
    (region,) = roc.patches
    extent = region.get_path().get_extents(region.get_patch_transform())  # the span's box in data coordinates
    assert (extent.x0, extent.x1) == pytest.approx((0.0, 0.2))
    labels = [t.get_text() for t in roc.get_legend().get_texts()]
    assert f"FPR <= 0.2: pAUC {value['pauc']['mcclish']:.3f} (McClish)" in labels


def test_a_report_without_auc_or_ap_keeps_the_plain_labels(drawn, tmp_path):
    _, value = _report()
    figures.curves({"roc": value["roc"], "pr": value["pr"]}, str(tmp_path / "c"), "title", label="DP curve")
    assert [t.get_text() for t in drawn[0].axes[0].get_legend().get_texts()] == ["DP curve"]
