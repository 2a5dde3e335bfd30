# a2a-hub — the two commands a new user needs are `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint typecheck pytest bench install postgres-server clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/a2a-hub serve

lint: $(STAMP)
	$(BIN)/ruff check hub tests bench
	$(BIN)/ruff format --check hub tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

# The tests start a real PostgreSQL server (as an unprivileged user): install Debian's
# package where its binaries are missing.
postgres-server:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || { \
	  echo "installing the Debian package postgresql for the tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql \
	    >/dev/null; }

pytest: $(STAMP) postgres-server
	$(BIN)/pytest -q

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python -m bench.run

clean:
	rm -rf $(VENV) var/*.db var/*.db-wal var/*.db-shm
