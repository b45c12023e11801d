"""No two series of a figure share colour and marker (sims.plots.styles), checked on the catalogue and on the
Line2D objects of a rendered compare figure."""
import matplotlib.colors
import numpy as np
import pytest

from mpc_auc.protocols.dp.curve_grid import CURVE_MECHANISMS
from mpc_auc.protocols.dp.suite import MECHANISMS
from mpc_auc.sims import plots


def _pairs(looks):
    return [(matplotlib.colors.to_hex(v["color"]), v["marker"]) for v in looks]


def test_the_catalogue_gives_every_mechanism_its_own_colour_and_marker():
    for names in (MECHANISMS, CURVE_MECHANISMS, list(MECHANISMS) + ["ustat a", "ustat b", "view c"]):
        looks = plots.styles(names)
        assert len(set(_pairs(looks.values()))) == len(looks) == len(set(names))
    assert len(set(_pairs(plots.style(i) for i in range(plots.DISTINCT)))) == plots.DISTINCT == 40
    assert plots.styles(["mpc-dp-curve"])["mpc-dp-curve"] == plots.styles(["mpc-central"])["mpc-central"]
    assert plots.styles(["mpc-central", "score-dp"])["mpc-central"] == plots.styles(["mpc-central"])["mpc-central"]


def test_too_many_series_or_a_catalogued_look_twice_are_refused():
    with pytest.raises(ValueError, match="distinct styles"):
        plots.styles([f"series {i}" for i in range(40)])
    with pytest.raises(ValueError, match="same catalogued style twice"):
        plots.styles(["mpc-central", "mpc-dp-curve"])


def test_the_rendered_compare_figure_draws_13_series_with_distinct_colour_and_marker(monkeypatch, tmp_path):
    figures = []
    monkeypatch.setattr(plots, "save", lambda fig, stem: figures.append(fig))
    drawn = [name for name in MECHANISMS if name != "fedauc-vanilla"]
    rows = [{"protocol": name, "epsilon": eps, "rmse": 0.01 * (i + 1) / eps, "rmse_lo": 0.005, "rmse_hi": 0.5}
            for i, name in enumerate(drawn) for eps in (0.5, 1.0, 2.0)]
    rows += [{"protocol": "fedauc-vanilla", "epsilon": np.inf, "rmse": 0.0}]
    plots.error_lines(str(tmp_path / "rmse"), [("", rows)], "rmse", "RMSE", "epsilon", "title")
    (fig,) = figures
    lines = [line for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
    assert sorted(line.get_label() for line in lines) == sorted(drawn) and len(lines) == 13
    looks = {(matplotlib.colors.to_hex(line.get_color()), line.get_marker()) for line in lines}
    assert len(looks) == 13
