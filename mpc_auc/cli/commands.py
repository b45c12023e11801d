"""The commands of ``mpc-auc``: demo, run, ustat, generate, deploy init, party, evaluation open, client keygen
and submit (the parser: mpc_auc.cli.parser; what they write: mpc_auc.cli.records).

Exit status: 0 success, 2 bad input, usage or deployment (no output file is
written), 3 a party of the MPC run failed, 1 anything else.
"""
import dataclasses
import os
import resource
import signal
import sys
import tempfile
import time

from .. import progress
from ..csv_io import LIMIT_OPTIONS, Columns, ReadLimits, read_evalset, read_score_columns, read_user_values, \
    where, write_evalset
from ..figures import curves
from ..evaluations import located_submit
from ..context import ClientTerms, Context, Intake, parse_budget
from ..planner import Plan, execute, open_evaluation, plan, ustat_epsilon
from ..protocols.clear_auc import rank_sum_auc
from ..protocols.errors import DeploymentError, InputError
from ..protocols.inputs.encoding import FINITE
from ..protocols.inputs.weights import check_weights, rounding_error
from ..protocols.inputs.submission import Roster
from ..protocols.mpc.ranking_job import roles_started
from ..protocols.runtime import deployment as deploy
from ..protocols.runtime.deployment import Deployment
from ..protocols.runtime.identity import ROLES, Identity, client_role
from ..protocols.runtime.ledger import LedgerPlace, default_directory
from ..protocols.runtime.listener import Listener
from ..protocols.runtime.memory import tune_allocator
from ..protocols.services import SERVED
from ..protocols.ustat.two_party import Sample, ustat_2pc
from ..results import provenance, write_atomically, write_json
from ..synthetic import synthetic_evalset
from .records import (central_record, column_records, exact_record, file_stem, metric_lines, write_rank_files,
                      write_ranks)



def _arguments(args) -> dict:
    """The parsed arguments as recorded in a result's provenance."""
    return {k: v for k, v in vars(args).items() if k not in ("func", "command")}


def _plan(args, **fixed) -> Plan:
    """The request of ``run`` or ``evaluation open`` (``demo``: its fixed options), checked by the planner."""
    context = dict(method=args.method, deployment=args.deployment, key=args.key, timeout=args.timeout)
    options = {}
    if hasattr(args, "protocol"):
        context.update(alpha=args.alpha, neighbours=args.neighbours, budget=args.budget,
                       score_range=tuple(args.score_range), score_dtype=args.score_dtype, auc_decimals=args.auc_decimals,
                       dataset_id=args.dataset_id, security=args.security)
        options = dict(protocol=args.protocol, epsilon=args.epsilon, metrics=args.metrics, points=args.points,
                       max_fpr=args.max_fpr)
    if hasattr(args, "parties_host"):
        context.update(host=args.parties_host, port=args.port, ledger=getattr(args, "ledger", None))
    return plan(context=Context(**context), **{**options, **fixed})


def cmd_demo(args) -> int:
    evalset = synthetic_evalset(m=args.m, clients=args.clients, seed=args.seed)
    print(f"built-in Criteo-shaped set: M={evalset.m} P={evalset.positives} N={evalset.negatives}, "
          f"{len(evalset.clients())} clients (IID), seed {args.seed}")
    print("clients secret-share (score, label) to P0 and P1; the dealer supplies triples ...")
    result = execute(_plan(args, protocol="mpc-exact"), evalset.clients(), progress.RoleProgress()).release
    clear = rank_sum_auc(evalset.score, evalset.label)
    print(f"MPC AUC   (only value revealed): {result.auc:.15f}")
    print(f"clear AUC (reference)          : {clear:.15f}")
    print(f"difference: {abs(result.auc - clear):.3e}   wall {result.wall_s:.1f} s   "
          f"P0 sent {result.traffic['P0']['bytes'] / 1e6:.1f} MB in {result.traffic['P0']['rounds']} rounds "
          f"(separate dealer process, {result.method} ranking)")
    return 0


def _check_out(out: str, inputs=(), option: str = "--out") -> None:
    """Raise InputError unless ``out`` can be written, before any work: its directory exists and takes a new
    file (the atomic write's temporary file, made and removed here), it is no directory and none of the
    command's ``inputs``."""
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise InputError(f"{option} {out}: the directory {parent} does not exist")
    if os.path.isdir(out):
        raise InputError(f"{option} {out} is a directory; name a file")
    for source in inputs:
        if source and (os.path.abspath(source) == os.path.abspath(out) or (
                os.path.exists(out) and os.path.exists(source) and os.path.samefile(source, out))):
            raise InputError(f"{option} {out} is one of this command's inputs ({source}); choose another name")
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".mpc-auc-check-"):
            pass
    except OSError as err:
        raise InputError(f"{option} {out}: cannot write in {parent} ({err.strerror or err})") from None


def _check_ledger(directory: str) -> None:
    """Raise InputError unless the local parties' ledger directory can be made and written, before any work:
    a release whose charge could not be recorded must not happen."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".mpc-auc-check-"):
            pass
    except OSError as err:
        raise InputError(f"--ledger {directory}: cannot write the parties' privacy ledger there "
                         f"({err.strerror or err})") from None


def cmd_run(args) -> int:
    entered, entered_unix = time.perf_counter(), time.time()
    inputs = [args.input, args.deployment, args.key]
    _check_out(args.out, inputs)
    request = _plan(args, ranks=bool(args.ranks_dir))
    if args.ranks_dir:
        parent = os.path.dirname(os.path.abspath(args.ranks_dir))
        if os.path.exists(args.ranks_dir) or not os.path.isdir(parent):
            raise InputError("--ranks-dir needs a new directory inside an existing one")
        _check_out(args.ranks_dir, inputs + [args.out], "--ranks-dir")
    if args.protocol != "clear" and not args.deployment:
        _check_ledger(args.ledger or default_directory())
    if args.protocol == "clear":
        evalset, clients, record, ids, weights = _read_run_input(args, request.encoder)
        start = time.perf_counter()
        outcome = execute(request, clients, weights=weights)
        record.update(auc=outcome.auc, revealed=["all scores and labels (no privacy)"],
                      metrics=outcome.metrics, **column_records(args.score_col, outcome))
        return _write_run(args, evalset, record, (entered, entered_unix), start)
    with roles_started(request.placement, request.timeout) as placement:  # they start while the input is read
        evalset, clients, record, ids, weights = _read_run_input(args, request.encoder)
        start = time.perf_counter()  # the roles may still be starting: wall_s includes waiting for them
        outcome = execute(dataclasses.replace(request, placement=placement), clients, progress.RoleProgress(),
                          weights)
    if args.protocol == "mpc-central":
        record.update(central_record(outcome, request.noise, args.method))
    else:
        if args.ranks_dir:
            write_rank_files(args.ranks_dir, outcome.release.ranks, ids)
            record["ranks_dir"] = os.path.abspath(args.ranks_dir)
        record.update(exact_record(outcome.release), **column_records(args.score_col, outcome))
    return _write_run(args, evalset, record, (entered, entered_unix), start)


def _columns(args) -> Columns:
    """The prediction file's columns the command line names (--client-col, --score-col, --label-col, --id-col)."""
    return Columns(args.client_col, tuple(args.score_col), args.label_col, args.id_col,
                   getattr(args, "weight_col", None))


def _limits(args) -> ReadLimits:
    """The reading limits the command line sets (--max-input-bytes, --max-input-rows, ...)."""
    return ReadLimits(**{field: getattr(args, field) for field in LIMIT_OPTIONS})


def _read_run_input(args, encoder):
    """(evalset, its clients, the record's input part, client -> its rows' ids or None, each client's sample
    weights or None) of ``mpc-auc run``; every check runs here."""
    declared = args.clients.split(",") if args.clients else None
    evalset, scores, ids, weights = read_score_columns(args.input, _columns(args), encoder, declared, sep=args.sep,
                                                       positive_label=args.positive_label, limits=_limits(args))
    clients = evalset.clients() if len(args.score_col) == 1 else \
        [(name, scores[rows], evalset.label[rows]) for name, rows in evalset.client_rows()]
    narrow = encoder.narrower(evalset.score) if args.protocol != "clear" and args.method == "radix" else None
    if narrow is not None:
        progress.say(f"mpc-auc: note: every score is a float32 value: --score-dtype float32 gives the same AUC "
                     f"on {narrow.key_bits}-bit keys instead of {encoder.key_bits} (radix digits "
                     f"{-(-narrow.key_bits // 2)} instead of {-(-encoder.key_bits // 2)})")
    smaller = min(evalset.positives, evalset.negatives)
    if smaller < 10:
        print(f"mpc-auc: warning: one class has only {smaller} sample(s): the AUC rests on few pairs",
              file=sys.stderr)
    record = {
        "protocol": args.protocol,
        "input": os.path.abspath(args.input),
        "input_summary": {"M": evalset.m, "clients": len(clients),
                          "note": "public shape of the input (M and the number of clients)"},
        "encoding": {"dtype": encoder.dtype, "range": [encoder.lo, encoder.hi], "exact": encoder.exact},
    }
    by_client = None if ids is None else {name: ids[rows] for name, rows in evalset.client_rows()}
    if weights is not None:
        weights = check_weights(weights, evalset.m, lambda i: where(args.input, i))
        record["sample_weights"] = {"column": args.weight_col, "weight_error": rounding_error(weights),
                                    "note": "weighted AUC; weight_error: the most the weights' rounding to the "
                                            "MPC's integer units can have moved it"}
        weights = [weights[rows] for _, rows in evalset.client_rows()]
    return evalset, clients, record, by_client, weights


def _write_run(args, evalset, record, entered: tuple, start: float) -> int:
    """Write the record of ``mpc-auc run`` with its timings (sims.bench.e2e reads them).

    entered: (perf_counter, Unix time) when the command began."""
    record["wall_s"] = time.perf_counter() - start
    record["timings_s"] = {"read_and_check": start - entered[0], "command": time.perf_counter() - entered[0],
                           "entered_unix": entered[1]}
    record["coordinator_peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    record["provenance"] = provenance(_arguments(args))
    metrics = record.get("metrics") or {}
    if {"roc", "pr"} & set(metrics):
        stem = os.path.splitext(args.out)[0] + ".curves"
        cuts = len(metrics.get("roc", metrics.get("pr"))["flagged"])
        curves(dict(metrics, auc=record["auc"]), stem, f"{args.protocol}, M={evalset.m}: {cuts} cuts of the ranking")
        record["figures"] = [os.path.abspath(f"{stem}.{ext}") for ext in ("png", "pdf")]
    write_json(args.out, record)
    print(f"AUC = {record['auc']:.15f}  ({args.protocol}, M={evalset.m}) -> {args.out}")
    for line in metric_lines(metrics):
        print(line)
    for name, column in list(record.get("columns", {}).items())[1:]:
        print(f"{name}: AUC = {column['auc']:.15f}")
        for line in metric_lines(column["metrics"]):
            print(f"{name}: {line}")
    for test in record.get("delong_test", []):
        print(f"DeLong test {test['a']} vs {test['b']}: difference {test['difference']:+.6f}, z = {test['z']:.4f}, "
              f"p = {test['p_value']:.4g}")
    return 0


def cmd_ustat(args) -> int:
    _check_out(args.out, [args.input])
    epsilon = ustat_epsilon(args.kernel, args.epsilon, True, args.security)  # the AUC kernels read labels
    if args.kernel.startswith("auc"):
        evalset = read_evalset(args.input, sep=args.sep, positive_label=args.positive_label, limits=_limits(args))
        sample = Sample(evalset.score, evalset.label)
    else:
        sample = Sample(read_user_values(args.input, args.kernel, args.sep, _limits(args)))
    release = ustat_2pc(args.kernel, [sample], epsilon, args.k, seed=args.seed, timeout_s=args.timeout,
                        on_progress=progress.RoleProgress())[0]
    record = {"protocol": "ustat-2pc", "input": os.path.abspath(args.input), "users": len(sample.values),
              **{k: v for k, v in vars(release).items()}, "provenance": provenance(_arguments(args), args.seed)}
    if release.swamped:
        print(f"mpc-auc: warning: the noise swamps the estimate (std {release.std:.3g} at epsilon "
              f"{args.epsilon:g} over k = {args.k} pairs per user, i.e. epsilon/k = {args.epsilon / args.k:.3g} per "
              f"pair): lower --k or raise --epsilon", file=sys.stderr)
    write_json(args.out, record)
    print(f"{args.kernel} = {release.estimate:.6f} +- {release.std:.2g} (std)  (ustat-2pc, {release.pairs} pairs, "
          f"eps {args.epsilon}, k {args.k}) -> {args.out}")
    return 0


def cmd_deploy_init(args) -> int:
    addresses = {"P0": args.p0, "P1": args.p1, "dealer": args.dealer}
    deploy.init(args.dir, addresses)
    print(f"wrote {os.path.join(args.dir, 'deployment.yaml')} (public: copy it to every role and client) and "
          f"one private key file per role ({', '.join(f'{r}.key' for r in ROLES)}, mode 0600): give each "
          f"role its own key only")
    return 0


def cmd_party(args) -> int:
    """Serve one role until SIGTERM / Ctrl-C (clean exit 0)."""
    identity = Identity.load(args.key)
    if identity.role != args.role:
        raise DeploymentError(f"{args.key} is the key of {identity.role}, not of {args.role}")
    deployment = Deployment.load(args.deployment)
    if deployment.public(args.role).fingerprint != identity.public.fingerprint:
        raise DeploymentError(f"{args.key} does not match the certificate pinned for {args.role} in {args.deployment}")
    pinned = deployment.public(args.role).seal_public
    if pinned and (identity.seal_key is None or identity.seal_key.public != pinned):
        raise DeploymentError(f"{args.key} does not hold the sealing key pinned for {args.role} in {args.deployment}: "
                              "nothing clients seal to that key would open")
    own_budget = parse_budget(args.budget) if args.budget else None
    from ..protocols.runtime.roles import prepare_process, serve  # lazily: only a role process loads CrypTen

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    tune_allocator()
    prepare_process(SERVED)
    listener = Listener(identity, deployment, args.timeout, listen=args.listen)
    where = args.listen or deployment.address(args.role)
    print(f"[{args.role}] listening on {where}; serving until stopped", file=sys.stderr, flush=True)
    try:
        serve(identity, deployment, listener, ledger=LedgerPlace(args.ledger, own_budget))
    except KeyboardInterrupt:
        pass
    finally:
        listener.close()
    return 0


def cmd_evaluation_open(args) -> int:
    """Declare an evaluation on a deployment's parties; they compute once its clients have submitted."""
    _check_out(args.out, list(args.roster) + [args.deployment, args.key])
    request = _plan(args, ranks=args.ranks)
    encoder = request.encoder
    roster = Roster.load(args.roster)
    progress.say(f"evaluation {args.id!r} open for {len(roster.names)} client(s) until {args.deadline:g} s from "
                 "now; the parties compute when all have submitted")
    intake = Intake(args.deadline, args.allow_missing, args.max_rows, args.max_total_rows, args.share_result,
                    args.exclude_invalid)
    outcome = open_evaluation(request, args.id, roster, intake, progress.RoleProgress())
    release = outcome.release
    record = {"protocol": args.protocol, "evaluation": args.id, "roster_sha256": roster.digest,
              "encoding": {"dtype": encoder.dtype, "range": [encoder.lo, encoder.hi], "exact": encoder.exact}}
    if request.noise is not None:
        record.update(central_record(outcome, request.noise, args.method))
    else:
        record.update(exact_record(release))
        del record["client_upload_bytes"], record["sharing_s"]  # the clients' own business, measured there
    record.update(input_summary={"M": release.m, "clients": release.clients, "missing": release.missing,
                                 "excluded": list(release.excluded or []),
                                 "note": "public shape of the input (M and who took part)"},
                  ranks_delivered=bool(args.ranks), result_shared=bool(args.share_result),
                  provenance=provenance(_arguments(args)))
    write_json(args.out, record)
    print(f"AUC = {record['auc']:.15f}  ({args.protocol}, evaluation {args.id}, M={release.m}, "
          f"{release.clients} client(s)) -> {args.out}")
    return 0


def _client_role(name: str) -> str:
    try:
        return client_role(name)
    except InputError as err:
        raise InputError(f"--name: {err}") from None


def cmd_client_keygen(args) -> int:
    role = _client_role(args.name)
    stem = file_stem(args.name)
    key, roster = args.key or f"{stem}.key", args.roster or f"{stem}.roster.yaml"
    if os.path.abspath(key) == os.path.abspath(roster):
        raise InputError(f"--key and --roster name the same file {key}: the private key and the roster are two files")
    for path, option in ((key, "--key"), (roster, "--roster")):
        _check_out(path, option=option)
        if os.path.exists(path):
            raise InputError(f"{path} exists already; choose another name")
    identity = Identity(role)
    Roster((identity.public,)).save(roster)
    identity.save(key)
    print(f"wrote {key} (private, mode 0600: keep it on this machine) and {roster} (public: send it to whoever "
          f"opens the evaluation, who lists it with --roster)")
    return 0


def cmd_client_submit(args) -> int:
    if args.ranks_out:
        _check_out(args.ranks_out, [args.input, args.key, args.deployment], "--ranks-out")
        if os.path.exists(args.ranks_out):
            raise InputError(f"--ranks-out {args.ranks_out} exists already; choose a new file")
    # every score finite (the declared range comes with the ticket), every row this client's own
    evalset, _, ids, _ = read_score_columns(args.input, _columns(args), FINITE,
                                         [args.client], both_classes=False, sep=args.sep,
                                         positive_label=args.positive_label, limits=_limits(args))
    receipt = located_submit(args.deployment, lambda i: where(args.input, i), evaluation=args.evaluation,
                             client=args.client, key=args.key, y_true=evalset.label, y_score=evalset.score, ids=ids,
                             terms=ClientTerms(args.max_epsilon, args.budget, args.max_exact, args.max_decimals,
                                               args.ledger, args.require_security),
                             timeout=args.timeout, connect_timeout=args.connect_timeout, progress=True)
    if args.ranks_out:
        if receipt.ranks is None:
            raise InputError(f"evaluation {args.evaluation!r} does not deliver ranks (the job finished: "
                             f"{receipt.status})")
        write_atomically(args.ranks_out, lambda tmp: write_ranks(tmp, args.client, receipt.ranks, "w", ids))
    print(f"client {args.client}: {receipt.rows} rows submitted to evaluation {args.evaluation!r}: "
          f"{receipt.status}" + (f"; ranks -> {args.ranks_out}" if args.ranks_out else ""))
    if receipt.result is not None:
        print(f"released to every client: AUC = {receipt.result['auc']:.15f}")
        for line in metric_lines({k: v for k, v in receipt.result.value.items() if k != "auc"}):
            print(line)
    return 0


def cmd_generate(args) -> int:
    _check_out(args.out)
    evalset = synthetic_evalset(m=args.m, positives=args.positives, auc=args.auc, clients=args.clients,
                                scheme=args.partition, seed=args.seed, decimals=args.decimals,
                                dtype=args.score_dtype)
    write_atomically(args.out, lambda tmp: write_evalset(tmp, evalset))
    print(f"wrote {evalset.m} rows ({evalset.positives} positive, {len(evalset.clients())} clients) to {args.out}")
    return 0
