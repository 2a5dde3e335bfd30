"""A real `a2a-hub serve` process under many half-sent connections: its connection settings
come from the settings file; a normal client gets a clear 503 while the cap is full (never a
hang), the half-sent connections are closed after the header timeout, the client is served
again, and the hub says what it did in its log."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import httpx
import pytest
from anyio.abc import SocketStream

from .hubproc import hub_process
from .test_cli import write_config

pytestmark = pytest.mark.anyio

CONFIG = """\
server: {header_timeout: 1s, max_connections: 4}
store: {kind: memory}
"""
HALF_SENT = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nA2A-Version: 1."
"""A request cut off in its headers."""
WAIT = 10.0
"""Bound on every wait: well past the 1 s header timeout, far below the 10 s default."""


async def read_until_closed(stream: SocketStream) -> bytes:
    received = b""
    with anyio.fail_after(WAIT):
        while True:
            try:
                received += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
                return received


async def health_honouring_retry_after(http: httpx.AsyncClient) -> httpx.Response:
    """GET /healthz as a polite client does: after a 503, again once its Retry-After passed
    (a slot freed a moment ago may not be counted free yet). The hub is another process:
    there is no event to wait on but its answer."""
    with anyio.fail_after(WAIT):
        while (answer := await http.get("/healthz")).status_code == 503:  # noqa: ASYNC110
            await anyio.sleep(float(answer.headers["retry-after"]))
    return answer


async def test_half_sent_connections_neither_shut_clients_out_nor_stay_open(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, CONFIG)
    with hub_process(config) as (process, url):
        port = int(url.rsplit(":", 1)[1])
        async with AsyncExitStack() as stack:
            stalled = []
            for _ in range(40):  # four take every slot; the others wait for their refusal
                stream = await anyio.connect_tcp("127.0.0.1", port)
                stack.push_async_callback(stream.aclose)
                await stream.send(HALF_SENT)
                stalled.append(stream)
            async with httpx.AsyncClient(base_url=url, timeout=WAIT) as http:
                with anyio.fail_after(WAIT):
                    refused = await http.get("/healthz")
                answers = [await read_until_closed(stream) for stream in stalled]
                served = await health_honouring_retry_after(http)
        process.terminate()
        assert process.stderr is not None
        log = process.stderr.read().decode()
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "1"
    assert refused.text == "too many connections (server.max_connections); retry shortly\n"
    assert answers == [b""] * 40
    assert served.status_code == 200
    assert "(server.max_connections)" in log
    assert "(server.header_timeout)" in log
