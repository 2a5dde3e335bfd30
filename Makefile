# a2a-hub — the two commands a new user needs are `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# Two stamps: `make run` needs only the hub's own dependencies; the test extras (pytest,
# mypy, ruff, hypothesis, a2a-sdk) come with the first `make test` (or `make install`).
STAMP      := $(VENV)/.installed-runtime
TEST_STAMP := $(VENV)/.installed-test
# `make run PORT=8001` serves on another port; without PORT, config/hub.yaml's port.
PORT   ?=

.PHONY: run test lint typecheck pytest bench install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(TEST_STAMP)

install: $(TEST_STAMP)

run: $(STAMP)
	$(BIN)/a2a-hub serve $(if $(PORT),--port $(PORT))

lint: $(TEST_STAMP)
	$(BIN)/ruff check hub tests bench
	$(BIN)/ruff format --check hub tests bench

typecheck: $(TEST_STAMP)
	$(BIN)/mypy

pytest: $(TEST_STAMP)
	$(BIN)/pytest -q

test: lint typecheck pytest

bench: $(TEST_STAMP)
	$(BIN)/python -m bench.run

clean:
	rm -rf $(VENV) var/*.db var/*.db-wal var/*.db-shm
