import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from hub.testing import serve_on_loopback
from tests.postgres import PostgresCluster, fresh_database, running_cluster

TESTS = Path(__file__).resolve().parent

PROCESS_TESTS = frozenset(
    {
        "cli/test_db.py",
        "docs/test_examples.py",
        "push/test_restart.py",
        "skills/process/test_restart.py",
        "telemetry/test_running_hub.py",
    }
)
"""Test modules outside tests/e2e that start hub processes of their own."""

POSTGRES_FIXTURES = frozenset({"postgres_cluster", "postgres_dsn", "own_cluster"})
"""The session's PostgreSQL server, a database of it, and a server a test stops and starts."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the slow kinds of test (registered in pyproject.toml) by where they live and what
    they use, so `make test-fast` can leave them out whatever directory they are in."""
    for item in items:
        if not item.path.is_relative_to(TESTS):
            continue
        module = item.path.relative_to(TESTS).as_posix()
        if module.startswith(("e2e/", "llm/")) or module in PROCESS_TESTS:
            item.add_marker(pytest.mark.e2e)
        if "browser" in item.path.name or "browser" in item.fixturenames:
            item.add_marker(pytest.mark.browser)
        # A store parametrized by kind asks for the server only in its "postgres" case.
        callspec = getattr(item, "callspec", None)
        by_kind = callspec is not None and "postgres" in callspec.params.values()
        if by_kind or POSTGRES_FIXTURES.intersection(item.fixturenames):
            item.add_marker(pytest.mark.postgres)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def echoer() -> AsyncIterator[str]:
    """An a2a-sdk 1.0 JSON-RPC partner on loopback that echoes (and works on "wait")."""
    # Imported here: the tests that need no SDK partner collect without the a2a-sdk.
    from tests.client.partners import sdk_jsonrpc

    async with serve_on_loopback(sdk_jsonrpc) as url:
        yield url


@pytest.fixture
def refusing_port() -> Iterator[int]:
    """A loopback port bound but not listening: connections to it are refused."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """One real PostgreSQL server for the whole session, started on first use."""
    with running_cluster() as cluster:
        yield cluster


@pytest.fixture
async def postgres_dsn(postgres_cluster: PostgresCluster) -> AsyncIterator[str]:
    """A fresh, empty database of the session's cluster, dropped after the test."""
    async with fresh_database(postgres_cluster) as dsn:
        yield dsn
