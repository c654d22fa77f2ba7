# The two front-door commands: `make run` and `make test`. Both create .venv when missing and
# install exactly the versions in requirements.lock (pip constraints), on any day.
VENV ?= .venv
PYTHON ?= python3
LOCK ?= requirements.lock
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CONSTRAINTS := $(if $(LOCK),-c $(LOCK))

.PHONY: install run test test-latest lint lock compile bench image

$(STAMP): pyproject.toml trainers/tabular/pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q $(CONSTRAINTS) --upgrade pip setuptools wheel
	$(BIN)/python -m pip install -q $(CONSTRAINTS) -e '.[dev]' -e trainers/tabular
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/vertexkit run training

lint: install
	$(BIN)/ruff check .

test: install
	$(BIN)/ruff check .
	$(BIN)/vertexkit compile --check
	$(BIN)/python -m pytest -n auto -q --ignore=tests/google_system
	# Google's system tests share state within a class: one process, in order (about 30 s).
	$(BIN)/python -m pytest -q tests/google_system

# Rewrites requirements.lock from the newest versions pyproject.toml's ranges allow today.
lock:
	.ci/lock

# The whole suite against the newest versions the ranges allow (a fresh .venv-latest, no lock):
# finds drift on purpose. VERTEXKIT_UNLOCKED tells tests/lock_test.py that no lock applies.
test-latest:
	rm -rf .venv-latest
	VERTEXKIT_UNLOCKED=1 $(MAKE) test VENV=.venv-latest LOCK=

bench: install
	$(BIN)/python -m benchmarks

# Build and push the runtime image with Cloud Build (needs gcloud and a project), then
# `vertexkit compile --image $(IMAGE)` or `vertexkit run NAME --vertex --image $(IMAGE) ...`.
image:
	@test -n "$(IMAGE)" || (echo "usage: make image IMAGE=REGION-docker.pkg.dev/PROJECT/REPO/vertexkit-runtime:TAG" && exit 2)
	gcloud builds submit --tag "$(IMAGE)" .
