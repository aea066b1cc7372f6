# kdsl developer entry points. Every target runs scripts/setup.sh first (fast
# when nothing changed), so a fresh clone needs only `make demo` or `make test`.

PY      := $(or $(KDSL_VENV),.venv)/bin/python
PYTEST  := $(PY) -m pytest
BACKEND ?=

.PHONY: help setup demo test pytest lint fix typecheck bench clean

help:
	@echo "make demo   - set up, then run the tutorial kernels and check them against numpy"
	@echo "make test   - set up, lint (ruff, ruff format, mypy --strict), run the test suite"
	@echo "make pytest - the test suite only (pass ARGS='-k name' to select)"
	@echo "make lint   - static checks only;  make fix - apply ruff fixes and formatting"
	@echo "make bench  - the benchmarks in bench/ (ratios against numpy, printed as a table)"
	@echo "BACKEND=name selects the backend for demo/bench (default: kdsl's default)"

setup:
	@bash scripts/setup.sh

demo: setup
	$(PY) -m kdsl demo $(if $(BACKEND),--backend $(BACKEND))

test: setup lint pytest

pytest: setup
	$(PYTEST) $(ARGS)

lint: setup
	@bash scripts/lint.sh

fix: setup
	@bash scripts/lint.sh --fix

bench: setup
	@bash scripts/bench.sh $(if $(BACKEND),--backend $(BACKEND))

clean:
	rm -rf .pytest_cache .mypy_cache .ruff_cache .hypothesis bench/results
	find . -path ./.venv -prune -o -name __pycache__ -type d -exec rm -rf {} +
