"""Flower integration (``pip install mpc-auc[flower]``): the global AUC of a federated evaluation round, computed by
mpc-auc over the clients' predictions instead of averaged from per-client AUCs (a global AUC is not an average of
local ones; docs/flower.md).

* ServerApp side: :class:`MpcAucEvaluation`, a mixin for any Flower strategy (``class Strategy(MpcAucEvaluation,
  FedAvg)``; :class:`MpcAucFedAvg` is that one).  In each round that evaluates, it opens an mpc-auc evaluation on
  the deployment's running parties for the rostered clients (:class:`mpc_auc.Evaluation`) and names it in the
  round's evaluate config; when the clients have replied it waits for the release and adds it to the round's
  metrics: ``mpcauc-auc`` and every opened metric under ``mpcauc-``.  By default each round is one DP release
  (``protocol="mpc-central"`` at ``epsilon=1.0``): the server chooses the model the clients score with, so an
  exact AUC would be an oracle on single labels (docs/flower.md, "What a server that chooses the model can
  learn").  With ``exclude_invalid=True`` a client whose rows fail the in-MPC domain check is left out of the
  round's release (named in the server's log, counted in ``mpcauc-excluded``) instead of costing the round its
  AUC.  The inner strategy still aggregates what the clients report (``num-examples``).
* ClientApp side: :func:`submit_predictions` in the ``@app.evaluate()`` handler submits the client's
  predictions on its local test set to that evaluation (:func:`mpc_auc.submit`) and returns the reply message;
  the client's mpc-auc name, key and deployment come from its node config (``mpcauc-client``, ``mpcauc-key``,
  ``mpcauc-deployment``), or, in Flower's simulation, from the run config (``mpcauc-keys``: a directory of
  ``client-<partition-id>.key``; ``mpcauc-deployment``).  Whatever the server asks, the client accepts DP
  rounds of at most epsilon 1 and 10 in all (its own ledger) unless it says otherwise (``max_epsilon``,
  ``budget``), and exact rounds only if it opts in (``max_exact``).

Neither the Flower server nor the SuperLink sees a score or a label: the client's rows go, secret-shared and
sealed, straight to the two compute parties over the client's own TLS links; the round's metrics carry only
what the evaluation releases.
"""
import dataclasses
import secrets
from logging import WARNING

from flwr.app import ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.common import log
from flwr.serverapp.strategy import FedAvg

from .context import ClientTerms, Context as MpcContext, Intake
from .evaluations import Evaluation, submit
from .protocols.errors import InputError

EVALUATION_KEY = "mpcauc-evaluation"  # the round's evaluate config: the mpc-auc evaluation to submit to
PREFIX = "mpcauc-"  # the round's metrics opened by mpc-auc
NODE_TERMS = ClientTerms(max_epsilon=1.0, budget=10.0, max_exact=0)  # a node's default: DP rounds only
DEFAULT_OPTIONS = {"protocol": "mpc-central", "epsilon": 1.0, "deadline": 600.0}  # a round: one DP release


class MpcAucEvaluation:
    """A Flower strategy mixin whose evaluation rounds compute the global AUC (and metrics) with mpc-auc.

    deployment: the deployment.yaml of the running mpc-auc roles (the coordinator's key beside it, or ``key``);
    rosters: the roster files of every client node (``mpc-auc client keygen``; all must take part in each
    evaluation round: sample every node, ``fraction_evaluate=1.0``); options by name: :meth:`mpc_auc.Evaluation.open`'s
    (protocol, metrics, epsilon, ...), :class:`mpc_auc.Context`'s (budget, score_range, ...) and
    :class:`mpc_auc.Intake`'s (deadline, exclude_invalid, ...), over :data:`DEFAULT_OPTIONS`: one DP release per round
    unless ``protocol="mpc-exact"`` is asked for, which runs only where every client opted in to exact releases."""

    def __init__(self, *args, deployment: str, rosters, key: str = None, mpcauc_options: dict = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.mpcauc_deployment, self.mpcauc_rosters, self.mpcauc_key = str(deployment), list(rosters), key
        options = {**DEFAULT_OPTIONS, **(mpcauc_options or {})}
        if options["protocol"] != "mpc-central" and "epsilon" not in (mpcauc_options or {}):
            del options["epsilon"]  # an exact release takes no epsilon
        self.mpcauc_options = options
        self._evaluations = {}  # round -> its open mpc_auc.Evaluation

    def configure_evaluate(self, server_round: int, arrays, config: ConfigRecord, grid):
        evaluation_id = f"flower-{secrets.token_hex(6)}-round-{server_round}"
        config[EVALUATION_KEY] = evaluation_id
        messages = list(super().configure_evaluate(server_round, arrays, config, grid))
        if messages:
            self._evaluations[server_round] = _open(self.mpcauc_deployment, self.mpcauc_key, evaluation_id,
                                                    self.mpcauc_rosters, self.mpcauc_options)
        return messages

    def aggregate_evaluate(self, server_round: int, replies):
        metrics = super().aggregate_evaluate(server_round, list(replies))
        evaluation = self._evaluations.pop(server_round, None)
        if evaluation is None:
            return metrics
        try:
            released = evaluation.result()
        except (InputError, RuntimeError, TimeoutError) as err:  # the round's other metrics still count
            log(WARNING, "mpc-auc evaluation %s of round %s released nothing: %s", evaluation.id, server_round, err)
            return metrics
        record = MetricRecord(dict(metrics or {}))
        record.update(round_metrics(released.value))
        if released.epsilon is not None:
            record[f"{PREFIX}epsilon"] = float(released.epsilon)
        if released.excluded:  # an evaluation opened with exclude_invalid left these out
            log(WARNING, "mpc-auc evaluation %s of round %s left out %s: rows outside the domain", evaluation.id,
                server_round, ", ".join(map(repr, released.excluded)))
            record[f"{PREFIX}excluded"] = len(released.excluded)
        return record


def _open(deployment: str, key: str, evaluation_id: str, rosters: list, options: dict) -> Evaluation:
    """Open a round's evaluation, each option given to the value it belongs to (Context, Intake, or open)."""
    parts = {part: {f.name for f in dataclasses.fields(part)} for part in (MpcContext, Intake)}
    context = MpcContext(deployment=deployment, key=key,
                         **{k: v for k, v in options.items() if k in parts[MpcContext]})
    intake = Intake(**{k: v for k, v in options.items() if k in parts[Intake]})
    rest = {k: v for k, v in options.items() if k not in parts[MpcContext] | parts[Intake]}
    return Evaluation.open(context, id=evaluation_id, roster=rosters, intake=intake, **rest)


class MpcAucFedAvg(MpcAucEvaluation, FedAvg):
    """FedAvg whose evaluation rounds compute the global AUC with mpc-auc (:class:`MpcAucEvaluation`)."""


def round_metrics(value: dict) -> dict:
    """An evaluation's released values as a Flower MetricRecord's (numbers and lists of numbers, keys under
    ``mpcauc-``): the AUC; DeLong's std and interval; AP, KS; the curves' points; the partial AUC."""
    out = {f"{PREFIX}auc": float(value["auc"])}
    ci = value.get("ci") or {}
    if "std" in ci:
        out.update({f"{PREFIX}auc-std": float(ci["std"]), f"{PREFIX}auc-ci-low": float(ci["ci"][0]),
                    f"{PREFIX}auc-ci-high": float(ci["ci"][1])})
    for name in ("ap", "ks"):
        if name in value:
            out[f"{PREFIX}{name}"] = float(value[name])
    for curve, axes in (("roc", ("fpr", "tpr")), ("pr", ("recall", "precision"))):
        if curve in value:
            out.update({f"{PREFIX}{curve}-{axis}": [float(v) for v in value[curve][axis]] for axis in axes})
    if "mcclish" in value.get("pauc", {}):
        out[f"{PREFIX}pauc"] = float(value["pauc"]["mcclish"])
    return out


def node_settings(context: Context) -> tuple:
    """(mpc-auc client name, its key file, the deployment file) of this node (module docstring)."""
    node, run = context.node_config, context.run_config
    name = node.get("mpcauc-client") or f"client-{node.get('partition-id', '')}"
    key = node.get("mpcauc-key") or (f"{run['mpcauc-keys']}/{name}.key" if "mpcauc-keys" in run else None)
    deployment = node.get("mpcauc-deployment") or run.get("mpcauc-deployment")
    if not key or not deployment:
        raise InputError("this node has no mpc-auc key or deployment: set mpcauc-key and mpcauc-deployment in its "
                         "node config (or mpcauc-keys and mpcauc-deployment in the run config)")
    return str(name), str(key), str(deployment)


def submit_predictions(message: Message, context: Context, y_true, y_score, ids=None, *, client: str = None,
                       key: str = None, deployment: str = None, config_key: str = "config",
                       terms: ClientTerms = NODE_TERMS, **options) -> Message:
    """Submit this client's predictions on its local test set to the round's mpc-auc evaluation and return the
    reply to ``message`` (its MetricRecord holds ``num-examples`` and whether it took part, ``mpcauc-submitted``:
    no local metric leaves the node; a submission this client's terms or budget refuse is logged, not raised).
    client, key, deployment: this node's mpc-auc name, key file and deployment file (default: from its node or
    run config, :func:`node_settings`).  ``terms``: what the client accepts, whatever the server asks (the server
    chooses the model it scores with), default :data:`NODE_TERMS`: no exact release of its rows (DP rounds only),
    epsilon at most 1 per round and 10 over all rounds in its own ledger; options: :func:`mpc_auc.submit`'s
    (timeout, ...)."""
    config = message.content[config_key]
    if EVALUATION_KEY not in config:
        raise InputError("the server opened no mpc-auc evaluation for this round (its strategy needs "
                         "MpcAucEvaluation)")
    if client is None or key is None or deployment is None:
        client, key, deployment = node_settings(context)
    try:
        submit(deployment, evaluation=str(config[EVALUATION_KEY]), client=client, key=key, y_true=y_true,
               y_score=y_score, ids=ids,
               terms=terms, **options)
        submitted = 1
    except InputError as err:  # refused by this client's terms or own budget, or by the parties: the round goes on
        log(WARNING, "mpc-auc: %s did not take part in evaluation %s: %s", client, config[EVALUATION_KEY], err)
        submitted = 0
    reply = MetricRecord({"num-examples": len(y_true), f"{PREFIX}submitted": submitted})
    return Message(RecordDict({"metrics": reply}), reply_to=message)
