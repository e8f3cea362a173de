# The front door. `make run` and `make test` work on a fresh machine (they install first).
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export DAGSTER_HOME := $(CURDIR)/dagster_home
export CAOT_WAREHOUSE_WORK ?= $(CURDIR)/data/work/warehouse.duckdb
export CAOT_WAREHOUSE ?= $(CURDIR)/data/warehouse.duckdb
export DBT_PROJECT_DIR := $(CURDIR)/dbt
export DBT_PROFILES_DIR := $(CURDIR)/dbt
export DBT_SEND_ANONYMOUS_USAGE_STATS := False
export DO_NOT_TRACK := 1
export UV_COMPILE_BYTECODE := 1
export UV_PYTHON_DOWNLOADS := never

.PHONY: install install-spark java run dev test test-spark lint docs bench clean lock

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==0.13.9
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(BIN)/uv pip install --quiet -r requirements.lock
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(BIN)/uv pip install --quiet --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

dbt/target/manifest.json: $(STAMP) $(shell find dbt/models dbt/macros dbt/tests dbt/seeds -type f 2>/dev/null) dbt/dbt_project.yml
	cd dbt && ../$(BIN)/dbt parse --quiet

run: $(STAMP) dbt/target/manifest.json
	$(BIN)/python -m dagster_project.generator --if-absent
	$(BIN)/python -m dagster_project.pipeline --wait 600

# The Dagster UI and daemon (schedule, sensor, queued runs) on http://127.0.0.1:3000.
dev: $(STAMP) dbt/target/manifest.json
	$(BIN)/dagster dev -h 127.0.0.1 -p 3000

test: lint
	$(BIN)/python -m pytest

# The dbt project on Apache Spark (docs/spark.md): a Java runtime, then pyspark and dbt-spark into
# .venv. `make run` and `make test` need neither.
# Java: the machine's, or Debian's openjdk-17-jre-headless where it can be installed.
java:
	@command -v java >/dev/null || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] \
		&& apt-get update -q >/dev/null && apt-get install -y -q openjdk-17-jre-headless >/dev/null; } \
		|| { echo "no Java runtime and none could be installed (Spark needs Java 17 or newer)" >&2; \
		exit 1; }

SPARK_STAMP := $(VENV)/.installed-spark
$(SPARK_STAMP): $(STAMP) requirements-spark.lock
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(BIN)/uv pip install --quiet -r requirements-spark.lock
	touch $(SPARK_STAMP)

install-spark: java $(SPARK_STAMP)

# Spark and DuckDB build the same marts from the same deliveries and agree to the cent.
test-spark: install-spark dbt/target/manifest.json
	$(BIN)/python -m pytest -m spark -n 0 tests/test_spark_engine.py

# SQLFluff renders the models against an empty scratch DuckDB, not the warehouse, so the result
# does not depend on what was built (the incremental models render their full-build branch).
# SQLFluff's dbt templater parses with its own warehouse path into its own target folder: the parse
# in dbt/target stays the one a run of the default warehouse starts from (dbt's partial parsing).
lint: $(STAMP) dbt/target/manifest.json
	$(BIN)/ruff check dagster_project bench tests
	$(BIN)/ruff format --check dagster_project bench tests
	rm -f dbt/target/sqlfluff.duckdb
	CAOT_WAREHOUSE_WORK=$(CURDIR)/dbt/target/sqlfluff.duckdb DBT_TARGET_PATH=target/sqlfluff \
		$(BIN)/sqlfluff lint dbt/models --processes 0

# Speed per stage and scale beside the plain-Python reference and DuckDB's floor (not in `test`).
bench: $(STAMP) dbt/target/manifest.json
	$(BIN)/python -m bench $(if $(SCALES),--scales $(SCALES),)

# dbt's catalog reads the built warehouse (the working file, copied back from the published one if
# a run left it missing); before the first `make run` there is none to read.
docs: $(STAMP) dbt/target/manifest.json
	@test -f "$(CAOT_WAREHOUSE_WORK)" -o -f "$(CAOT_WAREHOUSE)" || { echo "make docs: no \
	warehouse yet at $(CAOT_WAREHOUSE): run make run first" >&2; exit 1; }
	$(BIN)/python -c 'from pathlib import Path; from dagster_project.warehouse import restore_work; \
	restore_work(Path("$(CAOT_WAREHOUSE_WORK)"), Path("$(CAOT_WAREHOUSE)"))'
	cd dbt && ../$(BIN)/dbt docs generate --quiet

clean:
	rm -rf dbt/target dbt/logs data/work data/warehouse.duckdb data/reports
	find dagster_home -mindepth 1 ! -name dagster.yaml -exec rm -rf {} +

# Re-resolve the pinned, fully locked dependency set (needs the package index).
lock:
	$(BIN)/uv pip compile pyproject.toml --extra dev -o requirements.lock --python-version 3.11
