# The README's two commands: `make run` and `make test`. Both create .venv when needed.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
export DAGSTER_HOME ?= $(CURDIR)
export CONTENT_STORE_DIR ?= $(CURDIR)/content_store
# The oldest DuckDB the catalog file is written for (content_core.store.CATALOG_STORAGE_VERSION),
# kept beside the venv's own for the test that opens the catalog with it.
OLD_DUCKDB := $(VENV)/duckdb-1.2

.PHONY: run test dev lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall only when pyproject.toml changes. The `duckdb` extra is the DuckDB CLI
# (.venv/bin/duckdb) and the extensions, of the same version as the duckdb module.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[duckdb]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed

$(OLD_DUCKDB)/.installed: | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade --target $(OLD_DUCKDB) duckdb==1.2.2
	touch $@

run: $(VENV)/.installed
	$(BIN)/content-pipeline ingest examples/inbox

# Lint, types, then the whole suite: one command, the one CI runs.
test: lint $(OLD_DUCKDB)/.installed
	$(BIN)/python -m pytest -q

# `dg dev`: what Dagster recommends now (`dagster dev` is superseded). The webserver and the
# daemon (sensor, schedules, run queue), with the repository's dagster.yaml as the instance.
dev: $(VENV)/.installed
	$(BIN)/dg dev -w workspace.yaml

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check content_core content_assets tests bench examples
	$(BIN)/mypy --strict --ignore-missing-imports content_core content_assets
	$(BIN)/lint-imports

clean:
	rm -rf content_store .dagster_home
