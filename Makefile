# One command to run the dashboard on the demo data, one to run every test.
# Both set up what they need first: a virtual environment in .venv with specdash installed.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
DB     ?= build/demo.duckdb
PORT   ?= 8501

.PHONY: run test check demo bench browser clean

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -m venv $(VENV) || { echo "python3 -m venv failed: install python3-venv (Debian: apt-get install python3-venv)"; exit 1; }
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/specdash demo --db $(DB)

run: demo
	$(VENV)/bin/specdash serve --db $(DB) --port $(PORT)

browser:
	@bash .ci/ensure-chromium

# Lint and import order (ruff), types (mypy over ingest/ and dashboard/), then every test.
check: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

test: check browser
	$(PY) -m pytest

bench: $(VENV)/.installed browser
	$(PY) bench/run.py

clean:
	rm -rf build $(VENV)
