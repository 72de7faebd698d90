# The two commands a newcomer needs: `make run` and `make test`. Both build their own virtual
# environment from pyproject.toml on first use, so a fresh machine needs only Python 3.11+.

PYTHON ?= python3
# Anything but an explicit development or test setting is production (which needs a database,
# a seed key and a broker configured): the make targets run locally unless told otherwise.
export APP_ENV ?= development
# Two environments: the service's own (`make run`, `make migrate`: no test tools in it) and the
# tests' (`make test`, lint, drills, benchmarks: the service's packages and the test extras).
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_VENV ?= .venv-test
TEST_BIN := $(TEST_VENV)/bin
TEST_STAMP := $(TEST_VENV)/.installed
BENCH_STAMP := $(TEST_VENV)/.installed-bench

.DEFAULT_GOAL := help
.PHONY: help install serve-install lint test migrate run bench drill clean

help:
	@echo "make run            install the service (.venv) and start it: API, worker and beat"
	@echo "make test           install the tests' environment (.venv-test), then make lint and the whole test suite"
	@echo "make lint           ruff, its formatter's check, mypy and the import contracts"
	@echo "make migrate        apply pending database migrations"
	@echo "make bench          print the benchmark figures (SUITES=http,store,...)"
	@echo "make drill          the fault drills against a service of their own (DRILL_WALLET=faults: the wallet drill)"
	@echo "make install        the tests' environment (and the RTP lab's C solver)"
	@echo "make serve-install  the service's own environment (no test tools)"
	@echo "make clean          remove both environments and the caches"

# The service's environment: its own packages only.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

serve-install: $(STAMP)

# The tests' environment: the service's packages and the test extras.
$(TEST_STAMP): pyproject.toml
	$(PYTHON) -m venv $(TEST_VENV)
	$(TEST_BIN)/python -m pip install --quiet --upgrade pip
	$(TEST_BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

# The Klondike strong player's C solver (git-ignored), built by the one command its loader
# knows (service/rtp/experts/klondike_solver.py), again whenever its source changes.
KLONDIKE_SOLVER := service/rtp/experts/native/klondike_solver.so
$(KLONDIKE_SOLVER): service/rtp/experts/klondike_solver.c | $(TEST_STAMP)
	$(TEST_BIN)/python -m service.rtp.experts.klondike_solver

install: $(TEST_STAMP) $(KLONDIKE_SOLVER)

# The benchmarks' own extra (the eventsourcing library, measured beside our store).
$(BENCH_STAMP): $(TEST_STAMP)
	$(TEST_BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $@

lint: install
	$(TEST_BIN)/ruff check .
	$(TEST_BIN)/ruff format --check .
	$(TEST_BIN)/mypy
	$(TEST_BIN)/lint-imports

test: lint
	$(TEST_BIN)/pytest $(PYTEST_ARGS)

migrate: serve-install
	$(BIN)/flask --app service db upgrade

# The port first (a clear error, and nothing started, when another program holds it), then
# the migrations, then everything under the supervisor.
run:
	@$(PYTHON) service/runtime/port_check.py
	@$(MAKE) --no-print-directory migrate
	@echo
	@echo "  Vegas Solitaire API on http://$${HOST:-127.0.0.1}:$${PORT:-8000}  (docs: /v1/docs)"
	@echo "  Console (play, replay, finance) on http://$${HOST:-127.0.0.1}:$${PORT:-8000}/console/"
	@echo "  with a Celery worker and beat ($${CELERY_BROKER_URL:-no broker configured: kombu's filesystem transport in .data/celery})"
	@echo "  First API key, in another terminal:"
	@echo "    APP_ENV=development $(BIN)/flask --app service keys create --role operator --name operator-\$$(date +%s)"
	@echo
	exec $(BIN)/python -m service.runtime.run

bench: $(BENCH_STAMP)
	$(TEST_BIN)/python -m tests.benchmarks $(SUITES)

# The fault drills: the service as `make run` starts it, under load, with kill -9s and a
# database outage; exits non-zero unless nothing was lost or paid twice (README: Fault drills).
drill: install
	$(TEST_BIN)/python -m tests.drill

clean:
	rm -rf $(VENV) $(TEST_VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
