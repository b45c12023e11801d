"""What the commands write: result records (JSON) and the clients' rank files (CSV)."""
import csv
import os
import shutil
import tempfile

from .. import progress
from ..planner import Outcome
from ..protocols.clear_metrics import paired_test
from ..protocols.mpc.exact import secured
from ..protocols.dp.central_law import SWAMPED
from ..protocols.dp.curve_law import CurveNoise
from ..protocols.refused import Refused


def central_record(outcome: Outcome, noise, method: str) -> dict:
    """What an mpc-central result file holds: the released values and public parameters only."""
    release = outcome.release
    security = {"security": secured(release)} if release.security else {}
    if isinstance(noise, CurveNoise):
        return dict(auc=outcome.auc, method=method, metrics=outcome.metrics,
                    privacy={"epsilon": noise.epsilon, "delta": release.delta, "neighbours": "label",
                             "mechanism": "binary tree over the cuts' positive counts", "ledger": release.ledger},
                    revealed=[f"{len(release.opened[0])} noisy tree nodes: " + " ".join(map(str, release.opened[0]))],
                    traffic=release.traffic, mpc_wall_s=release.wall_s, **security)
    stat, positives = release.opened[0]
    if outcome.swamped:
        progress.warn(SWAMPED.format(std=outcome.std, epsilon=noise.epsilon))
    return dict(auc=outcome.auc, std=outcome.std, ci=list(outcome.ci), swamped=outcome.swamped,
                method=method,
                privacy={"epsilon": noise.epsilon, "delta": release.delta, "neighbours": noise.neighbours,
                         "alpha": noise.alpha, "ledger": release.ledger},
                revealed=[f"noisy {'2T' if noise.neighbours == 'label' else '2U'} = {stat}", f"noisy P = {positives}"],
                traffic=release.traffic, mpc_wall_s=release.wall_s, **security)


def exact_record(result) -> dict:
    """What an mpc-exact result file holds (protocols.mpc.exact.MpcAucResult)."""
    return dict(auc=result.auc, method=result.method, revealed=list(result.revealed),
                traffic=result.traffic, client_upload_bytes=result.upload_bytes, mpc_wall_s=result.wall_s,
                sharing_s=result.sharing_s, input_check_s=result.check_s, metrics=result.metrics,
                **({"security": secured(result)} if result.security else {}))


def column_records(names, outcome) -> dict:
    """With several score columns: each column's AUC and metrics by name, and DeLong's test of the first
    against each other when the variances were opened (mpc_auc.planner.Outcome); nothing with one column."""
    if len(names) == 1:
        return {}
    found = [{"auc": outcome.auc, "metrics": outcome.metrics}] + list(outcome.others)
    record = {"columns": dict(zip(names, found))}
    tests = []
    for (i, j), cov in sorted((outcome.covariance or {}).items()):
        var_i, var_j = (found[k]["metrics"]["ci"]["variance"] for k in (i, j))
        test = paired_test(found[i]["auc"], found[j]["auc"], var_i, var_j, cov)
        tests.append({"a": names[i], "b": names[j], "difference": test.difference, "covariance": cov,
                      "z": test.z, "p_value": test.p_value})
    if tests:
        record["delong_test"] = tests
    return record


def metric_lines(metrics: dict) -> list:
    """One line per opened metric beyond the AUC, for the terminal (the record holds every value)."""
    lines = []
    ci = metrics.get("ci")
    if ci:
        lines.append(f"ci: not computed: {ci.reason}" if isinstance(ci, Refused) else
                     f"DeLong std = {ci['std']:.6g}, 95% CI = [{ci['ci'][0]:.6f}, {ci['ci'][1]:.6f}]")
    lines += [f"{label} = {metrics[name]:.15f}" for name, label in (("ap", "AP"), ("ks", "KS")) if name in metrics]
    partial = metrics.get("pauc")
    if partial:
        lines.append(f"pauc: not computed: {partial.reason}" if isinstance(partial, Refused) else
                     f"partial AUC to FPR {partial['max_fpr']:g} = {partial['mcclish']:.15f} (McClish; area "
                     f"{partial['area']:.12f})")
    lines += [f"{name.upper()} curve: {len(metrics[name]['flagged'])} points" for name in ("roc", "pr")
              if name in metrics]
    return lines


def rank_file_name(index: int, client: str) -> str:
    """``<index>-<id>.ranks.csv``: unique by the index, the id kept when it is a safe file name."""
    return f"{index:05d}-{file_stem(client)}.ranks.csv"


def file_stem(name: str) -> str:
    """``name`` when it is a safe file name (1-64 letters, digits, '.', '_', '-'), else "client"."""
    safe = name and len(name) <= 64 and all(c.isalnum() or c in "._-" for c in name)
    return name if safe else "client"


def write_ranks(path: str, client: str, ranks, mode: str = "x", ids=None) -> None:
    """One client's rank file: its rows' global 1-based mid-ranks (scipy.stats.rankdata's convention) in its row
    order, keyed by the rows' ids when the input named an id column, else by their 1-based position among the
    client's rows (by default opened exclusively)."""
    with open(path, mode, newline="", encoding="utf-8") as f:
        f.write(f"# client {client}: global 1-based mid-rank of each of its rows (ties share their mean rank)\n")
        out = csv.writer(f, lineterminator="\n")
        out.writerow(("id" if ids is not None else "row", "rank"))
        keys = ids if ids is not None else range(1, len(ranks) + 1)
        out.writerows((key, f"{r:g}") for key, r in zip(keys, ranks))


def write_rank_files(directory: str, ranks: dict, ids: dict = None) -> None:
    """One file per client, as that client would hold it: its rows' global mid-ranks, in its row order (with
    their ids: client -> its rows' ids, if given).

    Written into a temporary directory that is renamed into place, so a
    failed run leaves nothing behind.
    """
    tmp = tempfile.mkdtemp(prefix=".mpc-auc-ranks-", dir=os.path.dirname(os.path.abspath(directory)))
    try:
        for index, (client, values) in enumerate(ranks.items()):
            write_ranks(os.path.join(tmp, rank_file_name(index, client)), client, values,
                        ids=None if ids is None else ids[client])
        os.rename(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
