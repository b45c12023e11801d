# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench bench-ustat bench-read compare table7 table5 ustat clean

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -e ".[test]"
	# CrypTen's PyPI metadata is broken (requires `sklearn`, torchvision):
	# install it alone; its real runtime deps come from pyproject.toml.
	$(PY) -m pip install -q --disable-pip-version-check --no-deps crypten==0.4.1
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/mpc-auc demo

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m mpc_auc.sims.bench_ranking

compare: $(STAMP)
	$(VENV)/bin/mpc-auc compare --out results/compare

table7: $(STAMP)
	$(VENV)/bin/mpc-auc table7 --out results/table7

ustat: $(STAMP)
	$(VENV)/bin/mpc-auc ustat-experiment --out results/ustat

bench-ustat: $(STAMP)
	$(PY) -m mpc_auc.sims.bench_ustat

bench-read: $(STAMP)
	$(PY) -m mpc_auc.sims.bench_read

table5: $(STAMP)
	$(PY) -m mpc_auc.sims.dpauc_table5

clean:
	rm -rf $(VENV) build *.egg-info
