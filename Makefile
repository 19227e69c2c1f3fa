# One command to run the dashboard on the demo data, one to run every test.
# Both set up what they need first: a virtual environment in .venv with specdash installed.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
DB     ?= build/demo.duckdb
PORT   ?= 8501

.PHONY: run test check demo bench browser postgres clean

# pip is quiet and takes about a minute the first time, so each step says what it is doing first.
$(VENV)/.installed: pyproject.toml
	@if [ ! -x $(PY) ]; then \
		echo "creating $(VENV)…"; \
		$(PYTHON) -m venv $(VENV) || { echo "python3 -m venv failed: install python3-venv (Debian: apt-get install python3-venv)"; exit 1; }; \
	fi
	@echo "installing specdash (first time: about a minute)…"
	@$(PY) -m pip install --quiet --upgrade pip
	@$(PY) -m pip install --quiet -e '.[test,team]'
	@touch $@

demo: $(VENV)/.installed
	@echo "building the demo store $(DB)…"
	@$(VENV)/bin/specdash demo --db $(DB)

# `specdash serve` checks the port and the store, then prints the address to open (http://127.0.0.1:PORT).
run: demo
	@$(VENV)/bin/specdash serve --db $(DB) --port $(PORT)

browser:
	@bash .ci/ensure-debian-package chromium /usr/bin/chromium "The browser tests"

postgres:
	@bash .ci/ensure-debian-package postgresql '/usr/lib/postgresql/*/bin/pg_ctl' "The team-store tests"

# Lint and import order (ruff), types (mypy over ingest/ and dashboard/), then every test.
check: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# Test files run in parallel, one file per worker at a time (they share module fixtures: a served store, a
# browser), on one worker more than there are cores: the files that drive Chromium wait on it part of the
# time (measured on 2 cores: 1.87 instead of 1.74 cores busy). The 25 slowest tests are listed at the end.
WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: check browser postgres
	$(PY) -m pytest -n $(WORKERS) --dist loadfile --durations=25

bench: $(VENV)/.installed browser postgres
	$(PY) bench/run.py

clean:
	rm -rf build $(VENV)
