# The two front-door commands: `make run` and `make test`. Both create .venv when missing.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test lint compile bench

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/vertexkit demo

lint: install
	$(BIN)/ruff check .

test: install
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n auto -q

bench: install
	$(BIN)/python -m benchmarks
