# The two front-door commands: `make run` and `make test`. Both create .venv when missing.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test lint compile bench image

$(STAMP): pyproject.toml trainers/tabular/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]' -e trainers/tabular
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/vertexkit run training

lint: install
	$(BIN)/ruff check .

test: install
	$(BIN)/ruff check .
	$(BIN)/vertexkit compile --check
	$(BIN)/python -m pytest -n auto -q

bench: install
	$(BIN)/python -m benchmarks

# Build and push the runtime image with Cloud Build (needs gcloud and a project), then
# `vertexkit compile --image $(IMAGE)` or `vertexkit run NAME --vertex --image $(IMAGE) ...`.
image:
	@test -n "$(IMAGE)" || (echo "usage: make image IMAGE=REGION-docker.pkg.dev/PROJECT/REPO/vertexkit-runtime:TAG" && exit 2)
	gcloud builds submit --tag "$(IMAGE)" .
