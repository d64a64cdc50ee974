# Everything a fresh machine needs: `make run` and `make test` each set up the venv themselves.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install run test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(VENV)/bin/fieldgraph ingest examples/events
	$(VENV)/bin/fieldgraph lineage upstream 'urn:li:datasetField:(urn:li:dataset:(urn:li:dataPlatform:tableau,sales.revenue_report,PROD),total_revenue)'

test: install
	npm ci --prefix tests/cypher_lint --no-audit --no-fund --loglevel=error
	$(PY) -m pytest

bench: install
	$(PY) benchmarks/normalize.py

clean:
	rm -rf $(VENV) .fieldgraph .pytest_cache
