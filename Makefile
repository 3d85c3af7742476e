# The README's two commands: `make run` and `make test`. Both create .venv when needed.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
export DAGSTER_HOME ?= $(CURDIR)
export CONTENT_STORE_DIR ?= $(CURDIR)/content_store
# The oldest DuckDB the catalog file is written for (content_core.store.CATALOG_STORAGE_VERSION),
# kept beside the venv's own for the test that opens the catalog with it.
OLD_DUCKDB := $(VENV)/duckdb-1.2

.PHONY: run test dev lint docs clean

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

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $@

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
	@echo "the Dagster UI: http://127.0.0.1:3000 (store $(CONTENT_STORE_DIR), instance $(DAGSTER_HOME))"
	$(BIN)/dg dev -w workspace.yaml

# The documentation site (mkdocs.yml), strict: a broken link or a docstring warning fails it.
# Built offline into site/ (git-ignored); the API reference is read from the docstrings.
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check content_core content_assets tests bench examples
	$(BIN)/mypy --strict --ignore-missing-imports content_core content_assets
	$(BIN)/lint-imports

clean:
	rm -rf content_store .dagster_home site
