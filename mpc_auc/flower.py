"""Flower integration (``pip install mpc-auc[flower]``): the global AUC of a federated evaluation round, computed by
mpc-auc over the clients' predictions instead of averaged from per-client AUCs (a global AUC is not an average of
local ones; docs/flower.md).

* ServerApp side, Flower's Message API (``flwr.serverapp.strategy``): :class:`MpcAucEvaluation`, a mixin for any
  of its strategies (``class Strategy(MpcAucEvaluation, FedAvg)``; :class:`MpcAucFedAvg` is that one).  In each
  round that evaluates, it opens an mpc-auc evaluation on the deployment's running parties for the round's
  sampled clients (:class:`mpc_auc.Evaluation`) and names it in the round's evaluate config; when the clients
  have replied it waits for the release, which ``start`` reports as the round's ServerApp-side evaluation
  metrics (``Result.evaluate_metrics_serverapp``, beside what an ``evaluate_fn`` returns): ``mpcauc-auc`` and
  every opened metric under ``mpcauc-``.  By default each round is one DP release (``protocol="mpc-central"`` at
  ``epsilon=1.0``): the server chooses the model the clients score with, so an exact AUC would be an oracle on
  single labels (docs/flower.md, "What a server that chooses the model can learn").  With
  ``exclude_invalid=True`` a client whose rows fail the in-MPC domain check is left out of the round's release
  (named in the server's log, counted in ``mpcauc-excluded``) instead of costing the round its AUC.
* ServerApp side, Flower's legacy strategies (``flwr.server.strategy``, NumPyClient apps):
  :class:`MpcAucLegacyEvaluation` (``class Strategy(MpcAucLegacyEvaluation, FedProx)``): the same rounds, run in
  the strategy's server-side ``evaluate`` so that the release is in ``History.metrics_centralized``.
* Sampled rounds: when a round samples fewer nodes than there are rosters, the strategy asks each sampled node
  which mpc-auc client it is (once per node: a ``query.mpcauc`` message, answered by :func:`identify`; legacy:
  ``get_properties``, answered by :func:`node_properties`) and opens the round for exactly those clients.
* ClientApp side: :func:`submit_predictions` in the ``@app.evaluate()`` handler (legacy: :func:`submit_numpy`
  in ``NumPyClient.evaluate``) submits the client's predictions on its local test set to that evaluation
  (:func:`mpc_auc.submit`); the client's mpc-auc name, key and deployment are explicit or come from its node
  config (``mpcauc-client``, ``mpcauc-key``, ``mpcauc-deployment``) or the run config (``mpcauc-keys``: a
  directory of ``client-<partition-id>.key``; ``mpcauc-deployment``).  Whatever the server asks, the client
  accepts DP rounds of at most epsilon 1 and 10 in all (its own ledger) unless it says otherwise
  (``max_epsilon``, ``budget``), and exact rounds only if it opts in (``max_exact``).
* Simulation: :func:`local_deployment` starts the three parties on loopback with fresh keys, and the clients'
  keys and rosters, for as long as a ``with`` block runs.

Neither the Flower server nor the SuperLink sees a score or a label: the client's rows go, secret-shared and
sealed, straight to the two compute parties over the client's own TLS links; the round's metrics carry only
what the evaluation releases.
"""
import contextlib
import dataclasses
import os
import secrets
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from logging import INFO, WARNING
from pathlib import Path

from flwr.app import ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.common import GetPropertiesIns, log
from flwr.server.server import evaluate_clients
from flwr.server.strategy import Strategy as LegacyStrategy
from flwr.serverapp.strategy import FedAvg

from .context import ClientTerms, Context as MpcContext, Intake
from .evaluations import Evaluation, submit
from .protocols.errors import DeploymentError, InputError
from .protocols.inputs.submission import Roster
from .protocols.runtime import deployment as deploy
from .protocols.runtime.identity import Identity, client_role
from .protocols.runtime.link import free_port

EVALUATION_KEY = "mpcauc-evaluation"  # the round's evaluate config: the mpc-auc evaluation to submit to
PREFIX = "mpcauc-"  # the round's metrics opened by mpc-auc
IDENTIFY_KEY = "mpcauc-identify"  # a sampled node asked which mpc-auc client it is
CLIENT_KEY = "mpcauc-client"  # ... and its answer
IDENTIFY_ACTION = "mpcauc"  # the Message API's query for it: message type query.mpcauc
REPLY_TIMEOUT = 120.0  # seconds a server waits for a node's name, and for its evaluate reply past the deadline
NODE_TERMS = ClientTerms(max_epsilon=1.0, budget=10.0, max_exact=0)  # a node's default: DP rounds only
DEFAULT_OPTIONS = {"protocol": "mpc-central", "epsilon": 1.0, "deadline": 600.0}  # a round: one DP release
LOOPBACK = {"P0": "127.0.0.2", "P1": "127.0.0.3", "dealer": "127.0.0.4"}  # local_deployment's parties


class _Rounds:
    """What both strategy mixins share: the deployment, the rosters, the options, which node is which client,
    and opening and reading each round's evaluation."""

    def __init__(self, *args, deployment: str, rosters, key: str = None, mpcauc_options: dict = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.mpcauc_deployment, self.mpcauc_key = str(deployment), key
        self.mpcauc_rosters = [str(r) for r in rosters]
        self._roster = Roster.load(self.mpcauc_rosters)
        options = {**DEFAULT_OPTIONS, **(mpcauc_options or {})}
        if options["protocol"] != "mpc-central" and "epsilon" not in (mpcauc_options or {}):
            del options["epsilon"]  # an exact release takes no epsilon
        self.mpcauc_options = options
        self.mpcauc_clients = {}  # round -> the clients its evaluation was opened for
        self.mpcauc_metrics = {}  # round -> what its evaluation released (round_metrics)
        self._names = {}  # node id -> the mpc-auc client it said it is
        self._evaluations = {}  # round -> its open mpc_auc.Evaluation

    def _open_round(self, server_round: int, evaluation_id: str, nodes: list, ask) -> bool:
        """Open the round's evaluation ``evaluation_id`` for ``nodes`` (node ids): every rostered client when the
        round sampled as many nodes as there are rosters, else the clients these nodes say they are
        (``ask(unknown node ids)`` -> {node id: client name}, remembered once a round has taken them).  A node
        that cannot or will not say, or names a client no roster holds or another node named, costs the round its
        mpc-auc evaluation (logged; False), never the run."""
        try:
            roster = self._round_roster(nodes, ask)
        except Exception as err:  # whatever a node answers, or fails to: the training goes on
            log(WARNING, "mpc-auc evaluates nothing in round %s: %s", server_round, err)
            return False
        self.mpcauc_clients[server_round] = list(roster.names)
        log(INFO, "mpc-auc evaluation %s of round %s opened for %s", evaluation_id, server_round,
            ", ".join(roster.names))
        self._evaluations[server_round] = _open(self.mpcauc_deployment, self.mpcauc_key, evaluation_id, roster,
                                                self.mpcauc_options)
        return True

    def _round_roster(self, nodes: list, ask) -> Roster:
        """The roster of a round that sampled ``nodes`` (:meth:`_open_round`)."""
        if len(nodes) >= len(self._roster.names):
            return self._roster
        said = {n: self._names[n] for n in nodes if n in self._names}
        unknown = [n for n in nodes if n not in said]
        if unknown:
            said.update(ask(unknown))
        roster = self._sampled_roster([said[n] for n in nodes if n in said])
        self._names.update(said)  # only names a round could take
        return roster

    def _released(self, server_round: int) -> dict:
        """Wait for the round's evaluation, if one was opened: its released metrics (:meth:`_release`), else None."""
        evaluation = self._evaluations.pop(server_round, None)
        return None if evaluation is None else self._release(server_round, evaluation)

    def _sampled_roster(self, names: list) -> Roster:
        """The roster entries of the clients the sampled nodes named; a name no roster holds is refused by name."""
        strangers = [n for n in names if n not in self._roster.names]
        if strangers:
            raise InputError(f"a sampled node says it is mpc-auc client {strangers[0]!r}, which no roster file "
                             f"of the strategy names ({', '.join(self._roster.names)})")
        if not names:
            raise InputError("no sampled node said which mpc-auc client it is")
        return Roster(tuple(self._roster.member(n) for n in names))  # a name said twice: refused by Roster

    def _release(self, server_round: int, evaluation: Evaluation) -> dict:
        """The round's released metrics (:func:`round_metrics`, ``mpcauc-epsilon``, ``mpcauc-excluded``), or
        None where the evaluation released nothing (logged)."""
        try:
            released = evaluation.result()
        except (InputError, RuntimeError, TimeoutError) as err:  # the round's other metrics still count
            log(WARNING, "mpc-auc evaluation %s of round %s released nothing: %s", evaluation.id, server_round, err)
            return None
        metrics = round_metrics(released.value)
        if released.epsilon is not None:
            metrics[f"{PREFIX}epsilon"] = float(released.epsilon)
        if released.excluded:  # an evaluation opened with exclude_invalid left these out
            log(WARNING, "mpc-auc evaluation %s of round %s left out %s: rows outside the domain", evaluation.id,
                server_round, ", ".join(map(repr, released.excluded)))
            metrics[f"{PREFIX}excluded"] = len(released.excluded)
        self.mpcauc_metrics[server_round] = metrics
        return metrics


class MpcAucEvaluation(_Rounds):
    """A mixin for Flower's Message-API strategies (``flwr.serverapp.strategy``) whose evaluation rounds compute the
    global AUC (and metrics) with mpc-auc, reported by :meth:`start` as ServerApp-side evaluation metrics.

    deployment: the deployment.yaml of the running mpc-auc roles (the coordinator's key beside it, or ``key``);
    rosters: the roster files of every client node (``mpc-auc client keygen``); each round is opened for the
    nodes it samples (all rosters when it samples as many nodes, else the clients the sampled nodes name, which
    needs their ClientApp to answer ``query.mpcauc`` with :func:`identify`); options by name:
    :meth:`mpc_auc.Evaluation.open`'s (protocol, metrics, epsilon, ...), :class:`mpc_auc.Context`'s (budget,
    score_range, ...) and :class:`mpc_auc.Intake`'s (deadline, exclude_invalid, ...), over
    :data:`DEFAULT_OPTIONS`: one DP release per round unless ``protocol="mpc-exact"`` is asked for, which runs
    only where every client opted in to exact releases.  ``mpcauc_clients`` and ``mpcauc_metrics``: per round,
    the clients its evaluation was opened for and what it released."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if issubclass(cls, LegacyStrategy):
            raise TypeError(f"{cls.__name__}: MpcAucEvaluation is for Flower's Message-API strategies "
                            "(flwr.serverapp.strategy); with a legacy strategy (flwr.server.strategy) use "
                            "MpcAucLegacyEvaluation")

    def configure_evaluate(self, server_round: int, arrays, config: ConfigRecord, grid):
        config[EVALUATION_KEY] = evaluation_id = _evaluation_id(server_round)
        messages = list(super().configure_evaluate(server_round, arrays, config, grid))
        if messages and not self._open_round(server_round, evaluation_id, [m.metadata.dst_node_id for m in messages],
                                             lambda nodes: _ask_nodes(grid, nodes)):
            for message in messages:  # nothing to submit to: the clients evaluate as they would without mpc-auc
                del message.content["config"][EVALUATION_KEY]
        return messages

    def aggregate_evaluate(self, server_round: int, replies):
        metrics = super().aggregate_evaluate(server_round, list(replies))
        self._released(server_round)  # start reports it as the round's ServerApp-side metrics
        return metrics

    def start(self, *args, evaluate_fn=None, **kwargs):
        """The strategy's ``start``, whose ServerApp-side evaluation of each round (``evaluate_fn``, if any) also
        carries what the round's mpc-auc evaluation released (``Result.evaluate_metrics_serverapp``)."""
        def server_side(server_round: int, arrays):
            own = evaluate_fn(server_round, arrays) if evaluate_fn else None
            released = self.mpcauc_metrics.get(server_round)
            if released is None:
                return own
            record = MetricRecord(dict(own or {}))
            record.update(released)
            return record

        self.mpcauc_clients, self.mpcauc_metrics = {}, {}  # this run's rounds
        return super().start(*args, evaluate_fn=server_side, **kwargs)


def _evaluation_id(server_round: int) -> str:
    """A fresh evaluation id for a round (unguessable: only the round's clients are told it)."""
    return f"flower-{secrets.token_hex(6)}-round-{server_round}"


def _ask_nodes(grid, nodes: list) -> dict:
    """{node id: mpc-auc client name} of the nodes that answered the ``query.mpcauc`` message; a node whose
    ClientApp cannot answer it is refused by name (what its ClientApp needs)."""
    messages = [Message(RecordDict({"config": ConfigRecord({IDENTIFY_KEY: 1})}), dst_node_id=node,
                        message_type=f"query.{IDENTIFY_ACTION}") for node in nodes]
    names = {}
    for reply in grid.send_and_receive(messages, timeout=REPLY_TIMEOUT):
        if reply.has_error():
            raise InputError(f"node {reply.metadata.src_node_id} did not say which mpc-auc client it is "
                             f"({reply.error.reason}): a round that samples nodes needs each ClientApp to answer "
                             f"@app.query(\"{IDENTIFY_ACTION}\") with mpc_auc.flower.identify")
        said = reply.content.config_records.get("config", {}).get(CLIENT_KEY)
        if not isinstance(said, str):
            raise InputError(f"node {reply.metadata.src_node_id} answered query.{IDENTIFY_ACTION} without a "
                             f"client name ({CLIENT_KEY})")
        names[reply.metadata.src_node_id] = said
    return names


class MpcAucLegacyEvaluation(_Rounds):
    """A mixin for Flower's legacy strategies (``flwr.server.strategy``: ``class S(MpcAucLegacyEvaluation,
    FedProx)``, NumPyClient apps) whose evaluation rounds compute the global AUC with mpc-auc.

    Options as :class:`MpcAucEvaluation`'s.  Each round's federated evaluation runs in the strategy's server-side
    ``evaluate`` (after the inner strategy's own ``evaluate_fn``, if any), so that what the round's evaluation
    released is in ``History.metrics_centralized``, beside the clients' aggregated metrics; its loss is the
    ``evaluate_fn``'s, else the clients' aggregated loss (``History.losses_centralized``).  Flower's federated
    evaluation step then has nothing to do ("configure_evaluate: no clients selected" in its log).  The clients
    are the inner strategy's sample (``fraction_evaluate``, ...); a round that samples fewer nodes than there are
    rosters asks each node which client it is (``get_properties``: :func:`node_properties`)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not issubclass(cls, LegacyStrategy):
            raise TypeError(f"{cls.__name__}: MpcAucLegacyEvaluation is for Flower's legacy strategies "
                            "(flwr.server.strategy); with a Message-API strategy (flwr.serverapp.strategy) use "
                            "MpcAucEvaluation")

    def configure_fit(self, server_round: int, parameters, client_manager):
        self._client_manager = client_manager  # evaluate() samples from it
        return super().configure_fit(server_round, parameters, client_manager)

    def configure_evaluate(self, server_round: int, parameters, client_manager):
        self._client_manager = client_manager
        return []  # evaluate() runs the round's federated evaluation

    def evaluate(self, server_round: int, parameters):
        own = super().evaluate(server_round, parameters)
        manager = getattr(self, "_client_manager", None)
        instructions = super().configure_evaluate(server_round, parameters, manager) if manager else []
        if server_round == 0 or not instructions:
            return own
        evaluation_id = _evaluation_id(server_round)
        if self._open_round(server_round, evaluation_id, [proxy.cid for proxy, _ in instructions],
                            lambda cids: _ask_proxies([p for p, _ in instructions if p.cid in cids], server_round)):
            for _, ins in instructions:
                ins.config[EVALUATION_KEY] = evaluation_id
        results, failures = evaluate_clients(instructions, max_workers=None, group_id=server_round,
                                             timeout=self.mpcauc_options["deadline"] + REPLY_TIMEOUT)
        loss, metrics = super().aggregate_evaluate(server_round, results, failures)
        metrics = {**(metrics or {}), **(own[1] if own else {}), **(self._released(server_round) or {})}
        return (own[0] if own else loss if loss is not None else float("nan")), metrics


def _ask_proxies(proxies: list, server_round: int) -> dict:
    """{cid: mpc-auc client name} of legacy client proxies, from their ``get_properties``."""
    def ask(proxy):
        return proxy.get_properties(GetPropertiesIns({IDENTIFY_KEY: True}), timeout=REPLY_TIMEOUT,
                                    group_id=server_round).properties

    with ThreadPoolExecutor(max(1, len(proxies))) as pool:  # all at once, as Flower asks for evaluations
        answers = dict(zip((p.cid for p in proxies), pool.map(ask, proxies)))
    for cid, properties in answers.items():
        if CLIENT_KEY not in properties:
            raise InputError(f"node {cid} did not say which mpc-auc client it is: a round that samples nodes needs "
                             "each NumPyClient's get_properties to return mpc_auc.flower.node_properties")
    return {cid: str(properties[CLIENT_KEY]) for cid, properties in answers.items()}


def _open(deployment: str, key: str, evaluation_id: str, roster: Roster, options: dict) -> Evaluation:
    """Open a round's evaluation, each option given to the value it belongs to (Context, Intake, or open)."""
    parts = {part: {f.name for f in dataclasses.fields(part)} for part in (MpcContext, Intake)}
    context = MpcContext(deployment=deployment, key=key,
                         **{k: v for k, v in options.items() if k in parts[MpcContext]})
    intake = Intake(**{k: v for k, v in options.items() if k in parts[Intake]})
    rest = {k: v for k, v in options.items() if k not in parts[MpcContext] | parts[Intake]}
    return Evaluation.open(context, id=evaluation_id, roster=roster, intake=intake, **rest)


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


def _node_name(context: Context) -> str:
    """This node's mpc-auc client name: node config ``mpcauc-client``, else ``client-<partition-id>``."""
    node = context.node_config
    if node.get("mpcauc-client"):
        return str(node["mpcauc-client"])
    if "partition-id" not in node:
        raise InputError("this node's config names no mpc-auc client: set mpcauc-client in its node config (a "
                         "deployed SuperNode), or run it in Flower's simulation (partition-id)")
    return f"client-{node['partition-id']}"


def node_settings(context: Context) -> tuple:
    """(mpc-auc client name, its key file, the deployment file) of this node (module docstring)."""
    node, run = context.node_config, context.run_config
    name = _node_name(context)
    key = node.get("mpcauc-key") or (f"{run['mpcauc-keys']}/{name}.key" if "mpcauc-keys" in run else None)
    deployment = node.get("mpcauc-deployment") or run.get("mpcauc-deployment")
    if not key or not deployment:
        raise InputError("this node has no mpc-auc key or deployment: set mpcauc-key and mpcauc-deployment in its "
                         "node config (or mpcauc-keys and mpcauc-deployment in the run config)")
    return name, str(key), str(deployment)


def identify(message: Message, context: Context, client: str = None) -> Message:
    """The reply to a sampled round's ``query.mpcauc`` message: which mpc-auc client this node is (``client``,
    default :func:`node_settings`'s name).  Register it in a Message-API ClientApp whose server samples nodes:
    ``app.query("mpcauc")(identify)`` (or a handler that calls it with ``client=``)."""
    name = client or _node_name(context)
    return Message(RecordDict({"config": ConfigRecord({CLIENT_KEY: name})}), reply_to=message)


def node_properties(config: dict, client: str) -> dict:
    """A legacy NumPyClient's ``get_properties`` answer to a sampled round's question which mpc-auc client it is
    (``{"mpcauc-client": client}``), else ``{}``: ``def get_properties(self, config): return
    node_properties(config, "client-3")``."""
    return {CLIENT_KEY: client} if IDENTIFY_KEY in config else {}


def _submit(config, client: str, key: str, deployment: str, y_true, y_score, ids, terms: ClientTerms,
            options: dict) -> int:
    """Submit to the evaluation ``config`` names; 1 if this client took part, 0 where its terms, its budget or
    the parties refused (logged, not raised: the round goes on)."""
    if EVALUATION_KEY not in config:
        raise InputError("the server opened no mpc-auc evaluation for this round (its strategy needs "
                         "MpcAucEvaluation, or MpcAucLegacyEvaluation for a legacy strategy)")
    try:
        submit(deployment, evaluation=str(config[EVALUATION_KEY]), client=client, key=key, y_true=y_true,
               y_score=y_score, ids=ids, terms=terms, **options)
        return 1
    except InputError as err:
        log(WARNING, "mpc-auc: %s did not take part in evaluation %s: %s", client, config[EVALUATION_KEY], err)
        return 0


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
    if client is None or key is None or deployment is None:
        client, key, deployment = node_settings(context)
    submitted = _submit(message.content[config_key], client, key, deployment, y_true, y_score, ids, terms, options)
    reply = MetricRecord({"num-examples": len(y_true), f"{PREFIX}submitted": submitted})
    return Message(RecordDict({"metrics": reply}), reply_to=message)


def submit_numpy(config: dict, y_true, y_score, ids=None, *, client: str, key: str, deployment: str,
                 terms: ClientTerms = NODE_TERMS, **options) -> dict:
    """:func:`submit_predictions` for a legacy NumPyClient: in its ``evaluate(parameters, config)``, submit the
    predictions on its test set to the round's evaluation (named in ``config``) and return the metrics of its
    reply, ``{"mpcauc-submitted": 1 or 0}`` (``return loss, len(y_true), submit_numpy(config, ...)``)."""
    return {f"{PREFIX}submitted": _submit(config, client, key, deployment, y_true, y_score, ids, terms, options)}


@dataclasses.dataclass
class LocalDeployment:
    """What :func:`local_deployment` started: the parties' deployment and the clients' keys, in ``directory``."""
    directory: Path
    names: list  # the clients' mpc-auc names: client-0 .. client-<n-1>, as node_settings names partitions
    processes: dict  # role -> its ``mpc-auc party`` process

    @property
    def deployment(self) -> str:
        return str(self.directory / "deployment.yaml")

    @property
    def keys(self) -> str:
        """The directory of the clients' <name>.key (0600) and <name>.roster.yaml."""
        return str(self.directory / "keys")

    @property
    def rosters(self) -> list:
        return [f"{self.keys}/{name}.roster.yaml" for name in self.names]

    @property
    def strategy_options(self) -> dict:
        """The keywords of :class:`MpcAucEvaluation` / :class:`MpcAucLegacyEvaluation` for this deployment."""
        return {"deployment": self.deployment, "rosters": self.rosters, "key": str(self.directory / "coordinator.key")}

    @property
    def run_config(self) -> dict:
        """The run config that :func:`node_settings` reads (``flwr run --run-config``)."""
        return {"mpcauc-deployment": self.deployment, "mpcauc-keys": self.keys}

    def client(self, partition_id: int) -> dict:
        """``client``, ``key`` and ``deployment`` of the node of ``partition_id``: keywords of
        :func:`submit_predictions` and :func:`submit_numpy`."""
        name = self.names[int(partition_id)]
        return {"client": name, "key": f"{self.keys}/{name}.key", "deployment": self.deployment}


@contextlib.contextmanager
def local_deployment(clients: int, workdir, *, hosts: dict = None, party_options=(), start_timeout: float = 120.0):
    """Start, for a simulation, the mpc-auc parties and keys of ``clients`` Flower nodes in ``workdir`` (an empty
    or new directory) and stop the parties when the ``with`` block ends.

    It writes what ``mpc-auc deploy init`` writes (deployment.yaml; one key per role, 0600) with the parties on
    ``hosts`` (default P0, P1, the dealer on 127.0.0.2, .3, .4, free ports), one key (0600) and roster per client
    as ``mpc-auc client keygen`` does (keys/client-<i>.key, .roster.yaml), and starts P0, P1 and the dealer as
    ``mpc-auc party`` processes (``party_options``: further options of theirs; their ledgers in ledgers/, their
    logs in logs/).  Yields a :class:`LocalDeployment`: ``strategy_options`` for the strategy,
    ``client(partition_id)`` for each node's submissions, ``run_config`` for ``flwr run``."""
    directory = Path(workdir).resolve()
    hosts = {**LOOPBACK, **(hosts or {})}
    deploy.init(str(directory), {role: f"{host}:{free_port(host)}" for role, host in hosts.items()})
    local = LocalDeployment(directory, [f"client-{i}" for i in range(int(clients))], {})
    os.makedirs(local.keys, exist_ok=True)
    for name in local.names:
        identity = Identity(client_role(name))
        Roster((identity.public,)).save(f"{local.keys}/{name}.roster.yaml")
        identity.save(f"{local.keys}/{name}.key")
    (directory / "logs").mkdir(exist_ok=True)
    try:
        for role in hosts:
            local.processes[role] = _start_party(directory, role, party_options)
        _wait_listening(directory, local.processes, start_timeout)
        yield local
    finally:
        stop_processes(local.processes)


def _start_party(directory: Path, role: str, options) -> subprocess.Popen:
    """``mpc-auc party --role ROLE`` on the deployment in ``directory``, its log in logs/ROLE.log."""
    with open(directory / "logs" / f"{role}.log", "w") as out:
        return subprocess.Popen([sys.executable, "-m", "mpc_auc", "party", "--role", role, "--deployment",
                                 str(directory / "deployment.yaml"), "--key", str(directory / f"{role}.key"),
                                 "--ledger", str(directory / "ledgers"), *map(str, options)],
                                stdout=out, stderr=subprocess.STDOUT)


def _wait_listening(directory: Path, processes: dict, timeout_s: float) -> None:
    """Until every party's log says it listens (``mpc-auc party`` prints it once its socket is bound)."""
    deadline = time.monotonic() + timeout_s
    waiting = dict(processes)
    while waiting:
        for role, proc in list(waiting.items()):
            log_text = (directory / "logs" / f"{role}.log").read_text()
            if "listening on" in log_text:
                del waiting[role]
            elif proc.poll() is not None:
                raise DeploymentError(f"mpc-auc party {role} stopped at start-up: {log_text.strip()[-500:]}")
        if waiting and time.monotonic() > deadline:
            raise DeploymentError(f"mpc-auc party {', '.join(waiting)} did not listen within {timeout_s:g} s "
                                  f"(logs in {directory / 'logs'})")
        time.sleep(0.2)


def stop_processes(processes: dict) -> None:
    """SIGTERM each of ``processes`` (name -> Popen; an ``mpc-auc party`` exits cleanly on it), SIGKILL one that
    has not exited 10 s later."""
    for proc in processes.values():
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in processes.values():
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
