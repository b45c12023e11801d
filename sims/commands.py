"""The experiment commands of ``mpc-auc``: compare, table7, ustat-experiment and security.

The command line (mpc_auc.cli, a lower layer) never imports sims: it finds these objects through the
``mpc_auc.commands`` entry points pyproject.toml declares, adds each as a sub-command with its help, and
builds the options of the one that runs.  This module stays light: an experiment's own module (scipy,
matplotlib, dp-accounting) is imported only when its command is built or run.
"""
import importlib
import os
from dataclasses import dataclass

from .. import progress
from ..cli.parser import typed
from .config import add_options, resolve
from ..protocols.errors import InputError


@dataclass(frozen=True)
class Experiment:
    """A parameter-driven experiment: ``module`` (under sims, e.g. ``papers.dp_comparison``) has PARAMS and
    run(cfg, arguments)."""
    help: str
    module: str
    writes: str

    def _module(self):
        return importlib.import_module(f"{__package__}.{self.module}")  # lazily: heavy, for the command that runs

    def add_arguments(self, parser) -> None:
        module = self._module()
        parser.description = module.__doc__.split("\n\n")[0]
        add_options(parser, module.PARAMS)

    def run(self, args) -> int:
        """Parameters from --config and flags, results into ``out``."""
        module = self._module()
        cfg = resolve(module.PARAMS, args.config, vars(args))
        if os.path.exists(cfg["out"]) and not os.path.isdir(cfg["out"]):
            raise InputError(f"out {cfg['out']} is a file; name a directory for the results")
        result = module.run(cfg, dict(cfg, config=args.config))
        if "markdown" in result:
            print(result["markdown"])
        print(f"{args.command}: wrote {self.writes} and config.yaml to {cfg['out']} "
              f"({result['seconds']:.0f} s, seed {result['provenance']['seed']})")
        return 0


@dataclass(frozen=True)
class SecurityEvaluation:
    """``mpc-auc security``: the DP audits, attacks, collusion experiments and their weakened controls."""
    help: str = ("security evaluation: DP audits, attacks, collusion and controls -> report.json, report.md, "
                 "CSV tables, PNG+PDF plots")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--suite", choices=("quick", "full"), default="quick",
                            help="quick (minutes) or full (for papers)")
        parser.add_argument("--config", help="YAML file overriding suite parameters (epsilon, audit_draws, "
                                             "mpc_audit_draws, view_runs, ustat_view_pairs, bitonic_view_m, "
                                             "collusion_m, inference_epsilons, inference_m, inference_draws, "
                                             "top_k_m, top_k, seed_bits, dealer_trials, seed)")
        parser.add_argument("--out", required=True, help="directory for the report (created)")
        parser.add_argument("--seed", type=typed("seed"), default=None,
                            help="seed of the experiments' simulation randomness (default: drawn and recorded)")

    def run(self, args) -> int:
        from .security.suite import run  # lazily: the whole suite (scipy, matplotlib), only for this command

        if os.path.exists(args.out) and not os.path.isdir(args.out):
            raise InputError(f"--out {args.out} is a file; name a directory for the report")
        report = run(args.suite, args.out, args.config, args.seed, lambda text: progress.say(f"  {text}"))
        s = report["summary"]
        print(f"security ({args.suite}): {s['verdict']}: {s['passed']}/{s['checks']} checks passed, "
              f"{s['controls_caught']}/{s['controls']} controls caught, {report['seconds']:.0f} s -> "
              f"{os.path.join(args.out, 'report.md')}")
        return 0 if s["verdict"] == "ok" else 1


COMPARE = Experiment("the plain-DP mechanisms side by side over an epsilon grid (RMSE, bias, accounting, what "
                     "the server received), and the DP ROC curves", "papers.dp_comparison",
                     "compare.json, compare.csv, rmse.png, rmse.pdf, curves.csv, curve_error.png/pdf, "
                     "curve_example.png/pdf")
TABLE7 = Experiment("reproduce fedauc Table 7 (std of the AUC over noise draws) beside the paper's",
                    "papers.fedauc_table7", "table7.md, table7.csv, table7.json")
USTAT = Experiment("MSE against epsilon of ustat-2pc and the U-statistic baselines", "papers.ustat_experiments",
                   "mse.json, mse.csv, mse.png, mse.pdf")
SECURITY = SecurityEvaluation()
