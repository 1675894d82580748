# kioku — `make run` and `make test` are the whole quick start.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
BENCH_STAMP := $(VENV)/.bench-installed-stamp

.PHONY: run test bench lint format chat clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "kioku needs Python >= 3.11; set PYTHON=python3.11 (or newer)")'
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

run: $(STAMP)  ## start the daemon in the foreground (Ctrl-C stops it)
	$(VENV)/bin/kioku serve

chat: $(STAMP)  ## chat with the running daemon in this terminal (Ctrl-D leaves)
	$(VENV)/bin/kioku chat

# The suite runs in three processes, each test file whole in one of them (its shared fake
# servers and daemons stay in one process). Daemons and `kioku` commands are forked with
# their imports done (tests/helpers/warm_kioku.py), so most of the time left is waiting on
# them: a third process fills it, even on 2 cores. The slowest tests are listed at the
# end, to keep the whole run within CI's 15 minutes.
TEST_WORKERS ?= 3

test: $(STAMP)  ## the whole test suite; TEST_WORKERS=1 runs it in one process
	$(PY) -m pytest --durations=25 $(if $(filter 1,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	@touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)  ## benchmarks: print their figures, never part of CI; BENCH=name runs only bench_name.py, BENCH_ARGS="..." passes it options
	@set -e; for script in $(if $(BENCH),tests/bench/bench_$(BENCH).py,tests/bench/bench_*.py); do \
		echo "== $$script"; $(PY) $$script $(BENCH_ARGS); done

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
