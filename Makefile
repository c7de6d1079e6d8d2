# Two entry points for a fresh machine: `make serve` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: serve test lint bench sillytavern mem0-js promtool postgres-user

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

# The SillyTavern end-to-end tests need Debian's chromium and SillyTavern 1.19.0 from npm (installed once, idempotent).
sillytavern:
	tests/sillytavern/install.sh

# mem0's npm client (mem0ai 3.3.1, pinned by tests/mem0_js/package-lock.json) for tests/server/test_mem0_sdk_js.py.
mem0-js:
	tests/mem0_js/install.sh

# promtool (Debian's prometheus package, installed once) for tests/deploy: checks and unit-tests deploy/alerts.yml.
promtool:
	@command -v promtool >/dev/null || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }

# The PostgreSQL store's tests run a server of their own (tests/pg.py); PostgreSQL refuses to run as root, so as root
# they run it as the `postgres` system user, created here when it is missing.
postgres-user:
	@[ "$$(id -u)" != 0 ] || id -u postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres

test: lint sillytavern mem0-js promtool postgres-user
	node --test integrations/sillytavern/tests/
	$(BIN)/python -m pytest

# What docs/benchmarks.md lists under "What `make bench` runs" (tests/test_docs_figures.py checks the two agree).
bench: $(VENV)/.installed-dev
	$(BIN)/python bench/extraction.py
	$(BIN)/python bench/extraction.py --data bench/data/extraction_eval_holdout.json
	$(BIN)/python bench/categories.py
	$(BIN)/python bench/embedders.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/context.py --split dev
	$(BIN)/python bench/context.py --split holdout
	$(BIN)/python bench/entities.py
	$(BIN)/python bench/entities.py --data bench/data/entity_eval_dev2.json --out bench/results/entities-dev2.json
	$(BIN)/python bench/entities.py --data bench/data/entity_eval_holdout.json --out bench/results/entities-holdout.json
	$(BIN)/python bench/lexicon.py --split dev
	$(BIN)/python bench/lexicon.py --split holdout
	$(BIN)/python bench/pairs.py
	$(BIN)/python bench/pairs.py --data bench/data/pair_eval_holdout.json --out bench/results/pairs-holdout.json
	$(BIN)/python bench/speakers.py --data bench/data/speaker_eval_3.json --out bench/results/speakers_3.json
	$(BIN)/python bench/reminders.py
	$(BIN)/python bench/zh_retrieval.py
	$(BIN)/python bench/lifecycle.py
