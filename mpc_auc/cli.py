"""Command line: ``mpc-auc demo``, ``run``, ``ustat``, ``generate``, ``deploy init``, ``party``.

Exit status: 0 success, 2 bad input, usage or deployment (no output file is
written), 3 a party of the MPC run failed, 1 anything else.
"""
import argparse
import math
import os
import re
import shutil
import signal
import sys
import tempfile
import time

from . import __version__, progress
from .csv_io import read_evalset, read_user_values, write_evalset
from .protocols.clear_auc import rank_sum_auc
from .protocols.inputs.encoding import ScoreEncoder
from .protocols.runtime import deployment as deploy
from .protocols.errors import DeploymentError, InputError, PartyFailure
from .protocols.mpc.mpc_central import (SWAMPED, CentralNoise, central_release, mpc_central_auc, release_interval,
                                        swamped)
from .protocols.runtime.deployment import Deployment
from .protocols.runtime.identity import CLIENT_PREFIX, ROLES, SERVING, Identity, client_role
from .protocols.mpc.ledger import Budget, LedgerPlace, default_directory
from .protocols.runtime.link import Listener
from .protocols.mpc.mpc_exact import Request, exact_result, mpc_exact_auc, roles_started, run_ranking_jobs
from .protocols.inputs.submission import DEFAULT_MAX_ROWS, MAX_DECIMALS, Evaluation, Roster
from .protocols.inputs.submitter import submit
from .results import provenance, write_atomically, write_json
from .protocols.runtime.roles import prepare_process, serve
from .circuits.memory import tune_allocator
from .protocols.runtime.session import Placement
from .protocols.ustat.ustat_2pc import KERNELS, Sample, ustat_2pc
from .experiment_config import add_options
from .synthetic import synthetic_evalset

PROTOCOLS = ("mpc-exact", "mpc-central", "clear")
_LARGEST = 1.7976931348623157e308  # float64's largest finite value


class _RoleProgress:
    """The roles' progress messages: the sort's steps as a bar with ETA on a terminal (status lines
    elsewhere), the rest as status lines ([role] text)."""
    STEP = re.compile(r"^(oblivious \w+ sort of \d+ scores): step (\d+)/(\d+)$")

    def __init__(self):
        self._bar = None

    def __call__(self, role: str, text: str) -> None:
        step = self.STEP.match(text)
        if step is None:
            progress.say(f"  [{role}] {text}")
            return
        done, total = int(step[2]), int(step[3])
        if self._bar is None:
            self._bar = progress.bar(total=total, desc=step[1], unit="step")
        if self._bar.disable:
            progress.say(f"  [{role}] {text}")
        self._bar.update(done - self._bar.n)
        if done == total:
            self._bar.close()
            self._bar = None


def _arguments(args) -> dict:
    """The parsed arguments as recorded in a result's provenance."""
    return {k: v for k, v in vars(args).items() if k not in ("func", "command")}


def _placement(args) -> Placement:
    """The roles to run on: those of --deployment, or local ones spawned on --parties-host."""
    ledger = getattr(args, "ledger", None)
    if getattr(args, "deployment", None):
        if ledger:
            raise InputError("--ledger is for local runs: deployed parties keep their own (mpc-auc party --ledger)")
        return Placement.deployed(args.deployment, args.key)
    return Placement(host=args.parties_host, port=args.port, ledger=ledger)


def _table_options(command) -> None:
    command.add_argument("--sep", default=None, help="the field separator of a CSV/TSV input (default: a tab if "
                                                     "the header holds one, else a comma)")
    command.add_argument("--positive-label", default=None, metavar="VALUE",
                         help="the label value of the positive class when labels are not 0/1 (e.g. True, +1, yes); "
                              "the label column must then hold exactly two values (default: labels are 0/1)")


def _run_mpc(clients, encoder, args, placement, ranks: bool = False):
    return mpc_exact_auc([clients], encoder, provider="TTP", method=args.method, ranks=ranks,
                         placement=placement, timeout_s=args.timeout, on_progress=_RoleProgress(),
                         decimals=getattr(args, "auc_decimals", None))[0]


def _rank_file_name(index: int, client: str) -> str:
    """``<index>-<id>.ranks.csv``: unique by the index, the id kept when it is a safe file name."""
    return f"{index:05d}-{_file_stem(client)}.ranks.csv"


def _file_stem(name: str) -> str:
    """``name`` when it is a safe file name (1-64 letters, digits, '.', '_', '-'), else "client"."""
    safe = name and len(name) <= 64 and all(c.isalnum() or c in "._-" for c in name)
    return name if safe else "client"


def _write_ranks(path: str, client: str, ranks, mode: str = "x") -> None:
    """One client's rank file: its rows' global mid-ranks in its row order (by default opened exclusively)."""
    with open(path, mode) as f:
        f.write(f"# client {client}: global 0-based mid-rank of each of its rows\nrow,rank\n")
        f.writelines(f"{i},{r:g}\n" for i, r in enumerate(ranks))


def _write_rank_files(directory: str, ranks: dict) -> None:
    """One file per client, as that client would hold it: its rows' global mid-ranks, in its row order.

    Written into a temporary directory that is renamed into place, so a
    failed run leaves nothing behind.
    """
    tmp = tempfile.mkdtemp(prefix=".mpc-auc-ranks-", dir=os.path.dirname(os.path.abspath(directory)))
    try:
        for index, (client, values) in enumerate(ranks.items()):
            _write_ranks(os.path.join(tmp, _rank_file_name(index, client)), client, values)
        os.rename(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def cmd_demo(args) -> int:
    evalset = synthetic_evalset(m=args.m, clients=args.clients, seed=args.seed)
    print(f"built-in Criteo-shaped set: M={evalset.m} P={evalset.positives} N={evalset.negatives}, "
          f"{len(evalset.clients())} clients (IID), seed {args.seed}")
    print("clients secret-share (score, label) to P0 and P1; the dealer supplies triples ...")
    result = _run_mpc(evalset.clients(), ScoreEncoder(), args, _placement(args))
    clear = rank_sum_auc(evalset.score, evalset.label)
    print(f"MPC AUC   (only value revealed): {result.auc:.15f}")
    print(f"clear AUC (reference)          : {clear:.15f}")
    print(f"difference: {abs(result.auc - clear):.3e}   wall {result.wall_s:.1f} s   "
          f"P0 sent {result.traffic['P0']['bytes'] / 1e6:.1f} MB in {result.traffic['P0']['rounds']} rounds "
          f"(provider {result.provider}, separate dealer process, {result.method} ranking)")
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


def _require_epsilon(args) -> float:
    if args.epsilon is None:
        raise InputError(f"{args.protocol if hasattr(args, 'protocol') else 'ustat-2pc'} is differentially "
                         "private: give its budget with --epsilon")
    return args.epsilon


def _central_record(release, noise: CentralNoise, method: str) -> dict:
    """What an mpc-central result file holds: the released values and public parameters only."""
    stat, positives = release.opened[0]
    std, ci95 = release_interval(release, noise)
    if swamped(release.aucs[0], std):
        progress.warn(SWAMPED.format(std=std, epsilon=noise.epsilon))
    return dict(auc=release.aucs[0], std=std, ci95=list(ci95), swamped=swamped(release.aucs[0], std),
                provider="TTP", method=method,
                privacy={"epsilon": noise.epsilon, "delta": release.delta, "neighbours": noise.neighbours,
                         "alpha": noise.alpha, "ledger": release.ledger},
                revealed=[f"noisy {'2T' if noise.neighbours == 'label' else '2U'} = {stat}", f"noisy P = {positives}"],
                traffic=release.traffic, mpc_wall_s=release.wall_s)


def _exact_record(result) -> dict:
    return dict(auc=result.auc, provider=result.provider, method=result.method, revealed=list(result.revealed),
                traffic=result.traffic, client_upload_bytes=result.upload_bytes, mpc_wall_s=result.wall_s,
                sharing_s=result.sharing_s, input_check_s=result.check_s)


def cmd_run(args) -> int:
    entered, entered_unix = time.perf_counter(), time.time()
    inputs = [args.input, args.deployment, args.key]
    _check_out(args.out, inputs)
    if args.ranks_dir:
        parent = os.path.dirname(os.path.abspath(args.ranks_dir))
        if args.protocol != "mpc-exact" or os.path.exists(args.ranks_dir) or not os.path.isdir(parent):
            raise InputError("--ranks-dir needs --protocol mpc-exact and a new directory inside an existing one")
        _check_out(args.ranks_dir, inputs + [args.out], "--ranks-dir")
    if args.protocol != "clear" and not args.deployment:
        _check_ledger(args.ledger or default_directory())
    noise = CentralNoise(_require_epsilon(args), args.alpha, args.neighbours) if args.protocol == "mpc-central" \
        else None
    if args.auc_decimals is not None and args.protocol != "mpc-exact":
        raise InputError("--auc-decimals needs --protocol mpc-exact")
    budget = Budget.parse(args.budget) if args.budget else None
    placement = _placement(args)
    encoder = ScoreEncoder(args.score_range[0], args.score_range[1], args.score_dtype)
    if args.protocol == "clear":
        evalset, _, record = _read_run_input(args, encoder)
        start = time.perf_counter()
        record.update(auc=rank_sum_auc(evalset.score, evalset.label), provider=None,
                      revealed=["all scores and labels (no privacy)"])
        return _write_run(args, evalset, record, (entered, entered_unix), start)
    with roles_started(placement, args.timeout) as placement:  # they start up while the input is read
        evalset, clients, record = _read_run_input(args, encoder)
        start = time.perf_counter()  # the roles may still be starting: wall_s includes waiting for them
        if args.protocol == "mpc-central":
            release = mpc_central_auc([clients], noise, encoder, args.method, placement, args.timeout,
                                      _RoleProgress(), budget, [args.dataset_id] if args.dataset_id else None)[0]
            record.update(_central_record(release, noise, args.method))
        else:
            result = _run_mpc(clients, encoder, args, placement, ranks=bool(args.ranks_dir))
            if args.ranks_dir:
                _write_rank_files(args.ranks_dir, result.ranks)
                record["ranks_dir"] = os.path.abspath(args.ranks_dir)
            record.update(_exact_record(result))
    return _write_run(args, evalset, record, (entered, entered_unix), start)


def _read_run_input(args, encoder):
    """(evalset, its clients, the record's input part) of ``mpc-auc run``; every check runs here."""
    declared = args.clients.split(",") if args.clients else None
    evalset = read_evalset(args.input, encoder, declared, sep=args.sep, positive_label=args.positive_label)
    clients = evalset.clients()
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
    return evalset, clients, record


def _write_run(args, evalset, record, entered: tuple, start: float) -> int:
    """Write the record of ``mpc-auc run`` with its timings (sims.bench_e2e reads them).

    entered: (perf_counter, Unix time) when the command began."""
    import resource

    record["wall_s"] = time.perf_counter() - start
    record["timings_s"] = {"read_and_check": start - entered[0], "command": time.perf_counter() - entered[0],
                           "entered_unix": entered[1]}
    record["coordinator_peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    record["provenance"] = provenance(_arguments(args))
    write_json(args.out, record)
    print(f"AUC = {record['auc']:.15f}  ({args.protocol}, M={evalset.m}) -> {args.out}")
    return 0


def cmd_ustat(args) -> int:
    _check_out(args.out, [args.input])
    _require_epsilon(args)
    if args.kernel.startswith("auc"):
        evalset = read_evalset(args.input, sep=args.sep, positive_label=args.positive_label)
        sample = Sample(evalset.score, evalset.label)
    else:
        sample = Sample(read_user_values(args.input, args.kernel, args.sep))
    release = ustat_2pc(args.kernel, [sample], args.epsilon, args.k, seed=args.seed, timeout_s=args.timeout,
                        on_progress=_RoleProgress())[0]
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
    own_budget = Budget.parse(args.budget) if args.budget else None
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    tune_allocator()
    prepare_process()
    listener = Listener(identity, deployment, args.timeout)
    print(f"[{args.role}] listening on {deployment.address(args.role)}; serving until stopped", file=sys.stderr,
          flush=True)
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
    noise = CentralNoise(_require_epsilon(args), args.alpha, args.neighbours) if args.protocol == "mpc-central" \
        else None
    if (args.ranks or args.auc_decimals is not None) and args.protocol != "mpc-exact":
        raise InputError("--ranks and --auc-decimals need --protocol mpc-exact")
    budget = Budget.parse(args.budget) if args.budget else None
    encoder = ScoreEncoder(args.score_range[0], args.score_range[1], args.score_dtype)
    evaluation = Evaluation(args.id, Roster.load(args.roster), encoder, direct=True, deadline_s=args.deadline,
                            allow_missing=args.allow_missing, max_rows=args.max_rows, decimals=args.auc_decimals)
    placement = Placement.deployed(args.deployment, args.key)
    progress.say(f"evaluation {args.id!r} open for {len(evaluation.roster.names)} client(s) until "
                 f"{args.deadline:g} s from now; the parties compute when all have submitted")
    declared = (f"declared:{args.dataset_id}",) if args.dataset_id else ()
    (run,) = run_ranking_jobs([Request(evaluation, None, declared)], "TTP", args.method, args.ranks,
                              noise, placement, args.timeout, _RoleProgress(), budget)
    record = {"protocol": args.protocol, "evaluation": args.id, "roster_sha256": evaluation.roster.digest,
              "encoding": {"dtype": encoder.dtype, "range": [encoder.lo, encoder.hi], "exact": encoder.exact}}
    if noise is not None:
        release = central_release(run, noise)
        record.update(_central_record(release, noise, args.method))
    else:
        release = exact_result(run, "TTP", args.method)
        record.update(_exact_record(release))
        del record["client_upload_bytes"], record["sharing_s"]  # the clients' own business, measured there
    record.update(input_summary={"M": release.m, "clients": release.clients, "missing": release.missing,
                                 "note": "public shape of the input (M and who took part)"},
                  ranks_delivered=bool(args.ranks), provenance=provenance(_arguments(args)))
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
    stem = _file_stem(args.name)
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
    identity = Identity.load(args.key)
    if identity.role != CLIENT_PREFIX + args.client:
        raise DeploymentError(f"{args.key} is the key of {identity.role}, not of client:{args.client}")
    deployment = Deployment.load(args.deployment)
    # every score finite (the declared range comes with the ticket), every row this client's own
    evalset = read_evalset(args.input, ScoreEncoder(-_LARGEST, _LARGEST), [args.client], both_classes=False,
                           sep=args.sep, positive_label=args.positive_label)
    outcome = submit(identity, deployment, args.evaluation, evalset.score, evalset.label, args.timeout,
                     args.connect_timeout, lambda text: progress.say(f"  [{args.client}] {text}"), args.max_epsilon)
    if args.ranks_out:
        if outcome.ranks is None:
            raise InputError(f"evaluation {args.evaluation!r} does not deliver ranks (the job finished: "
                             f"{outcome.status})")
        write_atomically(args.ranks_out, lambda tmp: _write_ranks(tmp, args.client, outcome.ranks, "w"))
    print(f"client {args.client}: {outcome.rows} rows submitted to evaluation {args.evaluation!r}: "
          f"{outcome.status}" + (f"; ranks -> {args.ranks_out}" if args.ranks_out else ""))
    return 0


def cmd_security(args) -> int:
    from .sims.security import run

    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise InputError(f"--out {args.out} is a file; name a directory for the report")
    report = run(args.suite, args.out, args.config, args.seed,
                 lambda text: progress.say(f"  {text}"))
    s = report["summary"]
    print(f"security ({args.suite}): {s['verdict']}: {s['passed']}/{s['checks']} checks passed, "
          f"{s['controls_caught']}/{s['controls']} controls caught, {report['seconds']:.0f} s -> "
          f"{os.path.join(args.out, 'report.md')}")
    return 0 if s["verdict"] == "ok" else 1


EXPERIMENTS = {  # command -> (module in sims, what it writes)
    "compare": ("compare", "compare.json, compare.csv, rmse.png, rmse.pdf"),
    "table7": ("fedauc_table7", "table7.md, table7.csv, table7.json"),
    "ustat-experiment": ("ustat_experiments", "mse.json, mse.csv, mse.png, mse.pdf"),
}


def _experiment(name: str):
    import importlib

    return importlib.import_module(f".sims.{EXPERIMENTS[name][0]}", __package__)


def cmd_experiment(args) -> int:
    """compare, table7, ustat-experiment: parameters from --config and flags, results into ``out``."""
    from .experiment_config import resolve

    module = _experiment(args.command)
    cfg = resolve(module.PARAMS, args.config, vars(args))
    if os.path.exists(cfg["out"]) and not os.path.isdir(cfg["out"]):
        raise InputError(f"out {cfg['out']} is a file; name a directory for the results")
    result = module.run(cfg, dict(cfg, config=args.config))
    if "markdown" in result:
        print(result["markdown"])
    print(f"{args.command}: wrote {EXPERIMENTS[args.command][1]} and config.yaml to {cfg['out']} "
          f"({result['seconds']:.0f} s, seed {result['provenance']['seed']})")
    return 0


def cmd_generate(args) -> int:
    _check_out(args.out)
    evalset = synthetic_evalset(m=args.m, positives=args.positives, auc=args.auc, clients=args.clients,
                                scheme=args.partition, seed=args.seed, decimals=args.decimals,
                                dtype=args.score_dtype)
    write_atomically(args.out, lambda tmp: write_evalset(tmp, evalset))
    print(f"wrote {evalset.m} rows ({evalset.positives} positive, {len(evalset.clients())} clients) to {args.out}")
    return 0


MAX_SECONDS = 1e6  # about 11.6 days: any timeout or deadline past it is a typo (1e300 overflowed the sockets)


def _number(kind, lo=None, hi=None, lo_open=False, hi_open=False, what="a number"):
    """An argparse type: ``kind`` (int or float), finite, in the stated range; the message names the range."""
    low = "" if lo is None else f"{'>' if lo_open else '>='} {lo:g}"
    high = "" if hi is None else f"{'<' if hi_open else '<='} {hi:g}"
    rule = " and ".join(r for r in (low, high) if r)

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not math.isfinite(value) or (lo is not None and (value <= lo if lo_open else value < lo)) or (
                hi is not None and (value >= hi if hi_open else value > hi)):
            raise argparse.ArgumentTypeError(f"{text!r}: must be {what}, finite{', ' + rule if rule else ''}")
        return value

    parse.__name__ = what  # argparse names the type in its messages
    return parse


_seconds = _number(float, 0, MAX_SECONDS, lo_open=True, what="a number of seconds")
_epsilon = _number(float, 0, lo_open=True, what="a privacy budget epsilon")
_share = _number(float, 0, 1, lo_open=True, hi_open=True, what="a share strictly between 0 and 1")
_rows = _number(int, 1, 10**10, what="a count of rows")
_count = _number(int, 1, 10**9, what="a count")
_seed = _number(int, 0, 2**63 - 1, what="a non-negative integer seed")
_port = _number(int, 1, 65535 - 2, what="a TCP port (P0's; P1 and the dealer take the next two)")
_decimals = _number(int, 0, 17, what="a number of decimals")
_auc_decimals = _number(int, 1, MAX_DECIMALS, what="a number of decimals")


def _decimals_option(p) -> None:
    p.add_argument("--auc-decimals", type=_auc_decimals, default=None, metavar="K",
                   help="mpc-exact: open the AUC rounded to K decimals inside the MPC instead of to 52 bits, which "
                        "pins P*N and so the class counts (docs/protocols/mpc-exact.md, 'What the AUC reveals')")


def _mpc_options(p) -> None:
    p.add_argument("--parties-host", default="127.0.0.1",
                   help="local run: the address the spawned roles listen on (default loopback)")
    p.add_argument("--port", type=_port, default=None,
                   help="local run: P0 listens on PORT, P1 on PORT+1, the dealer on PORT+2 (default: free ports)")
    p.add_argument("--deployment", help="send the job to the running roles of this deployment.yaml "
                                        "instead of spawning local ones")
    p.add_argument("--key", help="with --deployment: the coordinator's key file (default: coordinator.key "
                                 "beside the deployment file)")
    p.add_argument("--timeout", type=_seconds, default=20.0,
                   help="seconds of silence from a role before it counts as lost and the run stops with an error")
    p.add_argument("--method", choices=("radix", "bitonic"), default="radix",
                   help="oblivious ranking: radix sort (fast) or the bitonic reference network")


class _HelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default, unless the text already names it or there is none."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.option_strings and "default" not in text and action.default not in (None, False,
                                                                                       argparse.SUPPRESS):
            text += " (default: %(default)s)"
        return text


def _subparsers(command: argparse.ArgumentParser):
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield child
                yield from _subparsers(child)


def parser(experiments=tuple(EXPERIMENTS)) -> argparse.ArgumentParser:
    """The command line.  experiments: the experiment commands whose options are built (each imports its
    sims module, with scipy, matplotlib or dp-accounting: a run of another command skips them)."""
    top = argparse.ArgumentParser(prog="mpc-auc", description=__doc__.splitlines()[0],
                                  formatter_class=_HelpFormatter)
    top.add_argument("--version", action="version", version=f"mpc-auc {__version__}",
                     help="print the version and exit")
    talk = top.add_mutually_exclusive_group()
    talk.add_argument("--quiet", "-q", action="store_true", help="print errors and the result line only")
    talk.add_argument("--verbose", "-v", action="store_true",
                      help="also print every role's progress message and every experiment cell")
    sub = top.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="private AUC of the built-in synthetic set, beside the clear AUC")
    demo.add_argument("--m", type=_rows, default=3000, help="rows of the synthetic set")
    demo.add_argument("--clients", type=_count, default=10, help="clients the rows are spread over")
    demo.add_argument("--seed", type=_seed, default=1, help="seed of the synthetic data (not secret)")
    _mpc_options(demo)
    demo.set_defaults(func=cmd_demo)

    run = sub.add_parser("run", help="AUC of a CSV file client,score,label")
    run.add_argument("--input", required=True,
                     help="client,score,label rows: CSV or TSV (optionally .gz) or Parquet (.parquet, .pq)")
    _table_options(run)
    run.add_argument("--protocol", choices=PROTOCOLS, default="mpc-exact",
                     help="mpc-exact: the exact AUC is opened; mpc-central: one noisy release (needs --epsilon); "
                          "clear: computed here, no privacy")
    run.add_argument("--out", required=True, help="result JSON (written only on success)")
    run.add_argument("--score-range", nargs=2, type=float, default=(0.0, 1.0), metavar=("LO", "HI"),
                     help="the public range every score lies in (its width sets the key encoding)")
    run.add_argument("--score-dtype", choices=("float64", "float32"), default="float64",
                     help="the scores' declared precision (public)")
    run.add_argument("--clients", help="comma-separated ids of all clients; each must have rows")
    run.add_argument("--ranks-dir", help="also deliver each client its rows' global ranks: one file per "
                                         "client in this new directory (standing in for the clients)")
    run.add_argument("--epsilon", type=_epsilon, default=None, help="mpc-central: the privacy budget (required)")
    run.add_argument("--alpha", type=_share, default=0.5, help="mpc-central: share of epsilon for the rank statistic")
    run.add_argument("--budget", metavar="EPS[,DELTA]",
                     help="mpc-central: the evaluation set's total privacy budget, enforced by the parties' ledgers "
                          "(fixed by the first job that names one; DELTA defaults to 1e-9)")
    run.add_argument("--ledger", metavar="DIR", help="local run: the parties' ledger directory (default "
                                                     "$XDG_STATE_HOME/mpc-auc/ledger or ~/.local/state/mpc-auc/ledger)")
    run.add_argument("--dataset-id", help="mpc-central: the evaluation set's id in the ledgers (default: a SHA-256 "
                                          "of every client's rows)")
    run.add_argument("--neighbours", choices=("label", "record"), default="label",
                     help="mpc-central: label DP (one label changes) or record DP (one row changes)")
    _decimals_option(run)
    _mpc_options(run)
    run.set_defaults(func=cmd_run)

    ustat = sub.add_parser("ustat", help="a U-statistic by ustat-2pc: sampled pairs, 2PC kernels, in-circuit noise")
    ustat.add_argument("--kernel", choices=KERNELS, required=True,
                       help="auc (classes public), auc-private (labels private too), gini or kendall")
    ustat.add_argument("--input", required=True, help="auc, auc-private: client,score,label; gini: user,value; "
                                                      "kendall: user,a,b (one row per user)")
    ustat.add_argument("--out", required=True, help="result JSON (written only on success)")
    _table_options(ustat)
    ustat.add_argument("--epsilon", type=_epsilon, default=None, help="the privacy budget per user (required)")
    ustat.add_argument("--k", type=_count, default=1, help="permutations (pairs per user)")
    ustat.add_argument("--seed", type=_seed, default=None, help="pair sampling seed (default: OS CSPRNG)")
    ustat.add_argument("--timeout", type=_seconds, default=60.0, help="seconds before a silent party counts as lost")
    ustat.set_defaults(func=cmd_ustat)

    dep = sub.add_parser("deploy", help="set up a deployment: roles on their own hosts")
    dep_sub = dep.add_subparsers(dest="deploy_command", required=True)
    init = dep_sub.add_parser("init", help="write DIR/deployment.yaml and one private key file per role")
    init.add_argument("--dir", required=True, help="new or empty directory for the deployment")
    init.add_argument("--p0", required=True, metavar="HOST:PORT", help="the one address P0 listens on")
    init.add_argument("--p1", required=True, metavar="HOST:PORT", help="the one address P1 listens on")
    init.add_argument("--dealer", required=True, metavar="HOST:PORT", help="the one address the dealer listens on")
    init.set_defaults(func=cmd_deploy_init)

    party = sub.add_parser("party", help="run one role (P0, P1 or the dealer) of a deployment until stopped")
    party.add_argument("--role", required=True, choices=SERVING, help="which role this process plays")
    party.add_argument("--deployment", required=True, help="the deployment.yaml (addresses and pinned keys)")
    party.add_argument("--key", required=True, help="this role's private key file (mode 0600)")
    party.add_argument("--ledger", metavar="DIR", help="this party's privacy ledger directory (default "
                                                       "$XDG_STATE_HOME/mpc-auc/ledger or ~/.local/state/mpc-auc/ledger)")
    party.add_argument("--budget", metavar="EPS[,DELTA]",
                       help="this party's own privacy budget per evaluation set: it refuses any DP release past it, "
                            "whatever budget the organiser's job names (default delta 1e-9; default: none)")
    party.add_argument("--timeout", type=_seconds, default=20.0,
                       help="seconds of silence from a peer or the coordinator before a session is dropped")
    party.set_defaults(func=cmd_party)

    evaluation = sub.add_parser("evaluation", help="evaluations whose clients submit from their own machines")
    ev_sub = evaluation.add_subparsers(dest="evaluation_command", required=True)
    opened = ev_sub.add_parser("open", help="declare an evaluation on a deployment's parties, wait for its "
                                            "clients' submissions, compute, write the result")
    opened.add_argument("--deployment", required=True, help="the deployment.yaml of the running roles")
    opened.add_argument("--key", help="the coordinator's key file (default: coordinator.key beside the deployment)")
    opened.add_argument("--id", required=True, help="the evaluation's id (clients name it in client submit)")
    opened.add_argument("--roster", required=True, nargs="+", metavar="FILE",
                        help="roster file(s) naming the clients and their certificates (client keygen writes one "
                             "per client); their rows enter in this order")
    opened.add_argument("--protocol", choices=("mpc-exact", "mpc-central"), default="mpc-exact",
                        help="what the parties reveal (default: %(default)s)")
    opened.add_argument("--out", required=True, help="result JSON (written only on success)")
    opened.add_argument("--deadline", type=_seconds, default=600.0,
                        help="seconds the parties wait for every rostered client (default: %(default)s)")
    opened.add_argument("--allow-missing", action="store_true",
                        help="at the deadline, compute on the clients present (default: refuse, naming who is "
                             "missing)")
    _decimals_option(opened)
    opened.add_argument("--max-rows", type=_rows, default=DEFAULT_MAX_ROWS,
                        help="the most rows one client may submit: each party refuses a larger message before "
                             "keeping it, which bounds its memory per client (default: %(default)s)")
    opened.add_argument("--ranks", action="store_true", help="mpc-exact: send each client its rows' global ranks")
    opened.add_argument("--score-range", nargs=2, type=float, default=(0.0, 1.0), metavar=("LO", "HI"),
                        help="the declared score range every client's scores must lie in (default: 0 1)")
    opened.add_argument("--score-dtype", choices=("float64", "float32"), default="float64",
                        help="the declared score type (default: %(default)s)")
    opened.add_argument("--epsilon", type=_epsilon, default=None, help="mpc-central: the privacy budget (required)")
    opened.add_argument("--alpha", type=_share, default=0.5,
                        help="mpc-central: share of epsilon for the rank statistic (default: %(default)s)")
    opened.add_argument("--neighbours", choices=("label", "record"), default="label",
                        help="mpc-central: label DP or record DP (default: %(default)s)")
    opened.add_argument("--budget", metavar="EPS[,DELTA]",
                        help="mpc-central: the evaluation set's total privacy budget, enforced by the parties")
    opened.add_argument("--dataset-id", help="mpc-central: the ledger id of the evaluation set (default: the "
                                             "roster's SHA-256)")
    opened.add_argument("--method", choices=("radix", "bitonic"), default="radix",
                        help="oblivious ranking (default: %(default)s)")
    opened.add_argument("--timeout", type=_seconds, default=20.0,
                        help="seconds of silence from a role before the run stops with an error (default: "
                             "%(default)s)")
    opened.set_defaults(func=cmd_evaluation_open)

    client = sub.add_parser("client", help="a data owner's commands: make a key, submit rows")
    client_sub = client.add_subparsers(dest="client_command", required=True)
    keygen = client_sub.add_parser("keygen", help="make a client key file and its one-entry roster file")
    keygen.add_argument("--name", required=True, help="the client's name on rosters")
    keygen.add_argument("--key", help="private key file to write (default: NAME.key)")
    keygen.add_argument("--roster", help="public roster file to write (default: NAME.roster.yaml)")
    keygen.set_defaults(func=cmd_client_keygen)
    submit_ = client_sub.add_parser("submit", help="submit this client's rows to an open evaluation")
    submit_.add_argument("--deployment", required=True, help="the deployment.yaml (the parties' pinned keys)")
    submit_.add_argument("--evaluation", required=True, help="the evaluation's id")
    submit_.add_argument("--client", required=True, help="this client's name on the roster")
    submit_.add_argument("--key", required=True, help="this client's key file (client keygen)")
    submit_.add_argument("--input", required=True, help="client,score,label with this client's rows only (CSV, "
                                                        "TSV, .gz or Parquet)")
    _table_options(submit_)
    submit_.add_argument("--ranks-out", help="wait for this client's rows' global ranks and write them here")
    submit_.add_argument("--max-epsilon", type=_epsilon, default=None, metavar="EPS",
                         help="submit only to a DP release of at most this epsilon (the parties' ticket states it); "
                              "an exact release counts as unbounded and is refused too (default: any release)")
    submit_.add_argument("--timeout", type=_seconds, default=20.0,
                         help="seconds of silence from a party before it counts as lost (default: %(default)s)")
    submit_.add_argument("--connect-timeout", type=_seconds, default=60.0,
                         help="seconds to keep trying while the evaluation is not open yet (default: %(default)s)")
    submit_.set_defaults(func=cmd_client_submit)

    security = sub.add_parser("security", help="security evaluation: DP audits, attacks, collusion and controls "
                                               "-> report.json, report.md, CSV tables, PNG+PDF plots")
    security.add_argument("--suite", choices=("quick", "full"), default="quick",
                          help="quick (minutes) or full (for papers) (default: %(default)s)")
    security.add_argument("--config", help="YAML file overriding suite parameters (epsilon, audit_draws, "
                                           "mpc_audit_draws, view_runs, ustat_view_pairs, bitonic_view_m, collusion_m, "
                                           "inference_epsilons, inference_m, inference_draws, top_k_m, top_k, "
                                           "seed_bits, seed)")
    security.add_argument("--out", required=True, help="directory for the report (created)")
    security.add_argument("--seed", type=_seed, default=None,
                          help="seed of the experiments' simulation randomness (default: drawn and recorded)")
    security.set_defaults(func=cmd_security)

    for name, help_ in (("compare", "the plain-DP mechanisms side by side over an epsilon grid (RMSE, bias, "
                                    "accounting, what the server received)"),
                        ("table7", "reproduce fedauc Table 7 (std of the AUC over noise draws) beside the paper's"),
                        ("ustat-experiment", "MSE against epsilon of ustat-2pc and the U-statistic baselines")):
        if name not in experiments:
            sub.add_parser(name, help=help_)
            continue
        experiment = sub.add_parser(name, help=help_, description=_experiment(name).__doc__.split("\n\n")[0])
        add_options(experiment, _experiment(name).PARAMS)
        experiment.set_defaults(func=cmd_experiment)

    gen = sub.add_parser("generate", help="write a Criteo-shaped synthetic CSV")
    gen.add_argument("--out", required=True, help="the CSV file to write (client,score,label)")
    gen.add_argument("--m", type=_rows, default=3000, help="rows")
    gen.add_argument("--positives", type=_rows, default=None, help="positive rows (default: about a quarter, "
                                                                 "Criteo's rate)")
    gen.add_argument("--auc", type=_share, default=0.77, help="the binormal scores' population AUC")
    gen.add_argument("--clients", type=_count, default=10, help="clients the rows are spread over")
    gen.add_argument("--partition", choices=("iid", "non-iid"), default="iid",
                     help="iid: a uniformly random client per row; non-iid: contiguous blocks of the score order")
    gen.add_argument("--decimals", type=_decimals, default=None,
                     help="round scores to this many decimals (creates ties)")
    gen.add_argument("--score-dtype", choices=("float64", "float32"), default="float64",
                     help="float32: scores rounded to float32, as a float32 model outputs them (then run with "
                          "--score-dtype float32)")
    gen.add_argument("--seed", type=_seed, default=0, help="seed of the synthetic data (not secret)")
    gen.set_defaults(func=cmd_generate)
    for command in _subparsers(top):
        command.formatter_class = _HelpFormatter
    return top


def main(argv=None) -> int:
    words = sys.argv[1:] if argv is None else argv
    args = parser([name for name in EXPERIMENTS if name in words]).parse_args(argv)
    progress.set_level(progress.QUIET if args.quiet else progress.VERBOSE if args.verbose else progress.NORMAL)
    try:
        return args.func(args)
    except (InputError, DeploymentError, ValueError) as err:
        print(f"mpc-auc: error: {err}", file=sys.stderr)
        return 2
    except PartyFailure as err:
        print(f"mpc-auc: MPC run failed: {err}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
