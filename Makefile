# Two entry points for a fresh machine: `make serve` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: serve test lint bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

serve: $(VENV)/.installed
	$(BIN)/jiyi serve

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest

bench: $(VENV)/.installed-dev
	$(BIN)/python bench/embedders.py
	$(BIN)/python bench/scale.py
