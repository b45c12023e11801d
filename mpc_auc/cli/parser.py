"""The ``mpc-auc`` command line: every command's options, declared once per group and shared.

``run`` and ``evaluation open`` take the same protocol options (:func:`_protocol_options`), with one help
text each; every numeric option is read by :func:`typed`, which applies the constraint of
protocols.validation, so a bad value is refused in the same words as by the Python API.  The experiment
commands (compare, table7, ustat-experiment, security) are not known here: the sims layer declares them
as ``mpc_auc.commands`` entry points in pyproject.toml, and their options are built only when one runs.
"""
import argparse
import os
import sys
from importlib.metadata import entry_points

from .. import progress
from ..circuits.workers import ENV as THREADS_ENV, available_cores
from ..csv_io import LIMIT_OPTIONS, ReadLimits
from ..context import DTYPES
from ..planner import PROTOCOLS
from ..protocols.dp.central_law import NEIGHBOURS
from ..protocols.errors import DeploymentError, DeviationDetected, InputError, PartyFailure
from ..protocols.inputs.submission import DEFAULT_MAX_ROWS, DEFAULT_MAX_TOTAL_ROWS
from ..protocols.metric_catalogue import DEFAULT_POINTS, METRICS, metric_names
from ..protocols.mpc.ranking_job import METHODS
from ..protocols.release_spec import SECURITY
from ..protocols.runtime.identity import SERVING
from ..protocols.ustat.two_party import KERNELS
from ..protocols.validation import PARAMETERS, checked
from ..version import __version__
from . import commands

DEVIATION_EXIT = 4  # the exit status of a job stopped by a failed check under security with abort

DESCRIPTION = "Private AUC of scores and labels spread over many parties (CrypTen MPC and DP baselines)."
LEDGER_DEFAULT = "$XDG_STATE_HOME/mpc-auc/ledger or ~/.local/state/mpc-auc/ledger"


def typed(name: str, rule: str = None):
    """An argparse type for a number whose constraint is protocols.validation's ``rule`` (default: ``name``)."""
    interval = PARAMETERS[rule or name]

    def parse(text: str):
        try:
            return checked(name, interval.kind(text), interval)
        except ValueError as err:  # InputError is a ValueError; so is int("x")
            message = str(err) if isinstance(err, InputError) else f"{text!r} is not {interval.what}"
            raise argparse.ArgumentTypeError(message) from None

    parse.__name__ = interval.what  # argparse names the type in its messages
    return parse


def _table_options(command) -> None:
    command.add_argument("--sep", default=None, help="the field separator of a text input (default: sniffed from the "
                                                     "header: the one of , ; tab | that splits it into the columns "
                                                     "asked for)")
    command.add_argument("--positive-label", default=None, metavar="VALUE",
                         help="the label value of the positive class when labels are not 0/1 (e.g. True, +1, yes); "
                              "the label column must then hold exactly two values (default: labels are 0/1)")
    for field, (option, counts) in LIMIT_OPTIONS.items():  # csv_io.ReadLimits: a file past one is refused unread
        default = getattr(ReadLimits(), field)
        command.add_argument(option, dest=field, type=int, default=default, metavar="N",
                             help=f"refuse, before reading it, a file of more than N {counts} (default: {default:,})")


def _column_options(command, several: bool, client: str = "client") -> None:
    """Which columns of a prediction file hold what (csv_io.Columns); other columns are ignored."""
    if client:
        command.add_argument("--client-col", default=client, metavar="NAME", help="the column naming each row's client")
    else:
        command.add_argument("--client-col", default=None, metavar="NAME",
                             help="a column naming each row's client: a row of another client is refused (default: "
                                  "every row is this client's)")
    command.add_argument("--score-col", type=_names if several else _name, default="score",
                         metavar="NAMES" if several else "NAME",
                         help="the score column" + ("(s); several (e.g. a,b: models scored on the same rows) are each "
                                                    "ranked, and with --metrics ci DeLong's test compares the first "
                                                    "with each other" if several else ""))
    command.add_argument("--label-col", default="label", metavar="NAME", help="the label column")
    command.add_argument("--id-col", default=None, metavar="NAME",
                         help="a column of row ids carried into the rank files (default: rows keyed by their 1-based "
                              "position among the client's rows)")


def _protocol_options(command, protocols) -> None:
    """What a job releases and how: the options ``run`` and ``evaluation open`` share (mpc_auc.planner)."""
    command.add_argument("--protocol", choices=protocols, default="mpc-exact",
                         help="mpc-exact: the exact AUC is opened; mpc-central: one noisy release (needs --epsilon)"
                              + ("; clear: computed here, no privacy" if "clear" in protocols else ""))
    command.add_argument("--score-range", nargs=2, type=float, default=(0.0, 1.0), metavar=("LO", "HI"),
                         help="the public range every score lies in (its width sets the key encoding)")
    command.add_argument("--score-dtype", choices=DTYPES, default="float64",
                         help="the scores' declared precision (public)")
    command.add_argument("--epsilon", type=typed("epsilon"), default=None,
                         help="mpc-central: the privacy budget of the release (required)")
    command.add_argument("--alpha", type=typed("alpha"), default=0.5,
                         help="mpc-central: share of epsilon for the rank statistic")
    command.add_argument("--neighbours", choices=NEIGHBOURS, default="label",
                         help="mpc-central: label DP (one label changes) or record DP (one row changes)")
    command.add_argument("--budget", metavar="EPS[,DELTA]",
                         help="mpc-central: the evaluation set's total privacy budget, enforced by the parties' "
                              "ledgers (fixed by the first job that names one; DELTA defaults to 1e-9)")
    command.add_argument("--dataset-id", help="mpc-central: an id of the evaluation set in the parties' ledgers, "
                                              "charged besides the set's own (its rows, or its roster's keys): "
                                              "it narrows the budget, never resets it")
    command.add_argument("--auc-decimals", type=typed("auc_decimals"), default=None, metavar="K",
                         help="mpc-exact: open the AUC rounded to K decimals inside the MPC instead of to 52 bits, "
                              "which pins P*N and so the class counts (docs/protocols/mpc-exact.md, 'What the AUC "
                              "reveals')")
    command.add_argument("--metrics", type=_metrics, default="auc", metavar="LIST",
                         help=f"mpc-exact and clear: the metrics to open, comma-separated, from one sort: "
                              f"{', '.join(METRICS)} or all (auc always; what each reveals: "
                              "docs/protocols/mpc-exact.md)")
    command.add_argument("--max-fpr", type=typed("max_fpr"), default=None, metavar="F",
                         help="mpc-exact and clear: also the partial AUC up to FPR F (0 < F < 1; McClish's "
                              "standardisation, as scikit-learn's max_fpr), computed inside the MPC")
    command.add_argument("--points", type=typed("points"), default=DEFAULT_POINTS,
                         help="with roc or pr: the curves' points, at the top 1/POINTS, 2/POINTS, ... of the ranking")
    command.add_argument("--method", choices=METHODS, default="radix",
                         help="oblivious ranking: radix sort (fast) or the bitonic reference network")
    command.add_argument("--security", choices=SECURITY, default="semi-honest",
                         help="mpc-exact and mpc-central: 'malicious' is security with abort against one deviating "
                              "compute party (MACs on every shared value, every opening checked; mpc-exact opens the "
                              "AUC, the count of positives and every metric (the partial AUC too), mpc-central its DP "
                              "release with the noise drawn on "
                              f"authenticated shares; a failed check exits {DEVIATION_EXIT}: "
                              "docs/protocols/malicious-security.md)")
    _timeout_option(command, 20.0, "seconds of silence from a role before it counts as lost and the run stops with an "
                              "error")


def _name(value: str) -> tuple:
    """--score-col of a command that sends one score column."""
    if "," in value or not value.strip():
        raise argparse.ArgumentTypeError(f"one column name, not {value!r}")
    return (value.strip(),)


def _names(value: str) -> tuple:
    """--score-col: one or more comma-separated column names."""
    names = tuple(v.strip() for v in value.split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(f"column names must not be empty: {value!r}")
    checked("columns", len(names))
    return names


def _metrics(value: str) -> tuple:
    """--metrics: the catalogue's names, or argparse's usage error naming the unknown one."""
    try:
        return metric_names(value)
    except InputError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _group(sub, name: str, text: str):
    """A command with sub-commands of its own (``deploy init``, ``evaluation open``, ``client keygen``)."""
    return sub.add_parser(name, help=text).add_subparsers(dest=f"{name}_command", required=True)


def _timeout_option(command, default: float, text: str) -> None:
    """``--timeout``: how long a silent peer is waited for (protocols.validation's rule for seconds)."""
    command.add_argument("--timeout", type=typed("timeout"), default=default, help=text)


def _local_roles_options(command) -> None:
    """Where the roles run: spawned here, or a deployment's."""
    command.add_argument("--parties-host", default="127.0.0.1",
                         help="local run: the address the spawned roles listen on (default loopback)")
    command.add_argument("--port", type=typed("port"), default=None,
                         help="local run: P0 listens on PORT, P1 on PORT+1, the dealer on PORT+2 (default: free "
                              "ports)")
    command.add_argument("--deployment", help="send the job to the running roles of this deployment.yaml "
                                              "instead of spawning local ones")
    command.add_argument("--key", help="with --deployment: the coordinator's key file (default: coordinator.key "
                                       "beside the deployment file)")


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


def experiments() -> dict:
    """The experiment commands the installed sims layer declares (entry points ``mpc_auc.commands``)."""
    return {point.name: point.load() for point in entry_points(group="mpc_auc.commands")}


def _demo_command(sub) -> None:
    """The options of ``demo``."""
    demo = sub.add_parser("demo", help="private AUC of the built-in synthetic set, beside the clear AUC")
    demo.add_argument("--m", type=typed("m", "rows"), default=3000, help="rows of the synthetic set")
    demo.add_argument("--clients", type=typed("clients", "count"), default=10,
                      help="clients the rows are spread over")
    demo.add_argument("--seed", type=typed("seed"), default=1, help="seed of the synthetic data (not secret)")
    _local_roles_options(demo)
    _timeout_option(demo, 20.0, "seconds of silence from a role before it counts as lost and the run stops with an "
                                "error")
    demo.add_argument("--method", choices=METHODS, default="radix",
                      help="oblivious ranking: radix sort (fast) or the bitonic reference network")
    demo.set_defaults(func=commands.cmd_demo)


def _run_command(sub) -> None:
    """The options of ``run``."""
    run = sub.add_parser("run", help="AUC (and metrics) of a prediction file: a client, score(s) and label per row")
    run.add_argument("--input", required=True,
                     help="the prediction file: CSV-like text (, ; tab or | separated; gzip or not) or Parquet, "
                          "recognised by content; other columns than those named are ignored")
    _table_options(run)
    _column_options(run, several=True)
    run.add_argument("--weight-col", default=None, metavar="NAME",
                     help="a column of non-negative sample weights: the weighted AUC, as scikit-learn's "
                          "sample_weight (mpc-exact and clear, the AUC alone; docs/protocols/mpc-exact.md, "
                          "'Weighted AUC')")
    run.add_argument("--out", required=True, help="result JSON (written only on success)")
    run.add_argument("--clients", help="comma-separated ids of all clients; each must have rows")
    run.add_argument("--ranks-dir", help="also deliver each client its rows' global ranks: one file per "
                                         "client in this new directory (standing in for the clients)")
    run.add_argument("--ledger", metavar="DIR", help=f"local run: the parties' ledger directory (default "
                                                     f"{LEDGER_DEFAULT})")
    _protocol_options(run, PROTOCOLS)
    _local_roles_options(run)
    run.set_defaults(func=commands.cmd_run)


def _ustat_command(sub) -> None:
    """The options of ``ustat-2pc``."""
    ustat = sub.add_parser("ustat", help="a U-statistic by ustat-2pc: sampled pairs, 2PC kernels, in-circuit noise")
    ustat.add_argument("--kernel", choices=KERNELS, required=True,
                       help="auc (classes public), auc-private (labels private too), gini or kendall")
    ustat.add_argument("--input", required=True, help="auc, auc-private: client,score,label; gini: user,value; "
                                                      "kendall: user,a,b (one row per user)")
    ustat.add_argument("--out", required=True, help="result JSON (written only on success)")
    _table_options(ustat)
    ustat.add_argument("--epsilon", type=typed("epsilon"), default=None,
                       help="the privacy budget per user (required)")
    ustat.add_argument("--k", type=typed("k"), default=1, help="permutations (pairs per user)")
    ustat.add_argument("--seed", type=typed("seed"), default=None,
                       help="pair sampling seed (default: OS CSPRNG)")
    ustat.add_argument("--security", choices=SECURITY, default="semi-honest",
                       help="ustat-2pc runs semi-honest only: 'malicious' is refused until its kernels are built on "
                            "authenticated shares (docs/protocols/malicious-security.md)")
    _timeout_option(ustat, 60.0, "seconds before a silent party counts as lost")
    ustat.set_defaults(func=commands.cmd_ustat)


def _deploy_command(sub) -> None:
    """The options of ``deploy init``."""
    deploy = _group(sub, "deploy", "set up a deployment: roles on their own hosts")
    init = deploy.add_parser("init", help="write DIR/deployment.yaml and one private key file per role")
    init.add_argument("--dir", required=True, help="new or empty directory for the deployment")
    for option, role in (("--p0", "P0"), ("--p1", "P1"), ("--dealer", "the dealer")):
        init.add_argument(option, required=True, metavar="HOST:PORT", help=f"the one address {role} listens on")
    init.set_defaults(func=commands.cmd_deploy_init)


def _party_command(sub) -> None:
    """The options of ``party``."""
    party = sub.add_parser("party", help="run one role (P0, P1 or the dealer) of a deployment until stopped")
    party.add_argument("--role", required=True, choices=SERVING, help="which role this process plays")
    party.add_argument("--deployment", required=True, help="the deployment.yaml (addresses and pinned keys)")
    party.add_argument("--key", required=True, help="this role's private key file (mode 0600)")
    party.add_argument("--ledger", metavar="DIR", help=f"this party's privacy ledger directory (default "
                                                       f"{LEDGER_DEFAULT})")
    party.add_argument("--budget", metavar="EPS[,DELTA]",
                       help="this party's own privacy budget per evaluation set: it refuses any DP release past it, "
                            "whatever budget the organiser's job names (default delta 1e-9; default: none)")
    party.add_argument("--listen", metavar="HOST:PORT",
                       help="the local address to listen on when the deployment's address for this role is not "
                            "this host's own (behind NAT or a relay that forwards it here); peers still dial the "
                            "deployment's address and check the pinned key (default: the deployment's address)")
    _timeout_option(party, 20.0, "seconds of silence from a peer or the coordinator before a session is dropped")
    party.set_defaults(func=commands.cmd_party)


def _evaluation_command(sub) -> None:
    """The options of ``evaluation open``."""
    evaluation = _group(sub, "evaluation", "evaluations whose clients submit from their own machines")
    opened = evaluation.add_parser("open", help="declare an evaluation on a deployment's parties, wait for its "
                                                "clients' submissions, compute, write the result")
    opened.add_argument("--deployment", required=True, help="the deployment.yaml of the running roles")
    opened.add_argument("--key", help="the coordinator's key file (default: coordinator.key beside the deployment)")
    opened.add_argument("--id", required=True, help="the evaluation's id (clients name it in client submit)")
    opened.add_argument("--roster", required=True, nargs="+", metavar="FILE",
                        help="roster file(s) naming the clients and their certificates (client keygen writes one "
                             "per client); their rows enter in this order")
    opened.add_argument("--out", required=True, help="result JSON (written only on success)")
    opened.add_argument("--deadline", type=typed("deadline"), default=600.0,
                        help="seconds the parties wait for every rostered client")
    opened.add_argument("--allow-missing", action="store_true",
                        help="at the deadline, compute on the clients present (default: refuse, naming who is "
                             "missing)")
    opened.add_argument("--max-rows", type=typed("max_rows", "rows"), default=DEFAULT_MAX_ROWS,
                        help="the most rows one client may submit, counted: the client checks its rows against "
                             "it, each party refuses a larger stated count and caps the submission's message at the "
                             "stated rows' size before keeping it (which bounds its memory per client)")
    opened.add_argument("--max-total-rows", type=typed("max_total_rows", "rows"), default=DEFAULT_MAX_TOTAL_ROWS,
                        help="the most rows all clients may submit together: each party counts every message "
                             "against it before keeping it (first come), which bounds its memory for the "
                             f"evaluation (default {DEFAULT_MAX_TOTAL_ROWS:,})")
    opened.add_argument("--exclude-invalid", action="store_true",
                        help="leave out a client whose rows fail the in-MPC domain check (named in every result) "
                             "and release over the others (default: refuse the whole evaluation)")
    opened.add_argument("--ranks", action="store_true", help="mpc-exact: send each client its rows' global ranks")
    opened.add_argument("--share-result", action="store_true",
                        help="the parties also send the released result (the AUC and every metric, or the DP "
                             "release) to each client that took part, shown in its receipt (default: only the "
                             "organiser gets it)")
    _protocol_options(opened, PROTOCOLS[:2])
    opened.set_defaults(func=commands.cmd_evaluation_open)


def _client_command(sub) -> None:
    """The options of ``client keygen and submit``."""
    client_sub = _group(sub, "client", "a data owner's commands: make a key, submit rows")
    keygen = client_sub.add_parser("keygen", help="make a client key file and its one-entry roster file")
    keygen.add_argument("--name", required=True, help="the client's name on rosters")
    keygen.add_argument("--key", help="private key file to write (default: NAME.key)")
    keygen.add_argument("--roster", help="public roster file to write (default: NAME.roster.yaml)")
    keygen.set_defaults(func=commands.cmd_client_keygen)
    submit_ = client_sub.add_parser("submit", help="submit this client's rows to an open evaluation")
    submit_.add_argument("--deployment", required=True, help="the deployment.yaml (the parties' pinned keys)")
    submit_.add_argument("--evaluation", required=True, help="the evaluation's id")
    submit_.add_argument("--client", required=True, help="this client's name on the roster")
    submit_.add_argument("--key", required=True, help="this client's key file (client keygen)")
    submit_.add_argument("--input", required=True, help="this client's prediction file: a score and a label per row "
                                                        "(CSV-like text, gzip or not, or Parquet)")
    _table_options(submit_)
    _column_options(submit_, several=False, client=None)
    submit_.add_argument("--ranks-out", help="wait for this client's rows' global ranks and write them here")
    submit_.add_argument("--max-epsilon", type=typed("max_epsilon", "epsilon"), default=None, metavar="EPS",
                         help="submit only to a DP release of at most this epsilon (the parties' ticket states it); "
                              "an exact release is refused too unless --max-exact is given (default: any release)")
    submit_.add_argument("--budget", metavar="EPS[,DELTA]",
                         help="this client's own privacy budget over every release its own ledger records (DELTA "
                              "default 1e-9): a DP release past it is refused before anything is sent, whatever the "
                              "parties allow (default: none)")
    submit_.add_argument("--ledger", metavar="FILE",
                         help="this client's own ledger file (default: one per key under $XDG_STATE_HOME/mpc-auc/"
                              "client-ledger)")
    submit_.add_argument("--max-exact", type=typed("max_exact"), default=None, metavar="K",
                         help="the most exact (not DP) releases of this client's rows it accepts in all, stated in its "
                              "signed submission and enforced by both parties too; 0: DP releases only (default: 1, "
                              "or 0 with --max-epsilon)")
    submit_.add_argument("--max-decimals", type=typed("max_decimals"), default=None, metavar="D",
                         help="accept an exact release only if every value it opens is rounded to at most D decimals "
                              "(the AUC with --auc-decimals; other exact metrics open 52 bits) (default: any)")
    submit_.add_argument("--require-security", choices=("malicious",), default=None,
                         help="submit only to a job whose ticket (both parties') states security with abort against a "
                              "deviating compute party (evaluation open --security malicious) (default: either)")
    _timeout_option(submit_, 20.0, "seconds of silence from a party before it counts as lost")
    submit_.add_argument("--connect-timeout", type=typed("connect_timeout", "timeout"), default=60.0,
                         help="seconds to keep trying while the evaluation is not open yet")
    submit_.set_defaults(func=commands.cmd_client_submit)


def _experiment_commands(sub, building) -> None:
    """The experiment commands the sims layer declares; the options of those in ``building`` only."""
    for name, experiment in experiments().items():
        command = sub.add_parser(name, help=experiment.help)
        if name in building:
            experiment.add_arguments(command)
            command.set_defaults(func=experiment.run)


def _generate_command(sub) -> None:
    """The options of ``generate``."""
    gen = sub.add_parser("generate", help="write a Criteo-shaped synthetic CSV")
    gen.add_argument("--out", required=True, help="the CSV file to write (client,score,label)")
    gen.add_argument("--m", type=typed("m", "rows"), default=3000, help="rows")
    gen.add_argument("--positives", type=typed("positives", "rows"), default=None,
                     help="positive rows (default: about a quarter, Criteo's rate)")
    gen.add_argument("--auc", type=typed("auc"), default=0.77, help="the binormal scores' population AUC")
    gen.add_argument("--clients", type=typed("clients", "count"), default=10, help="clients the rows are spread over")
    gen.add_argument("--partition", choices=("iid", "non-iid"), default="iid",
                     help="iid: a uniformly random client per row; non-iid: contiguous blocks of the score order")
    gen.add_argument("--decimals", type=typed("decimals"), default=None,
                     help="round scores to this many decimals (creates ties)")
    gen.add_argument("--score-dtype", choices=DTYPES, default="float64",
                     help="float32: scores rounded to float32, as a float32 model outputs them (then run with "
                          "--score-dtype float32)")
    gen.add_argument("--seed", type=typed("seed"), default=0, help="seed of the synthetic data (not secret)")
    gen.set_defaults(func=commands.cmd_generate)


def parser(building=()) -> argparse.ArgumentParser:
    """The command line.  building: the experiment commands whose options are built (each imports its
    sims module, with scipy, matplotlib or dp-accounting: a run of another command skips them)."""
    top = argparse.ArgumentParser(prog="mpc-auc", description=DESCRIPTION, formatter_class=_HelpFormatter)
    top.add_argument("--version", action="version", version=f"mpc-auc {__version__}",
                     help="print the version and exit")
    talk = top.add_mutually_exclusive_group()
    talk.add_argument("--quiet", "-q", action="store_true", help="print errors and the result line only")
    talk.add_argument("--verbose", "-v", action="store_true",
                      help="also print every role's progress message and every experiment cell")
    top.add_argument("--threads", type=typed("threads"), metavar="N",
                     help="worker threads of each role this command runs (party: itself; run, demo and the "
                          "experiments: each of the three roles they start here) for its local work on long "
                          "vectors (default: party: the cores it may use; otherwise those cores shared by the "
                          "three local roles)")
    sub = top.add_subparsers(dest="command", required=True)

    _demo_command(sub)
    _run_command(sub)
    _ustat_command(sub)
    _deploy_command(sub)
    _party_command(sub)
    _evaluation_command(sub)
    _client_command(sub)
    _experiment_commands(sub, building)
    _generate_command(sub)
    for command in _subparsers(top):
        command.formatter_class = _HelpFormatter
    return top


def run(argv=None) -> int:
    """Parse ``argv`` and run its command; the exit status (0 success, 2 bad input, usage or deployment with no
    output written, 3 a party of the MPC run failed, 4 (:data:`DEVIATION_EXIT`) a check under security with abort
    found a deviating compute party, 1 anything else)."""
    words = sys.argv[1:] if argv is None else argv
    args = parser(building=[word for word in words if not word.startswith("-")][:1]).parse_args(argv)
    progress.set_level(progress.QUIET if args.quiet else progress.VERBOSE if args.verbose else progress.NORMAL)
    cores = available_cores()
    os.environ[THREADS_ENV] = str(args.threads or (cores if args.command == "party" else max(1, cores // 3)))
    try:
        return args.func(args)
    except (InputError, DeploymentError, ValueError) as err:
        print(f"mpc-auc: error: {err}", file=sys.stderr)
        return 2
    except DeviationDetected as err:
        print(f"mpc-auc: a compute party deviated, the job stopped and released nothing: {err}", file=sys.stderr)
        return DEVIATION_EXIT
    except PartyFailure as err:
        print(f"mpc-auc: MPC run failed: {err}", file=sys.stderr)
        return 3
