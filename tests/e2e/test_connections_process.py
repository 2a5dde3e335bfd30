"""A real `a2a-hub serve` process under many half-open connections: its connection
settings come from the settings file; connections that never finish their headers take no
slot of the cap, so normal clients are served the whole time while they are kept up and
replaced as the hub closes them; connections that did send a request fill the cap, and then a
client gets a clear 503 (never a hang); the hub says what it did in its log."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import httpx
import pytest

from tests.server.raw_connections import HEALTH, HalfOpen, closed_by_server, kept_alive

from .hubproc import hub_process
from .test_cli import write_config

pytestmark = pytest.mark.anyio

CONFIG = """\
server: {header_timeout: 1s, idle_timeout: 1m, max_connections: 4, max_pending_per_address: 20}
store: {kind: memory}
"""
WAIT = 10.0
"""Bound on every single wait: well past the 1 s header timeout, far below the 10 s default."""


async def test_half_open_connections_kept_up_and_replaced_neither_shut_clients_out(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, CONFIG)
    no_reuse = httpx.Limits(max_keepalive_connections=0)
    with hub_process(config) as (process, url):
        port = int(url.rsplit(":", 1)[1])
        async with (
            anyio.create_task_group() as group,
            httpx.AsyncClient(base_url=url, timeout=WAIT, limits=no_reuse) as http,
        ):
            # From another address than the clients', as an attacker's would be: 100 sockets,
            # five times the address's share of the connections waiting for their headers.
            attack = HalfOpen(port=port, count=100)
            await group.start(attack.run)
            served: list[int] = []
            start = attack.replaced
            with anyio.fail_after(120):
                # Every socket closed and reopened at least twice while the clients ask.
                while len(served) < 20 or attack.replaced - start < 200:
                    served.append((await http.get("/healthz")).status_code)
            group.cancel_scope.cancel()
        # Four connections that sent a request hold every slot (kept alive for a minute).
        async with AsyncExitStack() as stack:
            kept = await kept_alive(port, 4, stack)
            async with httpx.AsyncClient(base_url=url, timeout=WAIT) as http:
                refused = await http.get("/healthz")
                for stream in kept:
                    await stream.send(HEALTH.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
                    assert (await closed_by_server(stream)).startswith(b"HTTP/1.1 200 ")
                served_after = await health_honouring_retry_after(http)
        process.terminate()
        assert process.stderr is not None
        log = process.stderr.read().decode()
    assert set(served) == {200}
    assert attack.answered == 0
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "1"
    assert refused.text == "too many connections (server.max_connections); retry shortly\n"
    assert served_after.status_code == 200
    assert "(server.max_connections)" in log
    assert "(server.max_pending_connections, server.max_pending_per_address)" in log


async def health_honouring_retry_after(http: httpx.AsyncClient) -> httpx.Response:
    """GET /healthz as a polite client does: after a 503, again once its Retry-After passed
    (a slot freed a moment ago may not be counted free yet). The hub is another process:
    there is no event to wait on but its answer."""
    with anyio.fail_after(WAIT):
        while (answer := await http.get("/healthz")).status_code == 503:  # noqa: ASYNC110
            await anyio.sleep(float(answer.headers["retry-after"]))
    return answer
