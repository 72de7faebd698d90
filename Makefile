# The two commands a newcomer needs: `make run` and `make test`. Both build their own virtual
# environment from pyproject.toml on first use, so a fresh machine needs only Python 3.11+.

PYTHON ?= python3
# Anything but an explicit development or test setting is production (which needs a database,
# a seed key and a broker configured): the make targets run locally unless told otherwise.
export APP_ENV ?= development
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench

.DEFAULT_GOAL := help
.PHONY: help install lint test migrate run bench drill clean

help:
	@echo "make run    install what is needed and start the service"
	@echo "make test   install what is needed, then ruff, mypy, the import contracts and the whole test suite"
	@echo "make bench  print the benchmark figures"
	@echo "make drill  run the fault drills against a service of their own"
	@echo "make migrate  apply pending database migrations"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

# The Klondike strong player's C solver (git-ignored), built by the one command its loader
# knows (service/rtp/experts/klondike_solver.py), again whenever its source changes.
KLONDIKE_SOLVER := service/rtp/experts/native/klondike_solver.so
$(KLONDIKE_SOLVER): service/rtp/experts/klondike_solver.c | $(STAMP)
	$(BIN)/python -m service.rtp.experts.klondike_solver

install: $(STAMP) $(KLONDIKE_SOLVER)

# The benchmarks' own extra (the eventsourcing library, measured beside our store).
$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $@

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint
	$(BIN)/pytest $(PYTEST_ARGS)

migrate: install
	$(BIN)/flask --app service db upgrade

# The port first (a clear error, and nothing started, when another program holds it), then
# the migrations, then everything under the supervisor.
run: install
	@$(BIN)/python -m service.runtime.run --check
	@$(MAKE) --no-print-directory migrate
	@echo
	@echo "  Vegas Solitaire API on http://$${HOST:-127.0.0.1}:$${PORT:-8000}  (docs: /v1/docs)"
	@echo "  Console (play, replay, finance) on http://$${HOST:-127.0.0.1}:$${PORT:-8000}/console/"
	@echo "  with a Celery worker and beat ($${CELERY_BROKER_URL:-no broker configured: kombu's filesystem transport in .data/celery})"
	@echo "  First API key, in another terminal:"
	@echo "    APP_ENV=development $(BIN)/flask --app service keys create --role operator --name my-operator"
	@echo
	exec $(BIN)/python -m service.runtime.run

bench: $(BENCH_STAMP)
	$(BIN)/python -m tests.benchmarks $(SUITES)

# The fault drills: the service as `make run` starts it, under load, with kill -9s and a
# database outage; exits non-zero unless nothing was lost or paid twice (README: Fault drills).
drill: install
	$(BIN)/python -m tests.drill

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
