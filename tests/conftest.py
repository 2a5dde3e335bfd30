import socket
from collections.abc import AsyncIterator, Iterator

import pytest

from hub.testing import serve_on_loopback
from tests.client.partners import sdk_jsonrpc
from tests.postgres import PostgresCluster, fresh_database, running_cluster


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def echoer() -> AsyncIterator[str]:
    """An a2a-sdk 1.0 JSON-RPC partner on loopback that echoes (and works on "wait")."""
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
