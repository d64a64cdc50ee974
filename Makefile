# Everything a fresh machine needs: `make run` and `make test` each set up the venv themselves.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
REPORT := 'urn:li:datasetField:(urn:li:dataset:(urn:li:dataPlatform:tableau,sales.revenue_report,PROD),total_revenue)'

.PHONY: install run lint test bench neo4j kafka services clean explorer dist docs docs-serve

# root installs Debian packages directly; anyone else through sudo
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# The lineage explorer page `fieldgraph serve` serves at /explorer/: esbuild bundles src/ with the locked npm
# packages into static/ (package data; no CDN at run time).
EXPLORER := ingest/service/explorer

$(EXPLORER)/node_modules/.package-lock.json: $(EXPLORER)/package-lock.json
	npm ci --prefix $(EXPLORER) --no-audit --no-fund --loglevel=error

$(EXPLORER)/static/explorer.js: $(EXPLORER)/node_modules/.package-lock.json $(EXPLORER)/build.mjs $(wildcard $(EXPLORER)/src/*)
	npm run build --prefix $(EXPLORER)

explorer: $(EXPLORER)/static/explorer.js

# The package and its runtime dependencies (enough for `make run`).
$(VENV)/.installed: pyproject.toml | $(PY) $(EXPLORER)/static/explorer.js
	$(PY) -m pip install --quiet -e .
	touch $@

# Plus the test extras (DataHub's reference converters, pyspark, the OpenLineage client, ...).
$(VENV)/.installed-test: pyproject.toml | $(PY) $(EXPLORER)/static/explorer.js
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed

# Ingest the bundled example events into the embedded graph, then print one report column's upstream lineage.
run: install
	$(VENV)/bin/fieldgraph ingest examples/events
	$(VENV)/bin/fieldgraph lineage upstream $(REPORT)

# Debian's Chromium, which the Neo4j Browser test drives with Playwright (no browser download).
/usr/bin/chromium:
	$(SUDO) apt-get update -qq
	$(SUDO) apt-get install -y -qq --no-install-recommends chromium

tests/browser/node_modules/.package-lock.json: tests/browser/package-lock.json
	npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error

# The jars of the real Neo4j 5.26 and Apache Kafka 4.4 the suite starts, resolved by Maven (deploy/maven/);
# tests/services.py probes them with the Neo4j and Kafka clients (the test extras).
services: $(VENV)/.installed-test
	$(PY) -m tests.services fetch

# dbt, dbt-duckdb and openlineage-dbt in a venv of their own (their pins clash with the test extras): tests/test_dbt.py
# runs dbt-ol from it, sending to `fieldgraph serve`.
DBT_VENV := .venv-dbt

$(DBT_VENV)/bin/dbt-ol: tests/dbt/requirements.txt | $(PY)
	$(PY) -m venv $(DBT_VENV)
	$(DBT_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(DBT_VENV)/bin/python -m pip install --quiet -r tests/dbt/requirements.txt
	touch $@

# ruff and mypy as pyproject.toml configures them (mypy strict for errors, the change model, the normalizers)
lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

test: lint /usr/bin/chromium tests/browser/node_modules/.package-lock.json services $(DBT_VENV)/bin/dbt-ol
	$(PY) -m pytest

# The documentation site (mkdocs.yml, docs/): built into site/ with every reference page generated from the code;
# `make docs-serve` serves it on http://127.0.0.1:8000 and rebuilds on changes. tests/test_docs.py builds it too
# (--strict: a broken link or a page outside the navigation fails) and runs every example it shows.
# (MkDocs 1.x plugins print a notice about MkDocs 2 at every build: the two variables silence it, not the warnings.)
DOCS_ENV := NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true

docs: $(VENV)/.installed-test
	$(DOCS_ENV) $(VENV)/bin/mkdocs build --strict

docs-serve: $(VENV)/.installed-test
	$(DOCS_ENV) $(VENV)/bin/mkdocs serve --strict -a 127.0.0.1:8000

# Real servers in the foreground for a user without Docker (Ctrl-C stops them; data in .fieldgraph/).
neo4j: services
	$(PY) -m tests.services neo4j

kafka: services
	$(PY) -m tests.services kafka

# Every benchmark (benchmarks/run.py: the table of scripts and sizes) on the embedded graph, the graph ones again on
# Neo4j with NEO4J=bolt://user:pass@host:7687 (a running one) or NEO4J=neo4j (one started per script);
# their JSON and the PNGs benchmarks/plot.py draws from it go to benchmarks/results/. The last one, explorer,
# drives the explorer page in Chromium.
bench: $(VENV)/.installed-test /usr/bin/chromium tests/browser/node_modules/.package-lock.json
	$(PY) benchmarks/run.py $(if $(NEO4J),--neo4j $(NEO4J))
	$(PY) benchmarks/plot.py

# What a release publishes, in dist/: the sdist, the pure-Python wheel (py3-none-any: the fallback on any platform)
# and the mypyc-compiled wheel for this machine (FIELDGRAPH_MYPYC=1: setup.py compiles the normalizers listed in
# pyproject.toml; without build isolation, with the test extra's setuptools and mypy), tagged manylinux by
# auditwheel on Linux. The other platforms' compiled wheels: cibuildwheel ([tool.cibuildwheel], docs/operations/install.md).
dist: $(VENV)/.installed-test
	rm -rf dist build  # build/: setuptools' (extensions an earlier build left there would go in the wheel)
	$(PY) -m build --sdist --wheel --outdir dist .
	FIELDGRAPH_MYPYC=1 $(PY) -m build --wheel --no-isolation --outdir dist/compiled .
	if [ "$$(uname)" = Linux ]; then \
	  PATH="$(VENV)/bin:$$PATH" $(PY) -m auditwheel repair --wheel-dir dist dist/compiled/*.whl; \
	else cp dist/compiled/*.whl dist/; fi
	rm -rf dist/compiled
	$(PY) -m twine check --strict dist/*
	ls dist

clean:
	rm -rf $(VENV) $(DBT_VENV) .fieldgraph .pytest_cache site tests/browser/node_modules test-artifacts deploy/maven/*/target \
	       $(EXPLORER)/node_modules $(EXPLORER)/static
