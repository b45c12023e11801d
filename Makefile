# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test test-all flower-demo bench bench-e2e bench-scale bench-net bench-threads bench-ustat bench-read bench-link bench-session compare table7 table5 ustat clean

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	# pip byte-compiles here on purpose: these machines set PYTHONDONTWRITEBYTECODE, so a module compiled
	# on import is compiled again by every process (with --no-compile make test took 22 min, not 13)
	$(PY) -m pip install -q --disable-pip-version-check -e ".[test,flower]"
	# CrypTen's PyPI metadata is broken (requires `sklearn`, torchvision):
	# install it alone; its real runtime deps come from pyproject.toml.
	$(PY) -m pip install -q --disable-pip-version-check --no-deps crypten==0.4.1
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/mpc-auc demo

# Every claim, in minutes: two workers, each taking whole test files (their module fixtures stay together);
# the experiments that only measure are marked `slow` and left to test-all.
PYTEST := $(PY) -m pytest -q -n 2 --dist loadfile

# The project's own sources compiled once before the run: these machines set PYTHONDONTWRITEBYTECODE, so without it
# every role process the tests start compiles them again (about a CPU-minute of the suite's time).
COMPILE := $(PY) -m compileall -q -j 0 mpc_auc circuits protocols sims tests examples > /dev/null

test: $(STAMP)
	$(COMPILE)
	$(PYTEST)

test-all: $(STAMP)
	$(COMPILE)
	$(PYTEST) -m ""

# The example Flower app on Flower's Deployment Engine: SuperLink, 5 SuperNodes, the mpc-auc parties (docs/flower.md)
flower-demo: $(STAMP)
	$(PY) examples/flower/deployment_demo.py

bench: $(STAMP)
	$(PY) -m mpc_auc.sims.bench.ranking

compare: $(STAMP)
	$(VENV)/bin/mpc-auc compare --out results/compare

table7: $(STAMP)
	$(VENV)/bin/mpc-auc table7 --out results/table7

ustat: $(STAMP)
	$(VENV)/bin/mpc-auc ustat-experiment --out results/ustat

# SecretFlow SPU, the side-by-side reference of bench-e2e: its own environment, never a project dependency.
SPU_VENV := .venv-spu
$(SPU_VENV)/.installed:
	test -x $(SPU_VENV)/bin/python || $(PYTHON) -m venv $(SPU_VENV)
	$(SPU_VENV)/bin/python -m pip install -q --disable-pip-version-check spu==0.9.5
	touch $@

bench-e2e: $(STAMP) $(SPU_VENV)/.installed
	$(PY) -m mpc_auc.sims.bench.e2e --spu-python $(SPU_VENV)/bin/python --doc docs/BENCHMARKS.md

# 458,407, 4,584,062 and 45,840,617 float64 scores: each role's peak RSS, P0's bytes per score per key bit, hops, the
# AUC against a streaming clear reference; a size projected beyond the machine's memory is not run (docs/BENCHMARKS.md)
bench-scale: $(STAMP)
	$(PY) -m mpc_auc.sims.bench.scale --doc docs/BENCHMARKS.md

# P0, P1, the dealer and the organiser in their own network namespaces on tc-shaped links (needs root; skips
# with the reason otherwise): every rate and round trip of sims/bench/net.py, the model beside (docs/BENCHMARKS.md)
bench-net: $(STAMP)
	$(PY) -m mpc_auc.sims.bench.net --doc docs/BENCHMARKS.md

bench-threads: $(STAMP)
	$(PY) -m mpc_auc.sims.bench.threads

bench-ustat: $(STAMP)
	$(PY) -m mpc_auc.sims.bench.ustat

bench-read: $(STAMP)
	$(PY) -m mpc_auc.sims.bench.read

bench-link: $(STAMP)
	$(PY) -m mpc_auc.sims.bench.link

bench-session: $(STAMP)
	$(PY) -m mpc_auc.sims.bench.session --sizes 1000 100000 --calls 5

table5: $(STAMP)
	$(PY) -m mpc_auc.sims.papers.dpauc_table5

clean:
	rm -rf $(VENV) $(SPU_VENV) build *.egg-info
