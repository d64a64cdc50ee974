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
	$(VENV)/bin/fieldgraph normalize examples/schemas/orders.avsc

test: install
	$(PY) -m pytest

bench: install
	$(PY) benchmarks/normalize.py

clean:
	rm -rf $(VENV) .fieldgraph .pytest_cache
